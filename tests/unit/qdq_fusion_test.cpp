// FuseQdqNodeGroups: DequantizeLinear -> Conv / MatMul / Gemm -> QuantizeLinear groups become
// QLinearConv / QLinearMatMul / QGemm, and around Add, Mul, Sigmoid, LeakyRelu and the average
// pools ONNX Runtime's QLinear ops; groups whose integer form would say something else stay.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <optional>
#include <tuple>

#include "lib_test_util.h"
#include "nxrt/ir/passes.h"

namespace {

using nxrt::DType;
using nxrt::Graph;
using nxrt::Tensor;
using nxrt::test::GraphBuilder;

std::vector<std::string> fuse_qdq(Graph& g) {
  auto changes = nxrt::FuseQdqNodeGroups().run(g);
  REQUIRE(changes);
  return *changes;
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op_type);
  return ops;
}

std::vector<std::string> input_names(const Graph& g, const std::string& node) {
  std::vector<std::string> names;
  for (nxrt::ValueId v : g.node(*g.find_node(node)).inputs) names.push_back(g.value(v).name);
  return names;
}

// What a quantizer writes for one convolution of 2 output channels: X dequantized per tensor,
// W per output channel, the int32 bias at x_scale * w_scale, then (optionally) a Relu and the
// QuantizeLinear of Y, whose zero point is `y_zero`.
struct ConvGroup {
  float bias_scale_factor = 1;  // 1: the bias's scale is x_scale * w_scale
  bool relu = false;
  uint8_t y_zero = 0;
  std::optional<std::pair<float, float>> clip = std::nullopt;  // a Clip (min, max) instead of the Relu
};

GraphBuilder conv_group(const ConvGroup& c) {
  GraphBuilder b;
  b.input("xq", DType::kUInt8, {1, 1, 4, 4});
  b.constant("xs", Tensor::from_vector<float>({}, {0.5f}));
  b.constant("xz", Tensor::from_vector<uint8_t>({}, {128}));
  b.constant("w", Tensor::from_vector<int8_t>({2, 1, 1, 1}, {3, -5}));
  b.constant("ws", Tensor::from_vector<float>({2}, {0.25f, 0.125f}));
  b.constant("wz", Tensor::from_vector<int8_t>({2}, {0, 0}));
  b.constant("b", Tensor::from_vector<int32_t>({2}, {7, -9}));
  b.constant("bs", Tensor::from_vector<float>({2}, {0.125f * c.bias_scale_factor, 0.0625f}));
  b.constant("ys", Tensor::from_vector<float>({}, {0.2f}));
  b.constant("yz", Tensor::from_vector<uint8_t>({}, {c.y_zero}));
  b.node("dq_x", "DequantizeLinear", {"xq", "xs", "xz"}, {"x"}, DType::kFloat32, {1, 1, 4, 4});
  b.node("dq_w", "DequantizeLinear", {"w", "ws", "wz"}, {"wf"}, DType::kFloat32, {2, 1, 1, 1});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{0}});
  b.node("dq_b", "DequantizeLinear", {"b", "bs"}, {"bf"}, DType::kFloat32, {2});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{0}});
  b.node("conv", "Conv", {"x", "wf", "bf"}, {"y"}, DType::kFloat32, {1, 2, 4, 4});
  b.graph.nodes.back().attributes.set("kernel_shape", nxrt::Attribute{std::vector<int64_t>{1, 1}});
  if (c.relu) b.node("relu", "Relu", {"y"}, {"r"}, DType::kFloat32, {1, 2, 4, 4});
  if (c.clip) {
    b.constant("lo", Tensor::from_vector<float>({}, {c.clip->first}));
    b.constant("hi", Tensor::from_vector<float>({}, {c.clip->second}));
    b.node("clip", "Clip", {"y", "lo", "hi"}, {"r"}, DType::kFloat32, {1, 2, 4, 4});
  }
  b.node("q_y", "QuantizeLinear", {c.relu || c.clip ? "r" : "y", "ys", "yz"}, {"yq"}, DType::kUInt8, {1, 2, 4, 4});
  b.output("yq");
  return b;
}

}  // namespace

TEST_CASE("fuse-qdq: DequantizeLinear, Conv, Relu and QuantizeLinear become one QLinearConv", "[passes]") {
  GraphBuilder b = conv_group({.relu = true});
  Graph& g = b.finish();
  const auto changes = fuse_qdq(g);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] ==
        "fused Conv 'conv' with DequantizeLinear 'dq_x', 'dq_w', 'dq_b', Relu 'relu' (the zero point clamps as it "
        "does) and QuantizeLinear 'q_y' into QLinearConv");
  CHECK(ops_of(g) == std::vector<std::string>{"QLinearConv"});
  CHECK(input_names(g, "conv") == std::vector<std::string>{"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"});
  const nxrt::Node& conv = g.node(*g.find_node("conv"));
  CHECK(g.value(conv.outputs[0]).name == "yq");
  CHECK(g.value(conv.outputs[0]).producer == conv.id);
  CHECK(conv.attributes.get_ints("kernel_shape") == std::vector<int64_t>{1, 1});
}

TEST_CASE("fuse-qdq: a Clip goes with the Conv where the QuantizeLinear saturates at its bounds", "[passes]") {
  // y_scale 0.2, zero point 0: the QuantizeLinear's outputs stand for 0 to 51 (0.1 rounds to 0).
  for (const auto& [lo, hi, fused] : {std::tuple{0.f, 60.f, true}, std::tuple{-1.f, 100.f, true},
                                      std::tuple{0.1f, 51.f, true}, std::tuple{0.f, 6.f, false},
                                      std::tuple{0.3f, 60.f, false}}) {
    INFO("Clip(" << lo << ", " << hi << ")");
    GraphBuilder b = conv_group({.clip = std::pair{lo, hi}});
    Graph& g = b.finish();
    const auto changes = fuse_qdq(g);
    if (!fused) {
      CHECK(changes.empty());
      continue;
    }
    REQUIRE(changes.size() == 1);
    CHECK(changes[0] == "fused Conv 'conv' with DequantizeLinear 'dq_x', 'dq_w', 'dq_b', Clip 'clip' (the quantized "
                        "range lies within its bounds) and QuantizeLinear 'q_y' into QLinearConv");
    CHECK(ops_of(g) == std::vector<std::string>{"QLinearConv"});
  }
}

TEST_CASE("fuse-qdq: groups whose integer form would differ are left as they are", "[passes]") {
  SECTION("a Relu before a zero point that does not clamp at zero") {
    GraphBuilder b = conv_group({.relu = true, .y_zero = 128});
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
    CHECK(ops_of(g).size() == 6);
  }
  SECTION("a bias at another scale than x_scale * w_scale") {
    GraphBuilder b = conv_group({.bias_scale_factor = 1.01f});
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("a DequantizeLinear without a zero point (QLinearConv needs one)") {
    GraphBuilder b = conv_group({});
    b.graph.nodes[static_cast<std::size_t>(*b.graph.find_node("dq_x"))].inputs[2] = nxrt::kNoValue;
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("a QuantizeLinear without a zero point") {
    GraphBuilder b = conv_group({});
    b.graph.nodes[static_cast<std::size_t>(*b.graph.find_node("q_y"))].inputs[2] = nxrt::kNoValue;
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("Conv's float output read by another node too") {
    GraphBuilder b = conv_group({});
    b.output("y");
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
}

TEST_CASE("fuse-qdq: a DequantizeLinear that other nodes read stays for them", "[passes]") {
  GraphBuilder b = conv_group({.y_zero = 128});
  b.node("other", "Relu", {"x"}, {"x_relu"}, DType::kFloat32, {1, 1, 4, 4});
  b.output("x_relu");
  Graph& g = b.finish();
  REQUIRE(fuse_qdq(g).size() == 1);
  CHECK(ops_of(g) == std::vector<std::string>{"DequantizeLinear", "QLinearConv", "Relu"});
  CHECK(g.value(*g.find_value("x")).consumers.size() == 1);
}

TEST_CASE("fuse-qdq: DequantizeLinear, MatMul and QuantizeLinear become QLinearMatMul, B per column", "[passes]") {
  GraphBuilder b;
  b.input("aq", DType::kUInt8, {3, 4});
  b.constant("as", Tensor::from_vector<float>({}, {0.5f}));
  b.constant("az", Tensor::from_vector<uint8_t>({}, {100}));
  b.constant("bq", Tensor::from_vector<int8_t>({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.constant("bs", Tensor::from_vector<float>({2}, {0.25f, 0.5f}));
  b.constant("bz", Tensor::from_vector<int8_t>({2}, {0, 1}));
  b.constant("ys", Tensor::from_vector<float>({}, {0.3f}));
  b.constant("yz", Tensor::from_vector<int8_t>({}, {-3}));
  b.node("dq_a", "DequantizeLinear", {"aq", "as", "az"}, {"a"}, DType::kFloat32, {3, 4});
  b.node("dq_b", "DequantizeLinear", {"bq", "bs", "bz"}, {"bf"}, DType::kFloat32, {4, 2});
  b.node("mm", "MatMul", {"a", "bf"}, {"y"}, DType::kFloat32, {3, 2});
  b.node("q", "QuantizeLinear", {"y", "ys", "yz"}, {"yq"}, DType::kInt8, {3, 2});
  b.output("yq");
  Graph& g = b.finish();
  REQUIRE(fuse_qdq(g).size() == 1);
  CHECK(ops_of(g) == std::vector<std::string>{"QLinearMatMul"});
  CHECK(input_names(g, "mm") == std::vector<std::string>{"aq", "as", "az", "bq", "bs", "bz", "ys", "yz"});
}

namespace {

// A quantizer's Gemm: A [3, 4] per tensor, B [2, 4] (transB) per column of the product, the
// int32 bias C at a_scale * b_scale, Y quantized to int8.
struct GemmGroup {
  int64_t trans_a = 0;
  float beta = 1;
};

GraphBuilder gemm_group(const GemmGroup& o) {
  GraphBuilder b;
  b.input("aq", DType::kUInt8, {3, 4});
  b.constant("as", Tensor::from_vector<float>({}, {0.5f}));
  b.constant("az", Tensor::from_vector<uint8_t>({}, {100}));
  b.constant("bq", Tensor::from_vector<int8_t>({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}));
  b.constant("bs", Tensor::from_vector<float>({2}, {0.25f, 0.5f}));
  b.constant("bz", Tensor::from_vector<int8_t>({2}, {0, 0}));
  b.constant("c", Tensor::from_vector<int32_t>({2}, {40, -7}));
  b.constant("cs", Tensor::from_vector<float>({2}, {0.125f, 0.25f}));
  b.constant("ys", Tensor::from_vector<float>({}, {0.3f}));
  b.constant("yz", Tensor::from_vector<int8_t>({}, {-3}));
  b.node("dq_a", "DequantizeLinear", {"aq", "as", "az"}, {"a"}, DType::kFloat32, {3, 4});
  b.node("dq_b", "DequantizeLinear", {"bq", "bs", "bz"}, {"bf"}, DType::kFloat32, {2, 4});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{0}});
  b.node("dq_c", "DequantizeLinear", {"c", "cs"}, {"cf"}, DType::kFloat32, {2});
  b.node("gemm", "Gemm", {"a", "bf", "cf"}, {"y"}, DType::kFloat32, {3, 2});
  auto& attributes = b.graph.nodes.back().attributes;
  attributes.set("transB", nxrt::Attribute{int64_t{1}});
  attributes.set("transA", nxrt::Attribute{o.trans_a});
  attributes.set("alpha", nxrt::Attribute{0.75f});
  attributes.set("beta", nxrt::Attribute{o.beta});
  b.node("q", "QuantizeLinear", {"y", "ys", "yz"}, {"yq"}, DType::kInt8, {3, 2});
  b.output("yq");
  return b;
}

}  // namespace

TEST_CASE("fuse-qdq: DequantizeLinear, Gemm and QuantizeLinear become com.microsoft::QGemm", "[passes]") {
  GraphBuilder b = gemm_group({});
  Graph& g = b.finish();
  const auto changes = fuse_qdq(g);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "fused Gemm 'gemm' with DequantizeLinear 'dq_a', 'dq_b', 'dq_c' and QuantizeLinear 'q' into "
                      "com.microsoft::QGemm");
  CHECK(ops_of(g) == std::vector<std::string>{"QGemm"});
  const nxrt::Node& qgemm = g.node(*g.find_node("gemm"));
  CHECK(qgemm.domain == "com.microsoft");
  CHECK(qgemm.opset == 1);
  CHECK(g.opset_imports.at("com.microsoft") == 1);
  CHECK(input_names(g, "gemm") == std::vector<std::string>{"aq", "as", "az", "bq", "bs", "bz", "c", "ys", "yz"});
  CHECK(qgemm.attributes.int_or("transB", 0) == 1);
  CHECK(qgemm.attributes.float_or("alpha", 1) == 0.75f);
  CHECK_FALSE(qgemm.attributes.has("beta"));  // QGemm has none
}

TEST_CASE("fuse-qdq: a Gemm that QGemm would not say the same as stays", "[passes]") {
  SECTION("A transposed") {
    GraphBuilder b = gemm_group({.trans_a = 1});
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("C scaled by beta") {
    GraphBuilder b = gemm_group({.beta = 0.5f});
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
}

TEST_CASE("fuse-qdq: ops that only move values run on the quantized values between equal quantizations",
          "[passes]") {
  for (const auto& [y_scale, y_zero] : {std::pair{0.5f, uint8_t{10}}, std::pair{0.25f, uint8_t{10}},
                                        std::pair{0.5f, uint8_t{11}}}) {
    INFO("QuantizeLinear scale " << y_scale << ", zero point " << int{y_zero});
    GraphBuilder b;
    b.input("xq", DType::kUInt8, {1, 2, 4, 4});
    b.constant("xs", Tensor::from_vector<float>({}, {0.5f}));
    b.constant("xz", Tensor::from_vector<uint8_t>({}, {10}));
    b.constant("ys", Tensor::from_vector<float>({}, {y_scale}));
    b.constant("yz", Tensor::from_vector<uint8_t>({}, {y_zero}));
    b.node("dq", "DequantizeLinear", {"xq", "xs", "xz"}, {"x"}, DType::kFloat32, {1, 2, 4, 4});
    b.node("pool", "MaxPool", {"x"}, {"p"}, DType::kFloat32, {1, 2, 2, 2});
    b.graph.nodes.back().attributes.set("kernel_shape", nxrt::Attribute{std::vector<int64_t>{2, 2}});
    b.node("q", "QuantizeLinear", {"p", "ys", "yz"}, {"pq"}, DType::kUInt8, {1, 2, 2, 2});
    b.output("pq");
    Graph& g = b.finish();
    const auto changes = fuse_qdq(g);
    if (y_scale != 0.5f || y_zero != 10) {  // another scale or zero point: the QuantizeLinear changes values
      CHECK(changes.empty());
      continue;
    }
    REQUIRE(changes.size() == 1);
    CHECK(changes[0] == "MaxPool 'pool' runs on the quantized values of DequantizeLinear 'dq': QuantizeLinear 'q' "
                        "has the same scale and zero point");
    CHECK(ops_of(g) == std::vector<std::string>{"MaxPool"});
    CHECK(input_names(g, "pool") == std::vector<std::string>{"xq"});
    CHECK(g.value(g.node(*g.find_node("pool")).outputs[0]).name == "pq");
  }
}

TEST_CASE("fuse-qdq: Concat runs on the quantized values when every input has the QuantizeLinear's quantization",
          "[passes]") {
  for (float b_scale : {0.5f, 0.25f}) {
    nxrt::test::GraphBuilder b;
    b.input("aq", DType::kUInt8, {1, 2, 4});
    b.input("bq", DType::kUInt8, {1, 3, 4});
    b.constant("s", Tensor::from_vector<float>({}, {0.5f}));
    b.constant("bs", Tensor::from_vector<float>({}, {b_scale}));
    b.constant("z", Tensor::from_vector<uint8_t>({}, {10}));
    b.node("dq_a", "DequantizeLinear", {"aq", "s", "z"}, {"a"}, DType::kFloat32, {1, 2, 4});
    b.node("dq_b", "DequantizeLinear", {"bq", "bs", "z"}, {"b"}, DType::kFloat32, {1, 3, 4});
    b.node("cat", "Concat", {"a", "b", "a"}, {"c"}, DType::kFloat32, {1, 7, 4});
    b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{1}});
    b.node("q", "QuantizeLinear", {"c", "s", "z"}, {"cq"}, DType::kUInt8, {1, 7, 4});
    b.output("cq");
    Graph& g = b.finish();
    const auto changes = fuse_qdq(g);
    if (b_scale != 0.5f) {  // one input at another scale: its values change, and the nodes stay
      CHECK(changes.empty());
      CHECK(g.nodes.size() == 4);
      continue;
    }
    REQUIRE(changes.size() == 1);
    CHECK(changes[0] == "Concat 'cat' runs on the quantized values of DequantizeLinear 'dq_a', 'dq_b', 'dq_a': "
                        "QuantizeLinear 'q' has the same scale and zero point");
    CHECK(ops_of(g) == std::vector<std::string>{"Concat"});
    CHECK(input_names(g, "cat") == std::vector<std::string>{"aq", "bq", "aq"});
    CHECK(g.value(g.node(*g.find_node("cat")).outputs[0]).name == "cq");
  }
}

namespace {

// DequantizeLinear of uint8 a (and b, for `binary` ops) -> `op` of float (-> Relu) ->
// QuantizeLinear of y to `y_type` with zero point `y_zero`, every value [1, 2, 3, 3] but the pool's
// output ([1, 2, 1, 1] for GlobalAveragePool).
GraphBuilder elementwise_group(const std::string& op, bool binary, bool relu = false, DType y_type = DType::kUInt8,
                               int y_zero = 0) {
  GraphBuilder b;
  const nxrt::Shape shape{1, 2, 3, 3};
  const nxrt::Shape out = op == "GlobalAveragePool" ? nxrt::Shape{1, 2, 1, 1} : shape;
  b.constant("s", Tensor::from_vector<float>({}, {0.1f}));
  b.constant("z", Tensor::from_vector<uint8_t>({}, {128}));
  b.constant("ys", Tensor::from_vector<float>({}, {0.2f}));
  if (y_type == DType::kUInt8) b.constant("yz", Tensor::from_vector<uint8_t>({}, {static_cast<uint8_t>(y_zero)}));
  else b.constant("yz", Tensor::from_vector<int8_t>({}, {static_cast<int8_t>(y_zero)}));
  b.input("aq", DType::kUInt8, shape);
  b.node("dq_a", "DequantizeLinear", {"aq", "s", "z"}, {"a"}, DType::kFloat32, shape);
  if (binary) {
    b.input("bq", DType::kUInt8, shape);
    b.node("dq_b", "DequantizeLinear", {"bq", "s", "z"}, {"b"}, DType::kFloat32, shape);
    b.node("op", op, {"a", "b"}, {"y"}, DType::kFloat32, out);
  } else {
    b.node("op", op, {"a"}, {"y"}, DType::kFloat32, out);
  }
  if (relu) b.node("relu", "Relu", {"y"}, {"r"}, DType::kFloat32, out);
  b.node("q", "QuantizeLinear", {relu ? "r" : "y", "ys", "yz"}, {"yq"}, y_type, out);
  b.output("yq");
  return b;
}

}  // namespace

TEST_CASE("fuse-qdq: Add, Mul, Sigmoid, LeakyRelu and the average pools become ONNX Runtime's QLinear ops",
          "[passes]") {
  for (const auto& [op, binary] : {std::pair{"Add", true}, std::pair{"Mul", true}, std::pair{"Sigmoid", false},
                                   std::pair{"LeakyRelu", false}, std::pair{"GlobalAveragePool", false},
                                   std::pair{"AveragePool", false}}) {
    INFO(op);
    GraphBuilder b = elementwise_group(op, binary);
    nxrt::Node& node = b.graph.nodes[static_cast<std::size_t>(*b.graph.find_node("op"))];
    if (std::string(op) == "LeakyRelu") node.attributes.set("alpha", nxrt::Attribute{0.3f});
    if (std::string(op) == "AveragePool") {
      node.attributes.set("kernel_shape", nxrt::Attribute{std::vector<int64_t>{2, 2}});
      node.attributes.set("count_include_pad", nxrt::Attribute{int64_t{1}});
    }
    Graph& g = b.finish();
    const auto changes = fuse_qdq(g);
    REQUIRE(changes.size() == 1);
    CHECK(changes[0] == fmt::format("fused {} 'op' with DequantizeLinear 'dq_a'{} and QuantizeLinear 'q' into "
                                    "com.microsoft::QLinear{}",
                                    op, binary ? ", 'dq_b'" : "", op));
    REQUIRE(g.nodes.size() == 1);
    const nxrt::Node& fused = g.nodes[0];
    CHECK(fused.op_type == std::string("QLinear") + op);
    CHECK(fused.domain == "com.microsoft");
    CHECK(g.opset_imports.at("com.microsoft") == 1);
    const std::vector<std::string> expected_inputs =
        binary ? std::vector<std::string>{"aq", "s", "z", "bq", "s", "z", "ys", "yz"}
               : std::vector<std::string>{"aq", "s", "z", "ys", "yz"};
    CHECK(input_names(g, "op") == expected_inputs);
    CHECK(g.value(fused.outputs[0]).name == "yq");
    if (std::string(op) == "LeakyRelu") CHECK(fused.attributes.float_or("alpha", 0) == 0.3f);
    if (std::string(op) == "AveragePool") {
      CHECK(fused.attributes.get_ints("kernel_shape") == std::vector<int64_t>{2, 2});
      CHECK(fused.attributes.int_or("count_include_pad", 0) == 1);
    }
  }
}

TEST_CASE("fuse-qdq: a Relu between an Add and a QuantizeLinear that saturates at zero goes into QLinearAdd",
          "[passes]") {
  GraphBuilder b = elementwise_group("Add", true, true);
  Graph& g = b.finish();
  const auto changes = fuse_qdq(g);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "fused Add 'op' with DequantizeLinear 'dq_a', 'dq_b', Relu 'relu' (the zero point clamps as it "
                      "does) and QuantizeLinear 'q' into com.microsoft::QLinearAdd");
  CHECK(ops_of(g) == std::vector<std::string>{"QLinearAdd"});
}

TEST_CASE("fuse-qdq: QLinear groups of mixed types, a kept Relu or dilations stay float", "[passes]") {
  SECTION("inputs uint8, output int8: the QLinear ops take one type") {
    GraphBuilder b = elementwise_group("Add", true, false, DType::kInt8);
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("a Relu the QuantizeLinear does not clamp like (zero point 128)") {
    GraphBuilder b = elementwise_group("Mul", true, true, DType::kUInt8, 128);
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
  SECTION("an AveragePool with dilations") {
    GraphBuilder b = elementwise_group("AveragePool", false);
    nxrt::Node& node = b.graph.nodes[static_cast<std::size_t>(*b.graph.find_node("op"))];
    node.attributes.set("kernel_shape", nxrt::Attribute{std::vector<int64_t>{2, 2}});
    node.attributes.set("dilations", nxrt::Attribute{std::vector<int64_t>{2, 2}});
    Graph& g = b.finish();
    CHECK(fuse_qdq(g).empty());
  }
}
