// The oneDNN EP's MatMul and Gemm against the cpu EP: every operand form, attribute and
// fused post-op, and their declines.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "builtin_eps.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ep/provider.h"
#include "nxrt/ep/registry.h"

namespace nxrt::test {
namespace {

NodeSpec matmul(Shape a, Shape b, bool constant_b, int64_t opset = 13) {
  NodeSpec s{.op_type = "MatMul", .opset = opset};
  s.inputs = {random_tensor(std::move(a), 1), random_tensor(std::move(b), 2)};
  s.constant = {false, constant_b};
  return s;
}

// Gemm on A {m,k} (or {k,m} with transA) and B {k,n} (or {n,k}); C of shape `c` unless empty.
NodeSpec gemm(int64_t m, int64_t k, int64_t n, AttributeMap a, std::optional<Shape> c, std::vector<bool> constant,
              int64_t opset = 13) {
  NodeSpec s{.op_type = "Gemm", .opset = opset};
  const bool ta = a.int_or("transA", 0) != 0, tb = a.int_or("transB", 0) != 0;
  s.inputs = {random_tensor(ta ? Shape{k, m} : Shape{m, k}, 3), random_tensor(tb ? Shape{n, k} : Shape{k, n}, 4)};
  if (c) s.inputs.push_back(random_tensor(*c, 5));
  s.constant = std::move(constant);
  s.attrs = std::move(a);
  return s;
}

// Every node of `g` compiled as one partition on `ep`, its tensors from `buffers` (null: its own).
Expected<std::unique_ptr<CompiledPartition>> compile_graph(std::string_view ep, const Graph& g,
                                                           std::shared_ptr<BufferPool> buffers = nullptr) {
  if (ep_factories().empty()) register_builtin_eps();
  auto provider = find_ep_factory(ep)->create(EpConfig{2, {}, std::move(buffers)});
  if (!provider) return std::unexpected(provider.error());
  Partition p;
  p.graph = &g;
  p.ep = std::string(ep);
  p.name = fmt::format("{}_0", ep);
  for (const Node& n : g.nodes) p.nodes.push_back(n.id);
  p.inputs = g.inputs;
  p.outputs = g.outputs;
  return (*provider)->compile(p);
}

// Runs every node of `g` as one partition on `ep` (graph inputs fed in order).
Expected<std::vector<RuntimeValue>> run_graph(std::string_view ep, const Graph& g, const std::vector<Tensor>& inputs,
                                              std::vector<StepProfile>* steps = nullptr) {
  auto compiled = compile_graph(ep, g);
  if (!compiled) return std::unexpected(compiled.error());
  auto out = (*compiled)->run(std::vector<RuntimeValue>(inputs.begin(), inputs.end()));
  if (steps) *steps = (*compiled)->profile();
  return out;
}

// A product node `op` feeding an Add with `addend` (a graph input when not constant) and a
// Relu: onednn (which fuses them) against the cpu EP, returning onednn's steps.
std::vector<StepProfile> check_fused(const std::string& op, const Tensor& a, const Tensor& b, const Tensor& addend,
                                     bool constant_b, bool constant_addend, const Shape& out, AttributeMap attrs = {}) {
  GraphBuilder gb;
  std::vector<Tensor> feeds = {a};
  gb.input("a", DType::kFloat32, a.shape());
  if (constant_b) {
    gb.constant("b", b);
  } else {
    gb.input("b", DType::kFloat32, b.shape());
    feeds.push_back(b);
  }
  if (constant_addend) {
    gb.constant("addend", addend);
  } else {
    gb.input("addend", DType::kFloat32, addend.shape());
    feeds.push_back(addend);
  }
  const NodeId product = gb.node("product", op, {"a", "b"}, {"p"}, DType::kFloat32, out);
  gb.graph.nodes[static_cast<std::size_t>(product)].attributes = std::move(attrs);
  gb.node("add", "Add", {"p", "addend"}, {"s"}, DType::kFloat32, out);
  gb.node("relu", "Relu", {"s"}, {"y"}, DType::kFloat32, out);
  gb.output("y");
  const Graph& g = gb.finish();
  std::vector<StepProfile> steps;
  auto actual = run_graph("onednn", g, feeds, &steps);
  INFO((actual ? std::string() : actual.error().render()));
  REQUIRE(actual);
  auto expected = run_graph("cpu", g, feeds);
  INFO((expected ? std::string() : expected.error().render()));
  REQUIRE(expected);
  CHECK(compare_tensors((*actual)[0], (*expected)[0], 1e-4, 1e-5) == "");
  return steps;
}

}  // namespace

TEST_CASE("onednn MatMul matches the cpu EP for every operand form", "[onednn]") {
  const bool constant_b = GENERATE(false, true);
  INFO("constant B: " << constant_b);
  SECTION("2-D") { check_matches_cpu("onednn", matmul({3, 4}, {4, 5}, constant_b)); }
  SECTION("1-D operands") {
    check_matches_cpu("onednn", matmul({4}, {4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({3, 4}, {4}, constant_b));
    check_matches_cpu("onednn", matmul({4}, {2, 4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({2, 3, 4}, {4}, constant_b));
  }
  SECTION("batched, B a matrix (flattened into one GEMM)") {
    check_matches_cpu("onednn", matmul({2, 3, 4, 5}, {5, 6}, constant_b));
    check_matches_cpu("onednn", matmul({2, 3, 5}, {1, 5, 6}, constant_b));
    check_matches_cpu("onednn", matmul({3, 5}, {1, 1, 5, 6}, constant_b));
  }
  SECTION("batched with broadcast batch dims") {
    check_matches_cpu("onednn", matmul({2, 3, 4}, {2, 4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({2, 1, 3, 4}, {3, 4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({1, 3, 4}, {2, 4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({3, 4}, {2, 4, 5}, constant_b));
    check_matches_cpu("onednn", matmul({2, 1, 2, 1, 3, 4}, {1, 2, 1, 2, 4, 2}, constant_b));
  }
  SECTION("older opsets") {
    check_matches_cpu("onednn", matmul({2, 3, 4}, {4, 5}, constant_b, 1));
    check_matches_cpu("onednn", matmul({2, 3, 4}, {2, 4, 5}, constant_b, 9));
  }
}

TEST_CASE("onednn MatMul declines what it cannot run", "[onednn]") {
  const KernelMatch dot = claim_on("onednn", matmul({4}, {4}, false));
  REQUIRE_FALSE(dot);
  CHECK_THAT(dot.reason(), Catch::Contains("A and B are both 1-D"));
  CHECK_THAT(claim_on("onednn", matmul({3, 4}, {5, 6}, false)).reason(), Catch::Contains("has 4 columns but B"));
  NodeSpec ints{.op_type = "MatMul", .opset = 13};
  const Tensor m = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  ints.inputs = {m, m};
  CHECK_THAT(claim_on("onednn", ints).reason(), Catch::Contains("float32 only"));
}

TEST_CASE("onednn Gemm matches the cpu EP for every attribute", "[onednn]") {
  const bool constant_b = GENERATE(false, true);
  INFO("constant B: " << constant_b);
  SECTION("transA and transB") {
    for (int64_t ta : {0, 1})
      for (int64_t tb : {0, 1})
        for (const bool constant_a : {false, true})
          check_matches_cpu("onednn", gemm(3, 5, 4, attrs({{"transA", ta}, {"transB", tb}}), Shape{4},
                                           {constant_a, constant_b, false}));
  }
  SECTION("C shapes, constant and computed") {
    for (const Shape& c : {Shape{}, Shape{1}, Shape{4}, Shape{1, 4}, Shape{3, 1}, Shape{3, 4}, Shape{1, 1}})
      for (const bool constant_c : {false, true}) {
        INFO("C " << shape_to_string(c) << " constant " << constant_c);
        check_matches_cpu("onednn", gemm(3, 5, 4, {}, c, {false, constant_b, constant_c}));
        check_matches_cpu("onednn", gemm(3, 5, 4, attrs({{"alpha", 0.5f}}), c, {false, constant_b, constant_c}));
      }
  }
  SECTION("alpha and beta") {
    const AttributeMap all =
        attrs({{"alpha", 0.25f}, {"beta", 0.35f}, {"transA", int64_t{1}}, {"transB", int64_t{1}}});
    check_matches_cpu("onednn", gemm(4, 3, 5, all, Shape{1, 5}, {false, constant_b, true}));
    check_matches_cpu("onednn", gemm(3, 5, 4, attrs({{"beta", 0.5f}}), Shape{3, 4}, {false, constant_b, true}));
    check_matches_cpu("onednn", gemm(3, 5, 4, attrs({{"alpha", 2.0f}, {"beta", 0.0f}}), Shape{3, 4},
                                     {false, constant_b, false}));
    check_matches_cpu("onednn", gemm(3, 5, 4, attrs({{"alpha", -1.5f}}), std::nullopt, {false, constant_b}));
  }
  SECTION("legacy broadcast attribute (opset 6) and optional C (opset 11)") {
    check_matches_cpu("onednn", gemm(4, 10, 8, attrs({{"broadcast", int64_t{1}}, {"transB", int64_t{1}}}), Shape{8},
                                     {false, constant_b, true}, 6));
    check_matches_cpu("onednn", gemm(2, 3, 4, {}, Shape{2, 4}, {false, constant_b, false}, 6));
    check_matches_cpu("onednn", gemm(2, 3, 4, {}, std::nullopt, {false, constant_b}, 11));
  }
}

TEST_CASE("onednn Gemm declines what it cannot run", "[onednn]") {
  const KernelMatch beta = claim_on("onednn", gemm(3, 5, 4, attrs({{"beta", 0.5f}}), Shape{4}, {false, true, false}));
  REQUIRE_FALSE(beta);
  CHECK_THAT(beta.reason(), Catch::Contains("beta 0.5 with a computed C is not supported by the onednn EP"));
  const KernelMatch legacy = claim_on("onednn", gemm(2, 3, 4, {}, Shape{4}, {false, true, true}, 6));
  REQUIRE_FALSE(legacy);
  CHECK_THAT(legacy.reason(), Catch::Contains("does not fit the 2x4 result"));
  CHECK_THAT(claim_on("onednn", gemm(2, 3, 4, {}, std::nullopt, {false, true}, 9)).reason(),
             Catch::Contains("input C is missing"));
  CHECK_THAT(claim_on("onednn", gemm(2, 3, 4, attrs({{"alpha", 0.0f}}), Shape{4}, {false, false, true})).reason(),
             Catch::Contains("alpha 0 with a computed B"));
}

TEST_CASE("onednn MatMul and Gemm fuse a following Add and Relu", "[onednn]") {
  SECTION("flattened MatMul with a bias: one step") {
    auto steps = check_fused("MatMul", random_tensor({2, 3, 4, 5}, 1), random_tensor({5, 6}, 2),
                             random_tensor({6}, 3), true, true, {2, 3, 4, 6});
    REQUIRE(steps.size() == 1);
    CHECK(steps[0].nodes == std::vector<std::string>{"product", "add", "relu"});
  }
  SECTION("MatMul with a full-size computed residual (summed into the result)") {
    check_fused("MatMul", random_tensor({2, 3, 4, 5}, 1), random_tensor({5, 6}, 2), random_tensor({2, 3, 4, 6}, 3),
                true, false, {2, 3, 4, 6});
    check_fused("MatMul", random_tensor({2, 4, 5}, 1), random_tensor({2, 5, 6}, 2), random_tensor({4, 6}, 3), false,
                false, {2, 4, 6});
  }
  SECTION("promoted 1-D operands whose addends cannot follow the reshape: run after the product") {
    check_fused("MatMul", random_tensor({5}, 1), random_tensor({2, 5, 6}, 2), random_tensor({2, 6}, 3), false, false,
                {2, 6});
    check_fused("MatMul", random_tensor({2, 3, 4, 5}, 1), random_tensor({5}, 2), random_tensor({4}, 3), true, false,
                {2, 3, 4});
    check_fused("MatMul", random_tensor({2, 3, 4, 5}, 1), random_tensor({5}, 2), random_tensor({3, 4}, 3), true, true,
                {2, 3, 4});
  }
  SECTION("Gemm with packed B and bias, and with computed B, alpha and computed C") {
    auto steps = check_fused("Gemm", random_tensor({3, 5}, 1), random_tensor({4, 5}, 2), random_tensor({4}, 3), true,
                             true, {3, 4}, attrs({{"transB", int64_t{1}}, {"alpha", 0.5f}}));
    REQUIRE(steps.size() == 1);
    check_fused("Gemm", random_tensor({5, 3}, 1), random_tensor({5, 4}, 2), random_tensor({3, 4}, 3), false, false,
                {3, 4}, attrs({{"transA", int64_t{1}}, {"alpha", 1.5f}}));
  }
}

TEST_CASE("onednn gives a dropped output's memory to the next run's output", "[onednn]") {
  GraphBuilder gb;
  gb.input("a", DType::kFloat32, {64, 256});
  gb.constant("b", random_tensor({256, 512}, 2));
  gb.node("product", "MatMul", {"a", "b"}, {"y"}, DType::kFloat32, {64, 512});
  gb.output("y");
  const Graph& g = gb.finish();
  auto shared = std::make_shared<BufferPool>();  // a session's, shared with its other host EPs
  auto compiled = compile_graph("onednn", g, shared);
  INFO((compiled ? std::string() : compiled.error().render()));
  REQUIRE(compiled);
  const std::vector<RuntimeValue> feeds = {random_tensor({64, 256}, 1)};
  auto first = (*compiled)->run(feeds);
  REQUIRE(first);
  const Tensor kept = (*first)[0].tensor();  // the first run's output, still read by someone
  first->clear();
  auto second = (*compiled)->run(feeds);
  REQUIRE(second);
  CHECK((*second)[0].tensor().data() != kept.data());  // in use: not handed out again
  CHECK(compare_tensors((*second)[0].tensor(), kept, 0, 0) == "");
  const void* block = (*second)[0].tensor().data();
  second->clear();
  // An allocation of that size meanwhile (malloc would hand it the block just freed) ...
  const std::vector<float> elsewhere(64 * 512, 1.f);
  auto third = (*compiled)->run(feeds);
  REQUIRE(third);
  CHECK((*third)[0].tensor().data() == block);  // ... but the block stayed with the partition for its next run
  CHECK(compare_tensors((*third)[0].tensor(), kept, 0, 0) == "");
  third->clear();
  CHECK(shared->allocate(DType::kFloat32, {64, 512}).data() == block);  // it is the shared pool's
}

}  // namespace nxrt::test
