// The packed SGEMM against a naive triple loop, and packed operands through their bytes.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "common/gemm.h"
#include "common/thread_pool.h"
#include "cpu/cpu_provider.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/session/claims.h"

using namespace nxrt;
using namespace nxrt::cpu;
using nxrt::test::compare_tensors;

namespace {

// One GEMM problem with padded leading dimensions and random contents.
struct Problem {
  int64_t m, n, k;
  bool trans_a, trans_b;
  float alpha, beta;
  int64_t lda, ldb, ldc;
  std::vector<float> a, b, c;

  Problem(int64_t m_, int64_t n_, int64_t k_, bool ta, bool tb, float al, float be, std::mt19937& rng)
      : m(m_), n(n_), k(k_), trans_a(ta), trans_b(tb), alpha(al), beta(be) {
    std::uniform_real_distribution<float> dist(-1, 1);
    lda = (ta ? m : k) + 3;
    ldb = (tb ? k : n) + 1;
    ldc = n + 2;
    a.resize(static_cast<std::size_t>((ta ? k : m) * lda));
    b.resize(static_cast<std::size_t>((tb ? n : k) * ldb));
    c.resize(static_cast<std::size_t>(m * ldc));
    for (float& v : a) v = dist(rng);
    for (float& v : b) v = dist(rng);
    // beta == 0 must not read C: fill it with NaN to catch a read.
    for (float& v : c) v = beta == 0 ? std::numeric_limits<float>::quiet_NaN() : dist(rng);
  }
  float at_a(int64_t i, int64_t p) const { return trans_a ? a[p * lda + i] : a[i * lda + p]; }
  float at_b(int64_t p, int64_t j) const { return trans_b ? b[j * ldb + p] : b[p * ldb + j]; }

  // The naive product in double.
  std::vector<double> expected() const {
    std::vector<double> out(static_cast<std::size_t>(m * n));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(at_a(i, p)) * at_b(p, j);
        out[i * n + j] = alpha * s + (beta == 0 ? 0.0 : beta * double(c[i * ldc + j]));
      }
    return out;
  }
};

// Empty when every element of C is within tolerance of the expected product.
std::string check_result(const Problem& p, const std::vector<float>& c, const std::vector<double>& want) {
  const double tol = 1e-5 * (static_cast<double>(p.k) + 4);
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = 0; j < p.n; ++j) {
      const double got = c[i * p.ldc + j], w = want[i * p.n + j];
      if (!(std::abs(got - w) <= tol * (1 + std::abs(w))))
        return fmt::format("m={} n={} k={} transA={} transB={} alpha={} beta={}: C[{},{}] = {}, expected {}", p.m, p.n,
                           p.k, p.trans_a, p.trans_b, p.alpha, p.beta, i, j, got, w);
    }
  // The padding columns of C stay untouched.
  for (int64_t i = 0; i < p.m; ++i)
    for (int64_t j = p.n; j < p.ldc; ++j)
      if (!(c[i * p.ldc + j] == p.c[i * p.ldc + j] || (std::isnan(c[i * p.ldc + j]) && std::isnan(p.c[i * p.ldc + j]))))
        return fmt::format("m={} n={} k={}: padding C[{},{}] was written", p.m, p.n, p.k, i, j);
  return {};
}

// Runs the problem unpacked, with packed A and with packed B.
void check_problem(const Problem& p, const Parallel& parallel) {
  const auto want = p.expected();
  const GemmOperand a = GemmOperand::matrix(p.a.data(), p.lda, p.trans_a);
  const GemmOperand b = GemmOperand::matrix(p.b.data(), p.ldb, p.trans_b);
  std::vector<float> c = p.c;
  gemm(p.m, p.n, p.k, p.alpha, a, b, p.beta, c.data(), p.ldc, parallel);
  INFO("unpacked");
  CHECK(check_result(p, c, want) == "");

  const PackedMatrix pa = PackedMatrix::pack_a(p.a.data(), p.lda, p.trans_a, p.m, p.k);
  const PackedMatrix pb = PackedMatrix::pack_b(p.b.data(), p.ldb, p.trans_b, p.k, p.n);
  c = p.c;
  gemm(p.m, p.n, p.k, p.alpha, GemmOperand::of(pa), GemmOperand::of(pb), p.beta, c.data(), p.ldc, parallel);
  INFO("both packed");
  CHECK(check_result(p, c, want) == "");
  c = p.c;
  gemm(p.m, p.n, p.k, p.alpha, a, GemmOperand::of(pb), p.beta, c.data(), p.ldc, parallel);
  INFO("B packed");
  CHECK(check_result(p, c, want) == "");
}

}  // namespace

TEST_CASE("gemm matches a naive product for odd sizes, transposes, alpha and beta", "[cpu][gemm]") {
  std::mt19937 rng(42);
  const std::vector<int64_t> sizes = {1, 2, 5, 6, 7, 13, 16, 17, 31, 33, 64, 100, 145, 257};
  std::uniform_int_distribution<std::size_t> pick(0, sizes.size() - 1);
  const std::vector<std::pair<float, float>> scales = {{1, 0}, {1, 1}, {0.5f, -2}, {-1.5f, 0}, {2, 0.25f}};
  SerialParallel serial;
  ThreadPool two(2);
  for (int trial = 0; trial < 60; ++trial) {
    const auto [alpha, beta] = scales[static_cast<std::size_t>(trial) % scales.size()];
    const Problem p(sizes[pick(rng)], sizes[pick(rng)], sizes[pick(rng)], trial % 2 == 1, trial % 4 >= 2, alpha, beta,
                    rng);
    check_problem(p, trial % 3 == 0 ? static_cast<const Parallel&>(serial) : two);
  }
}

TEST_CASE("gemm crosses its cache blocks in k and n on one and two threads", "[cpu][gemm]") {
  std::mt19937 rng(7);
  SerialParallel serial;
  ThreadPool two(2);
  for (const Parallel* par : {static_cast<const Parallel*>(&serial), static_cast<const Parallel*>(&two)}) {
    check_problem(Problem(37, 29, 700, false, false, 1, 0, rng), *par);        // several k blocks
    check_problem(Problem(9, 2100, 40, true, false, 1, 1, rng), *par);         // two n blocks, few rows
    check_problem(Problem(300, 70, 300, false, true, 0.5f, 0.5f, rng), *par);  // several row blocks
    check_problem(Problem(1, 333, 77, false, false, 1, 0, rng), *par);         // a row vector
  }
}

TEST_CASE("gemm with k == 0 or alpha == 0 only scales C", "[cpu][gemm]") {
  SerialParallel serial;
  std::vector<float> c = {1, 2, 3, 4};
  gemm(2, 2, 0, 1, GemmOperand::matrix(nullptr, 0), GemmOperand::matrix(nullptr, 2), 3, c.data(), 2, serial);
  CHECK(c == std::vector<float>{3, 6, 9, 12});
  c = {std::nanf(""), 1, 2, 3};
  gemm(2, 2, 0, 1, GemmOperand::matrix(nullptr, 0), GemmOperand::matrix(nullptr, 2), 0, c.data(), 2, serial);
  CHECK(c == std::vector<float>{0, 0, 0, 0});
}

TEST_CASE("repack_b packs another B into a packed matrix's memory, of any shape", "[cpu][gemm]") {
  std::mt19937 rng(5);
  SerialParallel serial;
  PackedMatrix packed = PackedMatrix::pack_b(nullptr, 0, false, 0, 0);
  // Growing, then shrinking (the memory kept, the shape the new one's), then a transposed B.
  for (const auto& [n, k, trans] : {std::tuple{37, 29, false}, {9, 5, false}, {40, 64, true}}) {
    const Problem p(11, n, k, false, trans, 1, 0, rng);
    packed.repack_b(p.b.data(), p.ldb, trans, p.k, p.n);
    CHECK(packed.outer() == p.n);
    CHECK(packed.depth() == p.k);
    std::vector<float> c = p.c;
    gemm(p.m, p.n, p.k, 1, GemmOperand::matrix(p.a.data(), p.lda), GemmOperand::of(packed), 0, c.data(), p.ldc,
         serial);
    CHECK(check_result(p, c, p.expected()) == "");
  }
}

TEST_CASE("packed operands survive a round trip through bytes and reject other shapes", "[cpu][gemm]") {
  std::mt19937 rng(3);
  const Problem p(23, 41, 19, false, true, 1, 0, rng);
  std::vector<PackedMatrix> packed;
  for (int i = 0; i < 2; ++i) packed.push_back(PackedMatrix::pack_b(p.b.data(), p.ldb, true, p.k, p.n));
  const std::vector<std::byte> bytes = save_packed_matrices(packed);
  REQUIRE_FALSE(bytes.empty());

  auto restored = load_packed_matrices(bytes, GemmSide::kB, 2, p.n, p.k);
  REQUIRE(restored);
  REQUIRE(restored->size() == 2);
  SerialParallel serial;
  std::vector<float> c = p.c;
  gemm(p.m, p.n, p.k, 1, GemmOperand::matrix(p.a.data(), p.lda), GemmOperand::of((*restored)[1]), 0, c.data(), p.ldc,
       serial);
  CHECK(check_result(p, c, p.expected()) == "");

  CHECK_FALSE(load_packed_matrices(bytes, GemmSide::kA, 2, p.n, p.k));      // other side
  CHECK_FALSE(load_packed_matrices(bytes, GemmSide::kB, 1, p.n, p.k));      // other count
  CHECK_FALSE(load_packed_matrices(bytes, GemmSide::kB, 2, p.n + 1, p.k));  // other n
  CHECK_FALSE(load_packed_matrices(bytes, GemmSide::kB, 2, p.n, p.k - 1));  // other k
  CHECK_FALSE(load_packed_matrices(std::span(bytes).first(bytes.size() - 4), GemmSide::kB, 2, p.n, p.k));
  CHECK_FALSE(load_packed_matrices({}, GemmSide::kB, 2, p.n, p.k));
  CHECK(save_packed_matrices({}).empty());
}

namespace {

// x -> MatMul(x, Wm), Gemm(x, Wg^T), Conv(img, Wc): three kernels with packed weights.
struct PackedModel {
  PackedModel() {
    std::mt19937 rng(5);
    auto random = [&](Shape s) {
      std::uniform_real_distribution<float> dist(-1, 1);
      std::vector<float> v(static_cast<std::size_t>(shape_numel(s)));
      for (float& f : v) f = dist(rng);
      return Tensor::from_vector<float>(std::move(s), v);
    };
    x = random({9, 20});
    img = random({1, 3, 8, 8});
    b.input("x", DType::kFloat32, {9, 20});
    b.input("img", DType::kFloat32, {1, 3, 8, 8});
    b.constant("Wm", random({20, 35}));
    b.constant("Wg", random({35, 20}));
    b.constant("Wc", random({10, 3, 3, 3}));
    b.node("matmul", "MatMul", {"x", "Wm"}, {"ym"}, DType::kFloat32, {9, 35});
    const NodeId gemm = b.node("gemm", "Gemm", {"x", "Wg"}, {"yg"}, DType::kFloat32, {9, 35});
    b.graph.nodes[static_cast<std::size_t>(gemm)].attributes.set("transB", Attribute{int64_t{1}});
    b.node("conv", "Conv", {"img", "Wc"}, {"yc"}, DType::kFloat32, {1, 10, 6, 6});
    for (const char* out : {"ym", "yg", "yc"}) b.output(out);
    b.finish();
    partition.graph = &b.graph;
    partition.ep = "cpu";
    partition.name = "cpu_0";
    partition.nodes = {0, 1, 2};
    compute_boundary(b.graph, partition);
    auto ep = CpuProvider::create(EpConfig{2, {}, nullptr});
    if (!ep) throw std::runtime_error(ep.error().render());
    cpu = std::move(*ep);
  }

  Expected<std::unique_ptr<KernelPartition>> build(const PackedStates& packed) const {
    return KernelPartition::build(partition, static_cast<const CpuProvider&>(*cpu).registry(), "cpu", pool, packed);
  }

  test::GraphBuilder b;
  Partition partition;
  std::unique_ptr<ExecutionProvider> cpu;
  std::shared_ptr<const Parallel> pool = std::make_shared<ThreadPool>(2);
  Tensor x, img;
};

}  // namespace

TEST_CASE("MatMul, Gemm and Conv save packed weights and restore them from bytes", "[cpu][gemm]") {
  const PackedModel model;
  auto fresh = model.build({});
  REQUIRE(fresh);
  PackedStates states;
  for (const auto& step : (*fresh)->steps()) {
    INFO(step.node->name);
    states[step.node->name] = step.kernel->save_packed();
    CHECK_FALSE(states[step.node->name].empty());
  }
  std::vector<std::string> variants;
  for (const StepProfile& p : (*fresh)->profile()) variants.push_back(p.nodes.front() + " " + p.variant);
  CHECK(variants == std::vector<std::string>{"matmul matmul-packed", "gemm gemm-packed", "conv conv-im2col-gemm-packed"});
  const std::vector<RuntimeValue> inputs = {model.x, model.img};
  auto want = (*fresh)->run(inputs);
  REQUIRE(want);

  auto restored = model.build(states);
  REQUIRE(restored);
  auto got = (*restored)->run(inputs);
  REQUIRE(got);
  for (std::size_t i = 0; i < 3; ++i) CHECK(compare_tensors((*got)[i], (*want)[i], 0, 0).empty());

  // A state that does not fit (truncated) is ignored: the kernel packs its weights again.
  PackedStates truncated = states;
  for (auto& [name, bytes] : truncated) bytes.resize(bytes.size() / 2);
  auto repacked = model.build(truncated);
  REQUIRE(repacked);
  got = (*repacked)->run(inputs);
  REQUIRE(got);
  for (std::size_t i = 0; i < 3; ++i) CHECK(compare_tensors((*got)[i], (*want)[i], 0, 0).empty());

  // A state of the right size is used as it is: zeroed panels (past the 40-byte header) give
  // zero outputs.
  PackedStates zeroed = states;
  for (auto& [name, bytes] : zeroed) std::fill(bytes.begin() + 40, bytes.end(), std::byte{0});
  auto used = model.build(zeroed);
  REQUIRE(used);
  got = (*used)->run(inputs);
  REQUIRE(got);
  for (std::size_t i = 0; i < 3; ++i)
    CHECK(compare_tensors((*got)[i], Tensor::empty(DType::kFloat32, (*want)[i].tensor().shape())).empty());
}
