// EyeLike and OneHot: tensors generated from a shape and a few values. OneHot's depth is read
// on the host (it sizes the output); its off/on values stay on the device.
#include <fmt/format.h>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The dtype EyeLike writes: its `dtype` attribute, else the input's.
std::optional<DType> eye_dtype(const AttributeMap& attrs, DType input) {
  if (auto to = attrs.get_int("dtype")) return dtype_from_onnx(static_cast<int32_t>(*to));
  return input;
}

KernelMatch check_eye_like(const NodeContext& ctx) {
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 2, "EyeLike: input 0 has rank {}; expected a matrix", rank.value_or(0));
  const auto out = eye_dtype(ctx.attrs(), ctx.input_dtype(0));
  NXRT_REQUIRE(out && is_cuda_number(*out), "EyeLike: output type {}; the cuda EP writes {}", out ? dtype_name(*out) : "unknown",
               kCudaNumbers);
  return KernelMatch::supported();
}

Expected<void> build_eye_like(PlanBuilder& b, const Node& node) {
  const DType dtype = *eye_dtype(node.attributes, b.graph().value(node.inputs[0]).type.dtype);
  const int64_t k = node.attributes.int_or("k", 0);
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate("eye", t, fmt::format("i64 n, i64 cols, i64 k, {}* out", t), "n, cols, k, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Shape& s = ctx.input(0).shape();
    if (s.size() != 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is not a matrix", ctx.where(), shape_to_string(s)));
    auto y = ctx.output(0, dtype, s);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(s[1]).add(k).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

KernelMatch check_one_hot(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_number, kCudaNumbers));
  const DType depth = ctx.input_dtype(1);
  NXRT_REQUIRE(depth == DType::kFloat32 || depth == DType::kInt32 || depth == DType::kInt64,
               "OneHot: depth is {}; the cuda EP reads float, int32 or int64", dtype_name(depth));
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 2));
  return KernelMatch::supported();
}

Expected<void> build_one_hot(PlanBuilder& b, const Node& node) {
  const DType index_dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DType dtype = b.graph().value(node.inputs[2]).type.dtype;
  const int64_t axis_attr = node.attributes.int_or("axis", -1);
  const std::string t(element_type(dtype)), i(chain_storage_type(index_dtype));
  const std::string kernel = b.instantiate(
      "one_hot", t + ", " + i, fmt::format("i64 n, i64 depth, i64 inner, const {}* indices, const {}* values, {}* out", i, t, t),
      "n, depth, inner, indices, values, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& indices = ctx.input(0);
    const Shape& is = indices.shape();
    auto depth_tensor = ctx.input_on_host(1);
    if (!depth_tensor) return std::unexpected(depth_tensor.error());
    if (depth_tensor->numel() != 1)
      return fail(ErrorCode::kRuntime, fmt::format("{}: depth has {} values; expected one", ctx.where(), depth_tensor->numel()));
    // A float depth counts its whole part, as ONNX says.
    const int64_t depth = depth_tensor->dtype() == DType::kFloat32 ? static_cast<int64_t>(*depth_tensor->data_as<float>())
                                                                   : depth_tensor->to_int64_vector().front();
    if (depth < 1) return fail(ErrorCode::kRuntime, fmt::format("{}: depth {} is not positive", ctx.where(), depth));
    if (ctx.input(2).numel() != 2)
      return fail(ErrorCode::kRuntime, fmt::format("{}: values has {} elements; expected [off, on]", ctx.where(),
                                                   ctx.input(2).numel()));
    const auto rank = static_cast<int64_t>(is.size()) + 1;
    const int64_t axis = normalize_axis(axis_attr, rank);
    if (axis < 0 || axis >= rank)
      return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} out of range for rank {}", ctx.where(), axis_attr, rank));
    Shape out = is;
    out.insert(out.begin() + axis, depth);
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    const int64_t inner = dims_product(is, static_cast<std::size_t>(axis), is.size());
    KernelArgs args;
    args.add(n).add(depth).add(inner).ptr(dev(indices)).ptr(dev(ctx.input(2))).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> generator_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("EyeLike", 9, check_eye_like, build_eye_like));
  ops.push_back(make_op("OneHot", 9, check_one_hot, build_one_hot));
  return ops;
}

}  // namespace nxrt::cuda
