// Random ops on the device: RandomUniform, RandomNormal and their Like forms, Bernoulli,
// Multinomial, and Dropout (a view of its input in inference, a mask drawn on the device in
// training).
//
// Every draw is Philox4x32-10 of (the node's key, the run's number, the element's index)
// (kernel_library.cpp), so a launch's threads share no state. The key is the seed attribute's
// bits, else drawn from the random device when the plan is built; the run number counts the
// node's runs in its session. So a seeded node draws the same numbers in the same run of every
// session, and each run of a session draws new ones, as on the cpu EP. The numbers themselves
// are not the cpu EP's (it draws from std::mt19937 with the standard library's distributions).
#include <fmt/format.h>

#include <atomic>
#include <bit>
#include <memory>
#include <random>

#include "nxrt/ep/random_ops.h"
#include "nxrt/io/compare.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The numbers of a node's draws: its Philox key and its run counter, shared by the copies of
// its step (concurrent runs take distinct numbers).
struct DrawState {
  uint64_t key;
  std::shared_ptr<std::atomic<uint64_t>> runs = std::make_shared<std::atomic<uint64_t>>(0);

  explicit DrawState(const Node& node) : key(key_of(node)) {}
  uint64_t next_run() const { return runs->fetch_add(1); }

  // The seed's bits (so seeds 0.5 and 0 differ, as on the cpu EP), else the random device's.
  static uint64_t key_of(const Node& node) {
    if (const auto seed = node.attributes.get_float("seed")) return std::bit_cast<uint32_t>(*seed);
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) | device();
  }
};

bool is_like(const Node& node) { return node.op_type.ends_with("Like"); }
bool is_normal(const Node& node) { return node.op_type.starts_with("RandomNormal"); }

// ---- RandomUniform, RandomNormal and their Like forms ----------------------------------------

KernelMatch check_random(const NodeContext& ctx) {
  if (is_like(ctx.node())) NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(check_random_fill_node(ctx));
  const auto t = random_fill_dtype(ctx);
  NXRT_REQUIRE(t && is_cuda_float_or_double(*t), "{}: output type {} is not supported; the cuda EP draws {}", ctx.node().op_type,
               random_dtype_name(ctx, t), kCudaFloatsOrDouble);
  return KernelMatch::supported();
}

Expected<void> build_random(PlanBuilder& b, const Node& node) {
  const bool like = is_like(node), normal = is_normal(node);
  const DType t = *random_dtype_attr(node.attributes, like ? b.graph().value(node.inputs[0]).type.dtype : DType::kFloat32);
  const Shape fixed = like ? Shape{} : node.attributes.get_ints("shape").value_or(Shape{});
  const double a = normal ? node.attributes.float_or("mean", 0) : node.attributes.float_or("low", 0);
  const double spread = normal ? node.attributes.float_or("scale", 1) : node.attributes.float_or("high", 1);
  const std::string type(chain_storage_type(t));
  const std::string kernel = b.instantiate(
      "random_fill", type,
      fmt::format("i64 n, unsigned long long key, unsigned long long run, int normal, double a, double b, {}* y", type),
      "n, key, run, normal, a, b, y");
  const DrawState draws(node);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto y = ctx.output(0, t, like ? ctx.input(0).shape() : fixed);
    if (!y) return std::unexpected(y.error());
    const uint64_t run = draws.next_run();
    if (y->numel() == 0) return {};
    KernelArgs args;
    args.add(y->numel()).add(draws.key).add(run).add(normal ? 1 : 0).add(a).add(spread).ptr(dev_mut(*y));
    return ctx.launch(kernel, y->numel(), args);
  }));
  return {};
}

// ---- Bernoulli -------------------------------------------------------------------------------

// What Bernoulli writes: the float types, the 8- to 64-bit integers and bool.
bool is_bernoulli_output(DType t) { return is_cuda_float_or_double(t) || is_whole_byte_integer(t) || t == DType::kBool; }

KernelMatch check_bernoulli(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  const auto t = random_dtype_attr(ctx.attrs(), ctx.input_dtype(0));
  NXRT_REQUIRE(t && is_bernoulli_output(*t),
               "Bernoulli: output type {} is not supported; the cuda EP writes {}, the 8- to 64-bit integers and bool",
               random_dtype_name(ctx, t), kCudaFloatsOrDouble);
  return KernelMatch::supported();
}

Expected<void> build_bernoulli(PlanBuilder& b, const Node& node) {
  const DType p_type = b.graph().value(node.inputs[0]).type.dtype;
  const DType t = *random_dtype_attr(node.attributes, p_type);
  const std::string p(chain_storage_type(p_type)), o(chain_storage_type(t));
  const std::string kernel = b.instantiate(
      "bernoulli", fmt::format("{}, {}", p, o),
      fmt::format("i64 n, unsigned long long key, unsigned long long run, const {}* p, {}* y", p, o),
      "n, key, run, p, y");
  const DrawState draws(node);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& probabilities = ctx.input(0);
    auto y = ctx.output(0, t, probabilities.shape());
    if (!y) return std::unexpected(y.error());
    const uint64_t run = draws.next_run();
    if (y->numel() == 0) return {};
    KernelArgs args;
    args.add(y->numel()).add(draws.key).add(run).ptr(dev(probabilities)).ptr(dev_mut(*y));
    return ctx.launch(kernel, y->numel(), args);
  }));
  return {};
}

// ---- Multinomial -----------------------------------------------------------------------------

KernelMatch check_multinomial(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  NXRT_REQUIRE_MATCH(check_multinomial_node(ctx));
  const auto t = random_dtype_attr(ctx.attrs(), DType::kInt32);
  NXRT_REQUIRE(t && (*t == DType::kInt32 || *t == DType::kInt64),
               "Multinomial: output type {} is not supported; the spec allows int32 and int64", random_dtype_name(ctx, t));
  return KernelMatch::supported();
}

Expected<void> build_multinomial(PlanBuilder& b, const Node& node) {
  const DType x_type = b.graph().value(node.inputs[0]).type.dtype;
  const DType t = *random_dtype_attr(node.attributes, DType::kInt32);
  const int64_t samples = node.attributes.int_or("sample_size", 1);
  const std::string x(chain_storage_type(x_type)), o(chain_storage_type(t));
  const std::string kernel = b.instantiate(
      "multinomial", fmt::format("{}, {}", x, o),
      fmt::format("i64 rows, i64 classes, i64 samples, unsigned long long key, unsigned long long run, const {}* x, {}* y",
                  x, o),
      "rows, classes, samples, key, run, x, y");
  const DrawState draws(node);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& logits = ctx.input(0);
    const Shape& s = logits.shape();
    if (s.size() != 2 || s[1] < 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: input shape {} is not [batch_size, class_size]", ctx.where(), shape_to_string(s)),
                  "the input holds one row of class log-probabilities per batch item", "feed a 2-D input");
    auto y = ctx.output(0, t, {s[0], samples});
    if (!y) return std::unexpected(y.error());
    const uint64_t run = draws.next_run();
    if (y->numel() == 0) return {};
    KernelArgs args;
    args.add(s[0]).add(s[1]).add(samples).add(draws.key).add(run).ptr(dev(logits)).ptr(dev_mut(*y));
    return ctx.launch(kernel, y->numel(), args);
  }));
  return {};
}

// ---- Dropout ---------------------------------------------------------------------------------

// Dropout-1 and -6 train when is_test is 0 (their default); 7 to 11 have no training mode; from
// 12 the ratio and training_mode are inputs. The mask is of the data's type before opset 10,
// bool from 10.
bool may_train(const Graph& graph, const Node& node) {
  if (node.opset < 7) return node.attributes.int_or("is_test", 0) == 0;
  if (node.opset < 12 || node.inputs.size() < 3 || node.inputs[2] == kNoValue) return false;
  const auto training = constant_ints(graph, node, 2);
  return !training || training->empty() || training->front() != 0;
}
bool has_mask(const Node& node) { return node.outputs.size() > 1 && node.outputs[1] != kNoValue; }
DType mask_type(const Node& node, DType data) { return node.opset >= 10 ? DType::kBool : data; }

KernelMatch check_dropout(const NodeContext& ctx) {
  const Node& node = ctx.node();
  const bool training = may_train(ctx.graph(), node);
  if (training || (has_mask(node) && node.opset < 10))
    NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  else
    NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(check_dropout_node(ctx));
  if (node.opset >= 12) {
    if (ctx.has_input(1)) NXRT_REQUIRE_MATCH(require_dtypes(ctx, {1}, is_cuda_float_or_double, kCudaFloatsOrDouble));
    if (ctx.has_input(2))
      NXRT_REQUIRE(ctx.input_dtype(2) == DType::kBool, "Dropout: training_mode is {}; it must be bool",
                   dtype_name(ctx.input_dtype(2)));
  }
  return KernelMatch::supported();
}

// A scalar input (Dropout's ratio or training_mode) on the host, as a double.
Expected<double> host_scalar(StepContext& ctx, std::size_t i, std::string_view what) {
  auto t = ctx.input_on_host(i);
  if (!t) return std::unexpected(t.error());
  if (t->numel() != 1)
    return fail(ErrorCode::kRuntime, fmt::format("{}: {} holds {} values; it must hold one", ctx.where(), what, t->numel()),
                "", fmt::format("give {} as a scalar", what));
  switch (t->dtype()) {
    case DType::kBool: return t->data_as<bool>()[0] ? 1.0 : 0.0;
    case DType::kFloat64: return t->data_as<double>()[0];
    case DType::kFloat16: return half_to_float(t->data_as<uint16_t>()[0]);
    case DType::kBFloat16: return bfloat16_to_float(t->data_as<uint16_t>()[0]);
    default: return t->data_as<float>()[0];
  }
}

// Inference (the input itself, the mask all true) unless the node trains: then each element is
// kept with probability 1 - ratio and scaled by 1 / (1 - ratio).
Expected<void> build_dropout(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const bool mask = has_mask(node);
  if (!may_train(b.graph(), node) && (!mask || node.opset >= 10)) {
    const std::string fill = mask ? b.instantiate("fill", "bool", "i64 n, bool value, bool* out", "n, value, out") : "";
    b.add_step(make_step(node, mask ? "view+nvrtc:" + fill : "view", [fill](StepContext& ctx) -> Expected<void> {
      const Tensor& x = ctx.input(0);
      ctx.set_output(0, x);
      if (fill.empty() || !ctx.wants_output(1)) return {};
      auto m = ctx.output(1, DType::kBool, x.shape());
      if (!m) return std::unexpected(m.error());
      if (x.numel() == 0) return {};
      KernelArgs args;
      args.add(x.numel()).add(true).ptr(dev_mut(*m));
      return ctx.launch(fill, x.numel(), args);
    }));
    return {};
  }
  const DType m_type = mask_type(node, dtype);
  const std::string t(chain_storage_type(dtype)), m(chain_storage_type(m_type));
  const std::string kernel = b.instantiate(
      "dropout", fmt::format("{}, {}", t, m),
      fmt::format("i64 n, unsigned long long key, unsigned long long run, double ratio, float scale, const {0}* x, {0}* y, "
                  "{1}* mask",
                  t, m),
      "n, key, run, ratio, scale, x, y, mask");
  const float ratio_attr = node.attributes.float_or("ratio", 0.5f);
  const bool ratio_input = node.opset >= 12 && node.inputs.size() > 1 && node.inputs[1] != kNoValue;
  const bool mode_input = node.opset >= 12 && node.inputs.size() > 2 && node.inputs[2] != kNoValue;
  // Without a training_mode input only Dropout-1 and -6 train (is_test 0); 7 to 11 come here
  // for their mask of the data's type, all ones.
  const double legacy_training = node.opset < 7 && node.attributes.int_or("is_test", 0) == 0 ? 1 : 0;
  const DrawState draws(node);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    double ratio = ratio_attr, training = legacy_training;
    if (ratio_input) {
      auto r = host_scalar(ctx, 1, "ratio");
      if (!r) return std::unexpected(r.error());
      ratio = *r;
    }
    if (mode_input) {
      auto on = host_scalar(ctx, 2, "training_mode");
      if (!on) return std::unexpected(on.error());
      training = *on;
    }
    if (ratio < 0 || ratio > 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: ratio {} is outside [0, 1]", ctx.where(), ratio),
                  "the ratio is the probability of dropping an element", "feed a ratio in [0, 1)");
    if (training == 0) ratio = 0;  // keeps every element, scale 1
    auto y = ctx.output(0, dtype, x.shape());
    if (!y) return std::unexpected(y.error());
    Tensor m_out;
    if (mask && ctx.wants_output(1)) {
      auto made = ctx.output(1, m_type, x.shape());
      if (!made) return std::unexpected(made.error());
      m_out = std::move(*made);
    }
    const uint64_t run = draws.next_run();
    if (x.numel() == 0) return {};
    // A ratio of 1 drops everything; its scale would divide by zero.
    const auto scale = static_cast<float>(ratio < 1 ? 1 / (1 - ratio) : 0);
    KernelArgs args;
    args.add(x.numel()).add(draws.key).add(run).add(ratio).add(scale).ptr(dev(x)).ptr(dev_mut(*y));
    args.ptr(m_out.defined() ? dev_mut(m_out) : nullptr);
    return ctx.launch(kernel, x.numel(), args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> random_ops() {
  std::vector<CudaOpDef> ops;
  for (const char* op : {"RandomUniform", "RandomNormal", "RandomUniformLike", "RandomNormalLike"})
    ops.push_back(make_op(op, 1, check_random, build_random));
  ops.push_back(make_op("Bernoulli", 15, check_bernoulli, build_bernoulli));
  ops.push_back(make_op("Multinomial", 7, check_multinomial, build_multinomial));
  ops.push_back(make_op("Dropout", 1, check_dropout, build_dropout));
  return ops;
}

}  // namespace nxrt::cuda
