// The cpu EP's fusion step: MatMulInteger -> Cast -> Mul runs as one kernel with the same
// outputs as the three, and only where no other reader needs the intermediates.
#include <catch2/catch.hpp>

#include <set>

#include "cpu/cpu_provider.h"
#include "cpu/fusion.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/session/claims.h"

namespace {

using nxrt::DType;
using nxrt::Shape;
using nxrt::Tensor;

// a (uint8 [3,5]) x W (int8 [5,6], constant) with a zero point -> sums (int32) -> Cast ->
// floats -> Mul by `scale` -> y. Variations leave out one condition of the fusion.
struct ScaledMatMulInteger {
  struct Options {
    Shape scale_shape = {6};
    bool scale_first = false;      // Mul(scale, floats) instead of Mul(floats, scale)
    bool sums_are_output = false;  // the int32 sums are also a graph output
    int64_t cast_to = 1;           // FLOAT
  };

  explicit ScaledMatMulInteger(Options o) {
    auto created = nxrt::cpu::CpuProvider::create(nxrt::EpConfig{1, {}, nullptr});
    if (!created) throw std::runtime_error(created.error().render());
    ep = std::move(*created);
    b.input("a", DType::kUInt8, {3, 5});
    b.input("a_zero", DType::kUInt8, {});
    b.input("scale", DType::kFloat32, o.scale_shape);
    std::vector<int8_t> w(30);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(static_cast<int>(i * 37 % 255) - 127);
    b.constant("W", Tensor::from_vector<int8_t>({5, 6}, w));
    b.node("mm", "MatMulInteger", {"a", "W", "a_zero"}, {"sums"}, DType::kInt32, {3, 6});
    b.node("cast", "Cast", {"sums"}, {"floats"}, o.cast_to == 1 ? DType::kFloat32 : DType::kFloat64, {3, 6});
    b.graph.nodes.back().attributes.set("to", nxrt::Attribute{o.cast_to});
    if (o.scale_first)
      b.node("mul", "Mul", {"scale", "floats"}, {"y"}, DType::kFloat32, {3, 6});
    else
      b.node("mul", "Mul", {"floats", "scale"}, {"y"}, DType::kFloat32, {3, 6});
    b.output("y");
    if (o.sums_are_output) b.output("sums");
    b.finish();
    partition.graph = &b.graph;
    partition.ep = "cpu";
    partition.name = "cpu_0";
    partition.nodes = {0, 1, 2};
    nxrt::compute_boundary(b.graph, partition);
  }

  std::vector<nxrt::RuntimeValue> inputs(const Shape& scale_shape) const {
    std::vector<uint8_t> a(15);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i * 53 % 256);
    std::vector<float> scale(static_cast<std::size_t>(nxrt::shape_numel(scale_shape)));
    for (std::size_t i = 0; i < scale.size(); ++i) scale[i] = 0.03125f * static_cast<float>(i + 1);
    std::vector<nxrt::RuntimeValue> out;
    for (nxrt::ValueId v : partition.inputs) {
      const std::string& name = b.graph.value(v).name;
      if (name == "a") out.emplace_back(Tensor::from_vector<uint8_t>({3, 5}, a));
      if (name == "a_zero") out.emplace_back(Tensor::from_vector<uint8_t>({}, {7}));
      if (name == "scale") out.emplace_back(Tensor::from_vector<float>(scale_shape, scale));
    }
    return out;
  }

  const nxrt::cpu::CpuProvider& cpu() const { return static_cast<const nxrt::cpu::CpuProvider&>(*ep); }

  std::unique_ptr<nxrt::ExecutionProvider> ep;
  nxrt::test::GraphBuilder b;
  nxrt::Partition partition;
};

// The outputs of the three kernels one by one (no fusion).
std::vector<nxrt::RuntimeValue> unfused_outputs(const ScaledMatMulInteger& f, const Shape& scale_shape) {
  auto kp =
      nxrt::KernelPartition::build(f.partition, f.cpu().registry(), "cpu", std::make_shared<nxrt::SerialParallel>());
  if (!kp) throw std::runtime_error(kp.error().render());
  auto out = (*kp)->run(f.inputs(scale_shape));
  if (!out) throw std::runtime_error(out.error().render());
  return *out;
}

std::size_t fusion_count(const ScaledMatMulInteger& f) {
  auto fused = nxrt::cpu::find_fusions(f.partition);
  if (!fused) throw std::runtime_error(fused.error().render());
  return fused->size();
}

}  // namespace

TEST_CASE("the cpu EP runs MatMulInteger, Cast and Mul as one step with the same outputs", "[cpu][fusion]") {
  for (const Shape& scale_shape : {Shape{6}, Shape{}, Shape{1}, Shape{1, 6}})
    for (bool scale_first : {false, true}) {
      INFO("scale " << nxrt::shape_to_string(scale_shape) << (scale_first ? ", first operand" : ", second operand"));
      ScaledMatMulInteger f({.scale_shape = scale_shape, .scale_first = scale_first});
      REQUIRE(fusion_count(f) == 1);
      auto compiled = f.ep->compile(f.partition);
      REQUIRE(compiled);
      auto out = (*compiled)->run(f.inputs(scale_shape));
      REQUIRE(out);
      CHECK(nxrt::test::compare_tensors((*out)[0], unfused_outputs(f, scale_shape)[0]) == "");
      const auto steps = (*compiled)->profile();
      REQUIRE(steps.size() == 1);
      CHECK(steps[0].nodes == std::vector<std::string>{"mm", "cast", "mul"});
      CHECK(steps[0].op_type == "MatMulInteger");
      CHECK_THAT(steps[0].variant, Catch::Matchers::EndsWith("+cast+mul"));
    }
}

TEST_CASE("the cpu EP fuses MatMulInteger, Cast and Mul only where nothing else needs the steps between",
          "[cpu][fusion]") {
  SECTION("the int32 sums are also a graph output") {
    ScaledMatMulInteger f({.sums_are_output = true});
    CHECK(fusion_count(f) == 0);
    auto compiled = f.ep->compile(f.partition);
    REQUIRE(compiled);
    CHECK((*compiled)->profile().size() == 3);
  }
  SECTION("the scale would add a dim to the product") {
    ScaledMatMulInteger f({.scale_shape = {1, 1, 6}});
    CHECK(fusion_count(f) == 0);
  }
  SECTION("the scale varies along rows") {
    ScaledMatMulInteger f({.scale_shape = {3, 1}});
    CHECK(fusion_count(f) == 0);
  }
  SECTION("the Cast is to double") {
    ScaledMatMulInteger f({.cast_to = 11});
    CHECK(fusion_count(f) == 0);
  }
}

TEST_CASE("a restored cpu EPContext runs the fused step too", "[cpu][fusion][epcontext]") {
  ScaledMatMulInteger f({});
  auto* capable = dynamic_cast<nxrt::ContextCapable*>(f.ep.get());
  REQUIRE(capable);
  auto compiled = f.ep->compile(f.partition);
  REQUIRE(compiled);
  auto ctx = capable->save_context(f.partition, **compiled);
  REQUIRE(ctx);
  auto restored = capable->load_context(*ctx, f.partition);
  REQUIRE(restored);
  CHECK((*restored)->profile().size() == 1);
  auto out = (*restored)->run(f.inputs({6}));
  REQUIRE(out);
  CHECK(nxrt::test::compare_tensors((*out)[0], unfused_outputs(f, {6})[0]) == "");
}

TEST_CASE("KernelPartition refuses a fused step whose kept value another reader needs", "[lib][kernel_partition]") {
  ScaledMatMulInteger f({.sums_are_output = true});
  // A (wrong) fusion of MatMulInteger and Cast that keeps the sums, which the graph outputs.
  std::vector<nxrt::FusedStep> fused(1);
  fused[0].nodes = {0, 1};
  fused[0].inputs = {f.b.id("a"), f.b.id("W"), f.b.id("a_zero")};
  fused[0].outputs = {f.b.id("floats")};
  auto kernel = f.cpu().registry().create(nxrt::NodeContext(f.b.graph, f.b.graph.nodes[0]), "cpu");
  REQUIRE(kernel);
  fused[0].kernel = std::move(*kernel);
  auto kp = nxrt::KernelPartition::build(f.partition, f.cpu().registry(), "cpu",
                                         std::make_shared<nxrt::SerialParallel>(), {}, std::move(fused));
  REQUIRE_FALSE(kp);
  CHECK(kp.error().what ==
        "partition 'cpu_0': 'sums' is kept inside a fused step but a reader outside the partition reads it");
}

namespace {

// x -> Sigmoid -> s, then Mul(x, s) (or Mul(s, x)) -> y, as one cpu partition; `s_is_output`
// also makes the sigmoids a graph output.
struct TimesSigmoid {
  TimesSigmoid(bool s_first, bool s_is_output, DType dtype = DType::kFloat32) {
    auto created = nxrt::cpu::CpuProvider::create(nxrt::EpConfig{1, {}, nullptr});
    if (!created) throw std::runtime_error(created.error().render());
    ep = std::move(*created);
    b.input("x", dtype, {2, 37});
    b.node("sigmoid", "Sigmoid", {"x"}, {"s"}, dtype, {2, 37});
    if (s_first)
      b.node("mul", "Mul", {"s", "x"}, {"y"}, dtype, {2, 37});
    else
      b.node("mul", "Mul", {"x", "s"}, {"y"}, dtype, {2, 37});
    b.output("y");
    if (s_is_output) b.output("s");
    b.finish();
    partition.graph = &b.graph;
    partition.ep = "cpu";
    partition.name = "cpu_0";
    partition.nodes = {0, 1};
    nxrt::compute_boundary(b.graph, partition);
  }
  std::unique_ptr<nxrt::ExecutionProvider> ep;
  nxrt::test::GraphBuilder b;
  nxrt::Partition partition;
};

Tensor sigmoid_inputs() {
  std::vector<float> x(74);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = -30.0f + 0.8f * static_cast<float>(i);
  return Tensor::from_vector<float>({2, 37}, x);
}

}  // namespace

TEST_CASE("the cpu EP runs x * Sigmoid(x) as one step with the outputs of the two", "[cpu][fusion]") {
  for (bool s_first : {false, true}) {
    TimesSigmoid f(s_first, false);
    const auto& cpu = static_cast<const nxrt::cpu::CpuProvider&>(*f.ep);
    auto fused = nxrt::cpu::find_fusions(f.partition);
    REQUIRE(fused);
    REQUIRE(fused->size() == 1);
    auto compiled = f.ep->compile(f.partition);
    REQUIRE(compiled);
    const std::vector<nxrt::RuntimeValue> in = {sigmoid_inputs()};
    auto out = (*compiled)->run(in);
    REQUIRE(out);
    auto unfused =
        nxrt::KernelPartition::build(f.partition, cpu.registry(), "cpu", std::make_shared<nxrt::SerialParallel>());
    REQUIRE(unfused);
    auto expected = (*unfused)->run(in);
    REQUIRE(expected);
    CHECK(nxrt::test::compare_tensors((*out)[0], (*expected)[0]) == "");
    const auto steps = (*compiled)->profile();
    REQUIRE(steps.size() == 1);
    CHECK(steps[0].nodes == std::vector<std::string>{"sigmoid", "mul"});
    CHECK(steps[0].variant == "vector-exp*x");
  }
}

TEST_CASE("the cpu EP leaves Sigmoid and Mul apart where the sigmoids are needed or not float", "[cpu][fusion]") {
  TimesSigmoid needed(false, true);
  auto fused = nxrt::cpu::find_fusions(needed.partition);
  REQUIRE(fused);
  CHECK(fused->empty());
  TimesSigmoid wide(false, false, DType::kFloat64);
  fused = nxrt::cpu::find_fusions(wide.partition);
  REQUIRE(fused);
  CHECK(fused->empty());
}

TEST_CASE("the fused MatMulInteger step names a scale of the wrong length", "[cpu][fusion]") {
  // Declared [6] (so the chain is fused), but 4 values arrive when the partition runs.
  ScaledMatMulInteger f({});
  auto compiled = f.ep->compile(f.partition);
  REQUIRE(compiled);
  auto out = (*compiled)->run(f.inputs({4}));
  REQUIRE_FALSE(out);
  const std::string text = out.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains("MatMulInteger+Cast+Mul: the Mul's scale (input 4) has 4 values; it "
                                             "needs 1 or 6"));
  CHECK_THAT(text, Catch::Matchers::Contains("give one value, or 6 (one per column of B)"));
  CHECK_THAT(text, Catch::Matchers::Contains("'mm' (ai.onnx::MatMulInteger, opset 17) (fused with 'cast', 'mul')"));
}

namespace {

// DequantizeLinear of a and of b -> Add (-> Relu) -> QuantizeLinear -> y as one cpu partition,
// every scale and zero point a constant of one value. Variations leave out one condition of
// the fusion or change the types.
struct QdqAdd {
  struct Options {
    DType a_type = DType::kUInt8, b_type = DType::kUInt8, y_type = DType::kUInt8;
    bool relu = false;
    bool y_zero = true;             // the QuantizeLinear has a zero point
    bool a_read_elsewhere = false;  // a's float values are also a graph output
    Shape b_shape = {2, 3, 50};     // [2, 3, 50] like a, or one that broadcasts
    Shape a_scale_shape = {};       // [] or one per channel ([3], with axis 1)
  };

  explicit QdqAdd(Options o) : options(o) {
    auto created = nxrt::cpu::CpuProvider::create(nxrt::EpConfig{1, {}, nullptr});
    if (!created) throw std::runtime_error(created.error().render());
    ep = std::move(*created);
    const Shape shape = {2, 3, 50};
    b.input("a", o.a_type, shape);
    b.input("b", o.b_type, o.b_shape);
    std::vector<float> a_scales(static_cast<std::size_t>(nxrt::shape_numel(o.a_scale_shape)), 0.043f);
    b.constant("a_scale", Tensor::from_vector<float>(o.a_scale_shape, a_scales));
    b.constant("a_zero", zero_point(o.a_type, o.a_scale_shape, 131, -3));
    b.constant("b_scale", Tensor::from_vector<float>({}, {0.027f}));
    b.constant("b_zero", zero_point(o.b_type, {}, 120, 7));
    b.constant("y_scale", Tensor::from_vector<float>({}, {0.061f}));
    b.constant("y_zero", zero_point(o.y_type, {}, 20, -90));
    b.node("dq_a", "DequantizeLinear", {"a", "a_scale", "a_zero"}, {"fa"}, DType::kFloat32, shape);
    b.node("dq_b", "DequantizeLinear", {"b", "b_scale", "b_zero"}, {"fb"}, DType::kFloat32, o.b_shape);
    b.node("add", "Add", {"fa", "fb"}, {"sum"}, DType::kFloat32, shape);
    if (o.relu) b.node("relu", "Relu", {"sum"}, {"pos"}, DType::kFloat32, shape);
    b.node("q", "QuantizeLinear", {o.relu ? "pos" : "sum", "y_scale", o.y_zero ? "y_zero" : ""}, {"y"}, o.y_type,
           shape);
    b.output("y");
    if (o.a_read_elsewhere) b.output("fa");
    b.finish();
    partition = nxrt::test::whole_graph(b.graph, "cpu");
  }

  static Tensor zero_point(DType t, const Shape& shape, uint8_t unsigned_zero, int8_t signed_zero) {
    const auto n = static_cast<std::size_t>(nxrt::shape_numel(shape));
    if (t == DType::kInt8) return Tensor::from_vector<int8_t>(shape, std::vector<int8_t>(n, signed_zero));
    return Tensor::from_vector<uint8_t>(shape, std::vector<uint8_t>(n, unsigned_zero));
  }

  // Every byte value in both inputs, in differing orders: sums that saturate both ways and
  // quotients that fall on halves.
  static Tensor bytes(DType t, const Shape& shape, std::size_t step) {
    const auto n = static_cast<std::size_t>(nxrt::shape_numel(shape));
    std::vector<uint8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * step % 256);
    if (t == DType::kUInt8) return Tensor::from_vector<uint8_t>(shape, v);
    return Tensor::from_vector<int8_t>(shape, std::vector<int8_t>(v.begin(), v.end()));
  }

  std::vector<nxrt::RuntimeValue> inputs() const {
    std::vector<nxrt::RuntimeValue> out;
    for (nxrt::ValueId v : partition.inputs) {
      const std::string& name = b.graph.value(v).name;
      if (name == "a") out.emplace_back(bytes(options.a_type, {2, 3, 50}, 7));
      if (name == "b") out.emplace_back(bytes(options.b_type, options.b_shape, 13));
    }
    return out;
  }

  std::vector<nxrt::RuntimeValue> run(bool fused) const {
    const auto& cpu = static_cast<const nxrt::cpu::CpuProvider&>(*ep);
    auto kp = fused ? ep->compile(partition)
                    : nxrt::KernelPartition::build(partition, cpu.registry(), "cpu",
                                                   std::make_shared<nxrt::SerialParallel>());
    if (!kp) throw std::runtime_error(kp.error().render());
    auto out = (*kp)->run(inputs());
    if (!out) throw std::runtime_error(out.error().render());
    return *out;
  }

  std::vector<nxrt::FusedStep> fusions() const {
    auto fused = nxrt::cpu::find_fusions(partition);
    if (!fused) throw std::runtime_error(fused.error().render());
    return std::move(*fused);
  }

  Options options;
  std::unique_ptr<nxrt::ExecutionProvider> ep;
  nxrt::test::GraphBuilder b;
  nxrt::Partition partition;
};

}  // namespace

TEST_CASE("the cpu EP runs DequantizeLinear, Add, Relu and QuantizeLinear as one step with the same bits",
          "[cpu][fusion]") {
  for (DType a : {DType::kUInt8, DType::kInt8})
    for (DType y : {DType::kUInt8, DType::kInt8})
      for (bool relu : {false, true})
        for (bool y_zero : {true, false}) {
          if (!y_zero && y != DType::kUInt8) continue;  // without a zero point, QuantizeLinear writes uint8
          INFO(nxrt::dtype_name(a) << " + uint8 -> " << nxrt::dtype_name(y) << (relu ? ", relu" : "")
                                   << (y_zero ? "" : ", no y zero point"));
          QdqAdd f({.a_type = a, .y_type = y, .relu = relu, .y_zero = y_zero});
          const auto steps = f.fusions();
          REQUIRE(steps.size() == 1);
          CHECK(steps[0].nodes.size() == (relu ? 5u : 4u));
          const auto fused = f.run(true);
          CHECK(nxrt::test::compare_tensors(fused[0], f.run(false)[0], 0, 0) == "");
          // Not a constant: the outputs span the range, saturating at one end or both.
          const Tensor& t = fused[0].tensor();
          std::set<int> seen;
          for (int64_t i = 0; i < t.numel(); ++i)
            seen.insert(y == DType::kInt8 ? t.data_as<int8_t>()[i] : t.data_as<uint8_t>()[i]);
          CHECK(seen.size() > 100);
        }
  QdqAdd f({.relu = true});
  auto compiled = f.ep->compile(f.partition);
  REQUIRE(compiled);
  const auto profile = (*compiled)->profile();
  REQUIRE(profile.size() == 1);
  CHECK(profile[0].nodes == std::vector<std::string>{"add", "dq_a", "dq_b", "relu", "q"});
  CHECK(profile[0].op_type == "Add");
  CHECK(profile[0].variant == "dq+add+relu+q");
}

TEST_CASE("the cpu EP fuses a quantized Add only with one scale per tensor and operands of one shape",
          "[cpu][fusion]") {
  SECTION("a's float values are also read elsewhere: its DequantizeLinear stays, the rest is fused") {
    QdqAdd f({.a_read_elsewhere = true});
    const auto steps = f.fusions();
    REQUIRE(steps.size() == 1);
    CHECK(steps[0].nodes == std::vector<nxrt::NodeId>{2, 1, 3});  // the Add first
    const auto fused = f.run(true), unfused = f.run(false);
    CHECK(nxrt::test::compare_tensors(fused[0], unfused[0], 0, 0) == "");
    CHECK(nxrt::test::compare_tensors(fused[1], unfused[1], 0, 0) == "");
  }
  SECTION("b broadcasts") {
    QdqAdd f({.b_shape = {3, 1}});
    CHECK(f.fusions().empty());
  }
  SECTION("a is dequantized per channel") {
    QdqAdd f({.a_scale_shape = {3}});
    f.b.graph.nodes[0].attributes.set("axis", nxrt::Attribute{int64_t{1}});
    CHECK(f.fusions().empty());
  }
}

TEST_CASE("the fused quantized Add names inputs of other shapes than the model declares", "[cpu][fusion]") {
  QdqAdd f({});
  auto compiled = f.ep->compile(f.partition);
  REQUIRE(compiled);
  std::vector<nxrt::RuntimeValue> in = f.inputs();
  in[1] = QdqAdd::bytes(DType::kUInt8, {1, 3, 50}, 13);  // b: one image where a has two
  auto out = (*compiled)->run(in);
  REQUIRE_FALSE(out);
  const std::string text = out.error().render();
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "DequantizeLinear+Add+QuantizeLinear: the two quantized inputs are [2,3,50] and [1,3,50]"));
  CHECK_THAT(text, Catch::Matchers::Contains("give inputs of the shapes the model declares"));
  CHECK_THAT(text, Catch::Matchers::Contains("'add' (ai.onnx::Add, opset 17) (fused with"));
}
