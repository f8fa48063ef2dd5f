// Shared checks of the cuda EP's op families.
#include "ops/op_util.h"

#include "index_space.h"
#include "plan.h"
#include "runtime.h"

#include <fmt/format.h>

#include <bit>

namespace nxrt::cuda {

KernelMatch require_dtypes(const NodeContext& ctx, const std::vector<std::size_t>& inputs, bool (*allowed)(DType),
                           std::string_view kinds, bool same) {
  const std::string& op = ctx.node().op_type;
  std::optional<std::size_t> first;
  for (std::size_t i : inputs) {
    if (!ctx.has_input(i)) continue;
    const DType t = ctx.input_dtype(i);
    NXRT_REQUIRE(allowed(t), "{}: input {} is {}; the cuda EP runs {} only", op, i, dtype_name(t), kinds);
    if (!first) first = i;
    NXRT_REQUIRE(!same || t == ctx.input_dtype(*first), "{}: input {} is {} but input {} is {}; the cuda EP needs one dtype",
                 op, i, dtype_name(t), *first, dtype_name(ctx.input_dtype(*first)));
  }
  return KernelMatch::supported();
}

KernelMatch require_float(const NodeContext& ctx, const std::vector<std::size_t>& inputs, bool same) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, inputs, is_cuda_float, kCudaFloats, same));
  if (const ValueType* out = ctx.output_type(0); out && out->dtype != DType::kUndefined)
    NXRT_REQUIRE(is_cuda_float(out->dtype), "{}: output 0 is {}; the cuda EP runs {} only", op, dtype_name(out->dtype),
                 kCudaFloats);
  return KernelMatch::supported();
}

KernelMatch require_fixed_size(const NodeContext& ctx, std::size_t input) {
  const DType t = ctx.input_dtype(input);
  NXRT_REQUIRE(t != DType::kString && t != DType::kUndefined && ctx.input_type(input)->kind == ValueType::Kind::kTensor,
               "{}: input {} is {}; the cuda EP moves tensors of fixed-size elements only", ctx.node().op_type, input,
               ctx.input_type(input) ? ctx.input_type(input)->to_string() : "unknown");
  return KernelMatch::supported();
}

KernelMatch require_max_rank(const NodeContext& ctx, std::size_t input) {
  const auto rank = ctx.input_rank(input);
  NXRT_REQUIRE(!rank || *rank <= kMaxRank, "{}: input {} has rank {}; the cuda EP's kernels index at most {} dims",
               ctx.node().op_type, input, rank.value_or(0), kMaxRank);
  return KernelMatch::supported();
}

KernelMatch require_output_unused(const NodeContext& ctx, std::size_t i, std::string_view what) {
  NXRT_REQUIRE(!ctx.has_output(i), "{}: output {} ({}) is used; the cuda EP does not compute it", ctx.node().op_type, i,
               what);
  return KernelMatch::supported();
}

KernelMatch require_ints(const NodeContext& ctx, std::size_t i, std::string_view what) {
  if (!ctx.has_input(i) || ctx.constant_input(i)) return KernelMatch::supported();
  const DType t = ctx.input_dtype(i);
  NXRT_REQUIRE(t == DType::kInt32 || t == DType::kInt64, "{}: input {} ({}) is {}; the cuda EP reads int32 or int64",
               ctx.node().op_type, i, what, dtype_name(t));
  return KernelMatch::supported();
}

WindowKernelDims window_kernel_dims(const Window3& window) {
  WindowKernelDims k;
  for (std::size_t d = 0; d < 3; ++d) {
    const WindowDim& w = window[d];
    k.in.d[d] = w.in, k.out.d[d] = w.out, k.kernel.d[d] = w.kernel, k.stride.d[d] = w.stride;
    k.pad_begin.d[d] = w.pad_begin, k.dilation.d[d] = w.dilation;
  }
  return k;
}

std::string_view quantized_type(DType t) {
  switch (t) {
    case DType::kInt8: return "signed char";
    case DType::kUInt8: return "unsigned char";
    default: return "";
  }
}

KernelMatch require_quantized(const NodeContext& ctx, std::size_t i, std::string_view what) {
  NXRT_REQUIRE(!quantized_type(ctx.input_dtype(i)).empty(), "{}: {} (input {}) is {}; ONNX takes int8 or uint8",
               ctx.node().op_type, what, i, dtype_name(ctx.input_dtype(i)));
  return KernelMatch::supported();
}

KernelMatch require_scalar_or_vector(const NodeContext& ctx, std::size_t i, std::string_view what, DType dtype) {
  if (!ctx.has_input(i)) return KernelMatch::supported();
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_rank(i).value_or(0) <= 1, "{}: {} (input {}) has rank {}; the cuda EP takes a scalar or 1-D", op,
               what, i, ctx.input_rank(i).value_or(0));
  NXRT_REQUIRE(ctx.input_dtype(i) == dtype, "{}: {} (input {}) is {}; it must be {}", op, what, i,
               dtype_name(ctx.input_dtype(i)), dtype_name(dtype));
  return KernelMatch::supported();
}

Expected<ScalarOrVector> scalar_or_vector(const StepContext& ctx, std::size_t i, int64_t covers, std::string_view what,
                                          std::string_view how) {
  if (!ctx.has_input(i)) return ScalarOrVector{};
  const int64_t n = ctx.input(i).numel();
  if (n != 1 && n != covers)
    return fail(ErrorCode::kRuntime, fmt::format("{}: {} has {} values; it needs 1 or {}", ctx.where(), what, n, covers), {},
                std::string(how));
  return ScalarOrVector{dev(ctx.input(i)), n};
}

namespace {

const WeightHandle* constant_at(const Graph& graph, const Node& node, std::size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return nullptr;
  const auto& init = graph.value(node.inputs[i]).initializer;
  return init ? &*init : nullptr;
}

}  // namespace

std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, const Node& node, std::size_t i) {
  const WeightHandle* w = constant_at(graph, node, i);
  if (!w) return std::nullopt;
  auto t = w->materialize();
  if (!t) return std::nullopt;
  return t->to_int64_vector();
}

std::optional<float> constant_float(const Graph& graph, const Node& node, std::size_t i) {
  const WeightHandle* w = constant_at(graph, node, i);
  if (!w || w->shape().size() > 1) return std::nullopt;
  auto t = w->materialize();
  if (!t || t->numel() < 1) return std::nullopt;
  switch (t->dtype()) {
    case DType::kFloat32: return t->data_as<float>()[0];
    case DType::kFloat64: return static_cast<float>(t->data_as<double>()[0]);
    default: return std::nullopt;
  }
}

std::optional<int64_t> static_rank(const Graph& graph, const Node& node, std::size_t i) {
  if (i >= node.inputs.size() || node.inputs[i] == kNoValue) return std::nullopt;
  const auto& shape = graph.value(node.inputs[i]).type.shape;
  if (!shape) return std::nullopt;
  return static_cast<int64_t>(shape->size());
}

std::string float_literal(float v) { return fmt::format("__int_as_float((int){:#x}u)", std::bit_cast<uint32_t>(v)); }

}  // namespace nxrt::cuda

namespace nxrt::cuda {

Expected<std::size_t> axis_index(const StepContext& ctx, int64_t axis, const Shape& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  const int64_t k = normalize_axis(axis, rank);
  if (k < 0 || k >= rank)
    return fail(ErrorCode::kRuntime, fmt::format("{}: axis {} out of range for {}", ctx.where(), axis, shape_to_string(shape)));
  return static_cast<std::size_t>(k);
}

std::string strided_copy_kernel(PlanBuilder& builder, DType dtype) {
  const std::string_view t = element_type(dtype);
  return builder.instantiate("strided_copy", t,
                             fmt::format("i64 n, int rank, Dims shape, Dims in_strides, i64 in_off, const {0}* in, "
                                         "Dims out_strides, i64 out_off, {0}* out",
                                         t),
                             "n, rank, shape, in_strides, in_off, in, out_strides, out_off, out");
}

std::string pad_kernel(PlanBuilder& builder, DType dtype) {
  const std::string_view t = element_type(dtype);
  return builder.instantiate(
      "pad", t,
      fmt::format("i64 n, int rank, Dims out_shape, Dims in_shape, Dims begins, int mode, const {0}* value, "
                  "unsigned long long fill, const {0}* in, {0}* out",
                  t),
      "n, rank, out_shape, in_shape, begins, mode, value, fill, in, out");
}

Expected<void> strided_copy(StepContext& ctx, const std::string& kernel, const Shape& shape, const Shape& in_strides,
                            int64_t in_off, const void* in, const Shape& out_strides, int64_t out_off, void* out) {
  const int64_t n = shape_numel(shape);
  if (n == 0) return {};
  if (shape.size() > static_cast<std::size_t>(kMaxRank))
    return fail(ErrorCode::kRuntime, fmt::format("{}: rank {} exceeds the cuda EP's {}", ctx.where(), shape.size(), kMaxRank));
  Shape space = shape;
  std::vector<Shape> strides = {in_strides, out_strides};
  coalesce_dims(space, strides);
  KernelArgs args;
  args.add(n).add(static_cast<int>(space.size())).add(to_kernel_dims(space)).add(to_kernel_dims(strides[0]));
  args.add(in_off).ptr(in).add(to_kernel_dims(strides[1])).add(out_off).ptr(out);
  return ctx.launch(kernel, n, args);
}

Expected<void> broadcast_rows(StepContext& ctx, const std::string& copy_kernel, const void* row, int64_t rows,
                              int64_t cols, void* out) {
  const Shape shape{rows, cols};
  return strided_copy(ctx, copy_kernel, shape, Shape{0, 1}, 0, row, contiguous_strides(shape), 0, out);
}

Expected<Tensor> output_or_scratch(StepContext& ctx, std::size_t i, DType dtype, const Shape& shape) {
  if (ctx.wants_output(i)) return ctx.output(i, dtype, shape);
  return ctx.scratch(static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype));
}

namespace {

// One operand of `rows` x `cols` matrices with batch dims `batch`, copied with `out_batch`'s.
Expected<const void*> expand_operand(StepContext& ctx, const std::string& copy_kernel, const void* data, DType dtype,
                                     const Shape& batch, const Shape& out_batch, int64_t rows, int64_t cols,
                                     std::vector<Tensor>& keep) {
  Shape shape = out_batch;
  shape.push_back(rows);
  shape.push_back(cols);
  Shape own = batch;
  own.push_back(rows);
  own.push_back(cols);
  Shape read = contiguous_strides(own);
  for (std::size_t i = 0; i < batch.size(); ++i)
    if (batch[i] == 1) read[i] = 0;
  auto copy = ctx.scratch(static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype));
  if (!copy) return std::unexpected(copy.error());
  if (auto r = strided_copy(ctx, copy_kernel, shape, read, 0, data, contiguous_strides(shape), 0, dev_mut(*copy)); !r)
    return std::unexpected(r.error());
  keep.push_back(std::move(*copy));
  return dev(keep.back());
}

}  // namespace

Expected<void> expand_partial_batches(StepContext& ctx, const std::string& copy_kernel, const MatmulShape& shape,
                                      DType a_type, const void*& a, DType b_type, const void*& b,
                                      std::vector<Tensor>& keep) {
  const MatmulProblem& p = shape.problem;
  if (p.batch * p.m * p.n == 0) return {};
  if (shape.expand_a) {
    auto copy = expand_operand(ctx, copy_kernel, a, a_type, shape.batch_a, shape.batch, p.m, p.k, keep);
    if (!copy) return std::unexpected(copy.error());
    a = *copy;
  }
  if (shape.expand_b) {
    auto copy = expand_operand(ctx, copy_kernel, b, b_type, shape.batch_b, shape.batch, p.k, p.n, keep);
    if (!copy) return std::unexpected(copy.error());
    b = *copy;
  }
  return {};
}

}  // namespace nxrt::cuda

namespace nxrt::cuda {

IntsInput::IntsInput(const Graph& graph, const Node& node, std::size_t i)
    : index_(i), present_(i < node.inputs.size() && node.inputs[i] != kNoValue), constant_(constant_ints(graph, node, i)) {}

Expected<std::optional<std::vector<int64_t>>> IntsInput::read(StepContext& ctx) const {
  if (!present_) return std::nullopt;
  if (constant_) return constant_;
  auto values = ctx.input_on_host(index_);
  if (!values) return std::unexpected(values.error());
  return values->to_int64_vector();
}

Expected<int64_t> IntsInput::read_one(StepContext& ctx, std::string_view what, std::optional<int64_t> absent) const {
  if (!present_ && absent) return *absent;
  auto values = read(ctx);
  if (!values) return std::unexpected(values.error());
  if (!*values || (*values)->size() != 1)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: {} holds {} values; it must hold one", ctx.where(), what, *values ? (*values)->size() : 0),
                "", fmt::format("give {} as one integer", what));
  return (*values)->front();
}

}  // namespace nxrt::cuda
