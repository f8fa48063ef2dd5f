// The host half of the cuda EP's steps, without a GPU: a StepContext whose "device" is host
// memory runs the planned steps, and the data-movement kernels are replayed on the host from
// the recorded launch arguments, so output shapes, strides and offsets are checked end to end.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include <cstring>

#include "cuda/ops/ops.h"
#include "cuda/runtime.h"
#include "kernel_harness.h"
#include "lib_test_util.h"

using namespace nxrt;
using namespace nxrt::cuda;

namespace {

struct Launch {
  std::string kernel;
  int64_t work;
  std::vector<const void*> args;  // the argument addresses, as cuLaunchKernel would read them
};

template <class T>
T arg(const Launch& l, std::size_t i) {
  T v;
  std::memcpy(&v, l.args[i], sizeof(T));
  return v;
}

int64_t offset(int64_t i, int rank, const KernelDims& shape, const KernelDims& strides) {
  int64_t off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (i % shape.d[d]) * strides.d[d];
    i /= shape.d[d];
  }
  return off;
}

// Runs steps on host tensors; replays strided_copy and gather for float data.
class HostContext final : public StepContext {
 public:
  HostContext(const Step& step, std::vector<Tensor> inputs) : step_(step), inputs_(std::move(inputs)) {
    outputs.resize(step.outputs.size());
  }
  bool has_input(std::size_t i) const override { return i < inputs_.size() && inputs_[i].defined(); }
  const Tensor& input(std::size_t i) const override { return inputs_[i]; }
  bool wants_output(std::size_t i) const override { return i < outputs.size(); }
  Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) override {
    outputs[i] = Tensor::empty(dtype, std::move(shape));
    return outputs[i];
  }
  void set_output(std::size_t i, Tensor t) override { outputs[i] = std::move(t); }
  Expected<Tensor> scratch(std::size_t bytes) override { return Tensor::empty(DType::kUInt8, {static_cast<int64_t>(bytes)}); }
  Expected<void> launch(std::string_view kernel, int64_t work, KernelArgs& args) override {
    Launch l{std::string(kernel), work, {}};
    void** p = args.pointers();
    const std::size_t count = kernel.starts_with("strided_copy") ? 9 : kernel.starts_with("gather") ? 7 : 0;
    for (std::size_t i = 0; i < count; ++i) l.args.push_back(p[i]);
    if (kernel.starts_with("strided_copy")) replay_copy(l);
    if (kernel.starts_with("gather")) replay_gather(l);
    launches.push_back(std::move(l));
    return {};
  }
  Expected<void> launch_rows(std::string_view kernel, int64_t rows, int, KernelArgs&) override {
    launches.push_back({std::string(kernel), rows, {}});
    return {};
  }
  Gpu& gpu() override { throw std::logic_error("no GPU in this test"); }
  std::string where() const override { return step_.nodes.front()->describe(); }

  std::vector<Tensor> outputs;
  std::vector<Launch> launches;

 private:
  static void replay_copy(const Launch& l) {
    const auto n = arg<int64_t>(l, 0);
    const int rank = arg<int>(l, 1);
    const auto shape = arg<KernelDims>(l, 2), in_strides = arg<KernelDims>(l, 3), out_strides = arg<KernelDims>(l, 6);
    const auto in = static_cast<const float*>(arg<const void*>(l, 5)) + arg<int64_t>(l, 4);
    const auto out = static_cast<float*>(const_cast<void*>(arg<const void*>(l, 8))) + arg<int64_t>(l, 7);
    for (int64_t i = 0; i < n; ++i) out[offset(i, rank, shape, out_strides)] = in[offset(i, rank, shape, in_strides)];
  }
  static void replay_gather(const Launch& l) {
    const auto n = arg<int64_t>(l, 0), inner = arg<int64_t>(l, 1), axis_dim = arg<int64_t>(l, 2),
               idx_count = arg<int64_t>(l, 3);
    const auto data = static_cast<const float*>(arg<const void*>(l, 4));
    const auto idx = static_cast<const int64_t*>(arg<const void*>(l, 5));
    const auto out = static_cast<float*>(const_cast<void*>(arg<const void*>(l, 6)));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t k = i % inner, j = (i / inner) % idx_count, o = i / inner / idx_count;
      const int64_t at = idx[j] < 0 ? idx[j] + axis_dim : idx[j];
      out[i] = data[(o * axis_dim + at) * inner + k];
    }
  }
  const Step& step_;
  std::vector<Tensor> inputs_;
};

// Plans a one-node graph and runs its only step on `inputs` (constants are read at plan time).
HostContext run_single(test::GraphBuilder& b, std::vector<Tensor> inputs, std::unique_ptr<Step>& keep) {
  static const auto table = make_op_table();
  REQUIRE(table);
  Partition p;
  p.graph = &b.graph;
  p.name = "cuda_0";
  p.nodes = {0};
  p.inputs = b.graph.inputs;
  p.outputs = b.graph.outputs;
  auto plan = build_plan(p, **table);
  INFO((plan ? std::string() : plan.error().render()));
  REQUIRE(plan);
  REQUIRE(plan->steps.size() == 1);
  keep = std::move(plan->steps.front());
  HostContext ctx(*keep, std::move(inputs));
  auto r = keep->run(ctx);
  INFO((r ? std::string() : r.error().render()));
  REQUIRE(r);
  return ctx;
}

std::vector<float> values(const Tensor& t) { return std::vector<float>(t.data_as<float>(), t.data_as<float>() + t.numel()); }

}  // namespace

TEST_CASE("cuda Transpose, Concat, Slice and Gather steps compute shapes, strides and offsets", "[cuda]") {
  std::unique_ptr<Step> step;
  SECTION("Transpose") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {2, 3});
    b.node("t", "Transpose", {"x"}, {"y"}, DType::kFloat32, {3, 2});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {test::iota_float({2, 3})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{3, 2});
    CHECK(values(ctx.outputs[0]) == std::vector<float>{0, 3, 1, 4, 2, 5});
  }
  SECTION("Concat along axis 1") {
    test::GraphBuilder b;
    b.input("a", DType::kFloat32, {2, 1});
    b.input("c", DType::kFloat32, {2, 2});
    b.node("cat", "Concat", {"a", "c"}, {"y"}, DType::kFloat32, {2, 3});
    b.graph.nodes[0].attributes = test::attrs({{"axis", int64_t{1}}});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {Tensor::from_vector<float>({2, 1}, {10, 20}), test::iota_float({2, 2})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{2, 3});
    CHECK(values(ctx.outputs[0]) == std::vector<float>{10, 0, 1, 20, 2, 3});
  }
  SECTION("Slice with a negative step") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {2, 5});
    b.constant("starts", test::int64s({-1}));
    b.constant("ends", test::int64s({-10}));
    b.constant("axes", test::int64s({1}));
    b.constant("steps", test::int64s({-2}));
    b.node("slice", "Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, DType::kFloat32, {2, 3});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {test::iota_float({2, 5})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{2, 3});
    CHECK(values(ctx.outputs[0]) == std::vector<float>{4, 2, 0, 9, 7, 5});
  }
  SECTION("Gather with negative indices") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {3, 2});
    b.input("i", DType::kInt64, {2});
    b.node("gather", "Gather", {"x", "i"}, {"y"}, DType::kFloat32, {2, 2});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {test::iota_float({3, 2}), test::int64s({-1, 0})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{2, 2});
    CHECK(values(ctx.outputs[0]) == std::vector<float>{4, 5, 0, 1});
  }
}

TEST_CASE("cuda elementwise chains pass broadcast strides per input", "[cuda]") {
  std::unique_ptr<Step> step;
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.input("bias", DType::kFloat32, {3});
  b.node("add", "Add", {"x", "bias"}, {"y"}, DType::kFloat32, {2, 3});
  b.output("y");
  b.finish();
  auto ctx = run_single(b, {test::iota_float({2, 3}), test::iota_float({3})}, step);
  CHECK(ctx.outputs[0].shape() == Shape{2, 3});
  REQUIRE(ctx.launches.size() == 1);
  CHECK(ctx.launches[0].kernel == "chain_0");
  CHECK(ctx.launches[0].work == 6);
}

TEST_CASE("cuda reductions, pooling and views give ONNX's output shapes", "[cuda]") {
  std::unique_ptr<Step> step;
  SECTION("ReduceMean over axis 1, keepdims 0") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {2, 3, 4});
    b.node("r", "ReduceMean", {"x"}, {"y"}, DType::kFloat32, {2, 4});
    b.graph.nodes[0].opset = 13;
    b.graph.nodes[0].attributes = test::attrs({{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {test::iota_float({2, 3, 4})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{2, 4});
    CHECK(ctx.launches.at(0).work == 8);
  }
  SECTION("MaxPool 3x3 stride 2 pad 1, ceil_mode") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {1, 2, 6, 6});
    b.node("p", "MaxPool", {"x"}, {"y"}, DType::kFloat32, {1, 2, 4, 4});
    b.graph.nodes[0].attributes = test::attrs({{"kernel_shape", std::vector<int64_t>{3, 3}},
                                               {"strides", std::vector<int64_t>{2, 2}},
                                               {"pads", std::vector<int64_t>{1, 1, 1, 1}},
                                               {"ceil_mode", int64_t{1}}});
    b.output("y");
    b.finish();
    auto ctx = run_single(b, {test::iota_float({1, 2, 6, 6})}, step);
    CHECK(ctx.outputs[0].shape() == Shape{1, 2, 4, 4});
  }
  SECTION("Reshape with 0 and -1 is a view") {
    test::GraphBuilder b;
    b.input("x", DType::kFloat32, {2, 3, 4});
    b.constant("shape", test::int64s({0, -1}));
    b.node("r", "Reshape", {"x", "shape"}, {"y"}, DType::kFloat32, {2, 12});
    b.output("y");
    b.finish();
    const Tensor x = test::iota_float({2, 3, 4});
    auto ctx = run_single(b, {x}, step);
    CHECK(ctx.outputs[0].shape() == Shape{2, 12});
    CHECK(ctx.outputs[0].storage() == x.storage());
    CHECK(ctx.launches.empty());
  }
}
#endif  // NXRT_HAVE_CUDA
