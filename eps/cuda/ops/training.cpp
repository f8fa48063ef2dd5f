// ai.onnx.preview.training's optimizers: Adagrad, Momentum (standard and Nesterov) and Adam.
// A node updates n tensors; each takes one launch of optimizer_step, which reads R and T on
// the device and computes in double, as the cpu EP does.
#include <fmt/format.h>

#include <array>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

// An optimizer: its rule number in optimizer_step, its state tensors per optimized tensor,
// and its attributes in the kernel's order, with their defaults.
struct Optimizer {
  const char* name;
  int rule;
  std::size_t states;
  std::array<std::pair<const char*, float>, 5> attributes;
};
constexpr Optimizer kAdagrad{"Adagrad", 0, 1, {{{"decay_factor", 0.f}, {"epsilon", 1e-6f}, {"norm_coefficient", 0.f}}}};
constexpr Optimizer kMomentum{"Momentum", 1, 1, {{{"alpha", 0.f}, {"beta", 0.f}, {"norm_coefficient", 0.f}}}};
constexpr Optimizer kAdam{"Adam", 2, 2,
                          {{{"alpha", 0.9f}, {"beta", 0.999f}, {"epsilon", 1e-6f}, {"norm_coefficient", 0.f},
                            {"norm_coefficient_post", 0.f}}}};

// Inputs: R, T, then groups of n tensors (X, G and the states); outputs: n new X, then n new
// tensors per state.
KernelMatch check_optimizer(const NodeContext& ctx, const Optimizer& o) {
  const std::size_t groups = 2 + o.states;
  NXRT_REQUIRE(ctx.input_count() >= 2 + groups && (ctx.input_count() - 2) % groups == 0,
               "{}: {} inputs do not form R, T and {} groups of n tensors", o.name, ctx.input_count(), groups);
  const std::size_t tensors = (ctx.input_count() - 2) / groups;
  NXRT_REQUIRE(ctx.output_count() <= tensors * (o.states + 1), "{}: {} outputs for {} optimized tensors; expected at most {}",
               o.name, ctx.output_count(), tensors, tensors * (o.states + 1));
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.input_type(i) && ctx.input_type(i)->kind == ValueType::Kind::kTensor,
                 "{}: input {} is not a tensor; the cuda EP takes tensors only", o.name, i);
  const DType r = ctx.input_dtype(0);
  NXRT_REQUIRE(r == DType::kFloat32 || r == DType::kFloat64, "{}: R is {}; the cuda EP takes float or double", o.name,
               dtype_name(r));
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "{}: T is {}; expected int64", o.name, dtype_name(ctx.input_dtype(1)));
  for (std::size_t i = 2; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.input_dtype(i) == r, "{}: input {} is {} and R {}; the cuda EP needs every float input of R's type",
                 o.name, i, dtype_name(ctx.input_dtype(i)), dtype_name(r));
  if (o.rule == kMomentum.rule) {
    const AttributeMap& a = ctx.attrs();
    NXRT_REQUIRE(a.get_float("alpha") && a.get_float("beta") && a.get_float("norm_coefficient") && a.get_string("mode"),
                 "Momentum: the float attributes alpha, beta, norm_coefficient and the string mode are required");
    const std::string mode = a.string_or("mode", "");
    NXRT_REQUIRE(mode == "standard" || mode == "nesterov", "Momentum: mode '{}' is not one of standard, nesterov", mode);
  }
  return KernelMatch::supported();
}

Expected<void> build_optimizer(PlanBuilder& b, const Node& node, const Optimizer& o) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate(
      "optimizer_step", t,
      fmt::format("i64 n, int rule, int nesterov, const {0}* r, const i64* t, double a0, double a1, double a2, double a3, "
                  "double a4, const {0}* x, const {0}* g, const {0}* s0, const {0}* s1, {0}* x_new, {0}* s0_new, "
                  "{0}* s1_new",
                  t),
      "n, rule, nesterov, r, t, a0, a1, a2, a3, a4, x, g, s0, s1, x_new, s0_new, s1_new");
  std::array<double, 5> attributes{};
  for (std::size_t i = 0; i < o.attributes.size(); ++i)
    if (o.attributes[i].first) attributes[i] = node.attributes.float_or(o.attributes[i].first, o.attributes[i].second);
  const int nesterov = node.attributes.string_or("mode", "") == "nesterov" ? 1 : 0;
  const std::size_t tensors = (node.inputs.size() - 2) / (2 + o.states);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    if (ctx.input(0).numel() != 1 || ctx.input(1).numel() != 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: R has shape {} and T {}; both must be scalars", ctx.where(),
                                                   shape_to_string(ctx.input(0).shape()), shape_to_string(ctx.input(1).shape())));
    for (std::size_t k = 0; k < tensors; ++k) {
      const Tensor& x = ctx.input(2 + k);
      const void* in[3] = {nullptr, nullptr, nullptr};  // G and the states
      for (std::size_t g = 0; g <= o.states; ++g) {
        const Tensor& v = ctx.input(2 + k + (g + 1) * tensors);
        if (v.shape() != x.shape())
          return fail(ErrorCode::kRuntime,
                      fmt::format("{}: input {} has shape {}, expected {} like its X (input {})", ctx.where(),
                                  2 + k + (g + 1) * tensors, shape_to_string(v.shape()), shape_to_string(x.shape()), 2 + k),
                      "every gradient and state tensor matches the tensor it updates", "fix the model's shapes");
        in[g] = dev(v);
      }
      void* out[3] = {nullptr, nullptr, nullptr};  // new X and the new states; unused ones are not written
      for (std::size_t s = 0; s <= o.states; ++s) {
        const std::size_t index = k + s * tensors;
        if (!ctx.wants_output(index)) continue;
        auto y = ctx.output(index, dtype, x.shape());
        if (!y) return std::unexpected(y.error());
        out[s] = dev_mut(*y);
      }
      if (x.numel() == 0) continue;
      KernelArgs args;
      args.add(x.numel()).add(o.rule).add(nesterov).ptr(dev(ctx.input(0))).ptr(dev(ctx.input(1)));
      for (double a : attributes) args.add(a);
      args.ptr(dev(x)).ptr(in[0]).ptr(in[1]).ptr(in[2]).ptr(out[0]).ptr(out[1]).ptr(out[2]);
      if (auto r = ctx.launch(kernel, x.numel(), args); !r) return r;
    }
    return {};
  }));
  return {};
}

CudaOpDef optimizer_op(const Optimizer& o) {
  return {{{kTrainingDomain, o.name, 1}, 0, [&o](const NodeContext& ctx) { return check_optimizer(ctx, o); }, {}},
          [&o](PlanBuilder& b, const Node& node) { return build_optimizer(b, node, o); },
          std::nullopt};
}

}  // namespace

std::vector<CudaOpDef> training_ops() { return {optimizer_op(kAdagrad), optimizer_op(kMomentum), optimizer_op(kAdam)}; }

}  // namespace nxrt::cuda
