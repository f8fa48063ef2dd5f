// MatMul (numpy semantics) and Gemm against straightforward reference loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

template <class T>
Tensor random_small_values(Shape shape, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(-8, 8);
  std::vector<T> v(static_cast<std::size_t>(shape_numel(shape)));
  for (T& x : v) x = static_cast<T>(dist(rng)) / static_cast<T>(std::is_floating_point_v<T> ? 4 : 1);
  return Tensor::from_vector<T>(std::move(shape), v);
}

// numpy.matmul written out: promote 1-D operands, broadcast batch dims, loop.
template <class T>
Tensor reference_matmul(const Tensor& a, const Tensor& b) {
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1) as.insert(as.begin(), 1);
  if (bs.size() == 1) bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  const std::size_t rank = std::max(as.size(), bs.size()) - 2;
  auto padded = [&](const Shape& s) {
    Shape d(rank, 1);
    std::copy(s.begin(), s.end() - 2, d.end() - static_cast<std::ptrdiff_t>(s.size() - 2));
    return d;
  };
  const Shape ab = padded(as), bb = padded(bs);
  Shape batch(rank), out;
  for (std::size_t d = 0; d < rank; ++d) batch[d] = std::max(ab[d], bb[d]);
  out = batch;
  if (a.shape().size() > 1) out.push_back(m);
  if (b.shape().size() > 1) out.push_back(n);
  std::vector<T> y(static_cast<std::size_t>(shape_numel(out)));
  const T* ad = a.data_as<T>();
  const T* bd = b.data_as<T>();
  for (int64_t i = 0; i < shape_numel(batch); ++i) {
    int64_t rest = i, ao = 0, bo = 0, am = 1, bm = 1;
    for (std::size_t d = rank; d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      ao += (ab[d] == 1 ? 0 : idx) * am;
      bo += (bb[d] == 1 ? 0 : idx) * bm;
      am *= ab[d];
      bm *= bb[d];
    }
    for (int64_t r = 0; r < m; ++r)
      for (int64_t c = 0; c < n; ++c) {
        T s = 0;
        for (int64_t p = 0; p < k; ++p) s += ad[(ao * m + r) * k + p] * bd[(bo * k + p) * n + c];
        y[static_cast<std::size_t>((i * m + r) * n + c)] = s;
      }
  }
  return Tensor::from_vector<T>(out, y);
}

// Runs MatMul with B as a graph input and as a (packed) constant, on 1 and 2 threads.
void check_matmul(const Tensor& a, const Tensor& b, const Tensor& want) {
  for (bool constant : {false, true})
    for (int threads : {1, 2}) {
      INFO("A " << shape_to_string(a.shape()) << " B " << shape_to_string(b.shape()) << " constant B " << constant
                << " threads " << threads);
      auto y = run_on_cpu({.op_type = "MatMul", .inputs = {a, b}, .constant = {false, constant}, .threads = threads});
      REQUIRE(y);
      CHECK(compare_tensors((*y)[0], want, 1e-5, 1e-4) == "");
    }
}

}  // namespace

TEST_CASE("MatMul follows numpy: 2-D, 1-D promotion, batches and broadcasting", "[cpu][matmul]") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{7, 5}, {5, 19}},
      {{33, 70}, {70, 41}},
      {{5}, {5, 9}},
      {{9, 5}, {5}},
      {{6}, {6}},
      {{2, 1, 3, 4}, {5, 4, 2}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 8, 16}, {16, 24}},
      {{4, 6}, {3, 1, 6, 2}},
      {{3, 4}, {3, 1, 4, 2}},
      {{64, 8, 8}, {64, 8, 8}},
      {{2, 0, 3}, {3, 4}},
  };
  unsigned seed = 1;
  for (const auto& [as, bs] : cases) {
    const Tensor a = random_small_values<float>(as, seed++), b = random_small_values<float>(bs, seed++);
    check_matmul(a, b, reference_matmul<float>(a, b));
  }
}

TEST_CASE("MatMul runs double and integer types on the reference path", "[cpu][matmul]") {
  const Tensor ad = random_small_values<double>({2, 3, 4}, 1), bd = random_small_values<double>({4, 5}, 2);
  check_matmul(ad, bd, reference_matmul<double>(ad, bd));
  const Tensor ai = random_small_values<int32_t>({3, 4}, 3), bi = random_small_values<int32_t>({2, 4, 2}, 4);
  check_matmul(ai, bi, reference_matmul<int32_t>(ai, bi));
  const Tensor al = random_small_values<int64_t>({4}, 5), bl = random_small_values<int64_t>({4, 3}, 6);
  check_matmul(al, bl, reference_matmul<int64_t>(al, bl));
}

TEST_CASE("MatMul declines mismatched types and shapes with the reason", "[cpu][matmul][claim]") {
  auto m =
      claim_on_cpu({.op_type = "MatMul", .inputs = {random_small_values<float>({2, 3}, 1), random_small_values<float>({4, 2}, 2)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MatMul: A [2,3] has 3 columns but B [4,2] has 4 rows");
  m = claim_on_cpu(
      {.op_type = "MatMul", .inputs = {random_small_values<float>({2, 3}, 1), random_small_values<double>({3, 2}, 2)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MatMul: B has type double and A float; they must match");
  m = claim_on_cpu({.op_type = "MatMul",
                    .opset = 8,
                    .inputs = {random_small_values<int32_t>({2, 3}, 1), random_small_values<int32_t>({3, 2}, 2)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MatMul: input 0 has type int32; the cpu EP supports float, double for MatMul");
  m = claim_on_cpu(
      {.op_type = "MatMul", .inputs = {random_small_values<float>({2, 2, 3}, 1), random_small_values<float>({3, 3, 2}, 2)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "MatMul: batch dims of A [2,2,3] and B [3,3,2] do not broadcast");
}

namespace {

// Y = alpha * op(A) * op(B) + beta * C, C broadcast, in double.
Tensor reference_gemm(const Tensor& a, const Tensor& b, const Tensor* c, bool ta, bool tb, float alpha, float beta) {
  const int64_t m = ta ? a.shape()[1] : a.shape()[0], k = ta ? a.shape()[0] : a.shape()[1];
  const int64_t n = tb ? b.shape()[0] : b.shape()[1];
  std::vector<float> y(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(a.data_as<float>()[ta ? p * m + i : i * k + p]) * b.data_as<float>()[tb ? j * k + p : p * n + j];
      double cv = 0;
      if (c) {
        const Shape& cs = c->shape();
        const int64_t ci = cs.size() == 2 && cs[0] != 1 ? i : 0;
        const int64_t cj = !cs.empty() && cs.back() != 1 ? j : 0;
        cv = c->data_as<float>()[ci * (cs.empty() ? 1 : cs.back()) + cj];
      }
      y[static_cast<std::size_t>(i * n + j)] = static_cast<float>(alpha * s + beta * cv);
    }
  return Tensor::from_vector<float>({m, n}, y);
}

}  // namespace

TEST_CASE("Gemm covers transposes, alpha, beta and every broadcast of C", "[cpu][matmul]") {
  const int64_t m = 13, n = 21, k = 17;
  const std::vector<Shape> c_shapes = {{m, n}, {n}, {1, n}, {m, 1}, {1}, {}, {1, 1}};
  unsigned seed = 10;
  for (int variant = 0; variant < 4; ++variant) {
    const bool ta = variant & 1, tb = variant & 2;
    const Tensor a = random_small_values<float>(ta ? Shape{k, m} : Shape{m, k}, seed++);
    const Tensor b = random_small_values<float>(tb ? Shape{n, k} : Shape{k, n}, seed++);
    for (const Shape& cs : c_shapes) {
      const Tensor c = random_small_values<float>(cs, seed++);
      for (bool constant : {false, true}) {
        INFO("transA " << ta << " transB " << tb << " C " << shape_to_string(cs) << " constant B " << constant);
        auto y = run_on_cpu(
            {.op_type = "Gemm",
             .inputs = {a, b, c},
             .constant = {false, constant, false},
             .attrs = attrs({{"alpha", 0.5f}, {"beta", -2.f}, {"transA", int64_t{ta}}, {"transB", int64_t{tb}}})});
        REQUIRE(y);
        CHECK(compare_tensors((*y)[0], reference_gemm(a, b, &c, ta, tb, 0.5f, -2.f), 1e-5, 1e-4) == "");
      }
    }
  }
}

TEST_CASE("Gemm without C from opset 11, and with beta 0 ignoring C", "[cpu][matmul]") {
  const Tensor a = random_small_values<float>({300, 70}, 1), b = random_small_values<float>({70, 45}, 2);
  auto y = run_on_cpu({.op_type = "Gemm", .opset = 11, .inputs = {a, b}, .constant = {false, true}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], reference_gemm(a, b, nullptr, false, false, 1, 0), 1e-5, 1e-4) == "");
  Tensor c = Tensor::from_vector<float>({1}, {std::nanf("")});
  y = run_on_cpu({.op_type = "Gemm", .opset = 9, .inputs = {a, b, c}, .attrs = attrs({{"beta", 0.f}})});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], reference_gemm(a, b, nullptr, false, false, 1, 0), 1e-5, 1e-4) == "");
}

TEST_CASE("Gemm runs double and integer types", "[cpu][matmul]") {
  const Tensor a = Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector<int64_t>({2, 3}, {1, 0, -1, 2, 1, 0});
  const Tensor c = Tensor::from_vector<int64_t>({2}, {10, 20});
  auto y =
      run_on_cpu({.op_type = "Gemm", .inputs = {a, b, c}, .attrs = attrs({{"transB", int64_t{1}}, {"alpha", 2.f}})});
  REQUIRE(y);
  // A * B^T = [[-2, 4], [-2, 13]]; times 2 plus C.
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<int64_t>({2, 2}, {6, 28, 6, 46})).empty());
  const Tensor ad = Tensor::from_vector<double>({1, 2}, {0.5, 1.5});
  const Tensor bd = Tensor::from_vector<double>({2, 1}, {2, 4});
  y = run_on_cpu({.op_type = "Gemm", .inputs = {ad, bd, Tensor::from_vector<double>({}, {1})}});
  REQUIRE(y);
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<double>({1, 1}, {8})).empty());
}

TEST_CASE("Gemm declines what it cannot run with the reason", "[cpu][matmul][claim]") {
  const Tensor a = random_small_values<float>({4, 3}, 1), b = random_small_values<float>({3, 5}, 2);
  auto m = claim_on_cpu({.op_type = "Gemm", .opset = 9, .inputs = {a, b}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gemm: input C is missing; it is optional only from opset 11 (the model imports opset 9)");
  m = claim_on_cpu({.op_type = "Gemm", .inputs = {a, b, random_small_values<float>({3, 5}, 3)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gemm: C [3,5] does not broadcast to the 4x5 result");
  m = claim_on_cpu({.op_type = "Gemm", .inputs = {random_small_values<float>({2, 4, 3}, 1), b}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gemm: A has rank 3; Gemm takes 2-D A and B (use MatMul for batched products)");
  m = claim_on_cpu({.op_type = "Gemm", .inputs = {a, b}, .attrs = attrs({{"transA", int64_t{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gemm: op(A) is 3x4 and op(B) 3x5 (transA=1, transB=0); the inner dims must match");
  m = claim_on_cpu({.op_type = "Gemm", .opset = 6, .inputs = {a, b, random_small_values<float>({5}, 3)}});
  REQUIRE_FALSE(m);
}

TEST_CASE("Gemm-1 and -6 broadcast C only with broadcast=1", "[cpu][matmul][convt]") {
  const Tensor a = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  const Tensor b = Tensor::from_vector<float>({2, 2}, {1, 0, 0, 1});
  for (int64_t opset : {1, 6}) {
    auto y = run_on_cpu({.op_type = "Gemm", .opset = opset, .inputs = {a, b, Tensor::from_vector<float>({2}, {10, 20})},
                         .attrs = attrs({{"broadcast", int64_t{1}}, {"beta", 2.f}})});
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 2}, {21, 42, 23, 44})).empty());
    y = run_on_cpu({.op_type = "Gemm", .opset = opset, .inputs = {a, b, Tensor::from_vector<float>({2, 2}, {1, 1, 1, 1})},
                    .attrs = attrs({{"transA", int64_t{1}}})});
    REQUIRE(y);
    CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({2, 2}, {2, 4, 3, 5})).empty());
  }
  auto m = claim_on_cpu({.op_type = "Gemm", .opset = 6, .inputs = {a, b, Tensor::from_vector<float>({2}, {10, 20})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gemm: C [2] is not 2x2 and broadcast=0; set broadcast=1 or give C the result's shape");
}
