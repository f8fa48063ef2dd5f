// The cuda EP's steps and generated kernels without a GPU: each plan's module is compiled for
// the host (cuda_host_module.h), its steps run on host tensors, and the outputs are checked
// against the cpu EP. Steps that call cuBLASLt or cuDNN run on their host stand-ins
// (cuda_host_libraries.h).
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include "cuda/kernel_library.h"
#include "cuda_host_module.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/float8.h"

using namespace nxrt;
using namespace nxrt::cuda;
using test::attrs;
using test::ints;
using test::NodeSpec;
using test::random_tensor;

namespace {

void check_outputs(const Expected<std::vector<Tensor>>& actual, const Expected<std::vector<Tensor>>& expected,
                   double rtol, double atol) {
  INFO((actual ? std::string() : actual.error().render()));
  REQUIRE(actual);
  INFO((expected ? std::string() : expected.error().render()));
  REQUIRE(expected);
  REQUIRE(actual->size() == expected->size());
  for (std::size_t i = 0; i < actual->size(); ++i) {
    INFO("output " << i);
    CHECK(test::compare_tensors((*actual)[i], (*expected)[i], rtol, atol) == "");
  }
}

Tensor cast(const Tensor& t, DType to) {
  return test::run_one({.op_type = "Cast", .inputs = {t}, .attrs = attrs({{"to", static_cast<int64_t>(to)}})});
}
Tensor to_f16(const Tensor& t) { return cast(t, DType::kFloat16); }

// Nodes whose cuda plans on the host must agree with the cpu EP. The plans' modules are built
// in one compiler run when run() is called: a run costs about as much as one module, so a test
// case's checks share one.
class HostChecks {
 public:
  void add(NodeSpec spec, double rtol = 1e-5, double atol = 1e-6) { checks_.push_back({std::move(spec), rtol, atol}); }
  // The node in float16: its float inputs (but those in `keep_float`) rounded to float16 on the
  // cuda EP, against the cpu EP in float on the same rounded values.
  void add_f16(const NodeSpec& spec, double rtol = 1e-2, double atol = 1e-2, std::vector<std::size_t> keep_float = {}) {
    add_narrow(DType::kFloat16, spec, rtol, atol, keep_float);
  }
  // Likewise in bfloat16 (8 bits of mantissa: wider tolerances).
  void add_bf16(const NodeSpec& spec, double rtol = 3e-2, double atol = 3e-2, std::vector<std::size_t> keep_float = {}) {
    add_narrow(DType::kBFloat16, spec, rtol, atol, keep_float);
  }

  void run() {
    std::vector<std::string> sources;
    for (const Check& c : checks_) {
      // A node the plan fails on gets the library alone; running it again reports the failure.
      std::string source(kernel_library_source());
      (void)test::run_partition_with(c.spec, "cuda", [&](const Partition& p, const std::vector<Tensor>&) -> Expected<std::vector<Tensor>> {
        if (auto plan = test::plan_for_host(p)) source = plan->source;
        return std::vector<Tensor>{};
      });
      sources.push_back(std::move(source));
    }
    auto modules = test::HostModule::compile_all(sources);
    INFO((modules ? std::string() : modules.error().render()));
    REQUIRE(modules);
    for (std::size_t i = 0; i < checks_.size(); ++i) {
      const Check& c = checks_[i];
      INFO(c.spec.op_type << " (check " << i << " of the test case)");
      auto actual = test::run_partition_with(c.spec, "cuda", [&](const Partition& p, const std::vector<Tensor>& inputs)
                                                                  -> Expected<std::vector<Tensor>> {
        auto plan = test::plan_for_host(p);
        if (!plan) return std::unexpected(plan.error());
        return test::run_plan_on_host(*plan, *(*modules)[i], p, inputs);
      });
      if (actual && c.reference)
        for (Tensor& t : *actual)
          if (t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16) t = cast(t, DType::kFloat32);
      check_outputs(actual, test::run_on_cpu(c.reference ? *c.reference : c.spec), c.rtol, c.atol);
    }
    checks_.clear();
  }

 private:
  struct Check {
    NodeSpec spec;
    double rtol, atol;
    std::optional<NodeSpec> reference{};  // what the cpu EP runs, when not `spec`
  };
  // The node with its float inputs (but `keep_float`) rounded to `narrow` on the cuda EP, against
  // the cpu EP in float on the rounded values.
  void add_narrow(DType narrow, const NodeSpec& spec, double rtol, double atol, const std::vector<std::size_t>& keep_float) {
    NodeSpec rounded = spec, wide = spec;
    for (std::size_t i = 0; i < spec.inputs.size(); ++i)
      if (spec.inputs[i].defined() && spec.inputs[i].dtype() == DType::kFloat32 &&
          std::find(keep_float.begin(), keep_float.end(), i) == keep_float.end()) {
        rounded.inputs[i] = cast(spec.inputs[i], narrow);
        wide.inputs[i] = cast(rounded.inputs[i], DType::kFloat32);
      }
    for (DType& t : rounded.output_dtypes)
      if (t == DType::kFloat32) t = narrow;
    checks_.push_back({std::move(rounded), rtol, atol, std::move(wide)});
  }

  std::vector<Check> checks_;
};

}  // namespace

TEST_CASE("cuda data movement kernels run on the host: Transpose, Concat, Slice, Gather, Expand, Split", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4}, 1);
  checks.add({.op_type = "Transpose", .inputs = {x}, .attrs = attrs({{"perm", ints{2, 0, 1}}})});
  checks.add({.op_type = "Transpose", .inputs = {to_f16(x)}});
  checks.add({.op_type = "Concat", .opset = 13, .inputs = {x, random_tensor({2, 1, 4}, 2), x},
              .attrs = attrs({{"axis", int64_t{-2}}})});
  checks.add({.op_type = "Slice", .opset = 13,
              .inputs = {x, test::int64s({-1, 0}), test::int64s({-10, 3}), test::int64s({2, 1}), test::int64s({-2, 2})},
              .constant = {false, true, true, true, true}});
  checks.add({.op_type = "Gather", .opset = 13, .inputs = {x, test::int64s({-1, 0, 2, 2})}, .attrs = attrs({{"axis", int64_t{1}}})});
  checks.add({.op_type = "Gather", .opset = 13, .inputs = {x, test::int64s({3, 0})}, .attrs = attrs({{"axis", int64_t{2}}})});
  checks.add({.op_type = "Expand", .opset = 13, .inputs = {random_tensor({3, 1}, 24), test::int64s({2, 1, 4})}});
  checks.add({.op_type = "Split", .opset = 13, .inputs = {random_tensor({2, 6, 3}, 25)}, .attrs = attrs({{"axis", int64_t{1}}}),
              .outputs = 3});
  checks.add({.op_type = "Split", .opset = 13, .inputs = {x, test::int64s({1, 3})}, .attrs = attrs({{"axis", int64_t{-1}}}),
              .outputs = 2});
  checks.add({.op_type = "Split", .opset = 11, .inputs = {x}, .attrs = attrs({{"axis", int64_t{1}}, {"split", ints{2, 1}}}),
              .outputs = 2});
  checks.add({.op_type = "Split", .opset = 18, .inputs = {random_tensor({7, 2}, 26)},
              .attrs = attrs({{"num_outputs", int64_t{3}}}), .outputs = 3});
  checks.add({.op_type = "Expand", .opset = 13, .inputs = {x, test::int64s({3, 1, 1, 1})}, .constant = {false, true}});
  checks.run();
}

TEST_CASE("cuda Reshape, Flatten, Squeeze, Unsqueeze and Dropout are views: no kernel, the input's storage", "[cuda]") {
  HostChecks checks;
  const Tensor x = test::device_copy(test::iota_float({2, 3, 4}));
  auto out = test::run_partition_with(
      {.op_type = "Reshape", .opset = 14, .inputs = {x, test::int64s({0, -1})}, .constant = {false, true}}, "cuda",
      test::run_partition_on_host);
  REQUIRE(out);
  CHECK(out->at(0).shape() == Shape{2, 12});
  CHECK(out->at(0).storage() == x.storage());
  checks.add({.op_type = "Flatten", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{2}}})});
  checks.add({.op_type = "Unsqueeze", .opset = 13, .inputs = {x, test::int64s({0, -1})}, .constant = {false, true}});
  checks.add({.op_type = "Dropout", .opset = 13, .inputs = {x}});
  checks.add({.op_type = "Dropout", .opset = 6, .inputs = {x}, .attrs = attrs({{"is_test", int64_t{1}}})});
  const Tensor no = Tensor::from_bytes(DType::kBool, {}, std::as_bytes(std::span<const uint8_t>(std::vector<uint8_t>{0})));
  checks.add({.op_type = "Dropout", .opset = 13, .inputs = {x, Tensor(), no}, .constant = {false, false, true}});
  // The mask of inference is all true (a bool tensor from opset 10).
  checks.add({.op_type = "Dropout", .opset = 13, .inputs = {x}, .outputs = 2});
  checks.add({.op_type = "Dropout", .opset = 10, .inputs = {x}, .outputs = 2});
  checks.run();
}

TEST_CASE("cuda steps read shapes, axes and Slice bounds computed at run time", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4}, 17);
  checks.add({.op_type = "Reshape", .opset = 14, .inputs = {x, test::int64s({4, 0, -1})}});
  checks.add({.op_type = "Unsqueeze", .opset = 13, .inputs = {x, test::int64s({-1, 1})}});
  checks.add({.op_type = "Squeeze", .opset = 13, .inputs = {random_tensor({2, 1, 4, 1}, 18), test::int64s({3})}});
  checks.add({.op_type = "ReduceSum", .opset = 13, .inputs = {x, test::int64s({0, -1})}}, 1e-5, 1e-5);
  checks.add({.op_type = "Slice", .opset = 13,
              .inputs = {x, test::int64s({1, -1}), test::int64s({3, -5}), test::int64s({1, 2}), test::int64s({1, -2})}});
  auto int32s = [](std::vector<int64_t> v) { return cast(test::int64s(std::move(v)), DType::kInt32); };
  checks.add({.op_type = "Slice", .opset = 13, .inputs = {x, int32s({1}), int32s({100})}});
  // Checked when the step runs: a zero step, and lengths that differ.
  auto zero = test::run_partition_with(
      {.op_type = "Slice", .opset = 13, .inputs = {x, test::int64s({0}), test::int64s({2}), test::int64s({0}), test::int64s({0})}},
      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(zero);
  CHECK_THAT(zero.error().render(), Catch::Contains("Slice: a step is 0"));
  auto lengths = test::run_partition_with(
      {.op_type = "Slice", .opset = 13, .inputs = {x, test::int64s({0, 1}), test::int64s({2})}}, "cuda",
      test::run_partition_on_host);
  REQUIRE_FALSE(lengths);
  CHECK_THAT(lengths.error().render(), Catch::Contains("must have one length"));
  checks.run();
}

TEST_CASE("cuda Shape, Size and ConstantOfShape write values known on the host to the device", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4, 5}, 23);
  checks.add({.op_type = "Shape", .opset = 13, .inputs = {x}});
  checks.add({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}})});
  checks.add({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{-9}}, {"end", int64_t{9}}})});
  checks.add({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{3}}, {"end", int64_t{1}}})});
  checks.add({.op_type = "Size", .opset = 13, .inputs = {x}});
  checks.add({.op_type = "ConstantOfShape", .opset = 9, .inputs = {test::int64s({2, 3})}});
  checks.add({.op_type = "ConstantOfShape", .opset = 9, .inputs = {test::int64s({4, 1, 5})},
              .attrs = attrs({{"value", Tensor::from_vector<int64_t>({1}, {-7})}})});
  checks.add({.op_type = "ConstantOfShape", .opset = 9, .inputs = {test::int64s({3})},
              .attrs = attrs({{"value", to_f16(Tensor::from_vector<float>({1}, {2.5f}))}})});
  checks.add({.op_type = "ConstantOfShape", .opset = 9, .inputs = {test::int64s({0, 2})}});
  checks.run();
}

// x[2,3,4,5] + b[4,1] -> Relu -> * x -> BatchNormalization -> Clip -> Sigmoid, and Gelu of the
// product: one chain, then one more from the shared product.
test::GraphBuilder runtime_chain_graph(DType dtype) {
  test::GraphBuilder b;
  b.input("x", dtype, {2, 3, 4, 5});
  b.input("b", dtype, {4, 1});
  b.input("s", dtype, {3});
  b.input("m", dtype, {3});
  b.input("v", dtype, {3});
  b.node("add", "Add", {"x", "b"}, {"a"}, dtype, {2, 3, 4, 5});
  b.node("relu", "Relu", {"a"}, {"r"}, dtype, {2, 3, 4, 5});
  b.node("mul", "Mul", {"r", "x"}, {"p"}, dtype, {2, 3, 4, 5});
  b.node("bn", "BatchNormalization", {"p", "s", "m", "m", "v"}, {"n"}, dtype, {2, 3, 4, 5});
  b.node("clip", "Clip", {"n"}, {"c"}, dtype, {2, 3, 4, 5});
  b.graph.nodes.back().opset = 6;
  b.graph.nodes.back().attributes = attrs({{"min", -0.5f}, {"max", 1.5f}});
  b.node("sigmoid", "Sigmoid", {"c"}, {"y"}, dtype, {2, 3, 4, 5});
  b.node("gelu", "Gelu", {"p"}, {"g"}, dtype, {2, 3, 4, 5});
  b.graph.nodes.back().opset = 20;
  b.output("y");
  b.output("g");
  b.finish();
  return b;
}

TEST_CASE("cuda PRelu-6 reads a slope of one value per channel, or broadcasts it, as the cpu EP does", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4, 5}, 30);
  auto prelu = [](int64_t opset, Tensor x, Tensor slope) {
    return NodeSpec{.op_type = "PRelu", .opset = opset, .inputs = {std::move(x), std::move(slope)},
                    .output_dtypes = {DType::kFloat32}};
  };
  checks.add(prelu(6, x, random_tensor({3}, 31)));     // one value per channel
  checks.add(prelu(6, x, random_tensor({1}, 32)));     // one value
  checks.add(prelu(6, x, random_tensor({4, 5}, 33)));  // numpy broadcasting at the trailing dims
  checks.add(prelu(6, random_tensor({4, 3}, 34), random_tensor({3}, 35)));
  checks.add(prelu(9, x, random_tensor({5}, 36)));     // opset 7 on: numpy broadcasting only
  checks.run();
  auto misfit = test::run_partition_with(prelu(6, x, random_tensor({2}, 37)), "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().why ==
        "PRelu-6: slope [2] neither holds one value per channel of X [2,3,4,5] nor broadcasts onto it");
}

TEST_CASE("cuda elementwise chains run on the host with broadcasting and channel inputs, in f32 and f16", "[cuda]") {
  const std::vector<Tensor> inputs = {random_tensor({2, 3, 4, 5}, 3), random_tensor({4, 1}, 4), random_tensor({3}, 5),
                                      random_tensor({3}, 6), random_tensor({3}, 7, 0.5f, 2)};
  auto f32 = runtime_chain_graph(DType::kFloat32);
  check_outputs(test::run_partition_on_host(test::whole_graph(f32.graph, "cuda"), inputs), test::run_graph_on_cpu(f32.graph, inputs), 1e-5, 1e-6);
  // f16 (which the cpu EP's BatchNormalization does not take): against the f32 graph on the
  // same f16 values; the chain rounds each value to f16 as the unfused graph would store it.
  auto f16 = runtime_chain_graph(DType::kFloat16);
  std::vector<Tensor> halves, widened;
  for (const Tensor& t : inputs) {
    halves.push_back(to_f16(t));
    widened.push_back(cast(halves.back(), DType::kFloat32));
  }
  auto actual = test::run_partition_on_host(test::whole_graph(f16.graph, "cuda"), halves);
  INFO((actual ? std::string() : actual.error().render()));
  REQUIRE(actual);
  for (Tensor& t : *actual) t = cast(t, DType::kFloat32);
  check_outputs(actual, test::run_graph_on_cpu(f32.graph, widened), 1e-2, 1e-2);
}

TEST_CASE("cuda chains compute int32 and int64 arithmetic, and Cast among the four types", "[cuda]") {
  // Shape arithmetic: (a * 3 + b) / c with negative values (division truncates), then Neg,
  // Abs, Max, Min and Add; a Cast to float and back to int32 at the end.
  for (DType dtype : {DType::kInt64, DType::kInt32}) {
    INFO(dtype_name(dtype));
    test::GraphBuilder b;
    for (const char* name : {"a", "b", "c"}) b.input(name, dtype, {2, 3});
    b.input("k", dtype, {1});
    b.node("mul", "Mul", {"a", "k"}, {"m"}, dtype, {2, 3});
    b.node("add", "Add", {"m", "b"}, {"s"}, dtype, {2, 3});
    b.node("div", "Div", {"s", "c"}, {"q"}, dtype, {2, 3});
    b.node("neg", "Neg", {"q"}, {"n"}, dtype, {2, 3});
    b.node("abs", "Abs", {"n"}, {"p"}, dtype, {2, 3});
    b.node("max", "Max", {"p", "a", "b"}, {"hi"}, dtype, {2, 3});
    b.node("min", "Min", {"hi", "c"}, {"lo"}, dtype, {2, 3});
    b.node("sum", "Add", {"lo", "q"}, {"y"}, dtype, {2, 3});
    b.node("to_float", "Cast", {"y"}, {"f"}, DType::kFloat32, {2, 3});
    b.graph.nodes.back().attributes = attrs({{"to", int64_t{1}}});
    b.node("half", "Mul", {"f", "f"}, {"ff"}, DType::kFloat32, {2, 3});
    b.node("to_int", "Cast", {"ff"}, {"z"}, DType::kInt32, {2, 3});
    b.graph.nodes.back().attributes = attrs({{"to", int64_t{6}}});
    b.output("y");
    b.output("z");
    b.finish();
    auto ints = [dtype](std::vector<int64_t> v) { return cast(test::int64s(std::move(v)).reshaped({2, 3}), dtype); };
    const std::vector<Tensor> inputs = {ints({-7, 5, 100, -3, 0, 9}), ints({2, -11, 4, 6, -1, 8}), ints({3, -2, 7, -5, 1, 4}),
                                        cast(test::int64s({3}), dtype)};
    check_outputs(test::run_partition_on_host(test::whole_graph(b.graph, "cuda"), inputs), test::run_graph_on_cpu(b.graph, inputs), 0, 0);
  }
  // One Cast each (its output's dtype given, as shape inference gives it for a model), all in
  // one module.
  HostChecks casts;
  auto check_cast = [&casts](const Tensor& x, DType to) {
    casts.add({.op_type = "Cast", .opset = 13, .inputs = {x}, .attrs = attrs({{"to", static_cast<int64_t>(to)}}),
               .output_dtypes = {to}}, 0, 0);
  };
  const Tensor x = random_tensor({2, 5}, 22, -50, 50);
  for (DType to : {DType::kInt32, DType::kInt64, DType::kFloat16}) check_cast(x, to);
  check_cast(test::int64s({-5, 0, 1 << 20, 7}), DType::kFloat32);
  check_cast(test::int64s({-5, 0, 3000000000, 7}), DType::kInt32);  // wraps, as static_cast does
  check_cast(cast(test::int64s({-5, 0, 2047, 7}), DType::kInt32), DType::kFloat16);
  // Booleans, int8 and uint8 both ways (NaN and -0.5 are true; 300 wraps to 44 in uint8).
  const Tensor odd = Tensor::from_vector<float>({6}, {0.f, -0.5f, 2.f, std::numeric_limits<float>::quiet_NaN(), 300.f, -7.f});
  for (DType to : {DType::kBool, DType::kInt8, DType::kUInt8}) check_cast(odd, to);
  for (DType from : {DType::kBool, DType::kInt8, DType::kUInt8})
    for (DType to : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kInt64})
      check_cast(cast(test::int64s({0, 1, -3, 127, 200, -128}), from), to);
  // double keeps what float cannot: 2^53 - 1 survives double -> int64 -> double.
  check_cast(test::int64s({-5, 0, (int64_t{1} << 53) - 1, 7}), DType::kFloat64);
  check_cast(cast(test::int64s({-5, 0, (int64_t{1} << 53) - 1, 7}), DType::kFloat64), DType::kInt64);
  check_cast(cast(x, DType::kFloat64), DType::kFloat32);
  casts.run();
}

TEST_CASE("cuda runs double in its exact kernels: chain arithmetic, CumSum, Einsum, TopK, reductions", "[cuda]") {
  HostChecks checks;
  auto doubles = [](Shape shape, unsigned seed) { return cast(random_tensor(std::move(shape), seed, -4, 4), DType::kFloat64); };
  const Tensor a = doubles({2, 3}, 101), b = doubles({3}, 102);
  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
    checks.add({.op_type = op, .opset = 13, .inputs = {a, b}, .output_dtypes = {DType::kFloat64}}, 0, 0);
  checks.add({.op_type = "Mod", .opset = 13, .inputs = {a, b}, .attrs = attrs({{"fmod", int64_t{1}}}), .output_dtypes = {DType::kFloat64}}, 0, 0);
  checks.add({.op_type = "Less", .opset = 13, .inputs = {a, b}, .output_dtypes = {DType::kBool}});
  checks.add({.op_type = "CumSum", .opset = 14, .inputs = {doubles({4, 5}, 103), test::int64s({1}).reshaped({})}}, 1e-12, 1e-12);
  checks.add({.op_type = "Einsum", .opset = 12, .inputs = {doubles({2, 3, 4}, 104), doubles({2, 4, 2}, 105)},
              .attrs = attrs({{"equation", std::string("bij,bjk->bik")}})},
             1e-12, 1e-12);
  checks.add({.op_type = "TopK", .opset = 11, .inputs = {doubles({3, 6}, 106), test::int64s({2})}, .outputs = 2});
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceProd", "ReduceL2", "ReduceLogSumExp"})
    checks.add({.op_type = op, .opset = 11, .inputs = {doubles({3, 4, 5}, 107)}, .attrs = attrs({{"axes", ints{1}}})}, 1e-12, 1e-12);
  checks.run();
  // A float-only op still declines double, saying so.
  auto relu = test::run_partition_with({.op_type = "Relu", .opset = 14, .inputs = {a}, .output_dtypes = {DType::kFloat64}}, "cuda",
                                       test::run_partition_on_host);
  REQUIRE_FALSE(relu);
  CHECK_THAT(relu.error().why, Catch::Contains("Relu: input 0 is double; the cuda EP runs float, float16 and bfloat16 only"));
}

TEST_CASE("cuda chains compute int8 and uint8 in int and store them wrapped", "[cuda]") {
  // (a + b) * b wraps; Div truncates; Max, Abs; Equal and Where pick between the two types'
  // values; the result is cast to float.
  for (DType dtype : {DType::kInt8, DType::kUInt8}) {
    INFO(dtype_name(dtype));
    test::GraphBuilder b;
    for (const char* name : {"a", "b"}) b.input(name, dtype, {2, 3});
    b.node("add", "Add", {"a", "b"}, {"s"}, dtype, {2, 3});
    b.node("mul", "Mul", {"s", "b"}, {"m"}, dtype, {2, 3});
    b.node("div", "Div", {"m", "b"}, {"q"}, dtype, {2, 3});
    b.node("sub", "Sub", {"q", "a"}, {"d"}, dtype, {2, 3});
    b.node("max", "Max", {"d", "a"}, {"hi"}, dtype, {2, 3});
    b.node("abs", "Abs", {"hi"}, {"p"}, dtype, {2, 3});
    b.node("equal", "Equal", {"p", "a"}, {"e"}, DType::kBool, {2, 3});
    b.node("where", "Where", {"e", "p", "b"}, {"w"}, dtype, {2, 3});
    b.node("to_float", "Cast", {"w"}, {"y"}, DType::kFloat32, {2, 3});
    b.graph.nodes.back().attributes = attrs({{"to", int64_t{1}}});
    b.output("d");
    b.output("y");
    b.finish();
    const std::vector<Tensor> inputs = {cast(test::int64s({100, -7, 3, 0, 127, -128}).reshaped({2, 3}), dtype),
                                        cast(test::int64s({90, 3, -2, 5, 1, 7}).reshaped({2, 3}), dtype)};
    check_outputs(test::run_partition_on_host(test::whole_graph(b.graph, "cuda"), inputs), test::run_graph_on_cpu(b.graph, inputs), 0, 0);
  }
}

TEST_CASE("cuda chains compare, combine booleans and pick with Where", "[cuda]") {
  // A mask from float and int comparisons, combined with every logical op, picking floats
  // and ints (with broadcasting) through Where.
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("y", DType::kFloat32, {3});
  b.input("i", DType::kInt64, {2, 3});
  b.input("j", DType::kInt64, {2, 1});
  b.node("less", "Less", {"x", "y"}, {"lt"}, DType::kBool, {2, 3});
  b.node("not", "Not", {"lt"}, {"ge"}, DType::kBool, {2, 3});
  b.node("equal", "Equal", {"i", "j"}, {"eq"}, DType::kBool, {2, 3});
  b.node("and", "And", {"ge", "eq"}, {"both"}, DType::kBool, {2, 3});
  b.node("greater", "Greater", {"i", "j"}, {"gt"}, DType::kBool, {2, 3});
  b.node("or", "Or", {"both", "gt"}, {"any"}, DType::kBool, {2, 3});
  b.node("le", "LessOrEqual", {"x", "y"}, {"le"}, DType::kBool, {2, 3});
  b.node("xor", "Xor", {"any", "le"}, {"mask"}, DType::kBool, {2, 3});
  b.node("pick", "Where", {"mask", "x", "y"}, {"z"}, DType::kFloat32, {2, 3});
  b.node("gte", "GreaterOrEqual", {"i", "j"}, {"k"}, DType::kBool, {2, 3});
  b.node("pick_int", "Where", {"k", "i", "j"}, {"w"}, DType::kInt64, {2, 3});
  b.node("equal_bool", "Equal", {"mask", "k"}, {"same"}, DType::kBool, {2, 3});
  b.output("z");
  b.output("w");
  b.output("same");
  b.finish();
  const std::vector<Tensor> inputs = {Tensor::from_vector<float>({2, 3}, {-1, 2, 3, 0.5f, 2, -4}),
                                      Tensor::from_vector<float>({3}, {0, 2, 5}),
                                      test::int64s({1, 7, 3, 2, 2, 9}).reshaped({2, 3}), test::int64s({3, 2}).reshaped({2, 1})};
  check_outputs(test::run_partition_on_host(test::whole_graph(b.graph, "cuda"), inputs), test::run_graph_on_cpu(b.graph, inputs), 0, 0);
}

TEST_CASE("cuda Softmax, LogSoftmax, LayerNormalization and InstanceNormalization rows reduce across warps on the host", "[cuda]") {
  HostChecks checks;
  // 300 columns: more than one 256-thread pass, and a partial last warp; 7 rows: blocks loop.
  const Tensor x = random_tensor({7, 300}, 8);
  checks.add({.op_type = "Softmax", .opset = 13, .inputs = {x}});
  checks.add({.op_type = "LogSoftmax", .opset = 13, .inputs = {x}}, 1e-5, 1e-5);
  const Tensor y = random_tensor({2, 5, 3}, 9);
  checks.add({.op_type = "Softmax", .opset = 13, .inputs = {y}, .attrs = attrs({{"axis", int64_t{1}}})});
  checks.add({.op_type = "Softmax", .opset = 11, .inputs = {y}, .attrs = attrs({{"axis", int64_t{1}}})});
  // Short axes (up to 64) take a thread per row, long ones a block; Hardmax picks the first of
  // equal largest values on both.
  checks.add({.op_type = "LogSoftmax", .opset = 13, .inputs = {y}, .attrs = attrs({{"axis", int64_t{1}}})}, 1e-5, 1e-5);
  const Tensor ties = Tensor::from_vector<float>({2, 3, 2}, {1, 5, 3, 5, 3, 2, 0, 0, 0, 0, 0, 0});
  checks.add({.op_type = "Hardmax", .opset = 13, .inputs = {ties}, .attrs = attrs({{"axis", int64_t{1}}})});
  checks.add({.op_type = "Hardmax", .opset = 13, .inputs = {x}});
  checks.add({.op_type = "LayerNormalization", .inputs = {x, random_tensor({300}, 10), random_tensor({300}, 11)}},
             1e-4, 1e-5);
  checks.add({.op_type = "LayerNormalization", .inputs = {y, random_tensor({5, 3}, 12)}, .attrs = attrs({{"axis", int64_t{1}}})},
             1e-4, 1e-5);
  // InstanceNormalization: rows of 35 and of 300 (more than a 256-thread pass).
  checks.add({.op_type = "InstanceNormalization", .opset = 6, .inputs = {random_tensor({2, 3, 5, 7}, 42), random_tensor({3}, 43), random_tensor({3}, 44)}},
             1e-4, 1e-5);
  checks.add({.op_type = "InstanceNormalization", .opset = 6, .inputs = {random_tensor({1, 2, 300}, 45), random_tensor({2}, 46), random_tensor({2}, 47)},
             .attrs = attrs({{"epsilon", 0.1f}})},
             1e-4, 1e-5);
  // With the Mean and InvStdDev outputs.
  checks.add({.op_type = "LayerNormalization", .inputs = {y, random_tensor({3}, 19), random_tensor({3}, 20)}, .outputs = 3},
             1e-4, 1e-5);
  // stash_type 11: statistics in double, Mean and InvStdDev written as double; rows far from
  // zero (mean 1000, spread 1e-2), where float's sum of squares would lose the variance.
  const Tensor offset = random_tensor({4, 300}, 21, 1000.f, 1000.01f);
  checks.add({.op_type = "LayerNormalization", .inputs = {offset, random_tensor({300}, 22), random_tensor({300}, 23)},
              .attrs = attrs({{"stash_type", int64_t{11}}}), .outputs = 3, .output_dtypes = {DType::kFloat32, DType::kFloat64,
              DType::kFloat64}},
             1e-5, 1e-5);
  checks.run();
}

TEST_CASE("cuda reductions, ArgMax and ArgMin run on the host over any axes", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({3, 4, 5}, 13, 0.5f, 1.5f);
  for (const char* op : {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceSumSquare", "ReduceL1",
                         "ReduceL2", "ReduceLogSumExp"}) {
    for (int64_t keepdims : {0, 1}) {
      checks.add({.op_type = op, .opset = 11, .inputs = {x}, .attrs = attrs({{"axes", ints{0, 2}}, {"keepdims", keepdims}})},
                 1e-5, 1e-5);
      checks.add({.op_type = op, .opset = 11, .inputs = {x}, .attrs = attrs({{"keepdims", keepdims}})}, 1e-5, 1e-5);
    }
  }
  checks.add({.op_type = "ReduceSum", .opset = 13, .inputs = {x, test::int64s({-1})}, .constant = {false, true}});
  // ArgMax/ArgMin with ties (first or last index), along each axis, keeping the axis or not.
  const Tensor ties = Tensor::from_vector<float>({2, 3, 2}, {1, 5, 5, 2, 5, -1, 0, 0, 3, 3, -2, 3});
  for (const char* op : {"ArgMax", "ArgMin"})
    for (int64_t axis : {0, 1, -1})
      for (int64_t last : {0, 1})
        checks.add({.op_type = op, .opset = 13, .inputs = {ties},
                    .attrs = attrs({{"axis", axis}, {"select_last_index", last}, {"keepdims", axis == 1 ? int64_t{0} : int64_t{1}}})});
  checks.add({.op_type = "ArgMax", .opset = 13, .inputs = {test::int64s({4, -9, 4, 12})}});
  checks.add({.op_type = "ReduceMean", .opset = 18, .inputs = {x, test::int64s({})}, .constant = {false, true},
              .attrs = attrs({{"noop_with_empty_axes", int64_t{1}}})});
  checks.add({.op_type = "ReduceMax", .opset = 20, .inputs = {x, test::int64s({1})}, .constant = {false, true}});
  // ReduceMax and ReduceMin of integers (signed and unsigned extremes; the types the cpu EP also
  // reduces) and booleans (opset 20).
  const Tensor wide = test::int64s({-128, 127, 0, 5, -7, 255, 65535, -1, 3, 100, -100, 42}).reshaped({2, 3, 2});
  for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64})
    for (const char* op : {"ReduceMax", "ReduceMin"})
      checks.add({.op_type = op, .opset = 18, .inputs = {cast(wide, t), test::int64s({0, -1})}, .constant = {false, true},
                  .output_dtypes = {t}}, 0, 0);
  const Tensor flags = cast(test::int64s({0, 1, 0, 0, 1, 1}).reshaped({3, 2}), DType::kBool);
  for (const char* op : {"ReduceMax", "ReduceMin"})
    for (int64_t axis : {0, 1})
      checks.add({.op_type = op, .opset = 20, .inputs = {flags, test::int64s({axis})}, .constant = {false, true},
                  .attrs = attrs({{"keepdims", int64_t{0}}}), .output_dtypes = {DType::kBool}}, 0, 0);
  checks.run();
  // An empty reduction of integers has no identity to give.
  auto empty = test::run_partition_with({.op_type = "ReduceMax", .opset = 18, .inputs = {cast(test::int64s({}).reshaped({2, 0}), DType::kInt32),
                                                                                            test::int64s({1})},
                                         .constant = {false, true}, .output_dtypes = {DType::kInt32}},
                                        "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().why == "ReduceMax of an empty set is defined for float types only (as -inf or inf)");
}

TEST_CASE("cuda pooling runs on the host: pads, strides, dilations, ceil mode, counted pads", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 7, 6}, 14);
  checks.add({.op_type = "MaxPool", .opset = 12, .inputs = {x},
              .attrs = attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}},
                              {"ceil_mode", int64_t{1}}})});
  checks.add({.op_type = "MaxPool", .opset = 12, .inputs = {x},
              .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"dilations", ints{2, 1}}})});
  // Indices in row-major and column-major order, with pads (which never win) and batch 2.
  for (int64_t order : {0, 1})
    checks.add({.op_type = "MaxPool", .opset = 12, .inputs = {x},
                .attrs = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 0}},
                                {"storage_order", order}}),
                .outputs = 2});
  checks.add({.op_type = "MaxPool", .opset = 12, .inputs = {random_tensor({2, 2, 5, 4, 3}, 21)},
              .attrs = attrs({{"kernel_shape", ints{2, 2, 2}}, {"storage_order", int64_t{1}}}), .outputs = 2});
  // int8 and uint8 (opset 12), with indices.
  for (DType t : {DType::kInt8, DType::kUInt8})
    checks.add({.op_type = "MaxPool", .opset = 12, .inputs = {cast(random_tensor({1, 2, 5, 5}, 22, -100, 100), t)},
                .attrs = attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}}), .outputs = 2});
  for (int64_t counted : {0, 1})
    checks.add({.op_type = "AveragePool", .opset = 11, .inputs = {x},
                .attrs = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 1}}, {"pads", ints{1, 0, 1, 1}},
                                {"count_include_pad", counted}})});
  checks.add({.op_type = "AveragePool", .opset = 11, .inputs = {random_tensor({1, 2, 9}, 15)},
              .attrs = attrs({{"kernel_shape", ints{4}}, {"strides", ints{3}}})});
  checks.add({.op_type = "GlobalAveragePool", .inputs = {x}});
  checks.add({.op_type = "GlobalMaxPool", .inputs = {random_tensor({1, 2, 3, 4, 5}, 16)}});
  // MaxUnpool of MaxPool's indices (flat over N, C and the unpooled dims), into the unpooled
  // shape and into a larger output_shape; int64 values too.
  const Tensor pooled = random_tensor({2, 3, 2, 3}, 17);
  const Tensor where = test::int64s({0, 3, 5, 7, 8, 11, 12, 14, 16, 19, 21, 23, 24, 26, 29, 31, 33, 35,
                                     36, 39, 40, 43, 45, 47, 48, 50, 53, 55, 56, 59, 61, 62, 65, 66, 69, 71})
                           .reshaped({2, 3, 2, 3});
  const AttributeMap unpool = attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"pads", ints{1, 0, 1, 0}}});
  checks.add({.op_type = "MaxUnpool", .opset = 11, .inputs = {pooled, where}, .attrs = unpool});
  checks.add({.op_type = "MaxUnpool", .opset = 11, .inputs = {pooled, where, test::int64s({2, 3, 3, 7})}, .attrs = unpool});
  checks.add({.op_type = "MaxUnpool", .opset = 9, .inputs = {test::int64s({5, -6, 7}).reshaped({1, 1, 3}), test::int64s({1, 2, 5}).reshaped({1, 1, 3})},
              .attrs = attrs({{"kernel_shape", ints{2}}, {"strides", ints{2}}})});
  checks.run();
}
TEST_CASE("cuda MatMul and Gemm run their cuBLASLt calls on the host stand-in", "[cuda]") {
  HostChecks checks;
  auto matmul = [&](Shape a, Shape b, unsigned seed) {
    checks.add({.op_type = "MatMul", .opset = 13, .inputs = {random_tensor(std::move(a), seed), random_tensor(std::move(b), seed + 1)}},
               1e-5, 1e-5);
  };
  matmul({3, 5}, {5, 4}, 1);
  matmul({2, 3, 5}, {2, 5, 4}, 3);     // batched
  matmul({2, 1, 3, 5}, {5, 4}, 5);     // one side's batch broadcast (stride 0)
  matmul({3, 5}, {2, 5, 4}, 7);        // the other side's; the rank the broadcast adds is kept
  matmul({1, 3, 3, 5}, {3, 5, 4}, 9);  // a leading 1 on the full side
  matmul({2, 3, 3, 5}, {3, 5, 4}, 31);  // B's batch broadcasts partly: B copied out with A's batch
  matmul({2, 1, 3, 5}, {1, 3, 5, 4}, 33);  // both sides broadcast partly: both copied
  matmul({5}, {2, 5, 4}, 11);          // 1-D operands are promoted, then the added dim dropped
  matmul({2, 3, 5}, {5}, 13);
  matmul({5}, {5}, 15);
  matmul({3, 0}, {0, 4}, 17);  // K = 0: zeros, without a cuBLASLt call
  checks.add_f16({.op_type = "MatMul", .opset = 13, .inputs = {random_tensor({2, 4, 6}, 19), random_tensor({6, 3}, 20)}});
  const Tensor a = random_tensor({3, 5}, 21), at = random_tensor({5, 3}, 22);
  const Tensor b = random_tensor({5, 4}, 23), bt = random_tensor({4, 5}, 24);
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1})
      checks.add({.op_type = "Gemm", .opset = 13, .inputs = {ta ? at : a, tb ? bt : b, random_tensor({3, 4}, 25)},
                  .attrs = attrs({{"transA", ta}, {"transB", tb}, {"alpha", 0.5f}, {"beta", 2.f}})},
                 1e-5, 1e-5);
  for (Shape c : {Shape{4}, Shape{3, 1}, Shape{1}, Shape{}})  // C broadcast to [M, N]
    checks.add({.op_type = "Gemm", .opset = 13, .inputs = {a, b, random_tensor(std::move(c), 26)}}, 1e-5, 1e-5);
  checks.add({.op_type = "Gemm", .opset = 13, .inputs = {a, b}, .attrs = attrs({{"alpha", -1.5f}})}, 1e-5, 1e-5);
  checks.add({.op_type = "Gemm", .opset = 13, .inputs = {a, b, random_tensor({3, 4}, 27)}, .attrs = attrs({{"beta", 0.f}})},
             1e-5, 1e-5);
  checks.run();
}

TEST_CASE("cuda Conv and ConvTranspose run their cuDNN calls on the host stand-in: 1-D to 3-D, groups, bias, f16", "[cuda]") {
  HostChecks checks;
  auto conv = [&](Shape x, Shape w, bool bias, AttributeMap a, unsigned seed) {
    std::vector<Tensor> inputs = {random_tensor(std::move(x), seed), random_tensor(w, seed + 1)};
    if (bias) inputs.push_back(random_tensor({w[0]}, seed + 2));
    checks.add({.op_type = "Conv", .opset = 11, .inputs = std::move(inputs), .attrs = std::move(a)}, 1e-4, 1e-5);
  };
  conv({2, 3, 7, 6}, {4, 3, 3, 3}, true, attrs({{"pads", ints{1, 1, 1, 1}}}), 1);
  conv({1, 3, 9, 8}, {2, 3, 3, 2}, false, attrs({{"strides", ints{2, 3}}, {"dilations", ints{2, 1}}, {"pads", ints{2, 0, 2, 0}}}),
       4);
  conv({2, 4, 5, 5}, {6, 2, 3, 3}, true, attrs({{"group", int64_t{2}}}), 7);                          // grouped
  conv({1, 4, 6, 6}, {4, 1, 3, 3}, true, attrs({{"group", int64_t{4}}, {"auto_pad", std::string("VALID")}}), 10);  // depthwise
  conv({2, 3, 11}, {5, 3, 4}, true, attrs({{"strides", ints{2}}, {"pads", ints{1, 1}}}), 13);          // 1-D, as 2-D
  conv({1, 2, 4, 5, 3}, {3, 2, 2, 3, 2}, true, attrs({{"pads", ints{1, 0, 1, 1, 0, 1}}}), 16);         // 3-D
  // Uneven pads: asymmetric ones, and SAME_UPPER / SAME_LOWER with odd totals (stride 2 on an
  // even size), in 1-D, 2-D and 3-D; cuDNN runs them over a zero-padded copy of the input.
  conv({1, 3, 7, 6}, {2, 3, 3, 3}, true, attrs({{"pads", ints{0, 2, 1, 0}}}), 40);
  for (const char* same : {"SAME_UPPER", "SAME_LOWER"}) {
    conv({2, 3, 8, 6}, {4, 3, 3, 3}, true, attrs({{"auto_pad", std::string(same)}, {"strides", ints{2, 2}}}), 43);
    conv({1, 2, 10}, {3, 2, 4}, false, attrs({{"auto_pad", std::string(same)}}), 46);
  }
  conv({1, 2, 4, 4, 4}, {2, 2, 3, 2, 3}, false, attrs({{"pads", ints{2, 0, 1, 0, 1, 1}}, {"strides", ints{1, 2, 1}}}), 49);
  checks.add_f16({.op_type = "Conv", .opset = 11,
                  .inputs = {random_tensor({1, 3, 6, 5}, 19), random_tensor({2, 3, 3, 3}, 20), random_tensor({2}, 21)},
                  .attrs = attrs({{"pads", ints{1, 1, 1, 1}}})},
                 1e-2, 3e-2);
  // ConvTranspose: weights [C_in, C_out / group, kernel...].
  auto transposed = [&](Shape x, Shape w, bool bias, AttributeMap a, unsigned seed) {
    std::vector<Tensor> inputs = {random_tensor(std::move(x), seed), random_tensor(w, seed + 1)};
    if (bias) inputs.push_back(random_tensor({w[1] * a.int_or("group", 1)}, seed + 2));
    checks.add({.op_type = "ConvTranspose", .opset = 11, .inputs = std::move(inputs), .attrs = std::move(a)}, 1e-4, 1e-5);
  };
  transposed({1, 3, 4, 5}, {3, 2, 3, 3}, true, attrs({{"strides", ints{2, 2}}, {"pads", ints{1, 1, 1, 1}}, {"output_padding", ints{1, 0}}}), 22);
  transposed({2, 4, 3, 3}, {4, 3, 2, 2}, true, attrs({{"group", int64_t{2}}, {"dilations", ints{2, 1}}}), 25);
  transposed({1, 2, 7}, {2, 3, 3}, false, attrs({{"strides", ints{3}}, {"auto_pad", std::string("VALID")}}), 28);
  transposed({1, 2, 2, 3, 2}, {2, 1, 2, 2, 2}, true, attrs({{"strides", ints{2, 1, 2}}}), 31);
  checks.add_f16({.op_type = "ConvTranspose", .opset = 11, .inputs = {random_tensor({1, 2, 3, 3}, 34), random_tensor({2, 2, 3, 3}, 35)},
                  .attrs = attrs({{"strides", ints{2, 2}}})},
                 1e-2, 3e-2);
  // Uneven pads run with the smaller pad into scratch, and the output is a window of it:
  // asymmetric pads, SAME_UPPER and SAME_LOWER (odd totals), output_shape (one extending the
  // output past the convolution's reach by less than a stride).
  transposed({1, 2, 4, 5}, {2, 3, 3, 3}, true, attrs({{"strides", ints{2, 2}}, {"pads", ints{0, 2, 1, 1}}}), 36);
  for (const char* same : {"SAME_UPPER", "SAME_LOWER"})
    transposed({1, 2, 3, 4}, {2, 2, 4, 3}, true, attrs({{"strides", ints{2, 3}}, {"auto_pad", std::string(same)}}), 39);
  transposed({1, 1, 3, 3}, {1, 2, 3, 3}, false, attrs({{"strides", ints{3, 2}}, {"output_shape", ints{10, 8}}}), 42);
  transposed({1, 1, 3, 3}, {1, 2, 3, 3}, true, attrs({{"strides", ints{3, 2}}, {"output_shape", ints{1, 2, 6, 5}}}), 45);
  checks.run();
  // An output_shape more than a stride beyond the reach is an error of the step.
  auto too_big = test::run_partition_with({.op_type = "ConvTranspose", .opset = 11, .inputs = {random_tensor({1, 1, 3, 3}, 48), random_tensor({1, 1, 3, 3}, 49)},
                                           .attrs = attrs({{"strides", ints{2, 2}}, {"output_shape", ints{9, 7}}})},
                                          "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(too_big);
  CHECK_THAT(too_big.error().what, Catch::Contains("dim 2 would need pads -1 and -1; the output asked for is larger than"));
}
TEST_CASE("cuda Pad, Tile, GatherElements, GatherND, the scatters, Trilu, CumSum, Mod, Range, CastLike and the windows run on the host", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4}, 31);
  // Every mode, with a crop (negative pad) and pads wider than reflect's period.
  for (const char* mode : {"constant", "edge", "reflect", "wrap"})
    checks.add({.op_type = "Pad", .opset = 19, .inputs = {x, test::int64s({1, 0, 2, 0, -1, 5})},
                .attrs = attrs({{"mode", std::string(mode)}})});
  checks.add({.op_type = "Pad", .opset = 18, .inputs = {x, test::int64s({2, 1, 0, 3}), Tensor::from_vector<float>({}, {-7.5f}),
                                                        test::int64s({-1, 0})},
              .constant = {false, true, false, true}});  // axes; the value read where it lies
  checks.add({.op_type = "Pad", .opset = 11, .inputs = {test::int64s({1, 2, 3, 4, 5, 6}).reshaped({2, 3}), test::int64s({0, 1, 1, 0})}});
  checks.add({.op_type = "Pad", .opset = 2, .inputs = {x}, .attrs = attrs({{"pads", ints{0, 1, 0, 0, 2, 1}}, {"mode", std::string("reflect")}})});
  // Pad-2's value attribute, of float and double data (the kernel's fill bits).
  for (const Tensor& data : {x, cast(x, DType::kFloat64)})
    checks.add({.op_type = "Pad", .opset = 2, .inputs = {data}, .attrs = attrs({{"pads", ints{1, 0, 2, 0, 1, 1}}, {"value", -2.5f}})});
  // float16 data, against the cpu EP in float16: the value rounded to the type (0.1 is not a
  // float16; 1e6 is past its largest). bfloat16 (the cpu EP pads it with zeros only), against
  // the cpu EP in float.
  for (float value : {-2.5f, 0.1f, 1e6f}) {
    const AttributeMap padded = attrs({{"pads", ints{0, 1, 0, 0, 0, 2}}, {"value", value}});
    checks.add({.op_type = "Pad", .opset = 2, .inputs = {to_f16(x)}, .attrs = padded, .output_dtypes = {DType::kFloat16}},
               0, 0);
    checks.add_bf16({.op_type = "Pad", .opset = 2, .inputs = {x}, .attrs = padded, .output_dtypes = {DType::kFloat32}});
  }
  checks.add({.op_type = "Tile", .opset = 13, .inputs = {x, test::int64s({2, 1, 3})}});
  checks.add({.op_type = "Tile", .opset = 13, .inputs = {x, test::int64s({1, 2, 2})}, .constant = {false, true}});
  checks.add({.op_type = "Tile", .opset = 13, .inputs = {x, test::int64s({1, 0, 2})}});
  const Tensor idx = test::int64s({0, 2, -1, 1, 1, 0, -3, 2}).reshaped({2, 2, 2});
  for (int64_t axis : {0, 1, -1})
    checks.add({.op_type = "GatherElements", .opset = 13,
                .inputs = {x, axis == 0 ? test::int64s({1, 0, -1, -2, 0, 1, 1, 0}).reshaped({2, 2, 2}) : idx},
                .attrs = attrs({{"axis", axis}})});
  checks.add({.op_type = "GatherElements", .opset = 13, .inputs = {x, cast(idx, DType::kInt32)}, .attrs = attrs({{"axis", int64_t{1}}})});
  for (int64_t upper : {0, 1})
    for (int64_t k : {-2, 0, 1, 5}) {
      checks.add({.op_type = "Trilu", .opset = 14, .inputs = {x, test::int64s({k}).reshaped({})}, .attrs = attrs({{"upper", upper}})});
    }
  checks.add({.op_type = "Trilu", .opset = 14, .inputs = {test::int64s({1, 2, 3, 4, 5, 6}).reshaped({3, 2})}});
  for (int64_t exclusive : {0, 1})
    for (int64_t reverse : {0, 1})
      checks.add({.op_type = "CumSum", .opset = 14, .inputs = {x, test::int64s({1}).reshaped({})},
                  .attrs = attrs({{"exclusive", exclusive}, {"reverse", reverse}})},
                 1e-5, 1e-5);
  checks.add({.op_type = "CumSum", .opset = 14, .inputs = {test::int64s({4, -2, 7, 1, 0, 3}).reshaped({2, 3}),
                                                            cast(test::int64s({-2}), DType::kInt32).reshaped({})}});
  checks.add_f16({.op_type = "CumSum", .opset = 14, .inputs = {x, test::int64s({-1}).reshaped({})}, .constant = {false, true}});
  for (int64_t fmod : {0, 1})
    checks.add({.op_type = "Mod", .opset = 13, .inputs = {test::int64s({-7, 7, -7, 7, 0, 9}), test::int64s({3, -3, -3, 3, 5, -4})},
                .attrs = attrs({{"fmod", fmod}}), .output_dtypes = {DType::kInt64}});
  checks.add({.op_type = "Mod", .opset = 13, .inputs = {random_tensor({2, 3}, 32, -9, 9), random_tensor({3}, 33, 1, 4)},
              .attrs = attrs({{"fmod", int64_t{1}}}), .output_dtypes = {DType::kFloat32}});
  // Index-driven: GatherND with a batch dim, ScatterND of rows, ScatterElements along axis 1.
  checks.add({.op_type = "GatherND", .opset = 13, .inputs = {x, test::int64s({2, -1, 0, 1}).reshaped({2, 1, 2})},
              .attrs = attrs({{"batch_dims", int64_t{1}}})});
  checks.add({.op_type = "ScatterND", .opset = 13, .inputs = {x, test::int64s({1, 0, -2, 2}).reshaped({2, 2}), random_tensor({2, 4}, 35)}});
  checks.add({.op_type = "ScatterElements", .opset = 13,
              .inputs = {x, cast(test::int64s({2, 0, -2, 1}).reshaped({1, 2, 2}), DType::kInt32), random_tensor({1, 2, 2}, 36)},
              .attrs = attrs({{"axis", int64_t{1}}})});
  auto scalar = [](int64_t v) { return test::int64s({v}).reshaped({}); };
  checks.add({.op_type = "Range", .opset = 11, .inputs = {scalar(10), scalar(-3), scalar(-4)}});
  checks.add({.op_type = "Range", .opset = 11, .inputs = {scalar(2), scalar(2), scalar(1)}});  // empty
  checks.add({.op_type = "CastLike", .opset = 15, .inputs = {random_tensor({2, 3}, 34, -50, 50), test::int64s({1, 2, 3, 4}).reshaped({2, 2})},
              .output_dtypes = {DType::kInt64}});
  // The cosine windows, periodic or symmetric, in float, double and (rounded) int32.
  for (const char* window : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    for (int64_t periodic : {0, 1})
      for (int64_t type : {1, 11})
        checks.add({.op_type = window, .opset = 17, .inputs = {scalar(10)}, .attrs = attrs({{"periodic", periodic}, {"output_datatype", type}})},
                   1e-6, 1e-6);
  checks.add({.op_type = "HannWindow", .opset = 17, .inputs = {scalar(0)}});
  // Scatter, ScatterElements' opset 9 name.
  checks.add({.op_type = "Scatter", .opset = 10, .inputs = {x, test::int64s({2, 0, 3, 1}).reshaped({1, 2, 2}), random_tensor({1, 2, 2}, 37)},
              .attrs = attrs({{"axis", int64_t{2}}})});
  checks.run();
  // An elementwise node whose output type is unknown is declined: its kernel is typed by it.
  auto untyped = test::run_partition_with({.op_type = "Mod", .opset = 13, .inputs = {x, x}, .attrs = attrs({{"fmod", int64_t{1}}})},
                                          "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(untyped);
  CHECK_THAT(untyped.error().why, Catch::Contains("the type of output 0 is unknown"));
  // A scalar input read when the step runs must hold one value: Trilu's k of two is an error.
  auto two_ks = test::run_partition_with({.op_type = "Trilu", .opset = 14, .inputs = {x, test::int64s({1, 2})}}, "cuda",
                                         test::run_partition_on_host);
  REQUIRE_FALSE(two_ks);
  CHECK_THAT(two_ks.error().what, Catch::Contains("k holds 2 values; it must hold one"));
  CHECK(two_ks.error().how == "give k as one integer");
}
TEST_CASE("cuda DFT, STFT and MelWeightMatrix match the cpu EP", "[cuda]") {
  HostChecks checks;
  auto scalar = [](int64_t v) { return test::int64s({v}).reshaped({}); };
  auto hertz = [](float v) { return Tensor::from_vector<float>({}, {v}); };
  const Tensor real = random_tensor({2, 12, 3, 1}, 70), complex = random_tensor({2, 12, 3, 2}, 71);
  // DFT-17 along each signal axis, full and onesided, forward and inverse.
  for (const Tensor& x : {real, complex})
    for (int64_t axis : {1, 2, -2})
      for (int64_t onesided : {0, 1})
        checks.add({.op_type = "DFT", .opset = 17, .inputs = {x}, .attrs = attrs({{"axis", axis}, {"onesided", onesided}})},
                   1e-5, 1e-5);
  checks.add({.op_type = "DFT", .opset = 17, .inputs = {complex}, .attrs = attrs({{"inverse", int64_t{1}}})}, 1e-5, 1e-5);
  // dft_length cuts the signal (5) or pads it with zeros (20), also as int32.
  checks.add({.op_type = "DFT", .opset = 17, .inputs = {real, scalar(5)}}, 1e-5, 1e-5);
  checks.add({.op_type = "DFT", .opset = 17, .inputs = {complex, cast(scalar(20), DType::kInt32)}}, 1e-5, 1e-5);
  // DFT-20 takes the axis as input 2, by default -2 (the last signal axis).
  checks.add({.op_type = "DFT", .opset = 20, .inputs = {real}}, 1e-5, 1e-5);
  checks.add({.op_type = "DFT", .opset = 20, .inputs = {real, Tensor(), scalar(1)}}, 1e-5, 1e-5);
  checks.add({.op_type = "DFT", .opset = 17, .inputs = {cast(complex, DType::kFloat64)}}, 1e-12, 1e-12);
  checks.add_f16({.op_type = "DFT", .opset = 17, .inputs = {real}});
  // STFT with a window, with frame_length alone (two-sided), and of a complex signal.
  const Tensor signal = random_tensor({2, 40, 1}, 72), window = random_tensor({8}, 73, 0, 1);
  checks.add({.op_type = "STFT", .opset = 17, .inputs = {signal, scalar(3), window}}, 1e-5, 1e-5);
  checks.add({.op_type = "STFT", .opset = 17, .inputs = {signal, scalar(5), Tensor(), scalar(8)},
              .attrs = attrs({{"onesided", int64_t{0}}})}, 1e-5, 1e-5);
  checks.add({.op_type = "STFT", .opset = 17, .inputs = {random_tensor({1, 30, 2}, 74), scalar(4), window, scalar(8)}},
             1e-5, 1e-5);
  // MelWeightMatrix in float (default) and double.
  checks.add({.op_type = "MelWeightMatrix", .opset = 17, .inputs = {scalar(8), scalar(64), scalar(16000), hertz(0), hertz(8000)}});
  checks.add({.op_type = "MelWeightMatrix", .opset = 17,
              .inputs = {scalar(5), scalar(32), scalar(8000), hertz(300), hertz(3000)},
              .attrs = attrs({{"output_datatype", int64_t{11}}})});
  checks.run();
  // Sizes that do not fit are errors of the step, naming what is wrong.
  auto run = [](const test::NodeSpec& spec) { return test::run_partition_with(spec, "cuda", test::run_partition_on_host); };
  auto long_frame = run({.op_type = "STFT", .opset = 17, .inputs = {signal, scalar(3), Tensor(), scalar(50)}});
  REQUIRE_FALSE(long_frame);
  CHECK_THAT(long_frame.error().what, Catch::Contains("frame_step 3 and frame_length 50 do not fit a signal of length 40"));
  auto empty = run({.op_type = "DFT", .opset = 17, .inputs = {real, scalar(0)}});
  REQUIRE_FALSE(empty);
  CHECK_THAT(empty.error().what, Catch::Contains("dft_length is 0"));
  auto no_bins = run({.op_type = "MelWeightMatrix", .opset = 17, .inputs = {scalar(0), scalar(64), scalar(16000), hertz(0), hertz(8000)}});
  REQUIRE_FALSE(no_bins);
  CHECK_THAT(no_bins.error().what, Catch::Contains("num_mel_bins 0, dft_length 64 and sample_rate 16000 must be positive"));
  // Integers are not transformed: declined with the types taken.
  auto ints = run({.op_type = "DFT", .opset = 17, .inputs = {cast(real, DType::kInt32)}});
  REQUIRE_FALSE(ints);
  CHECK_THAT(ints.error().why, Catch::Contains("float, float16, bfloat16 and double"));
}

TEST_CASE("cuda ScatterND and ScatterElements combine duplicate indices atomically: add, mul, max, min", "[cuda]") {
  HostChecks checks;
  auto reduce = [](const char* reduction) { return attrs({{"reduction", std::string(reduction)}}); };
  const Tensor x = random_tensor({4, 3}, 61);
  const Tensor rows = test::int64s({0, 2, 0, -4}).reshaped({4, 1});  // row 0 three times (-4 is row 0)
  const Tensor updates = random_tensor({4, 3}, 62);
  for (const char* reduction : {"add", "mul"}) {
    checks.add({.op_type = "ScatterND", .opset = 16, .inputs = {x, rows, updates}, .attrs = reduce(reduction)});
    checks.add_f16({.op_type = "ScatterND", .opset = 16, .inputs = {x, rows, updates}, .attrs = reduce(reduction)});
  }
  for (const char* reduction : {"max", "min"})
    checks.add({.op_type = "ScatterND", .opset = 18, .inputs = {x, rows, updates}, .attrs = reduce(reduction)});
  // Many updates to a few elements: 64 per element of a [1, 4] tensor. float16 neighbours share a 32-bit word, int8
  // ones a byte each of one; every sum and product here is exact (integers wrap in both EPs).
  std::vector<int64_t> cycle, values;
  for (int64_t i = 0; i < 256; ++i) cycle.push_back(i % 4), values.push_back(i % 7 - 3);
  const Tensor idx = test::int64s(cycle).reshaped({1, 256});
  const Tensor small = test::int64s(values).reshaped({1, 256});
  const Tensor start = test::int64s({1, -2, 3, 0}).reshaped({1, 4});
  for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32, DType::kInt64, DType::kFloat64})
    for (const char* reduction : {"add", "mul", "max", "min"})
      checks.add({.op_type = "ScatterElements", .opset = 18, .inputs = {cast(start, t), idx, cast(small, t)},
                  .attrs = attrs({{"axis", int64_t{1}}, {"reduction", std::string(reduction)}})},
                 0, 0);
  const Tensor halves = cast(cast(small, DType::kFloat32), DType::kFloat16);
  for (const char* reduction : {"add", "max"})
    checks.add({.op_type = "ScatterElements", .opset = 18, .inputs = {cast(cast(start, DType::kFloat32), DType::kFloat16), idx, halves},
                .attrs = attrs({{"axis", int64_t{-1}}, {"reduction", std::string(reduction)}})},
               0, 0);
  checks.run();
  {
    // Each block's threads at once on host threads (fibers never interrupt one another), with
    // enough updates that each makes about a thousand while others run: int32 elements, and
    // int16 ones sharing 32-bit words. A plain read-modify-write in place of the atomic loses
    // updates here in about half the runs (the host threads overlap only partly).
    test::LaunchOnThreads contend;
    std::vector<int64_t> many_at(131072), ones(131072, 1);
    for (std::size_t i = 0; i < many_at.size(); ++i) many_at[i] = static_cast<int64_t>(i % 4);
    const Tensor many = test::int64s(many_at).reshaped({1, 131072});
    for (DType t : {DType::kInt32, DType::kInt16})
      checks.add({.op_type = "ScatterElements", .opset = 16,
                  .inputs = {cast(start, t), many, cast(test::int64s(ones).reshaped({1, 131072}), t)},
                  .attrs = attrs({{"axis", int64_t{1}}, {"reduction", std::string("add")}})},
                 0, 0);
    checks.run();
  }

  // Declines: a reduction the opset does not define, and one on bool data.
  auto decline = [&](NodeSpec spec) {
    auto r = test::run_partition_with(std::move(spec), "cuda", test::run_partition_on_host);
    REQUIRE_FALSE(r);
    return r.error().why;
  };
  CHECK(decline({.op_type = "ScatterND", .opset = 16, .inputs = {x, rows, updates}, .attrs = reduce("max")}) ==
        "ScatterND: reduction 'max' is not defined for ScatterND-16; it takes none, add, mul");
  const Tensor flags = cast(test::int64s({1, 0, 1, 0}).reshaped({1, 4}), DType::kBool);
  CHECK(decline({.op_type = "ScatterElements", .opset = 16, .inputs = {flags, test::int64s({0, 0}).reshaped({1, 2}),
                                                                       cast(test::int64s({1, 1}).reshaped({1, 2}), DType::kBool)},
                 .attrs = reduce("add")}) ==
        "ScatterElements: reduction 'add' on bool data; the cuda EP reduces float16, bfloat16, float, double and 8- to "
        "64-bit integers");
}

TEST_CASE("cuda TopK runs on the host: largest and smallest, ties, NaN, any axis, k from an input or the attribute", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({3, 5, 4}, 51);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // Ties go to the lower index; NaN ranks above every number.
  const Tensor ties = Tensor::from_vector<float>({2, 6}, {1, 3, 3, nan, -2, 3, 0, 0, 5, 0, nan, nan});
  auto k = [](int64_t v) { return test::int64s({v}); };
  for (int64_t largest : {0, 1}) {
    for (int64_t axis : {0, 1, -1})
      checks.add({.op_type = "TopK", .opset = 11, .inputs = {x, k(axis == 0 ? 2 : 3)},
                  .attrs = attrs({{"axis", axis}, {"largest", largest}}), .outputs = 2});
    checks.add({.op_type = "TopK", .opset = 11, .inputs = {ties, k(6)}, .attrs = attrs({{"largest", largest}}), .outputs = 2});
    checks.add({.op_type = "TopK", .opset = 11, .inputs = {test::int64s({4, -1, 9, 4, 0, 9, -7, 2}).reshaped({2, 4}), k(3)},
                .constant = {false, true}, .attrs = attrs({{"largest", largest}}), .outputs = 2});
  }
  // A row longer than the block (300 elements, 256 threads), k = 0, and TopK-1's attribute.
  checks.add({.op_type = "TopK", .opset = 11, .inputs = {random_tensor({2, 300}, 52), k(17)}, .outputs = 2});
  checks.add({.op_type = "TopK", .opset = 11, .inputs = {x, k(0)}, .outputs = 2});
  checks.add({.op_type = "TopK", .opset = 1, .inputs = {x}, .attrs = attrs({{"k", int64_t{2}}, {"axis", int64_t{1}}}), .outputs = 2});
  checks.add_f16({.op_type = "TopK", .opset = 11, .inputs = {x, k(2)}, .constant = {false, true}, .outputs = 2});
  checks.run();
  // k beyond the axis is a run-time error naming both.
  auto too_many = test::run_partition_with({.op_type = "TopK", .opset = 11, .inputs = {x, k(5)}, .outputs = 2}, "cuda",
                                           test::run_partition_on_host);
  REQUIRE_FALSE(too_many);
  CHECK_THAT(too_many.error().what, Catch::Contains("k is 5 but axis 2 of [3,5,4] has 4 elements"));
}

TEST_CASE("cuda Einsum runs on the host: the GEMM forms through cuBLASLt, the rest in one kernel", "[cuda]") {
  HostChecks checks;
  auto einsum = [](std::string equation, std::vector<Tensor> inputs) {
    return NodeSpec{.op_type = "Einsum", .opset = 12, .inputs = std::move(inputs), .attrs = attrs({{"equation", std::move(equation)}})};
  };
  const Tensor a = random_tensor({2, 3, 4}, 61), b = random_tensor({2, 4, 5}, 62);
  checks.add(einsum("bij,bjk->bik", {a, b}), 1e-5, 1e-5);            // laid out for the GEMM as it is
  checks.add(einsum("bij,bkj->bki", {a, random_tensor({2, 5, 4}, 63)}), 1e-5, 1e-5);  // gathers B, scatters the product
  checks.add(einsum("ij,jk", {random_tensor({3, 4}, 64), random_tensor({4, 2}, 65)}), 1e-5, 1e-5);  // implicit output
  checks.add(einsum("...ij,...jk->...ik", {random_tensor({3, 2, 4}, 66), random_tensor({1, 4, 3}, 67)}), 1e-5, 1e-5);
  checks.add(einsum("bhqd,bhkd->bhqk", {random_tensor({1, 2, 3, 8}, 68), random_tensor({1, 2, 5, 8}, 69)}), 1e-5, 1e-5);
  // Not GEMMs: one input (transpose, sum, diagonal), an inner product, an outer product
  // (nothing summed), a label summed within one input.
  checks.add(einsum("ijk->kji", {a}));
  checks.add(einsum("ijk->j", {a}), 1e-5, 1e-5);
  checks.add(einsum("bii->bi", {random_tensor({2, 3, 3}, 70)}));
  checks.add(einsum("i,i", {random_tensor({7}, 71), random_tensor({7}, 72)}), 1e-5, 1e-5);
  checks.add(einsum("i,j->ij", {random_tensor({3}, 73), random_tensor({4}, 74)}));
  checks.add(einsum("ij,jk->i", {random_tensor({3, 4}, 75), random_tensor({4, 2}, 76)}), 1e-5, 1e-5);
  checks.add(einsum("ij,jk->ik", {test::int64s({1, -2, 3, 4, 0, 5}).reshaped({2, 3}), test::int64s({2, 1, 0, -1, 3, 3}).reshaped({3, 2})}));
  checks.add(einsum("ij,ij->", {random_tensor({0, 3}, 77), random_tensor({0, 3}, 78)}));  // an empty sum is 0
  checks.add_f16(einsum("bij,bjk->bik", {a, b}), 1e-2, 2e-2);
  checks.add_f16(einsum("ijk->ki", {a}), 1e-2, 2e-2);
  checks.run();
  // Three inputs are declined with the reason; shapes that do not fit fail when the step runs.
  const Tensor v = random_tensor({3}, 79);
  auto three = test::run_partition_with(einsum("i,i,i->", {v, v, v}), "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(three);
  CHECK_THAT(three.error().why, Catch::Contains("the cuda EP runs Einsum of one or two inputs"));
  auto mismatch = test::run_partition_with(einsum("ij,jk->ik", {random_tensor({2, 3}, 80), random_tensor({4, 2}, 81)}), "cuda",
                                           test::run_partition_on_host);
  REQUIRE_FALSE(mismatch);
  CHECK_THAT(mismatch.error().render(), Catch::Contains("has size 4 but its label has size 3 elsewhere"));
}

TEST_CASE("cuda QuantizeLinear and DequantizeLinear run on the host: int8 and uint8, per tensor and per axis", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4}, 91, -300, 300);  // beyond both types' ranges: saturates
  const Tensor half_way = Tensor::from_vector<float>({6}, {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 254.5f});  // ties to even
  const Tensor scale = Tensor::from_vector<float>({}, {2.f});
  const Tensor scales = Tensor::from_vector<float>({3}, {0.5f, 2.f, 3.f});
  auto int8s = [](std::vector<int64_t> v) { return cast(test::int64s(v), DType::kInt8); };
  auto uint8s = [](std::vector<int64_t> v) { return cast(test::int64s(v), DType::kUInt8); };
  const Tensor zero_u8 = uint8s({128}).reshaped({}), zero_i8 = int8s({-3}).reshaped({});
  checks.add({.op_type = "QuantizeLinear", .opset = 13, .inputs = {x, scale, zero_u8}, .output_dtypes = {DType::kUInt8}});
  checks.add({.op_type = "QuantizeLinear", .opset = 13, .inputs = {x, scale, zero_i8}});
  checks.add({.op_type = "QuantizeLinear", .opset = 13, .inputs = {half_way, Tensor::from_vector<float>({}, {1.f})}});  // uint8, no zero point
  checks.add({.op_type = "QuantizeLinear", .opset = 13, .inputs = {x, scales, uint8s({0, 10, 250})}});  // per axis 1
  checks.add({.op_type = "QuantizeLinear", .opset = 13, .inputs = {x, Tensor::from_vector<float>({4}, {1, 2, 3, 4}), int8s({0, 1, -1, 5})},
              .attrs = attrs({{"axis", int64_t{-1}}})});
  checks.add({.op_type = "QuantizeLinear", .opset = 10, .inputs = {x, scale}, .constant = {false, true}});
  const Tensor q8 = int8s({-128, -1, 0, 1, 127, 50, -50, 3, 7, -9, 100, -100}).reshaped({3, 4});
  checks.add({.op_type = "DequantizeLinear", .opset = 13, .inputs = {q8, scale, zero_i8}, .output_dtypes = {DType::kFloat32}});
  checks.add({.op_type = "DequantizeLinear", .opset = 13, .inputs = {q8, scales, int8s({0, 5, -5})}, .attrs = attrs({{"axis", int64_t{0}}})});
  checks.add({.op_type = "DequantizeLinear", .opset = 13, .inputs = {uint8s({0, 255, 128, 7}), scale}});
  checks.add({.op_type = "DequantizeLinear", .opset = 13, .inputs = {cast(test::int64s({-70000, 5, 70000}), DType::kInt32), scale}});
  checks.add_f16({.op_type = "DequantizeLinear", .opset = 19, .inputs = {q8, scale, zero_i8}});
  checks.add_f16({.op_type = "QuantizeLinear", .opset = 19, .inputs = {random_tensor({8}, 92, -100, 100), scale, zero_u8}});
  // Opset 23: precision 1 divides in float (as every version does here); output_dtype 1 is the
  // float scale's own type.
  checks.add({.op_type = "QuantizeLinear", .opset = 23, .inputs = {x, scales, uint8s({0, 10, 250})},
              .attrs = attrs({{"precision", int64_t{1}}}), .output_dtypes = {DType::kUInt8}});
  checks.add({.op_type = "DequantizeLinear", .opset = 23, .inputs = {q8, scales, int8s({0, 5, -5})},
              .attrs = attrs({{"axis", int64_t{0}}, {"output_dtype", int64_t{1}}})});
  checks.run();
  // DequantizeLinear-23 with output_dtype float16 from float scales: the float result rounded
  // once, to the nearest float16 (the cpu EP outputs float only).
  auto as_half = test::run_partition_with({.op_type = "DequantizeLinear", .opset = 23, .inputs = {q8, scales},
                                           .attrs = attrs({{"axis", int64_t{0}}, {"output_dtype", int64_t{10}}}),
                                           .output_dtypes = {DType::kFloat16}},
                                          "cuda", test::run_partition_on_host);
  REQUIRE(as_half);
  const Tensor in_float = test::run_one({.op_type = "DequantizeLinear", .opset = 13, .inputs = {q8, scales},
                                         .attrs = attrs({{"axis", int64_t{0}}})});
  REQUIRE((*as_half)[0].dtype() == DType::kFloat16);
  CHECK(test::compare_tensors((*as_half)[0], to_f16(in_float), 0, 0) == "");
  // Scales that do not fit x are declined with the shape they need.
  auto blocked = test::run_partition_with({.op_type = "QuantizeLinear", .opset = 21, .inputs = {x, random_tensor({2, 3, 2}, 93)},
                                           .attrs = attrs({{"block_size", int64_t{2}}})},
                                          "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(blocked);
  CHECK(blocked.error().why ==
        "QuantizeLinear: the scale [2,3,2] does not fit x [2,3,4] with axis 1 and block_size 2; blocked scales have x's "
        "shape with ceil(dim / block_size) at the axis: [2,2,4]");
  auto misfit = test::run_partition_with({.op_type = "DequantizeLinear", .opset = 13, .inputs = {q8, scales}, .attrs = attrs({{"axis", int64_t{1}}})},
                                         "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().why == "DequantizeLinear: the scale [3] does not fit x [3,4] with axis 1; a per-axis scale is 1-D "
                              "with one value per index of the axis");
}

TEST_CASE("cuda GridSample runs on the host: every mode and padding, 1 to 3 spatial dims", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4, 5}, 111);
  const Tensor grid = random_tensor({2, 3, 2, 2}, 112, -1.3f, 1.3f);  // some points outside [-1, 1]
  for (const char* mode : {"bilinear", "nearest", "bicubic"})
    for (const char* padding : {"zeros", "border", "reflection"})
      for (int64_t align : {0, 1})
        checks.add({.op_type = "GridSample", .opset = 16, .inputs = {x, grid},
                    .attrs = attrs({{"mode", std::string(mode)}, {"padding_mode", std::string(padding)}, {"align_corners", align}})},
                   1e-4, 1e-4);
  for (const char* mode : {"linear", "nearest"}) {
    checks.add({.op_type = "GridSample", .opset = 20, .inputs = {random_tensor({1, 2, 6}, 113), random_tensor({1, 4, 1}, 114, -1.2f, 1.2f)},
                .attrs = attrs({{"mode", std::string(mode)}, {"padding_mode", std::string("reflection")}})},
               1e-4, 1e-4);
    checks.add({.op_type = "GridSample", .opset = 20, .inputs = {random_tensor({1, 2, 3, 4, 5}, 115), random_tensor({1, 2, 3, 2, 3}, 116)},
                .attrs = attrs({{"mode", std::string(mode)}, {"padding_mode", std::string("border")}})},
               1e-4, 1e-4);
  }
  checks.add_f16({.op_type = "GridSample", .opset = 16, .inputs = {x, grid}}, 1e-2, 2e-2);
  checks.run();
  auto cubic_3d = test::run_partition_with({.op_type = "GridSample", .opset = 20, .inputs = {random_tensor({1, 1, 2, 2, 2}, 117), random_tensor({1, 1, 1, 1, 3}, 118)},
                                            .attrs = attrs({{"mode", std::string("cubic")}})},
                                           "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(cubic_3d);
  CHECK_THAT(cubic_3d.error().why, Catch::Contains("mode 'cubic' is defined for 2-D spatial inputs (X of rank 4) only"));
}

TEST_CASE("cuda Compress, NonZero and NonMaxSuppression run on the host: outputs sized by the values", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({3, 4}, 121);
  auto bools = [](std::vector<int64_t> v) { return cast(test::int64s(std::move(v)), DType::kBool); };
  checks.add({.op_type = "Compress", .opset = 11, .inputs = {x, bools({0, 1, 1})}, .attrs = attrs({{"axis", int64_t{0}}})});
  checks.add({.op_type = "Compress", .opset = 11, .inputs = {x, bools({1, 0, 0, 1})}, .attrs = attrs({{"axis", int64_t{-1}}})});
  checks.add({.op_type = "Compress", .opset = 11, .inputs = {x, bools({0, 0, 1, 0, 1})}});  // flattened, shorter condition
  checks.add({.op_type = "Compress", .opset = 11, .inputs = {x, bools({0, 0})}, .attrs = attrs({{"axis", int64_t{1}}})});  // empty
  const Tensor mixed = Tensor::from_vector<float>({2, 3}, {0.f, -0.f, 2.f, -1.f, 0.f, 0.5f});
  checks.add({.op_type = "NonZero", .opset = 13, .inputs = {mixed}});
  checks.add({.op_type = "NonZero", .opset = 13, .inputs = {test::int64s({0, 3, 0, 0, 7, 1, 0, 0}).reshaped({2, 2, 2})}});
  checks.add({.op_type = "NonZero", .opset = 13, .inputs = {bools({0, 0, 0})}});  // none
  checks.add({.op_type = "NonZero", .opset = 13, .inputs = {Tensor::from_vector<float>({}, {4.f})}});  // a scalar
  checks.add_f16({.op_type = "NonZero", .opset = 13, .inputs = {mixed}});
  // NonMaxSuppression: overlapping boxes in both formats, with and without a score threshold.
  const Tensor boxes = random_tensor({2, 6, 4}, 122, 0, 4), scores = random_tensor({2, 3, 6}, 123, 0, 1);
  auto f = [](float v) { return Tensor::from_vector<float>({1}, {v}); };
  for (int64_t center : {0, 1}) {
    checks.add({.op_type = "NonMaxSuppression", .opset = 11, .inputs = {boxes, scores, test::int64s({3}), f(0.3f), f(0.2f)},
                .attrs = attrs({{"center_point_box", center}})});
    checks.add({.op_type = "NonMaxSuppression", .opset = 11, .inputs = {boxes, scores, test::int64s({10}), f(0.5f)},
                .attrs = attrs({{"center_point_box", center}})});
  }
  checks.add({.op_type = "NonMaxSuppression", .opset = 10, .inputs = {boxes, scores}});  // no limit given: nothing selected
  checks.run();
  auto beyond = test::run_partition_with({.op_type = "Compress", .opset = 11, .inputs = {x, bools({0, 0, 0, 1})}, .attrs = attrs({{"axis", int64_t{0}}})},
                                         "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(beyond);
  CHECK_THAT(beyond.error().what, Catch::Contains("condition selects index 3 but the axis 0 of input [3,4] has only 3 entries"));
}

TEST_CASE("cuda Resize runs on the host: nearest, linear and cubic, every coordinate mode, scales or sizes", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({1, 2, 4, 5}, 41);
  const Tensor no_roi = Tensor::from_vector<float>({0}, {});
  const Tensor up = Tensor::from_vector<float>({4}, {1, 1, 1.5f, 2.2f}), down = Tensor::from_vector<float>({4}, {1, 1, 0.6f, 0.5f});
  for (const char* transform : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const Tensor& scales : {up, down})
      checks.add({.op_type = "Resize", .opset = 13, .inputs = {x, no_roi, scales},
                  .attrs = attrs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string(transform)}})},
                 1e-5, 1e-5);
  // Cubic: every transform, both ways, with exclude_outside and another A; the N and C dims
  // (scale 1) take one tap.
  for (const char* transform : {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"})
    for (const Tensor& scales : {up, down})
      for (int64_t exclude : {0, 1})
        checks.add({.op_type = "Resize", .opset = 13, .inputs = {x, no_roi, scales},
                    .attrs = attrs({{"mode", std::string("cubic")}, {"coordinate_transformation_mode", std::string(transform)},
                                    {"exclude_outside", exclude}, {"cubic_coeff_a", exclude ? -0.5f : -0.75f}})},
                   1e-5, 1e-5);
  checks.add_f16({.op_type = "Resize", .opset = 13, .inputs = {x, no_roi, Tensor(), test::int64s({1, 2, 7, 3})},
                  .attrs = attrs({{"mode", std::string("cubic")}})},
                 1e-2, 2e-2);
  for (const char* nearest : {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"})
    checks.add({.op_type = "Resize", .opset = 13, .inputs = {x, no_roi, Tensor(), test::int64s({1, 3, 7, 3})},
                .attrs = attrs({{"nearest_mode", std::string(nearest)}, {"coordinate_transformation_mode", std::string("tf_half_pixel_for_nn")}})});
  // Nearest moves any dtype; sizes given as a constant.
  checks.add({.op_type = "Resize", .opset = 19, .inputs = {test::int64s({1, 2, 3, 4, 5, 6}).reshaped({2, 3}), no_roi, Tensor(), test::int64s({3, 5})},
              .constant = {false, true, false, true}});
  checks.add_f16({.op_type = "Resize", .opset = 13, .inputs = {x, no_roi, up}, .attrs = attrs({{"mode", std::string("linear")}})},
                 1e-2, 1e-2, {1, 2});  // roi and scales stay float
  // tf_crop_and_resize: roi (float or double) crops, coordinates beyond the input take
  // extrapolation_value; nearest and linear, by scales and by sizes, float16 too.
  const Tensor crop = Tensor::from_vector<float>({8}, {0, 0, 0.4f, -0.2f, 1, 1, 1.3f, 0.9f});
  for (const char* mode : {"nearest", "linear", "cubic"})
    checks.add({.op_type = "Resize", .opset = 13, .inputs = {x, crop, Tensor(), test::int64s({1, 2, 5, 6})},
                .attrs = attrs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                {"extrapolation_value", 7.5f}})},
               1e-5, 1e-5);
  checks.add({.op_type = "Resize", .opset = 13, .inputs = {x, cast(crop, DType::kFloat64), up},
              .attrs = attrs({{"mode", std::string("linear")}, {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}})},
             1e-5, 1e-5);
  checks.add_f16({.op_type = "Resize", .opset = 13, .inputs = {x, crop, Tensor(), test::int64s({1, 2, 3, 4})},
                  .attrs = attrs({{"coordinate_transformation_mode", std::string("tf_crop_and_resize")}, {"extrapolation_value", -1.f}})},
                 1e-2, 1e-2, {1});
  // Upsample (scales an attribute at 7, an input at 9) and Resize-10: asymmetric coordinates,
  // nearest truncating when upsampling and rounding up when downsampling.
  const Tensor twice = Tensor::from_vector<float>({4}, {1, 1, 2, 3});
  for (const char* mode : {"nearest", "linear"}) {
    for (const Tensor& scales : {up, down, twice})
      checks.add({.op_type = "Resize", .opset = 10, .inputs = {x, scales}, .attrs = attrs({{"mode", std::string(mode)}})}, 1e-5,
                 1e-5);
    checks.add({.op_type = "Upsample", .opset = 9, .inputs = {x, up}, .attrs = attrs({{"mode", std::string(mode)}})}, 1e-5, 1e-5);
    checks.add({.op_type = "Upsample", .opset = 7, .inputs = {x},
                .attrs = attrs({{"mode", std::string(mode)}, {"scales", std::vector<float>{1, 1, 2, 1.5f}}})},
               1e-5, 1e-5);
  }
  checks.run();
}

TEST_CASE("cuda Resize-18 and -19 run on the host: axes, keep_aspect_ratio_policy, antialias, half_pixel_symmetric",
          "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({1, 2, 9, 7}, 43);
  const Tensor no_roi = Tensor::from_vector<float>({0}, {});
  // axes: scales or sizes for the listed axes only (negative ones too), tf_crop_and_resize's
  // roi for those axes.
  checks.add({.op_type = "Resize", .opset = 18, .inputs = {x, no_roi, Tensor::from_vector<float>({2}, {0.5f, 1.6f})},
              .attrs = attrs({{"mode", std::string("linear")}, {"axes", ints{3, -2}}})},
             1e-5, 1e-5);
  checks.add({.op_type = "Resize", .opset = 18, .inputs = {x, no_roi, Tensor(), test::int64s({4})},
              .attrs = attrs({{"mode", std::string("cubic")}, {"axes", ints{2}}})},
             1e-5, 1e-5);
  checks.add({.op_type = "Resize", .opset = 18, .inputs = {x, Tensor::from_vector<float>({2}, {0.2f, 1.1f}), Tensor(), test::int64s({5})},
              .attrs = attrs({{"mode", std::string("linear")}, {"axes", ints{3}},
                               {"coordinate_transformation_mode", std::string("tf_crop_and_resize")}, {"extrapolation_value", 3.f}})},
             1e-5, 1e-5);
  // keep_aspect_ratio_policy: one scale for every resized axis, the smaller or the larger.
  for (const char* policy : {"not_larger", "not_smaller"})
    for (const char* mode : {"nearest", "linear"})
      checks.add({.op_type = "Resize", .opset = 18, .inputs = {x, no_roi, Tensor(), test::int64s({5, 12})},
                  .attrs = attrs({{"mode", std::string(mode)}, {"axes", ints{2, 3}}, {"keep_aspect_ratio_policy", std::string(policy)}})},
                 1e-5, 1e-5);
  // antialias: downsampling widens the filter (more taps in one dim than the other); upsampling
  // keeps it.
  for (const char* mode : {"linear", "cubic"})
    for (const Tensor& scales : {Tensor::from_vector<float>({4}, {1, 1, 0.3f, 0.6f}), Tensor::from_vector<float>({4}, {1, 1, 0.5f, 1.7f})})
      checks.add({.op_type = "Resize", .opset = 18, .inputs = {x, no_roi, scales},
                  .attrs = attrs({{"mode", std::string(mode)}, {"antialias", int64_t{1}}})},
                 1e-5, 1e-5);
  checks.add_f16({.op_type = "Resize", .opset = 18, .inputs = {x, no_roi, Tensor(), test::int64s({1, 2, 4, 3})},
                  .attrs = attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}})},
                 1e-2, 1e-2);
  // half_pixel_symmetric: scales whose output length is fractional shift the sampling grid.
  for (const char* mode : {"nearest", "linear", "cubic"})
    checks.add({.op_type = "Resize", .opset = 19, .inputs = {x, no_roi, Tensor::from_vector<float>({4}, {1, 1, 0.45f, 1.3f})},
                .attrs = attrs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string("half_pixel_symmetric")}})},
               1e-5, 1e-5);
  checks.run();
}

TEST_CASE("cuda Upsample and Resize-10 decline cubic and an Upsample-7 without scales", "[cuda]") {
  const Tensor x = random_tensor({1, 1, 2, 2}, 42);
  auto decline = [](NodeSpec spec) {
    auto r = test::run_partition_with(std::move(spec), "cuda", test::run_partition_on_host);
    REQUIRE_FALSE(r);
    return r.error().why;
  };
  CHECK(decline({.op_type = "Resize", .opset = 10, .inputs = {x, Tensor::from_vector<float>({4}, {1, 1, 2, 2})},
                 .attrs = attrs({{"mode", std::string("cubic")}})}) ==
        "Resize: mode 'cubic' is not valid at opset 10; use nearest or linear");
  CHECK(decline({.op_type = "Upsample", .opset = 7, .inputs = {x}}) ==
        "Upsample: the scales attribute is missing; it is required at opset 7");
}

TEST_CASE("cuda RNN, GRU and LSTM run their products and gate kernels on the host", "[cuda]") {
  HostChecks checks;
  const int64_t seq = 3, batch = 2, input = 3, hidden = 4;
  // One layer's inputs: X, W, R, then B, sequence_lens, initial_h, initial_c and P where asked
  // (row 1 of the batch stops after one step).
  struct Layer {
    const char* op;
    int64_t gates;
    int64_t dirs = 1;
    bool bias = false, lens = false, states = false, peepholes = false;
    int64_t layout = 0;
  };
  unsigned seed = 200;
  auto inputs = [&](const Layer& l) {
    auto values = [&](Shape shape) { return random_tensor(std::move(shape), seed++, -1, 1); };
    const Shape x = l.layout ? Shape{batch, seq, input} : Shape{seq, batch, input};
    const Shape state = l.layout ? Shape{batch, l.dirs, hidden} : Shape{l.dirs, batch, hidden};
    std::vector<Tensor> in{values(x), values({l.dirs, l.gates * hidden, input}), values({l.dirs, l.gates * hidden, hidden})};
    in.push_back(l.bias ? values({l.dirs, 2 * l.gates * hidden}) : Tensor());
    in.push_back(l.lens ? Tensor::from_vector<int32_t>({batch}, {3, 1}) : Tensor());
    in.push_back(l.states ? values(state) : Tensor());
    if (std::string(l.op) == "LSTM") {
      in.push_back(l.states ? values(state) : Tensor());
      in.push_back(l.peepholes ? values({l.dirs, 3 * hidden}) : Tensor());
    }
    while (!in.back().defined()) in.pop_back();
    return in;
  };
  auto add = [&](const Layer& l, AttributeMap a) {
    a.set("hidden_size", Attribute{hidden});
    if (l.dirs == 2) a.set("direction", Attribute{std::string("bidirectional")});
    if (l.layout) a.set("layout", Attribute{l.layout});
    checks.add({.op_type = l.op, .opset = 14, .inputs = inputs(l), .attrs = a, .outputs = std::string(l.op) == "LSTM" ? 3u : 2u},
               1e-5, 1e-5);
  };
  using strings = std::vector<std::string>;
  add({"RNN", 1}, {});
  add({"RNN", 1, 2, true, true, true}, attrs({{"activations", strings{"Relu", "Tanh"}}, {"clip", 0.8f}}));
  add({.op = "RNN", .gates = 1, .dirs = 1, .bias = true, .states = true, .layout = 1}, attrs({{"direction", std::string("reverse")}}));
  add({"GRU", 3, 1, true, false, true}, {});                                  // the reset gate before its product
  add({"GRU", 3, 1, true, false, true}, attrs({{"linear_before_reset", int64_t{1}}}));
  add({"GRU", 3, 2, true, true, true, false, 1}, attrs({{"linear_before_reset", int64_t{1}}}));
  add({"GRU", 3, 2, false, true, false}, attrs({{"activations", strings{"HardSigmoid", "Softsign", "Sigmoid", "Elu"}},
                                                {"activation_alpha", std::vector<float>{0.3f, 0.7f}},
                                                {"activation_beta", std::vector<float>{0.4f}}}));
  add({"LSTM", 4, 1, true, false, true, true}, {});
  add({"LSTM", 4, 2, true, true, true, true, 1}, attrs({{"input_forget", int64_t{1}}, {"clip", 0.5f}}));
  add({"LSTM", 4, 1, true, true, false}, attrs({{"direction", std::string("reverse")},
                                                {"activations", strings{"Sigmoid", "ScaledTanh", "Softplus"}},
                                                {"activation_alpha", std::vector<float>{1.5f}},
                                                {"activation_beta", std::vector<float>{0.5f}}}));
  // Only Y_h of an LSTM, and an empty sequence (Y_h is the initial state).
  checks.add({.op_type = "LSTM", .opset = 14, .inputs = inputs({"LSTM", 4}), .attrs = attrs({{"hidden_size", hidden}}),
              .outputs = 2},
             1e-5, 1e-5);
  std::vector<Tensor> empty = inputs({"LSTM", 4, 1, true, false, true});
  empty[0] = Tensor::from_vector<float>({0, batch, input}, {});
  checks.add({.op_type = "LSTM", .opset = 14, .inputs = empty, .attrs = attrs({{"hidden_size", hidden}}), .outputs = 3});
  checks.add_f16({.op_type = "GRU", .opset = 14, .inputs = inputs({"GRU", 3, 2, true, true, true}),
                  .attrs = attrs({{"hidden_size", hidden}, {"direction", std::string("bidirectional")}}), .outputs = 2});
  checks.run();
}

TEST_CASE("cuda recurrent layers decline double and a sequence_lens that is not int32", "[cuda]") {
  auto decline = [](std::vector<Tensor> inputs) {
    auto r = test::run_partition_with(
        {.op_type = "RNN", .opset = 14, .inputs = std::move(inputs), .attrs = attrs({{"hidden_size", int64_t{1}}}), .outputs = 2},
        "cuda", test::run_partition_on_host);
    REQUIRE_FALSE(r);
    return r.error().why;
  };
  const Tensor xd = Tensor::from_vector<double>({1, 1, 1}, {1});
  CHECK_THAT(decline({xd, xd, xd}), Catch::Contains("RNN: input 0 is double; the cuda EP runs float, float16 and bfloat16 only"));
  const Tensor x = random_tensor({1, 1, 1}, 1);
  CHECK_THAT(decline({x, x, x, Tensor(), test::int64s({1})}),
             Catch::Contains("RNN: sequence_lens is int64; ONNX defines it as int32"));
}

TEST_CASE("cuda NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss run on the host", "[cuda]") {
  HostChecks checks;
  const Tensor scores = random_tensor({3, 5, 2, 2}, 300);
  const Tensor weights = random_tensor({5}, 301, 0.1f, 1);
  // Class 2 is the ignore_index below; int32 and int64 targets.
  const Tensor target = test::int64s({0, 4, 2, 1, 3, 3, 2, 0, 1, 4, 2, 2}).reshaped({3, 2, 2});
  const Tensor target32 = cast(target, DType::kInt32);
  for (const char* op : {"NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"})
    for (const char* reduction : {"none", "sum", "mean"}) {
      const AttributeMap plain = attrs({{"reduction", std::string(reduction)}});
      const AttributeMap ignoring = attrs({{"reduction", std::string(reduction)}, {"ignore_index", int64_t{2}}});
      checks.add({.op_type = op, .opset = 13, .inputs = {scores, target}, .attrs = plain}, 1e-5, 1e-5);
      checks.add({.op_type = op, .opset = 13, .inputs = {scores, target32, weights}, .attrs = ignoring}, 1e-5, 1e-5);
    }
  // SoftmaxCrossEntropyLoss's log-probabilities; (N, C) without extra dims.
  checks.add({.op_type = "SoftmaxCrossEntropyLoss", .opset = 13, .inputs = {scores, target, weights}, .outputs = 2}, 1e-5, 1e-5);
  checks.add({.op_type = "SoftmaxCrossEntropyLoss", .opset = 12, .inputs = {random_tensor({4, 3}, 302), test::int64s({0, 2, 1, 1})}},
             1e-5, 1e-5);
  // Many classes: LogSoftmax takes a block per position.
  checks.add({.op_type = "SoftmaxCrossEntropyLoss", .opset = 13, .inputs = {random_tensor({2, 300}, 303), test::int64s({7, 299})},
              .outputs = 2},
             1e-5, 1e-5);
  checks.add_f16({.op_type = "NegativeLogLikelihoodLoss", .opset = 13, .inputs = {scores, target, weights},
                  .attrs = attrs({{"reduction", std::string("none")}})});
  checks.run();
}

TEST_CASE("cuda DynamicQuantizeLinear, MatMulInteger and QLinearMatMul run on the host", "[cuda]") {
  HostChecks checks;
  // The range includes 0 whether or not x does; all zeros give scale 0.
  checks.add({.op_type = "DynamicQuantizeLinear", .opset = 11, .inputs = {random_tensor({3, 70}, 400, -3, 5)}, .outputs = 3});
  checks.add({.op_type = "DynamicQuantizeLinear", .opset = 11, .inputs = {random_tensor({40}, 401, 1, 2)}, .outputs = 3});
  checks.add({.op_type = "DynamicQuantizeLinear", .opset = 11, .inputs = {Tensor::from_vector<float>({3}, {0, 0, 0})}, .outputs = 3});
  auto bytes = [](Shape shape, unsigned seed, DType dtype) {
    return cast(random_tensor(std::move(shape), seed, dtype == DType::kInt8 ? -128 : 0, dtype == DType::kInt8 ? 127 : 255), dtype);
  };
  const DType u8 = DType::kUInt8, i8 = DType::kInt8;
  checks.add({.op_type = "MatMulInteger", .opset = 10, .inputs = {bytes({4, 6}, 402, u8), bytes({6, 5}, 403, u8)}});
  checks.add({.op_type = "MatMulInteger", .opset = 10,
              .inputs = {bytes({2, 4, 6}, 404, u8), bytes({6, 5}, 405, i8), bytes({}, 406, u8), bytes({5}, 407, i8)}});
  checks.add({.op_type = "MatMulInteger", .opset = 10,
              .inputs = {bytes({4, 6}, 408, i8), bytes({3, 6, 5}, 409, u8), bytes({4}, 410, i8)}});
  // Batch dims that broadcast partly on both sides: both operands copied out with [2, 3].
  checks.add({.op_type = "MatMulInteger", .opset = 10,
              .inputs = {bytes({2, 1, 4, 6}, 419, u8), bytes({3, 6, 5}, 420, u8)}});
  const Tensor a_scale = random_tensor({}, 411, 0.01f, 0.05f), b_scale = random_tensor({5}, 412, 0.01f, 0.05f);
  const Tensor y_scale = random_tensor({}, 413, 0.05f, 0.1f);
  for (DType out : {u8, i8})
    checks.add({.op_type = "QLinearMatMul", .opset = 10,
                .inputs = {bytes({2, 4, 6}, 414, u8), a_scale, bytes({}, 415, u8), bytes({6, 5}, 416, i8), b_scale,
                           bytes({5}, 417, i8), y_scale, bytes({}, 418, out)}});
  checks.run();
}

TEST_CASE("cuda ConvInteger and QLinearConv run on the host: pads, strides, dilations, groups, 1-D to 3-D", "[cuda]") {
  HostChecks checks;
  auto bytes = [](Shape shape, unsigned seed, DType dtype) {
    return cast(random_tensor(std::move(shape), seed, dtype == DType::kInt8 ? -128 : 0, dtype == DType::kInt8 ? 127 : 255), dtype);
  };
  const DType u8 = DType::kUInt8, i8 = DType::kInt8;
  // 2-D with asymmetric pads, strides and dilations; zero points per tensor and per channel.
  checks.add({.op_type = "ConvInteger", .opset = 10,
              .inputs = {bytes({2, 3, 7, 6}, 420, u8), bytes({4, 3, 3, 2}, 421, u8), bytes({}, 422, u8), bytes({4}, 423, u8)},
              .attrs = attrs({{"pads", ints{1, 0, 2, 1}}, {"strides", ints{2, 1}}, {"dilations", ints{1, 2}}})});
  // Groups, int8 weights, no zero points; 1-D and 3-D; auto_pad.
  checks.add({.op_type = "ConvInteger", .opset = 10, .inputs = {bytes({1, 4, 5, 5}, 424, i8), bytes({6, 2, 3, 3}, 425, i8)},
              .attrs = attrs({{"group", int64_t{2}}, {"auto_pad", std::string("SAME_UPPER")}})});
  checks.add({.op_type = "ConvInteger", .opset = 10, .inputs = {bytes({2, 2, 9}, 426, u8), bytes({3, 2, 4}, 427, i8), bytes({}, 428, u8)},
              .attrs = attrs({{"strides", ints{3}}})});
  checks.add({.op_type = "ConvInteger", .opset = 10, .inputs = {bytes({1, 2, 3, 4, 4}, 429, u8), bytes({2, 2, 2, 3, 2}, 430, u8)},
              .attrs = attrs({{"pads", ints{0, 1, 1, 1, 0, 0}}})});
  // QLinearConv to uint8 and int8: w_scale and w_zero_point per channel, a bias.
  const Tensor x_scale = random_tensor({}, 431, 0.01f, 0.05f), w_scale = random_tensor({4}, 432, 0.01f, 0.05f);
  const Tensor y_scale = random_tensor({}, 433, 0.5f, 1.f);
  const Tensor bias = cast(random_tensor({4}, 434, -500, 500), DType::kInt32);
  for (DType out : {u8, i8})
    checks.add({.op_type = "QLinearConv", .opset = 10,
                .inputs = {bytes({1, 3, 6, 6}, 435, u8), x_scale, bytes({}, 436, u8), bytes({4, 3, 3, 3}, 437, i8), w_scale,
                           bytes({4}, 438, i8), y_scale, bytes({}, 439, out), bias},
                .attrs = attrs({{"pads", ints{1, 1, 1, 1}}})},
               0, 0);
  // No bias, one weight scale, groups.
  checks.add({.op_type = "QLinearConv", .opset = 10,
              .inputs = {bytes({1, 4, 5, 5}, 440, i8), x_scale, bytes({}, 441, i8), bytes({2, 2, 2, 2}, 442, i8),
                         random_tensor({}, 443, 0.01f, 0.05f), bytes({}, 444, i8), y_scale, bytes({}, 445, i8)},
              .attrs = attrs({{"group", int64_t{2}}})},
             0, 0);
  checks.run();
  auto declined = test::run_partition_with(
      {.op_type = "ConvInteger", .opset = 10, .inputs = {bytes({1, 1, 3, 3}, 446, u8), bytes({1, 1, 2, 2}, 447, u8), bytes({2}, 448, u8)}},
      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(declined);
  CHECK(declined.error().why == "ConvInteger: x_zero_point has rank 1; it must be a scalar");
  // A per-channel operand of neither 1 nor one value per output channel fails the step.
  auto miscounted = test::run_partition_with(
      {.op_type = "ConvInteger", .opset = 10, .inputs = {bytes({1, 1, 3, 3}, 449, u8), bytes({4, 1, 2, 2}, 450, u8), Tensor(), bytes({3}, 451, u8)}},
      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(miscounted);
  CHECK_THAT(miscounted.error().render(), Catch::Contains("w_zero_point has 3 values; it needs 1 or 4") &&
                                              Catch::Contains("give one value, or one per output channel"));
}

TEST_CASE("cuda Det runs on the host: batches, pivoting, singular matrices, float16 and double", "[cuda]") {
  HostChecks checks;
  checks.add({.op_type = "Det", .opset = 11, .inputs = {random_tensor({3, 5, 5}, 450)}}, 1e-5, 1e-6);
  checks.add({.op_type = "Det", .opset = 11, .inputs = {random_tensor({2, 2}, 451)}}, 1e-6, 1e-6);
  // A zero in the first pivot position (rows swap, the sign flips) and a singular matrix.
  checks.add({.op_type = "Det", .opset = 11,
              .inputs = {Tensor::from_vector<float>({2, 3, 3}, {0, 2, 1, 3, 1, 4, 5, 6, 0, 1, 2, 3, 2, 4, 6, 7, 8, 9})}}, 1e-6, 1e-6);
  checks.add({.op_type = "Det", .opset = 11, .inputs = {cast(random_tensor({2, 1, 4, 4}, 452), DType::kFloat64)}}, 1e-12, 1e-12);
  checks.add_f16({.op_type = "Det", .opset = 11, .inputs = {random_tensor({4, 3, 3}, 453)}});
  checks.add({.op_type = "Det", .opset = 11, .inputs = {random_tensor({0, 3, 3}, 454)}});
  checks.run();
}

TEST_CASE("cuda RoiAlign runs on the host: avg and max, both coordinate modes, adaptive and fixed sampling", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 10, 8}, 460);
  // Boxes (x1, y1, x2, y2) inside the map, over its edge, and beyond it (samples count zero).
  const Tensor rois = Tensor::from_vector<float>({4, 4}, {1, 1, 6, 5, 0.3f, 2.2f, 7.9f, 9.6f, -3, -2, 4, 3, 6, 8, 14, 12});
  const Tensor batch = test::int64s({0, 1, 1, 0});
  for (const char* mode : {"avg", "max"}) {
    for (const char* transform : {"half_pixel", "output_half_pixel"})
      for (int64_t ratio : {0, 2})
        checks.add({.op_type = "RoiAlign", .opset = 16, .inputs = {x, rois, batch},
                    .attrs = attrs({{"mode", std::string(mode)}, {"coordinate_transformation_mode", std::string(transform)},
                                    {"sampling_ratio", ratio}, {"output_height", int64_t{3}}, {"output_width", int64_t{2}}})},
                   1e-5, 1e-6);
    checks.add({.op_type = "RoiAlign", .opset = 10, .inputs = {x, rois, batch},
                .attrs = attrs({{"mode", std::string(mode)}, {"spatial_scale", 0.5f}, {"output_height", int64_t{2}},
                                {"output_width", int64_t{4}}})},
               1e-5, 1e-6);
  }
  checks.add_f16({.op_type = "RoiAlign", .opset = 16, .inputs = {x, rois, batch}});
  checks.run();
}

TEST_CASE("cuda MaxRoiPool runs on the host: bins inside, over the edge, past the image, one pixel, scaled", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 10, 8}, 465);
  const Tensor rois = Tensor::from_vector<float>(
      {5, 5}, {0, 1, 1, 6, 5, 1, 0.3f, 2.2f, 7.9f, 9.6f, 1, -3, -2, 4, 3, 0, 6, 8, 14, 12, 1, 5, 6, 2, 3});
  for (float scale : {1.f, 0.5f})
    checks.add({.op_type = "MaxRoiPool", .inputs = {x, rois},
                .attrs = attrs({{"pooled_shape", ints{3, 2}}, {"spatial_scale", scale}})},
               0, 0);
  checks.add_f16({.op_type = "MaxRoiPool", .inputs = {x, rois}, .attrs = attrs({{"pooled_shape", ints{2, 2}}})});
  checks.run();
}

TEST_CASE("cuda DeformConv runs on the host: groups, offset groups, mask, bias, strides, samples off the image",
          "[cuda]") {
  HostChecks checks;
  // X [2, 4, 7, 6], W [6, 2, 3, 3] in two groups, two offset groups; offsets up to two and a
  // half pixels, so that samples fall between pixels and some off the image.
  const Tensor x = random_tensor({2, 4, 7, 6}, 480);
  const Tensor w = random_tensor({6, 2, 3, 3}, 481);
  const Tensor bias = random_tensor({6}, 482);
  // Strides 1, pads 1: output 7 x 6; 2 offset groups x 9 taps.
  const Tensor offset = random_tensor({2, 36, 7, 6}, 483, -2.5f, 2.5f);
  const Tensor mask = random_tensor({2, 18, 7, 6}, 484);
  const AttributeMap same = attrs({{"group", int64_t{2}}, {"offset_group", int64_t{2}}, {"pads", ints{1, 1, 1, 1}}});
  checks.add({.op_type = "DeformConv", .opset = 19, .inputs = {x, w, offset, bias, mask}, .attrs = same});
  checks.add({.op_type = "DeformConv", .opset = 22, .inputs = {x, w, offset}, .attrs = same});
  // Strides 2 and dilation 2, no pads, one group: output 2 x 1 of 3 x 3 taps, 2 offset groups.
  const Tensor w1 = random_tensor({3, 4, 3, 3}, 485);
  checks.add({.op_type = "DeformConv", .opset = 19,
              .inputs = {x, w1, random_tensor({2, 36, 2, 1}, 486, -2.5f, 2.5f), random_tensor({3}, 487)},
              .attrs = attrs({{"strides", ints{2, 2}}, {"dilations", ints{2, 2}}, {"offset_group", int64_t{2}}})});
  checks.add_f16({.op_type = "DeformConv", .opset = 19, .inputs = {x, w, offset, bias, mask}, .attrs = same}, 2e-2, 2e-2);
  checks.add_bf16({.op_type = "DeformConv", .opset = 22, .inputs = {x, w, offset, bias, mask}, .attrs = same}, 6e-2, 6e-2);
  checks.run();
}

TEST_CASE("cuda ReverseSequence runs on the host: time-major and batch-major, any dtype", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({4, 3, 2}, 470);
  // Lengths of the whole time axis, part of it, 1 and 0.
  checks.add({.op_type = "ReverseSequence", .opset = 10, .inputs = {x, test::int64s({4, 2, 0})}});
  checks.add({.op_type = "ReverseSequence", .opset = 10, .inputs = {random_tensor({3, 5}, 471), test::int64s({5, 1, 3})},
              .attrs = attrs({{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}})});
  checks.add({.op_type = "ReverseSequence", .opset = 10, .inputs = {test::int64s({1, 2, 3, 4, 5, 6}).reshaped({3, 2}), test::int64s({3, 2})}});
  checks.add_f16({.op_type = "ReverseSequence", .opset = 10, .inputs = {x, test::int64s({3, 3, 1})}});
  checks.run();
}

TEST_CASE("cuda bfloat16 runs the float ops: cuBLASLt products, normalizations, reductions, pooling, resampling", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4, 5}, 480);
  const Tensor m = random_tensor({3, 6}, 481), w = random_tensor({6, 4}, 482);
  checks.add_bf16({.op_type = "MatMul", .opset = 13, .inputs = {random_tensor({2, 3, 6}, 483), w}});
  checks.add_bf16({.op_type = "Gemm", .opset = 13, .inputs = {m, w, random_tensor({4}, 484)},
                   .attrs = attrs({{"alpha", 0.5f}, {"beta", 2.f}})});
  checks.add_bf16({.op_type = "Einsum", .opset = 12, .inputs = {m, w}, .attrs = attrs({{"equation", std::string("ij,jk->ik")}})});
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"})
    checks.add_bf16({.op_type = op, .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-1}}})});
  checks.add_bf16({.op_type = "LayerNormalization", .opset = 17, .inputs = {x, random_tensor({5}, 485), random_tensor({5}, 486)},
                   .attrs = attrs({{"axis", int64_t{-1}}})});
  checks.add_bf16({.op_type = "InstanceNormalization", .opset = 6, .inputs = {x, random_tensor({3}, 487), random_tensor({3}, 488)}});
  for (const char* op : {"ReduceMean", "ReduceMax", "ReduceSumSquare"})
    checks.add_bf16({.op_type = op, .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{1, 3}}})});
  checks.add_bf16({.op_type = "ArgMax", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{2}}})}, 0, 0);
  checks.add_bf16({.op_type = "TopK", .opset = 11, .inputs = {x, test::int64s({2})}, .outputs = 2});
  checks.add_bf16({.op_type = "MaxPool", .opset = 12, .inputs = {x}, .attrs = attrs({{"kernel_shape", ints{2, 2}}})});
  checks.add_bf16({.op_type = "AveragePool", .opset = 11, .inputs = {x}, .attrs = attrs({{"kernel_shape", ints{3, 2}}})});
  checks.add_bf16({.op_type = "GlobalAveragePool", .inputs = {x}});
  checks.add_bf16({.op_type = "Resize", .opset = 13, .inputs = {x, Tensor::from_vector<float>({0}, {}), Tensor::from_vector<float>({4}, {1, 1, 1.5f, 2})},
                   .attrs = attrs({{"mode", std::string("linear")}})},
                  3e-2, 3e-2, {1, 2});
  // Elementwise chains of transcendental ops, and Det.
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Exp"})
    checks.add_bf16({.op_type = op, .opset = 13, .inputs = {x}, .output_dtypes = {DType::kFloat32}});
  checks.add_bf16({.op_type = "Det", .opset = 11, .inputs = {random_tensor({2, 3, 3}, 489)}}, 5e-2, 5e-2);
  // The number ops (float, float16, bfloat16, double, int32, int64): CumSum, Pow, EyeLike,
  // OneHot, the windows.
  checks.add_bf16({.op_type = "CumSum", .opset = 14, .inputs = {x, test::int64s({-1}).reshaped({})}, .constant = {false, true}});
  checks.add_bf16({.op_type = "Pow", .opset = 15, .inputs = {x, Tensor::from_vector<float>({}, {2.f})}, .output_dtypes = {DType::kFloat32}});
  checks.add_bf16({.op_type = "EyeLike", .opset = 9, .inputs = {random_tensor({3, 4}, 497)}});
  checks.add_bf16({.op_type = "OneHot", .opset = 11,
                   .inputs = {test::int64s({0, 2, 1}), test::int64s({3}).reshaped({}), Tensor::from_vector<float>({2}, {-1.f, 2.5f})}});
  // Recurrent layers (cuBLASLt products and gate kernels), losses, sampling, normalization
  // across channels and quantization.
  const Tensor seq = random_tensor({3, 2, 3}, 491, -1, 1);
  checks.add_bf16({.op_type = "LSTM", .opset = 14,
                   .inputs = {seq, random_tensor({1, 16, 3}, 492, -1, 1), random_tensor({1, 16, 4}, 493, -1, 1)},
                   .attrs = attrs({{"hidden_size", int64_t{4}}}), .outputs = 3},
                  5e-2, 5e-2);
  checks.add_bf16({.op_type = "SoftmaxCrossEntropyLoss", .opset = 13, .inputs = {random_tensor({4, 5}, 494), test::int64s({0, 4, 2, 1})}});
  checks.add_bf16({.op_type = "GridSample", .opset = 16, .inputs = {x, random_tensor({2, 3, 3, 2}, 495, -1, 1)}});
  checks.add_bf16({.op_type = "LRN", .opset = 13, .inputs = {x}, .attrs = attrs({{"size", int64_t{3}}})});
  checks.add_bf16({.op_type = "QuantizeLinear", .opset = 19,
                   .inputs = {random_tensor({8}, 496, -100, 100), Tensor::from_vector<float>({}, {0.5f}), cast(test::int64s({3}).reshaped({}), DType::kUInt8)}},
                  0, 1);
  checks.run();
  // A bfloat16 window (the cpu EP writes float and integer windows only): the float window,
  // rounded.
  const Tensor six = test::int64s({6}).reshaped({});
  auto window = test::run_partition_with(
      {.op_type = "HannWindow", .opset = 17, .inputs = {six}, .attrs = attrs({{"output_datatype", int64_t{16}}})}, "cuda",
      test::run_partition_on_host);
  REQUIRE(window);
  const Tensor rounded = cast(cast(test::run_one({.op_type = "HannWindow", .opset = 17, .inputs = {six}}), DType::kBFloat16),
                              DType::kFloat32);
  CHECK(test::compare_tensors(cast(window->at(0), DType::kFloat32), rounded, 0, 0) == "");
  // cuDNN convolutions stay float and float16.
  auto conv = test::run_partition_with({.op_type = "Conv", .opset = 11, .inputs = {cast(x, DType::kBFloat16), cast(random_tensor({2, 3, 3, 3}, 490), DType::kBFloat16)}},
                                       "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(conv);
  CHECK(conv.error().why ==
        "Conv: input 0 is bfloat16; the cuda EP convolves float and float16 (cuDNN's bfloat16 convolutions are not wired up)");
}

TEST_CASE("cuda MeanVarianceNormalization runs on the host: the default axes and others", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 3, 4, 5}, 500, -3, 5);
  checks.add({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x}}, 1e-4, 1e-5);
  checks.add({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{1, -1}}})}, 1e-4, 1e-5);
  checks.add({.op_type = "MeanVarianceNormalization", .opset = 9, .inputs = {random_tensor({3, 700}, 501)}, .attrs = attrs({{"axes", ints{1}}})},
             1e-4, 1e-5);
  checks.add_f16({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x}});
  checks.run();
  auto bad = test::run_partition_with({.op_type = "MeanVarianceNormalization", .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{1, 5}}})},
                                      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().why == "MeanVarianceNormalization: axes [1, 5] do not name distinct dims of a rank-4 input");
}

TEST_CASE("cuda GroupNormalization, LpNormalization, LpPool and GlobalLpPool run on the host", "[cuda]") {
  HostChecks checks;
  // GroupNormalization: per group (18) and per channel (21), 1 to 3 spatial dims and none, rows
  // longer than a block.
  for (const Shape& shape : {Shape{2, 6, 4, 5}, Shape{1, 4, 300}, Shape{2, 6, 2, 3, 2}, Shape{3, 6}}) {
    const Tensor x = random_tensor(shape, 510, -3, 5);
    const AttributeMap groups = attrs({{"num_groups", int64_t{shape[1] / 2}}, {"epsilon", 1e-3f}});
    const Tensor per_group = random_tensor({shape[1] / 2}, 511), per_channel = random_tensor({shape[1]}, 512);
    checks.add({.op_type = "GroupNormalization", .opset = 18, .inputs = {x, per_group, per_group}, .attrs = groups}, 1e-4, 1e-5);
    checks.add({.op_type = "GroupNormalization", .opset = 21, .inputs = {x, per_channel, per_channel}, .attrs = groups},
               1e-4, 1e-5);
  }
  // stash_type 11: statistics in double, on groups far from zero (mean 1000, spread 1e-2).
  checks.add({.op_type = "GroupNormalization", .opset = 21,
              .inputs = {random_tensor({2, 4, 300}, 517, 1000.f, 1000.01f), random_tensor({4}, 518), random_tensor({4}, 519)},
              .attrs = attrs({{"num_groups", int64_t{2}}, {"stash_type", int64_t{11}}})},
             1e-5, 1e-5);
  const Tensor image = random_tensor({2, 4, 6, 7}, 513, -3, 3);
  checks.add_f16({.op_type = "GroupNormalization", .opset = 21, .inputs = {image, random_tensor({4}, 514), random_tensor({4}, 515)},
                  .attrs = attrs({{"num_groups", int64_t{2}}})});
  // LpNormalization: p 1 and 2, the last, first and a middle axis, a line of zeros, a long row.
  Tensor zeros_line = random_tensor({3, 4}, 516);
  for (int64_t j = 0; j < 4; ++j) zeros_line.mut().data_as<float>()[4 + j] = 0.f;
  for (int64_t p : {1, 2}) {
    for (int64_t axis : {-1, 0, 2})
      checks.add({.op_type = "LpNormalization", .opset = 1, .inputs = {image}, .attrs = attrs({{"p", p}, {"axis", axis}})});
    checks.add({.op_type = "LpNormalization", .opset = 22, .inputs = {zeros_line}, .attrs = attrs({{"p", p}})});
  }
  checks.add({.op_type = "LpNormalization", .opset = 22, .inputs = {random_tensor({2, 1000}, 517)}});
  checks.add_f16({.op_type = "LpNormalization", .opset = 22, .inputs = {image}, .attrs = attrs({{"axis", int64_t{1}}})});
  // LpPool: p 1, 2 and 3 (a float p at opset 1), pads, strides, dilations and ceil_mode, 1-D
  // and 3-D.
  const AttributeMap window = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 1}}, {"pads", ints{1, 0, 1, 1}}});
  for (int64_t p : {1, 2, 3})
    checks.add({.op_type = "LpPool", .opset = 11, .inputs = {image},
                .attrs = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 1}}, {"pads", ints{1, 0, 1, 1}}, {"p", p}})},
               1e-4, 1e-5);
  checks.add({.op_type = "LpPool", .opset = 1, .inputs = {image}, .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"p", 3.f}})},
             1e-4, 1e-5);
  checks.add({.op_type = "LpPool", .opset = 18, .inputs = {image},
              .attrs = attrs({{"kernel_shape", ints{2, 2}}, {"dilations", ints{2, 1}}, {"strides", ints{2, 2}}, {"ceil_mode", int64_t{1}}})},
             1e-4, 1e-5);
  checks.add({.op_type = "LpPool", .opset = 18, .inputs = {random_tensor({1, 3, 9}, 518)}, .attrs = attrs({{"kernel_shape", ints{4}}})},
             1e-4, 1e-5);
  checks.add({.op_type = "LpPool", .opset = 18, .inputs = {random_tensor({1, 2, 4, 3, 5}, 519)},
              .attrs = attrs({{"kernel_shape", ints{2, 2, 2}}, {"auto_pad", std::string("SAME_UPPER")}})},
             1e-4, 1e-5);
  checks.add_f16({.op_type = "LpPool", .opset = 18, .inputs = {image}, .attrs = window});
  for (int64_t p : {1, 2, 3}) checks.add({.op_type = "GlobalLpPool", .opset = 2, .inputs = {image}, .attrs = attrs({{"p", p}})}, 1e-4, 1e-5);
  checks.run();
}

TEST_CASE("cuda CenterCropPad and Col2Im run on the host", "[cuda]") {
  HostChecks checks;
  const Tensor x = random_tensor({2, 5, 6}, 530);
  // Crop and pad in one node (odd differences put the extra element at the end), listed axes
  // (negative too), sizes as a constant or computed, int32 sizes, and integer data.
  checks.add({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, test::int64s({3, 8, 3})}});
  checks.add({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, test::int64s({9, 1})}, .constant = {false, true},
              .attrs = attrs({{"axes", ints{-1, 1}}})});
  checks.add({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, cast(test::int64s({2, 5, 7}), DType::kInt32)}});
  checks.add({.op_type = "CenterCropPad", .opset = 18, .inputs = {cast(x, DType::kInt64), test::int64s({4})},
              .attrs = attrs({{"axes", ints{0}}})});
  checks.add_f16({.op_type = "CenterCropPad", .opset = 18, .inputs = {x, test::int64s({1, 4, 9})}}, 0, 0, {1});
  // Col2Im: 1-D to 3-D images; strides, pads and dilations; constant or computed shapes.
  const AttributeMap spaced = attrs({{"strides", ints{2, 1}}, {"pads", ints{1, 0, 1, 2}}, {"dilations", ints{1, 2}}});
  // 2-D: image 5x6, block 3x2. Blocks per dim: (5 + 2 - 3) / 2 + 1 = 3 and (6 + 2 - 3) / 1 + 1 = 6.
  checks.add({.op_type = "Col2Im", .opset = 18, .inputs = {random_tensor({2, 3 * 6, 18}, 531), test::int64s({5, 6}), test::int64s({3, 2})},
              .constant = {false, true, true}, .attrs = spaced}, 1e-5, 1e-5);
  checks.add({.op_type = "Col2Im", .opset = 18, .inputs = {random_tensor({1, 2 * 4, 12}, 532), test::int64s({4, 5}), test::int64s({2, 2})}},
             1e-5, 1e-5);
  checks.add({.op_type = "Col2Im", .opset = 18, .inputs = {random_tensor({1, 3, 5}, 533), test::int64s({7}), test::int64s({3})},
              .constant = {false, true, true}}, 1e-5, 1e-5);
  checks.add({.op_type = "Col2Im", .opset = 18, .inputs = {random_tensor({1, 8, 8}, 534), test::int64s({3, 3, 3}), test::int64s({2, 2, 2})},
              .constant = {false, true, true}}, 1e-5, 1e-5);
  checks.add({.op_type = "Col2Im", .opset = 18,
              .inputs = {cast(random_tensor({1, 4, 4}, 535, -9, 9), DType::kInt32), test::int64s({3, 3}), test::int64s({2, 2})},
              .constant = {false, true, true}}, 0, 0);
  checks.run();
  auto misfit = test::run_partition_with({.op_type = "Col2Im", .opset = 18,
                                          .inputs = {random_tensor({1, 4, 5}, 536), test::int64s({3, 3}), test::int64s({2, 2})}},
                                         "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().what.ends_with("Col2Im: the input has 5 columns; image_shape [3,3] and block_shape [2,2] give 4"));
}

TEST_CASE("cuda AffineGrid runs on the host: 2-D and 3-D grids, both corner alignments", "[cuda]") {
  HostChecks checks;
  for (int64_t align : {0, 1}) {
    checks.add({.op_type = "AffineGrid", .opset = 20, .inputs = {random_tensor({2, 2, 3}, 540), test::int64s({2, 3, 4, 5})},
                .constant = {false, true}, .attrs = attrs({{"align_corners", align}})}, 1e-5, 1e-5);
    checks.add({.op_type = "AffineGrid", .opset = 20, .inputs = {random_tensor({1, 3, 4}, 541), test::int64s({1, 1, 3, 1, 4})},
                .attrs = attrs({{"align_corners", align}})}, 1e-5, 1e-5);
  }
  checks.add_f16({.op_type = "AffineGrid", .opset = 20, .inputs = {random_tensor({1, 2, 3}, 542), test::int64s({1, 2, 6, 3})},
                  .constant = {false, true}});
  checks.run();
  auto misfit = test::run_partition_with({.op_type = "AffineGrid", .opset = 20,
                                          .inputs = {random_tensor({1, 2, 3}, 543), test::int64s({1, 1, 2, 3, 4})}},
                                         "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().what.ends_with("theta [1,2,3] does not fit size [1,1,2,3,4]"));
}

TEST_CASE("cuda float8 casts round and decode bit for bit as lib's float8 does, saturating or not", "[cuda]") {
  constexpr DType kFormats[] = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ};
  // Every value each format holds, the midpoints between neighbours (ties go to even) and values
  // just off them, values past the largest, the specials and the smallest subnormals' halves.
  std::vector<float> values = {0.f, -0.f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(), 1e30f, -1e30f, 1e-30f, -1e-30f};
  for (DType f : kFormats)
    for (unsigned b = 0; b < 0x7f; ++b) {
      const float v = float8_to_float(f, static_cast<uint8_t>(b)), next = float8_to_float(f, static_cast<uint8_t>(b + 1));
      if (!std::isfinite(v)) continue;
      for (float sign : {1.f, -1.f}) {
        values.push_back(sign * v);
        if (!std::isfinite(next)) continue;
        const float mid = (v + next) / 2;
        values.insert(values.end(), {sign * mid, sign * std::nextafter(mid, 0.f), sign * std::nextafter(mid, next),
                                     sign * (next + (next - v))});
      }
    }
  const auto n = static_cast<int64_t>(values.size());
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {n});
  std::vector<uint8_t> patterns(256);
  for (unsigned i = 0; i < 256; ++i) patterns[i] = static_cast<uint8_t>(i);
  std::vector<Tensor> inputs = {Tensor::from_vector<float>({n}, values)};
  for (DType f : kFormats) {
    const std::string name(dtype_name(f));
    for (int64_t saturate : {0, 1}) {
      b.node(fmt::format("to_{}_{}", name, saturate), "Cast", {"x"}, {fmt::format("{}_{}", name, saturate)}, f, {n});
      b.graph.nodes.back().opset = 19;
      b.graph.nodes.back().attributes = attrs({{"to", static_cast<int64_t>(f)}, {"saturate", saturate}});
      b.output(fmt::format("{}_{}", name, saturate));
    }
    b.input("bits_" + name, f, {256});
    b.node("from_" + name, "Cast", {"bits_" + name}, {"decoded_" + name}, DType::kFloat32, {256});
    b.graph.nodes.back().opset = 19;
    b.graph.nodes.back().attributes = attrs({{"to", int64_t{1}}});
    b.output("decoded_" + name);
    inputs.push_back(Tensor::from_bytes(f, {256}, std::as_bytes(std::span<const uint8_t>(patterns))));
  }
  b.finish();
  auto outputs = test::run_partition_on_host(test::whole_graph(b.graph, "cuda"), inputs);
  INFO((outputs ? std::string() : outputs.error().render()));
  REQUIRE(outputs);
  REQUIRE(outputs->size() == 12);
  std::size_t out = 0;
  for (DType f : kFormats) {
    INFO(dtype_name(f));
    for (bool saturate : {false, true}) {
      const auto* bits = (*outputs)[out++].data_as<uint8_t>();
      int differ = 0;
      for (std::size_t i = 0; i < values.size(); ++i)
        if (bits[i] != float_to_float8(f, values[i], saturate) && differ++ < 5)
          FAIL_CHECK(fmt::format("{} (saturate {}): {:#04x}, lib gives {:#04x}", values[i], saturate, bits[i],
                                 float_to_float8(f, values[i], saturate)));
      CHECK(differ == 0);
    }
    const float* decoded = (*outputs)[out++].data_as<float>();
    for (unsigned i = 0; i < 256; ++i) {
      const float expected = float8_to_float(f, static_cast<uint8_t>(i));
      INFO("bits " << i);
      CHECK((std::isnan(expected) ? std::isnan(decoded[i]) : std::bit_cast<uint32_t>(decoded[i]) == std::bit_cast<uint32_t>(expected)));
    }
  }
}

TEST_CASE("cuda Cast-21 to int4 and uint4 keeps the low 4 bits, rounding floats half away from zero; and back", "[cuda]") {
  HostChecks checks;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor floats = Tensor::from_vector<float>({12}, {0.5f, -0.5f, 1.5f, 2.49f, -7.5f, 7.5f, 8.f, -9.f, 100.7f, 1e20f, nan, -0.f});
  const Tensor ints = cast(test::int64s({-9, -8, -1, 0, 7, 8, 15, 16, 255, -100000}), DType::kInt32);
  for (DType t : {DType::kInt4, DType::kUInt4}) {
    INFO(dtype_name(t));
    for (const Tensor& x : {floats, ints})
      checks.add({.op_type = "Cast", .opset = 21, .inputs = {x}, .attrs = attrs({{"to", static_cast<int64_t>(t)}}),
                  .output_dtypes = {t}}, 0, 0);
    // And back: the held values read as integers, to float and to int32.
    const Tensor held = Tensor::from_bytes(t, {4}, std::as_bytes(std::span<const uint8_t>(
                                                       t == DType::kInt4 ? std::vector<uint8_t>{0xf8, 0xff, 0x00, 0x07}
                                                                         : std::vector<uint8_t>{0x00, 0x01, 0x08, 0x0f})));
    for (DType to : {DType::kFloat32, DType::kInt32, DType::kUInt8})
      checks.add({.op_type = "Cast", .opset = 21, .inputs = {held}, .attrs = attrs({{"to", static_cast<int64_t>(to)}}),
                  .output_dtypes = {to}}, 0, 0);
  }
  checks.run();
}

TEST_CASE("cuda Cast to float4e2m1, float8e8m0 (each round_mode) and int2 matches the cpu EP bit for bit", "[cuda]") {
  HostChecks checks;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // float4e2m1's ties (0.25, 0.75 ... 5), float8e8m0's (1.5 * 2^k), subnormals, the ends, the specials.
  const Tensor floats = Tensor::from_vector<float>(
      {22}, {0.f, -0.f, 0.25f, 0.26f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.f, 5.5f, -2.6f, 1.5f, 3.f, 0x1.8p-127f,
             0x1p-127f, 1e-40f, 0x1.8p127f, 3e38f, inf, -inf, nan});
  const Tensor ints = cast(test::int64s({-3, -2, -1, 0, 1, 2, 3, 5, 1000, (1 << 30) + 1}), DType::kInt32);
  for (const Tensor& x : {floats, ints}) {
    checks.add({.op_type = "Cast", .opset = 23, .inputs = {x}, .attrs = attrs({{"to", int64_t{23}}}),
                .output_dtypes = {DType::kFloat4E2M1}}, 0, 0);
    for (const char* mode : {"up", "down", "nearest"})
      for (int64_t saturate : {0, 1})
        checks.add({.op_type = "Cast", .opset = 24, .inputs = {x},
                    .attrs = attrs({{"to", int64_t{24}}, {"round_mode", std::string(mode)}, {"saturate", saturate}}),
                    .output_dtypes = {DType::kFloat8E8M0}}, 0, 0);
    for (DType t : {DType::kInt2, DType::kUInt2})
      checks.add({.op_type = "Cast", .opset = 25, .inputs = {x}, .attrs = attrs({{"to", static_cast<int64_t>(t)}}),
                  .output_dtypes = {t}}, 0, 0);
  }
  // And back: every pattern decoded.
  std::vector<uint8_t> patterns(256);
  for (unsigned i = 0; i < 256; ++i) patterns[i] = static_cast<uint8_t>(i);
  const Tensor e8 = Tensor::from_bytes(DType::kFloat8E8M0, {256}, std::as_bytes(std::span<const uint8_t>(patterns)));
  const Tensor f4 = Tensor::from_bytes(DType::kFloat4E2M1, {16},
                                       std::as_bytes(std::span<const uint8_t>(patterns).subspan(0, 16)));
  for (const Tensor& x : {e8, f4})
    checks.add({.op_type = "Cast", .opset = 25, .inputs = {x}, .attrs = attrs({{"to", int64_t{1}}}),
                .output_dtypes = {DType::kFloat32}}, 0, 0);
  checks.run();
}

TEST_CASE("cuda QuantizeLinear and DequantizeLinear: float8 (opset 19), 16- and 4-bit integers and blocked scales (21)",
          "[cuda]") {
  HostChecks checks;
  // Blocked scales along either axis (a last block shorter than the others), 16-bit and 4-bit
  // integers (held one per byte) saturating at their ranges.
  const Tensor w = random_tensor({4, 6}, 551, -40, 40);
  const Tensor rows = random_tensor({2, 6}, 552, 0.5f, 2.f), cols = random_tensor({4, 2}, 553, 0.5f, 2.f);
  for (DType t : {DType::kInt16, DType::kUInt16, DType::kInt8, DType::kUInt8, DType::kInt4, DType::kUInt4}) {
    INFO(dtype_name(t));
    checks.add({.op_type = "QuantizeLinear", .opset = 21, .inputs = {w, rows},
                .attrs = attrs({{"axis", int64_t{0}}, {"block_size", int64_t{3}}, {"output_dtype", static_cast<int64_t>(t)}}),
                .output_dtypes = {t}}, 0, 0);
    checks.add({.op_type = "QuantizeLinear", .opset = 21, .inputs = {w, cols},
                .attrs = attrs({{"axis", int64_t{1}}, {"block_size", int64_t{4}}, {"output_dtype", static_cast<int64_t>(t)}}),
                .output_dtypes = {t}}, 0, 0);
    const Tensor q = cast(test::int64s({-8, -3, 0, 1, 5, 7, 2, -1, 6, -6, 3, 4}).reshaped({2, 6}), t == DType::kUInt4   ? DType::kUInt8
                                                                                                : t == DType::kInt4 ? DType::kInt8
                                                                                                                    : t);
    const Tensor held = t == DType::kInt4 || t == DType::kUInt4
                            ? Tensor::from_bytes(t, q.shape(), std::as_bytes(std::span(q.data_as<uint8_t>(), 12)))
                            : q;
    const Tensor zero_point = Tensor::from_bytes(t, {2, 2}, std::as_bytes(std::span(held.data_as<uint8_t>(), 4 * dtype_size(t))));
    checks.add({.op_type = "DequantizeLinear", .opset = 21, .inputs = {held, random_tensor({2, 2}, 554), zero_point},
                .attrs = attrs({{"axis", int64_t{1}}, {"block_size", int64_t{3}}})}, 0, 0);
  }
  const Tensor x = random_tensor({2, 3, 4}, 550, -300, 300);
  const Tensor per_axis = Tensor::from_vector<float>({3}, {0.5f, 2.f, 0.01f});
  auto to_float8 = [](const Tensor& t, DType f) {
    std::vector<uint8_t> bits;
    for (int64_t i = 0; i < t.numel(); ++i) bits.push_back(float_to_float8(f, t.data_as<float>()[i], true));
    return Tensor::from_bytes(f, t.shape(), std::as_bytes(std::span<const uint8_t>(bits)));
  };
  for (DType f : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ}) {
    INFO(dtype_name(f));
    const Tensor zero_point = to_float8(Tensor::from_vector<float>({3}, {0.f, 1.5f, -2.f}), f);
    for (int64_t saturate : {0, 1})
      checks.add({.op_type = "QuantizeLinear", .opset = 19, .inputs = {x, per_axis, zero_point},
                  .attrs = attrs({{"axis", int64_t{1}}, {"saturate", saturate}}), .output_dtypes = {f}}, 0, 0);
    checks.add({.op_type = "QuantizeLinear", .opset = 21, .inputs = {x, Tensor::from_vector<float>({}, {3.f})},
                .attrs = attrs({{"output_dtype", static_cast<int64_t>(f)}}), .output_dtypes = {f}}, 0, 0);
    const Tensor q = to_float8(x, f);
    checks.add({.op_type = "DequantizeLinear", .opset = 19, .inputs = {q, per_axis, zero_point}, .attrs = attrs({{"axis", int64_t{1}}})},
               0, 0);
    checks.add({.op_type = "DequantizeLinear", .opset = 19, .inputs = {q, Tensor::from_vector<float>({}, {0.25f})}}, 0, 0);
  }
  checks.run();
}

TEST_CASE("cuda BitwiseAnd, BitwiseOr, BitwiseXor and BitwiseNot take every 8- to 64-bit integer", "[cuda]") {
  HostChecks checks;
  const Tensor a = test::int64s({-128, -1, 0, 1, 127, 255, 0x5a5a, -0x1234567890, 65535, 7}).reshaped({2, 5});
  const Tensor b = test::int64s({0x0f, -2, 3, 0x7f, 1, 0xf0}).reshaped({1, 1, 6});
  for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kInt32, DType::kUInt32, DType::kInt64,
                  DType::kUInt64}) {
    INFO(dtype_name(t));
    const Tensor x = cast(a.reshaped({10, 1}), t), y = cast(b.reshaped({6}), t);  // broadcast to [10, 6]
    for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
      checks.add({.op_type = op, .opset = 18, .inputs = {x, y}, .output_dtypes = {t}}, 0, 0);
    checks.add({.op_type = "BitwiseNot", .opset = 18, .inputs = {x}, .output_dtypes = {t}}, 0, 0);
  }
  checks.run();
}

TEST_CASE("cuda chains take 16-bit and unsigned integers; Pow, Clip and BitShift take integers", "[cuda]") {
  HostChecks checks;
  auto ints = [](DType dtype, std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return cast(test::int64s(std::move(v)).reshaped({n}), dtype);
  };
  const std::vector<int64_t> a{7, -7, 300, 65535, 0, 40000, -32768, 5}, b{2, 3, -4, 65535, 9, 7, -1, 65535};
  for (DType t : {DType::kInt16, DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    INFO(dtype_name(t));
    const Tensor x = ints(t, a), y = ints(t, b);
    // Wrapping products and differences, division and both Mods (a divisor of all ones is no -1
    // for an unsigned type), Max, Min, Abs, comparisons.
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"})
      checks.add({.op_type = op, .opset = 14, .inputs = {x, y}, .output_dtypes = {t}});
    for (int64_t fmod : {0, 1})
      checks.add({.op_type = "Mod", .opset = 13, .inputs = {x, y}, .attrs = attrs({{"fmod", fmod}}), .output_dtypes = {t}});
    checks.add({.op_type = "Abs", .opset = 13, .inputs = {x}, .output_dtypes = {t}});
    checks.add({.op_type = "Less", .opset = 13, .inputs = {x, y}, .output_dtypes = {DType::kBool}});
    checks.add({.op_type = "Clip", .opset = 13, .inputs = {x, ints(t, {3}).reshaped({}), Tensor()}, .output_dtypes = {t}});
    checks.add({.op_type = "Cast", .opset = 13, .inputs = {x}, .attrs = attrs({{"to", int64_t{1}}}), .output_dtypes = {DType::kFloat32}});
  }
  checks.add({.op_type = "Clip", .opset = 13, .inputs = {ints(DType::kInt8, {-128, -5, 0, 5, 127}), ints(DType::kInt8, {-6}).reshaped({}),
                                                         ints(DType::kInt8, {6}).reshaped({})},
              .output_dtypes = {DType::kInt8}});
  // BitShift, with shifts of the type's width and more (0).
  for (DType t : {DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64})
    for (const char* direction : {"LEFT", "RIGHT"})
      checks.add({.op_type = "BitShift", .opset = 11, .inputs = {ints(t, {1, 255, 200, 7, 3, 9}), ints(t, {1, 3, 7, 8, 16, 64})},
                  .attrs = attrs({{"direction", std::string(direction)}}), .output_dtypes = {t}});
  // Integer Pow: repeated squaring that wraps, negative exponents, a float exponent through double.
  const std::vector<int64_t> bases{2, -3, 1, -1, 5, 3, 0, 7};
  for (DType t : {DType::kInt32, DType::kInt64}) {
    checks.add({.op_type = "Pow", .opset = 15, .inputs = {ints(t, bases), ints(t, {10, 5, -3, -3, -1, 40, 0, 2})}, .output_dtypes = {t}});
    checks.add({.op_type = "Pow", .opset = 15, .inputs = {ints(t, bases), Tensor::from_vector<float>({8}, {0.5f, 2, 3, 2, 1.5f, 2, 1, 0.5f})},
                .output_dtypes = {t}});
  }
  checks.add({.op_type = "Pow", .opset = 15, .inputs = {random_tensor({8}, 500, 0.5f, 2), ints(DType::kUInt32, {0, 1, 2, 3, 4, 5, 6, 7})},
              .output_dtypes = {DType::kFloat32}},
             1e-5, 1e-6);
  checks.run();
}

TEST_CASE("cuda Unique groups on the host and uploads what it found", "[cuda]") {
  HostChecks checks;
  const Tensor values = Tensor::from_vector<float>({8}, {2, 1, NAN, 2, -0.5f, NAN, 1, 3});
  for (int64_t sorted : {0, 1})
    checks.add({.op_type = "Unique", .opset = 11, .inputs = {values}, .attrs = attrs({{"sorted", sorted}}), .outputs = 4});
  const Tensor rows = test::int64s({1, 2, 0, 1, 2, 0, 3, 4, 1, 1, 2, 0}).reshaped({2, 2, 3});
  for (int64_t axis : {-1, 0, 1})
    checks.add({.op_type = "Unique", .opset = 11, .inputs = {rows}, .attrs = attrs({{"axis", axis}}), .outputs = 4});
  checks.add({.op_type = "Unique", .opset = 11, .inputs = {cast(rows, DType::kUInt16)}, .outputs = 2});
  checks.add_f16({.op_type = "Unique", .opset = 11, .inputs = {values}, .outputs = 4}, 0, 0);
  checks.run();
}

TEST_CASE("cuda casts to and from bfloat16, rounding to nearest even", "[cuda]") {
  HostChecks checks;
  // 1 + 2^-8 is a tie (to 1), 1 + 3·2^-8 one too (up to 1 + 2^-6); NaN, infinity, a subnormal.
  const Tensor x = Tensor::from_vector<float>({8}, {1.00390625f, 1.01171875f, -2.5f, NAN, INFINITY, 1e-40f, 3.14159f, -65504.f});
  const auto to = [](DType t) { return attrs({{"to", static_cast<int64_t>(t)}}); };
  checks.add({.op_type = "Cast", .opset = 13, .inputs = {x}, .attrs = to(DType::kBFloat16), .output_dtypes = {DType::kBFloat16}}, 0, 0);
  const Tensor b = cast(x, DType::kBFloat16);
  for (DType t : {DType::kFloat32, DType::kFloat16})
    checks.add({.op_type = "Cast", .opset = 13, .inputs = {b}, .attrs = to(t), .output_dtypes = {t}}, 0, 0);
  checks.add({.op_type = "Cast", .opset = 13, .inputs = {cast(random_tensor({6}, 600, -300, 300), DType::kBFloat16)},
              .attrs = to(DType::kInt32), .output_dtypes = {DType::kInt32}},
             0, 0);
  checks.run();
}
TEST_CASE("cuda RMSNormalization and RotaryEmbedding run on the host", "[cuda][opset23]") {
  HostChecks checks;
  // RMSNormalization: the last axis and two trailing ones, rows longer than a block, double, and
  // stash_type 11 on rows far from zero.
  const Tensor x = random_tensor({3, 4, 300}, 601, -3, 3);
  checks.add({.op_type = "RMSNormalization", .opset = 23, .inputs = {x, random_tensor({300}, 602)}}, 1e-5, 1e-5);
  checks.add({.op_type = "RMSNormalization", .opset = 23, .inputs = {x, random_tensor({4, 300}, 603)},
              .attrs = attrs({{"axis", int64_t{1}}, {"epsilon", 0.1f}})},
             1e-5, 1e-5);
  checks.add({.op_type = "RMSNormalization", .opset = 23,
              .inputs = {cast(x, DType::kFloat64), cast(random_tensor({300}, 604), DType::kFloat64)}},
             1e-12, 1e-12);
  checks.add({.op_type = "RMSNormalization", .opset = 23,
              .inputs = {random_tensor({2, 500}, 605, 1000.f, 1000.01f), random_tensor({500}, 606)},
              .attrs = attrs({{"stash_type", int64_t{11}}})},
             1e-6, 1e-6);
  checks.add_f16({.op_type = "RMSNormalization", .opset = 23, .inputs = {x, random_tensor({300}, 607)}});
  checks.add_bf16({.op_type = "RMSNormalization", .opset = 23, .inputs = {x, random_tensor({300}, 608)}});
  // RotaryEmbedding: rank 4 with per-token caches; rank 3 with position ids, interleaved, and a
  // partial rotary_embedding_dim.
  const Tensor x4 = random_tensor({2, 3, 5, 8}, 610);
  checks.add({.op_type = "RotaryEmbedding", .opset = 23,
              .inputs = {x4, random_tensor({2, 5, 4}, 611, -1, 1), random_tensor({2, 5, 4}, 612, -1, 1)}});
  const Tensor x3 = random_tensor({2, 4, 36}, 613);
  const Tensor cos = random_tensor({9, 3}, 614, -1, 1), sin = random_tensor({9, 3}, 615, -1, 1);
  const Tensor ids = Tensor::from_vector<int64_t>({2, 4}, {0, 1, 2, 3, 8, 7, 0, 4});
  for (int64_t interleaved : {0, 1})
    checks.add({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x3, cos, sin, ids},
                .attrs = attrs({{"num_heads", int64_t{3}}, {"rotary_embedding_dim", int64_t{6}},
                                {"interleaved", interleaved}})});
  checks.add_f16({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x3, cos, sin, ids},
                  .attrs = attrs({{"num_heads", int64_t{6}}, {"interleaved", int64_t{1}}})});
  checks.add_bf16({.op_type = "RotaryEmbedding", .opset = 23, .inputs = {x3, cos, sin, ids},
                   .attrs = attrs({{"num_heads", int64_t{6}}})});
  checks.run();
}

TEST_CASE("cuda Attention runs on the host: heads, masks, a KV cache, softcap and every qk output", "[cuda][opset23]") {
  HostChecks checks;
  // Multi-head, rank 4, more keys than a block's threads.
  checks.add({.op_type = "Attention", .opset = 23,
              .inputs = {random_tensor({2, 3, 4, 8}, 620), random_tensor({2, 3, 300, 8}, 621), random_tensor({2, 3, 300, 5}, 622)}},
             1e-5, 1e-5);
  // Grouped-query, packed heads, is_causal after a cache, with a bool mask [heads, q_seq, total]
  // that keeps key 0 for every query (no query is left without keys).
  std::vector<uint8_t> keep(4 * 3 * 7);
  for (std::size_t i = 0; i < keep.size(); ++i) keep[i] = i % 7 == 0 || (i * 37) % 5 != 0;
  const AttributeMap gqa = attrs({{"q_num_heads", int64_t{4}}, {"kv_num_heads", int64_t{2}}, {"is_causal", int64_t{1}}});
  const NodeSpec cached{.op_type = "Attention", .opset = 23,
                        .inputs = {random_tensor({2, 3, 32}, 623), random_tensor({2, 3, 16}, 624), random_tensor({2, 3, 12}, 625),
                                   test::bools({4, 3, 7}, keep), random_tensor({2, 2, 4, 8}, 626),
                                   random_tensor({2, 2, 4, 6}, 627)},
                        .attrs = gqa, .outputs = 3};
  checks.add(cached, 1e-5, 1e-5);
  checks.add_f16(cached);
  checks.add_bf16(cached);
  // softcap and each stage as output 3, with a float mask broadcast over batch and heads.
  for (int64_t mode = 0; mode < 4; ++mode)
    checks.add({.op_type = "Attention", .opset = 23,
                .inputs = {random_tensor({2, 2, 3, 4}, 630, -4, 4), random_tensor({2, 2, 5, 4}, 631, -4, 4),
                           random_tensor({2, 2, 5, 4}, 632), random_tensor({3, 5}, 633, -2, 0)},
                .attrs = attrs({{"softcap", 2.5f}, {"qk_matmul_output_mode", mode}, {"scale", 0.7f}}),
                .outputs = 4},
               1e-5, 1e-5);
  checks.run();
}
TEST_CASE("cuda runs opset 24's Swish, TensorScatter and Attention's nonpad_kv_seqlen on the host", "[cuda][opset24]") {
  HostChecks checks;
  for (float alpha : {1.f, 0.3f})
    checks.add({.op_type = "Swish", .opset = 24, .inputs = {random_tensor({4, 50}, 640, -9, 9)},
                .attrs = attrs({{"alpha", alpha}}), .output_dtypes = {DType::kFloat32}},
               1e-5, 1e-6);
  const Tensor cache = random_tensor({3, 2, 7, 5}, 641);
  const Tensor write = Tensor::from_vector<int64_t>({3}, {0, 5, 2});
  checks.add({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, random_tensor({3, 2, 2, 5}, 642), write}}, 0, 0);
  checks.add({.op_type = "TensorScatter", .opset = 24, .inputs = {cache, random_tensor({3, 2, 4, 5}, 643), write},
              .attrs = attrs({{"mode", std::string("circular")}})},
             0, 0);
  checks.add({.op_type = "TensorScatter", .opset = 24,
              .inputs = {cast(cache, DType::kFloat16), cast(random_tensor({3, 1, 7, 5}, 644), DType::kFloat16)},
              .attrs = attrs({{"axis", int64_t{1}}})},
             0, 0);
  // 70 causal queries after a cache: the cpu EP scores them in row blocks, skipping hidden keys.
  const NodeSpec long_causal{.op_type = "Attention", .opset = 23,
                             .inputs = {random_tensor({1, 2, 70, 8}, 648), random_tensor({1, 2, 70, 8}, 649),
                                        random_tensor({1, 2, 70, 8}, 650), Tensor(), random_tensor({1, 2, 3, 8}, 651),
                                        random_tensor({1, 2, 3, 8}, 652)},
                             .attrs = attrs({{"is_causal", int64_t{1}}}),
                             .outputs = 3};
  checks.add(long_causal, 1e-5, 1e-5);
  checks.add_f16(long_causal);
  for (int64_t causal : {0, 1})
    checks.add({.op_type = "Attention", .opset = 24,
                .inputs = {random_tensor({3, 2, 4, 8}, 645), random_tensor({3, 1, 9, 8}, 646), random_tensor({3, 1, 9, 6}, 647),
                           Tensor(), Tensor(), Tensor(), Tensor::from_vector<int64_t>({3}, {9, 4, 6})},
                .attrs = attrs({{"is_causal", causal}})},
               1e-5, 1e-5);
  checks.run();
}

// ONNX Runtime's contrib ops in the forms and types that testdata/com_microsoft (ORT's CPU EP's
// outputs) leaves out, against the cpu EP: MultiHeadAttention's packed QKV and KV and its qk
// output; Attention, GroupQueryAttention and SkipLayerNormalization in float16 or bfloat16 (ORT's
// CPU EP has float only); MatMulNBits through cuBLASLt (more than 8 rows) and unpacked as it
// multiplies, in float16 with a bias; GatherBlockQuantized in bfloat16 with int64 indices.
TEST_CASE("cuda runs ONNX Runtime's contrib ops in the forms and types its CPU outputs leave out", "[cuda]") {
  HostChecks checks;
  auto ms = [](std::string op, std::vector<Tensor> inputs, AttributeMap a, std::size_t outputs = 1) {
    return NodeSpec{.op_type = std::move(op), .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
                    .attrs = std::move(a), .outputs = outputs};
  };
  const int64_t heads = 2, hs = 4, hidden = heads * hs;
  const AttributeMap two_heads = attrs({{"num_heads", heads}});
  const Tensor q = random_tensor({2, 3, hidden}, 601), k = random_tensor({2, 3, hidden}, 602);
  const Tensor v = random_tensor({2, 3, hidden}, 603);
  checks.add(ms("MultiHeadAttention", {random_tensor({2, 3, heads, 3, hs}, 604)}, two_heads));
  checks.add(ms("MultiHeadAttention", {q, random_tensor({2, 5, heads, 2, hs}, 605)}, two_heads));
  checks.add(ms("MultiHeadAttention", {q, k, v, random_tensor({3 * hidden}, 606)},
                attrs({{"num_heads", heads}, {"unidirectional", int64_t{1}}}), 4));
  const Tensor lengths = Tensor::from_vector<int32_t>({2}, {3, 2});
  checks.add_f16(ms("Attention", {q, random_tensor({hidden, 3 * hidden}, 607), random_tensor({3 * hidden}, 608),
                                  lengths},
                    two_heads, 2));
  const Tensor gqa_q = random_tensor({1, 4, hidden}, 609), gqa_kv = random_tensor({1, 4, hs}, 610);
  checks.add_bf16(ms("GroupQueryAttention",
                     {gqa_q, gqa_kv, random_tensor({1, 4, hs}, 611), Tensor(), Tensor(),
                      Tensor::from_vector<int32_t>({1}, {3}), Tensor::from_vector<int32_t>({}, {4})},
                     attrs({{"num_heads", heads}, {"kv_num_heads", int64_t{1}}}), 3));
  checks.add_bf16(ms("SkipLayerNormalization",
                     {q, k, random_tensor({hidden}, 612), random_tensor({hidden}, 613), random_tensor({hidden}, 614)},
                     attrs({{"epsilon", 1e-5f}})));
  // MatMulNBits: K 40 in blocks of 16 (the last one short), N 6, 4 bits, packed zero points.
  const AttributeMap nbits = attrs({{"K", int64_t{40}}, {"N", int64_t{6}}, {"bits", int64_t{4}},
                                    {"block_size", int64_t{16}}});
  const Tensor weights = cast(random_tensor({6, 3, 8}, 615, 0, 255), DType::kUInt8);
  const Tensor scales = random_tensor({18}, 616, 0.01f, 0.1f);
  const Tensor zeros = cast(random_tensor({6, 2}, 617, 0, 255), DType::kUInt8);
  for (int64_t rows : {2, 12})
    checks.add_f16(ms("MatMulNBits", {random_tensor({rows, 40}, 618), weights, scales, zeros, Tensor(),
                                      random_tensor({6}, 619)},
                      nbits));
  // GatherBlockQuantized: a 4-bit table of 5 rows of 32 values (blocks of 16), int64 indices
  // counting from the end too, scales in bfloat16.
  checks.add_bf16(ms("GatherBlockQuantized",
                     {cast(random_tensor({5, 16}, 620, 0, 255), DType::kUInt8), test::int64s({4, -1, 0, -5}),
                      random_tensor({5, 2}, 621, 0.01f, 0.1f), cast(random_tensor({5, 1}, 622, 0, 255), DType::kUInt8)},
                     attrs({{"block_size", int64_t{16}}})));
  checks.run();
}
#endif  // NXRT_HAVE_CUDA
