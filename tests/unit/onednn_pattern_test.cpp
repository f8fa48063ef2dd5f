// The oneDNN EP's pattern fusion against the cpu EP: written-out LayerNormalization and Gelu
// subgraphs run as one primitive, and their member ops are claimed only inside them.
#include <cmath>

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "builtin_eps.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/provider.h"
#include "nxrt/ep/registry.h"

namespace nxrt::test {
namespace {

Tensor scalar(float v) { return Tensor::from_vector<float>({}, {v}); }

std::unique_ptr<ExecutionProvider> make_ep(std::string_view ep) {
  if (ep_factories().empty()) register_builtin_eps();
  auto provider = find_ep_factory(ep)->create(EpConfig{2, {}, nullptr});
  REQUIRE(provider);
  return std::move(*provider);
}

// Compiles every node of `g` as one partition on `ep` and runs it on `x`; `steps` gets the
// plan's steps.
Expected<std::vector<RuntimeValue>> run_partition(std::string_view ep, const Graph& g, const Tensor& x,
                                                  std::vector<StepProfile>* steps = nullptr) {
  auto provider = make_ep(ep);
  Partition p;
  p.graph = &g;
  p.ep = std::string(ep);
  p.name = fmt::format("{}_0", ep);
  for (const Node& n : g.nodes) p.nodes.push_back(n.id);
  p.inputs = g.inputs;
  p.outputs = g.outputs;
  auto compiled = provider->compile(p);
  if (!compiled) return std::unexpected(compiled.error());
  auto out = (*compiled)->run(std::vector<RuntimeValue>{RuntimeValue(x)});
  if (steps) *steps = (*compiled)->profile();
  return out;
}

// Runs `g` on onednn and on the cpu EP, checks they agree and returns onednn's steps.
std::vector<StepProfile> check_against_cpu(const Graph& g, const Tensor& x) {
  std::vector<StepProfile> steps;
  auto actual = run_partition("onednn", g, x, &steps);
  INFO((actual ? std::string() : actual.error().render()));
  REQUIRE(actual);
  auto expected = run_partition("cpu", g, x);
  INFO((expected ? std::string() : expected.error().render()));
  REQUIRE(expected);
  CHECK(compare_tensors((*actual)[0], (*expected)[0], 1e-4, 1e-5) == "");
  return steps;
}

KernelMatch claim_node(const Graph& g, const std::string& name) {
  return make_ep("onednn")->claim(NodeContext(g, g.node(*g.find_node(name))));
}

// ---- LayerNormalization ----

struct LayerNormForm {
  bool scale = true;
  bool shift = true;
  bool square_by_mul = false;  // Mul(d, d) instead of Pow(d, 2)
  bool commuted = false;       // constants first in Add and Mul
  int64_t normalized = 1;      // trailing dims
  int64_t opset = 13;          // 18: ReduceMean's axes as an input
  float exponent = 2;
};

// (x - mean) / sqrt(var + eps) * gamma + beta as torch.onnx writes it before opset 17.
void build_layer_norm(GraphBuilder& gb, const Shape& x, const LayerNormForm& form) {
  const auto rank = static_cast<int64_t>(x.size());
  Shape reduced = x, normalized(x.end() - form.normalized, x.end());
  std::vector<int64_t> axes;
  for (int64_t i = rank - form.normalized; i < rank; ++i) {
    reduced[static_cast<std::size_t>(i)] = 1;
    axes.push_back(i - rank);
  }
  gb.input("x", DType::kFloat32, x);
  gb.constant("eps", scalar(1e-5f));
  gb.constant("two", scalar(form.exponent));
  gb.constant("gamma", random_tensor(normalized, 7));
  gb.constant("beta", random_tensor(normalized, 8));
  if (form.opset >= 18) gb.constant("axes", int64s(axes));
  auto reduce = [&](const std::string& name, const std::string& in, const std::string& out) {
    const NodeId id = form.opset >= 18 ? gb.node(name, "ReduceMean", {in, "axes"}, {out}, DType::kFloat32, reduced)
                                       : gb.node(name, "ReduceMean", {in}, {out}, DType::kFloat32, reduced);
    Node& n = gb.graph.nodes[static_cast<std::size_t>(id)];
    if (form.opset < 18) n.attributes = attrs({{"axes", axes}});
  };
  auto binary = [&](const std::string& name, const std::string& op, std::string a, std::string b,
                    const std::string& out, const Shape& shape) {
    if (form.commuted && (op == "Add" || op == "Mul") && a != b) std::swap(a, b);
    gb.node(name, op, {a, b}, {out}, DType::kFloat32, shape);
  };
  reduce("mean", "x", "m");
  binary("sub", "Sub", "x", "m", "d", x);
  if (form.square_by_mul)
    binary("square", "Mul", "d", "d", "sq", x);
  else
    binary("square", "Pow", "d", "two", "sq", x);
  reduce("var", "sq", "v");
  binary("add_eps", "Add", "v", "eps", "ve", reduced);
  gb.node("sqrt", "Sqrt", {"ve"}, {"sd"}, DType::kFloat32, reduced);
  binary("div", "Div", "d", "sd", "n", x);
  if (form.scale) binary("scale", "Mul", "n", "gamma", "ns", x);
  const std::string scaled = form.scale ? "ns" : "n";
  if (form.shift) binary("shift", "Add", scaled, "beta", "y", x);
  for (Node& n : gb.graph.nodes) n.opset = form.opset;
  gb.output(form.shift ? "y" : scaled);
}

void check_layer_norm(const Shape& x, const LayerNormForm& form) {
  GraphBuilder gb;
  build_layer_norm(gb, x, form);
  const Graph& g = gb.finish();
  for (const Node& n : g.nodes) {
    INFO(n.name);
    CHECK(claim_node(g, n.name));
  }
  const auto steps = check_against_cpu(g, random_tensor(x, 1));
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].op_type == "LayerNormalization");
  CHECK(steps[0].nodes.size() == g.nodes.size());
}

// ---- Gelu ----

enum class GeluForm {
  kHalfLast,        // x * (1 + erf(x / sqrt2)) * 0.5 (torch)
  kHalfFirst,       // (x * 0.5) * (1 + erf(x / sqrt2))
  kHalfOfSum,       // x * ((1 + erf(x / sqrt2)) * 0.5)
  kMulBySqrtHalf,   // erf(x * 1/sqrt2), operands commuted everywhere
};

void build_gelu(GraphBuilder& gb, const std::string& x, const Shape& shape, GeluForm form) {
  gb.constant("one", scalar(1.0f));
  gb.constant("half", scalar(0.5f));
  auto node = [&](const std::string& name, const std::string& op, const std::string& a, const std::string& b,
                  const std::string& out) { gb.node(name, op, {a, b}, {out}, DType::kFloat32, shape); };
  if (form == GeluForm::kMulBySqrtHalf) {
    gb.constant("c", scalar(static_cast<float>(1 / std::sqrt(2.0))));
    node("scale", "Mul", "c", x, "scaled");
  } else {
    gb.constant("c", scalar(static_cast<float>(std::sqrt(2.0))));
    node("scale", "Div", x, "c", "scaled");
  }
  gb.node("erf", "Erf", {"scaled"}, {"erf_out"}, DType::kFloat32, shape);
  switch (form) {
    case GeluForm::kHalfLast:
      node("add_one", "Add", "erf_out", "one", "one_plus_erf");
      node("times_x", "Mul", x, "one_plus_erf", "product");
      node("halve", "Mul", "product", "half", "y");
      break;
    case GeluForm::kHalfFirst:
      node("halve", "Mul", x, "half", "half_x");
      node("add_one", "Add", "erf_out", "one", "one_plus_erf");
      node("times_x", "Mul", "half_x", "one_plus_erf", "y");
      break;
    case GeluForm::kHalfOfSum:
      node("add_one", "Add", "erf_out", "one", "one_plus_erf");
      node("halve", "Mul", "one_plus_erf", "half", "product");
      node("times_x", "Mul", "product", x, "y");
      break;
    case GeluForm::kMulBySqrtHalf:
      node("add_one", "Add", "one", "erf_out", "one_plus_erf");
      node("times_x", "Mul", "one_plus_erf", x, "product");
      node("halve", "Mul", "half", "product", "y");
      break;
  }
}

}  // namespace

TEST_CASE("onednn runs a written-out LayerNormalization as one step", "[onednn]") {
  SECTION("torch.onnx's form at opset 13, scale and shift") { check_layer_norm({2, 5, 8}, {}); }
  SECTION("without shift, without scale, without both") {
    check_layer_norm({2, 5, 8}, {.shift = false});
    check_layer_norm({2, 5, 8}, {.scale = false});
    check_layer_norm({4, 16}, {.scale = false, .shift = false});
  }
  SECTION("squared by Mul, constants first") { check_layer_norm({3, 7}, {.square_by_mul = true, .commuted = true}); }
  SECTION("over the last two dims") { check_layer_norm({2, 3, 4, 5}, {.normalized = 2}); }
  SECTION("ReduceMean 18 with axes as an input") { check_layer_norm({2, 5, 8}, {.opset = 18}); }
}

TEST_CASE("onednn runs a written-out Gelu as one step", "[onednn]") {
  const GeluForm form =
      GENERATE(GeluForm::kHalfLast, GeluForm::kHalfFirst, GeluForm::kHalfOfSum, GeluForm::kMulBySqrtHalf);
  INFO("form " << static_cast<int>(form));
  GraphBuilder gb;
  gb.input("x", DType::kFloat32, {3, 16});
  build_gelu(gb, "x", {3, 16}, form);
  gb.output("y");
  const Graph& g = gb.finish();
  for (const Node& n : g.nodes) {
    INFO(n.name);
    CHECK(claim_node(g, n.name));
  }
  const auto steps = check_against_cpu(g, random_tensor({3, 16}, 2));
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].op_type == "Gelu");
  CHECK(steps[0].nodes.size() == 5);
}

TEST_CASE("onednn fuses a Gelu after MatMul and its bias as a post-op", "[onednn]") {
  GraphBuilder gb;
  gb.input("a", DType::kFloat32, {6, 8});
  gb.constant("w", random_tensor({8, 16}, 3));
  gb.constant("bias", random_tensor({16}, 4));
  gb.node("matmul", "MatMul", {"a", "w"}, {"p"}, DType::kFloat32, {6, 16});
  gb.node("add_bias", "Add", {"p", "bias"}, {"x"}, DType::kFloat32, {6, 16});
  build_gelu(gb, "x", {6, 16}, GeluForm::kHalfLast);
  gb.output("y");
  const Graph& g = gb.finish();
  const auto steps = check_against_cpu(g, random_tensor({6, 8}, 5));
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].op_type == "MatMul");
  CHECK(steps[0].nodes.size() == 7);
}

TEST_CASE("onednn fuses x * Sigmoid(x) (SiLU) after MatMul as a swish post-op", "[onednn]") {
  const bool sigmoid_first = GENERATE(false, true);  // Mul(x, s) or Mul(s, x)
  GraphBuilder gb;
  gb.input("a", DType::kFloat32, {6, 8});
  gb.constant("w", random_tensor({8, 16}, 3));
  gb.node("matmul", "MatMul", {"a", "w"}, {"x"}, DType::kFloat32, {6, 16});
  gb.node("sigmoid", "Sigmoid", {"x"}, {"s"}, DType::kFloat32, {6, 16});
  if (sigmoid_first)
    gb.node("silu", "Mul", {"s", "x"}, {"y"}, DType::kFloat32, {6, 16});
  else
    gb.node("silu", "Mul", {"x", "s"}, {"y"}, DType::kFloat32, {6, 16});
  gb.output("y");
  const Graph& g = gb.finish();
  const auto steps = check_against_cpu(g, random_tensor({6, 8}, 5));
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].nodes == std::vector<std::string>{"matmul", "sigmoid", "silu"});
}

TEST_CASE("onednn keeps Sigmoid and Mul apart where the product is not x * Sigmoid(x) alone", "[onednn]") {
  // The Sigmoid's output is read by another node too: it must exist on its own.
  GraphBuilder gb;
  gb.input("a", DType::kFloat32, {6, 8});
  gb.constant("w", random_tensor({8, 16}, 3));
  gb.node("matmul", "MatMul", {"a", "w"}, {"x"}, DType::kFloat32, {6, 16});
  gb.node("sigmoid", "Sigmoid", {"x"}, {"s"}, DType::kFloat32, {6, 16});
  gb.node("silu", "Mul", {"x", "s"}, {"m"}, DType::kFloat32, {6, 16});
  gb.node("sum", "Add", {"m", "s"}, {"y"}, DType::kFloat32, {6, 16});
  gb.output("y");
  const Graph& g = gb.finish();
  const auto steps = check_against_cpu(g, random_tensor({6, 8}, 5));
  REQUIRE(steps.size() >= 2);
  CHECK(steps[0].nodes == std::vector<std::string>{"matmul"});
}

TEST_CASE("onednn claims Erf, ReduceMean and Pow only inside their patterns", "[onednn]") {
  SECTION("alone") {
    NodeSpec erf{.op_type = "Erf", .opset = 13};
    erf.inputs = {random_tensor({4}, 1)};
    const KernelMatch e = claim_on("onednn", erf);
    REQUIRE_FALSE(e);
    CHECK_THAT(e.reason(), Catch::Contains("Erf: the onednn EP runs Erf only inside the Gelu pattern "
                                           "x*0.5*(1+erf(x/sqrt(2)))") &&
                               Catch::Contains("the cpu EP runs it alone"));
    NodeSpec mean{.op_type = "ReduceMean", .opset = 13, .attrs = attrs({{"axes", ints{-1}}})};
    mean.inputs = {random_tensor({2, 4}, 1)};
    const KernelMatch r = claim_on("onednn", mean);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.reason(), Catch::Contains("ReduceMean: the onednn EP runs ReduceMean only inside the "
                                           "LayerNormalization pattern"));
  }
  SECTION("an exponent other than 2") {
    GraphBuilder gb;
    build_layer_norm(gb, {2, 8}, {.exponent = 3});
    const Graph& g = gb.finish();
    for (const char* name : {"mean", "square", "var"})
      CHECK_THAT(claim_node(g, name).reason(), Catch::Contains("only inside the LayerNormalization pattern"));
  }
  SECTION("an intermediate value read outside the pattern") {
    GraphBuilder gb;
    build_layer_norm(gb, {2, 8}, {});
    gb.output("sd");
    const Graph& g = gb.finish();
    CHECK_THAT(claim_node(g, "mean").reason(), Catch::Contains("only inside the LayerNormalization pattern"));
  }
  SECTION("a member whose shape is not known") {
    GraphBuilder gb;
    build_layer_norm(gb, {2, 8}, {});
    gb.graph.value(gb.id("sq")).type.shape.reset();
    const Graph& g = gb.finish();
    for (const char* name : {"mean", "square"})
      CHECK_THAT(claim_node(g, name).reason(),
                 Catch::Contains("the shape of 'sq' in the LayerNormalization pattern is not known statically"));
  }
  SECTION("axes that are not the last") {
    GraphBuilder gb;
    build_layer_norm(gb, {2, 8}, {});
    for (Node& n : gb.graph.nodes)
      if (n.op_type == "ReduceMean") n.attributes = attrs({{"axes", ints{0}}});
    const Graph& g = gb.finish();
    CHECK_FALSE(claim_node(g, "mean"));
  }
  SECTION("a member compiled without its pattern") {
    GraphBuilder gb;
    gb.input("x", DType::kFloat32, {4});
    gb.node("erf", "Erf", {"x"}, {"y"});
    gb.output("y");
    const Graph& g = gb.finish();
    auto out = run_partition("onednn", g, random_tensor({4}, 1));
    REQUIRE_FALSE(out);
    CHECK_THAT(out.error().render(), Catch::Contains("the onednn EP cannot run 'erf' (ai.onnx::Erf, opset 17) outside "
                                                     "its pattern"));
  }
  SECTION("Gelu with a divisor that is not sqrt(2)") {
    GraphBuilder gb;
    gb.input("x", DType::kFloat32, {4});
    build_gelu(gb, "x", {4}, GeluForm::kHalfLast);
    gb.graph.value(gb.id("c")).initializer = WeightHandle::resident(scalar(1.5f));
    gb.output("y");
    const Graph& g = gb.finish();
    CHECK_THAT(claim_node(g, "erf").reason(), Catch::Contains("only inside the Gelu pattern"));
  }
}

}  // namespace nxrt::test
