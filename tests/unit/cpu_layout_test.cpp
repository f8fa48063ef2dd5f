// The cpu EP's layout step: which QLinearConvs read and write channels-last values, and that a
// partition computes the same bits with them as without.
#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <set>

#include "cpu/cpu_provider.h"
#include "cpu/fusion.h"
#include "cpu/layout.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/session/claims.h"

namespace {

using nxrt::DType;
using nxrt::Shape;
using nxrt::Tensor;

// x (uint8 [2, 8, 9, 10]) -> pointwise conv_a (16) -> a -> depthwise 3x3 conv_b -> b; a ->
// pointwise conv_c (16) -> c; DequantizeLinear of b and c -> Add -> QuantizeLinear -> s ->
// pointwise conv_d (8) -> d, the graph's output. Options make one value leave the partition's
// layout or one convolution unable to keep it.
struct QuantizedBlock {
  struct Options {
    bool c_is_output = false;   // c is also a graph output
    int64_t b_group = 16;       // conv_b's groups: 16 is depthwise, 2 is neither that nor one group
    bool pool = false;          // conv_a writes a0, and a MaxPool (3x3, stride 1, pads 1) of it is a
    bool global_pool = false;   // the output is GlobalAveragePool of d dequantized, not d
    bool qoperator = false;     // ONNX Runtime's QLinearAdd and QLinearGlobalAveragePool instead of
                                // the float ops between DequantizeLinear and QuantizeLinear
    bool concat = false;        // b and c joined along their channels (Concat, or QLinearConcat with
                                // qoperator), not added: conv_d reads 32 channels
  };

  explicit QuantizedBlock(Options o) : options(o) {
    auto created = nxrt::cpu::CpuProvider::create(nxrt::EpConfig{2, {}, nullptr});
    if (!created) throw std::runtime_error(created.error().render());
    ep = std::move(*created);
    b.input("x", DType::kUInt8, {2, 8, 9, 10});
    b.constant("scale", Tensor::from_vector<float>({}, {0.05f}));
    b.constant("zero", Tensor::from_vector<uint8_t>({}, {120}));
    b.constant("w_scale", Tensor::from_vector<float>({}, {0.01f}));
    b.constant("w_zero", Tensor::from_vector<int8_t>({}, {0}));
    conv("conv_a", "x", o.pool ? "a0" : "a", weights("W_a", {16, 8, 1, 1}), 1, 0);
    if (o.pool) {
      b.node("pool", "MaxPool", {"a0"}, {"a"}, DType::kUInt8, {2, 16, 9, 10});
      b.graph.nodes.back().attributes.set("kernel_shape", nxrt::Attribute{std::vector<int64_t>{3, 3}});
      b.graph.nodes.back().attributes.set("pads", nxrt::Attribute{std::vector<int64_t>{1, 1, 1, 1}});
    }
    conv("conv_b", "a", "b", weights("W_b", {16, 16 / o.b_group, 3, 3}), o.b_group, 1);
    conv("conv_c", "a", "c", weights("W_c", {16, 16, 1, 1}), 1, 0);
    if (o.concat && o.qoperator) {
      microsoft_node("join", "QLinearConcat", {"scale", "zero", "b", "scale", "zero", "c", "w_scale", "zero"}, "s",
                     {2, 32, 9, 10});
      b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{1}});
    } else if (o.concat) {
      b.node("join", "Concat", {"b", "c"}, {"s"}, DType::kUInt8, {2, 32, 9, 10});
      b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{-3}});
    } else if (o.qoperator) {
      microsoft_node("add", "QLinearAdd", {"b", "scale", "zero", "c", "scale", "zero", "scale", "zero"}, "s",
                     {2, 16, 9, 10});
    } else {
      b.node("dq_b", "DequantizeLinear", {"b", "scale", "zero"}, {"fb"}, DType::kFloat32, {2, 16, 9, 10});
      b.node("dq_c", "DequantizeLinear", {"c", "scale", "zero"}, {"fc"}, DType::kFloat32, {2, 16, 9, 10});
      b.node("add", "Add", {"fb", "fc"}, {"sum"}, DType::kFloat32, {2, 16, 9, 10});
      b.node("q", "QuantizeLinear", {"sum", "scale", "zero"}, {"s"}, DType::kUInt8, {2, 16, 9, 10});
    }
    conv("conv_d", "s", "d", weights("W_d", {8, o.concat ? 32 : 16, 1, 1}), 1, 0);
    if (o.global_pool && o.qoperator) {
      microsoft_node("gap", "QLinearGlobalAveragePool", {"d", "scale", "zero", "scale", "zero"}, "pooled",
                     {2, 8, 1, 1});
      b.output("pooled");
    } else if (o.global_pool) {
      b.node("dq_d", "DequantizeLinear", {"d", "scale", "zero"}, {"fd"}, DType::kFloat32, {2, 8, 9, 10});
      b.node("gap", "GlobalAveragePool", {"fd"}, {"pooled"}, DType::kFloat32, {2, 8, 1, 1});
      b.output("pooled");
    } else {
      b.output("d");
    }
    if (o.c_is_output) b.output("c");
    b.finish();
    partition = nxrt::test::whole_graph(b.graph, "cpu");
    nxrt::compute_boundary(b.graph, partition);
  }

  std::string weights(const std::string& name, const Shape& shape) {
    std::vector<int8_t> w(static_cast<std::size_t>(nxrt::shape_numel(shape)));
    for (auto& v : w) v = static_cast<int8_t>(std::uniform_int_distribution<int>(-60, 60)(rng));
    b.constant(name, Tensor::from_vector<int8_t>(shape, w));
    return name;
  }

  void conv(const std::string& name, const std::string& x, const std::string& y, const std::string& w, int64_t group,
            int64_t pad) {
    const auto channels = b.graph.value(b.graph.intern_value(w)).type.static_shape()->front();
    b.node(name, "QLinearConv", {x, "scale", "zero", w, "w_scale", "w_zero", "scale", "zero"}, {y}, DType::kUInt8,
           {2, channels, 9, 10});
    auto& attributes = b.graph.nodes.back().attributes;
    attributes.set("group", nxrt::Attribute{group});
    attributes.set("pads", nxrt::Attribute{std::vector<int64_t>{pad, pad, pad, pad}});
  }

  // A com.microsoft node (opset 1) writing uint8 `y` of `shape`.
  void microsoft_node(const std::string& name, const std::string& op, std::initializer_list<std::string> inputs,
                      const std::string& y, const Shape& shape) {
    b.graph.opset_imports["com.microsoft"] = 1;
    b.node(name, op, inputs, {y}, DType::kUInt8, shape);
    b.graph.nodes.back().domain = "com.microsoft";
    b.graph.nodes.back().opset = 1;
  }

  // The layout of each convolution the layout step gives a step of its own, by name.
  std::map<std::string, std::string> layouts() const {
    auto fused = nxrt::cpu::find_fusions(partition);
    REQUIRE(fused);
    auto steps = nxrt::cpu::channels_last_steps(partition, *fused);
    REQUIRE(steps);
    std::map<std::string, std::string> out;
    for (const auto& step : *steps) {
      REQUIRE(step.nodes.size() == 1);
      const std::string variant(step.kernel->variant());
      out[b.graph.node(step.nodes[0]).name] = variant.substr(variant.rfind(' ') + 1);
    }
    return out;
  }

  // The partition's outputs, compiled by the cpu EP (with_layout) or with its fusions only.
  std::vector<nxrt::RuntimeValue> run(bool with_layout) const {
    const auto& cpu = static_cast<const nxrt::cpu::CpuProvider&>(*ep);
    auto fused = nxrt::cpu::find_fusions(partition);
    if (!fused) throw std::runtime_error(fused.error().render());
    auto kp = with_layout ? ep->compile(partition)
                          : nxrt::KernelPartition::build(partition, cpu.registry(), "cpu",
                                                         std::make_shared<nxrt::SerialParallel>(), {},
                                                         std::move(*fused));
    if (!kp) throw std::runtime_error(kp.error().render());
    std::vector<uint8_t> x(2 * 8 * 9 * 10);
    for (auto& v : x) v = static_cast<uint8_t>(std::uniform_int_distribution<int>(0, 255)(input_rng));
    auto out = (*kp)->run(std::vector<nxrt::RuntimeValue>{Tensor::from_vector<uint8_t>({2, 8, 9, 10}, x)});
    if (!out) throw std::runtime_error(out.error().render());
    return *out;
  }

  Options options;
  std::mt19937 rng{7};
  mutable std::mt19937 input_rng{9};
  std::unique_ptr<nxrt::ExecutionProvider> ep;
  nxrt::test::GraphBuilder b;
  nxrt::Partition partition;
};

// Whether the outputs of two compilations are the same bits, and not all one value (of bytes: many
// values).
void check_same_outputs(QuantizedBlock& f) {
  const auto with = f.run(true);
  f.input_rng.seed(9);
  const auto without = f.run(false);
  REQUIRE(with.size() == without.size());
  for (std::size_t i = 0; i < with.size(); ++i) {
    CHECK(with[i].tensor().shape() == without[i].tensor().shape());
    CHECK(nxrt::test::compare_tensors(with[i], without[i], 0, 0) == "");
    const Tensor& t = with[i].tensor();
    if (t.dtype() == DType::kFloat32) {
      CHECK(std::set<float>(t.data_as<float>(), t.data_as<float>() + t.numel()).size() > 8);
    } else {
      const auto* bytes = t.data_as<uint8_t>();
      CHECK(std::set<uint8_t>(bytes, bytes + t.numel()).size() > std::min<std::size_t>(20, t.numel() / 2));
    }
  }
}

}  // namespace

TEST_CASE("the cpu EP keeps values between its quantized convolutions and Adds channels-last", "[cpu][layout]") {
  QuantizedBlock f({});
  const std::map<std::string, std::string> expected = {
      {"conv_a", "nchw>nhwc"}, {"conv_b", "nhwc>nhwc"}, {"conv_c", "nhwc>nhwc"}, {"conv_d", "nhwc>nchw"}};
  CHECK(f.layouts() == expected);
  check_same_outputs(f);
}

TEST_CASE("the cpu EP keeps a MaxPool of bytes between convolutions channels-last", "[cpu][layout]") {
  QuantizedBlock f({.pool = true});
  const std::map<std::string, std::string> expected = {{"conv_a", "nchw>nhwc"},
                                                       {"pool", "nhwc>nhwc"},
                                                       {"conv_b", "nhwc>nhwc"},
                                                       {"conv_c", "nhwc>nhwc"},
                                                       {"conv_d", "nhwc>nchw"}};
  CHECK(f.layouts() == expected);
  check_same_outputs(f);
}

TEST_CASE("the cpu EP dequantizes and pools channels-last values where a network ends", "[cpu][layout]") {
  QuantizedBlock f({.global_pool = true});
  const std::map<std::string, std::string> expected = {{"conv_a", "nchw>nhwc"},
                                                       {"conv_b", "nhwc>nhwc"},
                                                       {"conv_c", "nhwc>nhwc"},
                                                       {"conv_d", "nhwc>nhwc"},
                                                       {"gap", "nhwc>nchw"}};
  CHECK(f.layouts() == expected);  // dq_d runs as it is, element by element
  check_same_outputs(f);
}

TEST_CASE("the cpu EP's layout step leaves in ONNX's layout what others read", "[cpu][layout]") {
  SECTION("an Add's operand the partition hands out: the Add, its operands and its output stay planes") {
    QuantizedBlock f({.c_is_output = true});
    const std::map<std::string, std::string> expected = {
        {"conv_a", "nchw>nhwc"}, {"conv_b", "nhwc>nchw"}, {"conv_c", "nhwc>nchw"}};
    CHECK(f.layouts() == expected);
    check_same_outputs(f);
  }
  SECTION("a convolution of two groups of eight channels reads planes, so a stays planes") {
    QuantizedBlock f({.b_group = 2});
    CHECK(f.layouts().empty());
    check_same_outputs(f);
  }
}

TEST_CASE("the cpu EP keeps ONNX Runtime's QLinearAdd and QLinearGlobalAveragePool in its layout", "[cpu][layout]") {
  QuantizedBlock f({.global_pool = true, .qoperator = true});
  const std::map<std::string, std::string> expected = {{"conv_a", "nchw>nhwc"},
                                                       {"conv_b", "nhwc>nhwc"},
                                                       {"conv_c", "nhwc>nhwc"},
                                                       {"conv_d", "nhwc>nhwc"},
                                                       {"gap", "nhwc"}};
  CHECK(f.layouts() == expected);  // the QLinearAdd runs as it is, element by element
  check_same_outputs(f);
}

TEST_CASE("the cpu EP joins channels-last values along their channels with Concat and QLinearConcat",
          "[cpu][layout]") {
  for (const bool qoperator : {false, true}) {
    INFO((qoperator ? "QLinearConcat" : "Concat"));
    QuantizedBlock f({.qoperator = qoperator, .concat = true});
    const std::map<std::string, std::string> expected = {{"conv_a", "nchw>nhwc"},
                                                         {"conv_b", "nhwc>nhwc"},
                                                         {"conv_c", "nhwc>nhwc"},
                                                         {"join", "nhwc"},
                                                         {"conv_d", "nhwc>nchw"}};
    CHECK(f.layouts() == expected);
    check_same_outputs(f);
  }
}
