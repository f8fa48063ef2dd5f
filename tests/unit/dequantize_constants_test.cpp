// DequantizeConstants: DequantizeLinear of initializers becomes a float initializer, computed
// as the run-time kernel computes it; what may change at run time, or is too large, stays.
#include <catch2/catch.hpp>

#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ir/passes.h"

namespace {

using nxrt::DType;
using nxrt::Graph;
using nxrt::Tensor;

std::vector<std::string> dequantize_constants(Graph& g) {
  auto changes = nxrt::DequantizeConstants().run(g);
  REQUIRE(changes);
  return *changes;
}

// The tensor initializer `name` holds.
Tensor initializer(const Graph& g, const std::string& name) {
  const auto& value = g.value(*g.find_value(name));
  REQUIRE(value.initializer);
  auto t = value.initializer->materialize();
  REQUIRE(t);
  return *t;
}

}  // namespace

TEST_CASE("dequantize-constants: weights per tensor and per axis become float initializers", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.constant("w", Tensor::from_vector<uint8_t>({2, 3}, {0, 10, 255, 128, 129, 7}));
  b.constant("w_scale", Tensor::from_vector<float>({}, {0.5f}));
  b.constant("w_zero", Tensor::from_vector<uint8_t>({}, {128}));
  b.constant("v", Tensor::from_vector<int8_t>({2, 3}, {-128, 0, 127, 5, -5, 1}));
  b.constant("v_scale", Tensor::from_vector<float>({3}, {1, 0.25f, 2}));
  b.constant("v_zero", Tensor::from_vector<int8_t>({3}, {0, 4, -1}));
  b.constant("bias", Tensor::from_vector<int32_t>({2}, {-100000, 7}));
  b.constant("bias_scale", Tensor::from_vector<float>({2}, {0.001f, 0.5f}));
  b.node("dq_w", "DequantizeLinear", {"w", "w_scale", "w_zero"}, {"wf"}, DType::kFloat32, {2, 3});
  b.node("dq_v", "DequantizeLinear", {"v", "v_scale", "v_zero"}, {"vf"}, DType::kFloat32, {2, 3});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{-1}});
  b.node("dq_bias", "DequantizeLinear", {"bias", "bias_scale"}, {"bf"}, DType::kFloat32, {2});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{0}});
  b.node("add", "Add", {"x", "wf"}, {"s"}, DType::kFloat32, {2, 3});
  b.node("mul", "Mul", {"s", "vf"}, {"y"}, DType::kFloat32, {2, 3});
  b.node("add_bias", "Add", {"y", "bf"}, {"z"}, DType::kFloat32, {2, 3});
  b.output("z");
  Graph& g = b.finish();
  // What the run-time kernel computes, for the comparison.
  auto run_dq = [](const Tensor& x, const Tensor& scale, const Tensor& zero, int64_t axis) {
    auto y = nxrt::test::run_on_cpu({.op_type = "DequantizeLinear",
                                     .opset = 17,
                                     .inputs = {x, scale, zero},
                                     .attrs = nxrt::test::attrs({{"axis", axis}})});
    REQUIRE(y);
    return (*y)[0];
  };
  const Tensor want_w = run_dq(initializer(g, "w"), initializer(g, "w_scale"), initializer(g, "w_zero"), 1);
  const Tensor want_v = run_dq(initializer(g, "v"), initializer(g, "v_scale"), initializer(g, "v_zero"), -1);
  const Tensor want_b = run_dq(initializer(g, "bias"), initializer(g, "bias_scale"), Tensor(), 0);

  const auto changes = dequantize_constants(g);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0] ==
        "computed DequantizeLinear 'dq_w' of initializer 'w' at load time: 'wf' = float[2,3] (24 bytes)");
  REQUIRE(g.nodes.size() == 3);
  CHECK(g.nodes[0].name == "add");
  CHECK(nxrt::test::compare_tensors(initializer(g, "wf"), want_w, 0, 0) == "");
  CHECK(nxrt::test::compare_tensors(initializer(g, "vf"), want_v, 0, 0) == "");
  CHECK(nxrt::test::compare_tensors(initializer(g, "bf"), want_b, 0, 0) == "");
  CHECK(initializer(g, "wf").data_as<float>()[2] == 63.5f);  // (255 - 128) * 0.5
  CHECK(initializer(g, "vf").data_as<float>()[1] == -1.0f);  // (0 - 4) * 0.25
  CHECK(g.value(*g.find_value("wf")).type.dtype == DType::kFloat32);
}

TEST_CASE("dequantize-constants: inputs a caller may feed, blocks, graph outputs and huge tensors stay nodes",
          "[passes]") {
  nxrt::test::GraphBuilder b;
  // An initializer that is also a graph input: a caller may feed another value.
  const nxrt::ValueId fed = b.constant("fed", Tensor::from_vector<uint8_t>({4}, {1, 2, 3, 4}));
  b.graph.value(fed).is_graph_input = true;
  b.graph.inputs.push_back(fed);
  b.constant("w", Tensor::from_vector<uint8_t>({4}, {1, 2, 3, 4}));
  b.constant("s", Tensor::from_vector<float>({}, {0.5f}));
  b.constant("s2", Tensor::from_vector<float>({2}, {0.5f, 1}));
  b.constant("huge", Tensor::empty(DType::kInt8, {(int64_t{64} << 18) + 1}));  // 64 MiB and 4 bytes as floats
  b.node("dq_fed", "DequantizeLinear", {"fed", "s"}, {"a"});
  b.node("dq_blocked", "DequantizeLinear", {"w", "s2"}, {"c"});
  b.graph.nodes.back().attributes.set("block_size", nxrt::Attribute{int64_t{2}});
  b.node("dq_out", "DequantizeLinear", {"w", "s"}, {"d"});
  b.node("dq_huge", "DequantizeLinear", {"huge", "s"}, {"e"}, DType::kFloat32, {(int64_t{64} << 18) + 1});
  b.node("sum", "Sum", {"a", "c"}, {"y"});
  b.output("y");
  b.output("d");
  b.output("e_sum");
  b.node("reduce", "ReduceSum", {"e"}, {"e_sum"}, DType::kFloat32, {1});
  Graph& g = b.finish();
  CHECK(dequantize_constants(g).empty());
  CHECK(g.nodes.size() == 6);
}
