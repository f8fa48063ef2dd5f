// ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2/LogSumExp/LogSum (float, float16 in float, and
// double in double; ReduceMax and ReduceMin also integers and bool), ArgMax and ArgMin: one
// thread per output element.
#include <fmt/format.h>

#include <iterator>

#include "index_space.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The kernel's op codes (reduce<T> in kernel_library.cpp).
int reduce_code(std::string_view op) {
  static constexpr std::string_view kOps[] = {"ReduceSum", "ReduceMean",      "ReduceMax", "ReduceMin",
                                              "ReduceProd", "ReduceSumSquare", "ReduceL1",  "ReduceL2",
                                              "ReduceLogSumExp", "ReduceLogSum"};
  for (int i = 0; i < static_cast<int>(std::size(kOps)); ++i)
    if (kOps[i] == op) return i;
  return -1;
}

// Axes come from an input from opset 18 (ReduceSum: 13) and from an attribute before.
bool axes_from_input(const Node& node) { return node.opset >= (node.op_type == "ReduceSum" ? 13 : 18); }

// ReduceMax and ReduceMin compare integers (opset 12 on) and booleans (20 on) too.
bool is_extreme(const Node& node) { return node.op_type == "ReduceMax" || node.op_type == "ReduceMin"; }
bool is_extreme_type(DType t) {
  return is_cuda_float_or_double(t) || t == DType::kBool || is_whole_byte_integer(t);
}

KernelMatch check_reduce(const NodeContext& ctx) {
  if (is_extreme(ctx.node()))
    NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_extreme_type,
                                      "float, float16, bfloat16, double, 8- to 64-bit integers and bool"));
  else
    NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_cuda_float_or_double, kCudaFloatsOrDouble));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  if (axes_from_input(ctx.node())) NXRT_REQUIRE_MATCH(require_ints(ctx, 1, "axes"));
  return KernelMatch::supported();
}

Expected<void> build_reduce(PlanBuilder& b, const Node& node) {
  const std::optional<IntsInput> axes_input =
      axes_from_input(node) ? std::optional<IntsInput>(IntsInput(b.graph(), node, 1)) : std::nullopt;
  const auto axes_attr = node.attributes.get_ints("axes");
  const bool keepdims = node.attributes.int_or("keepdims", 1) != 0;
  const bool noop_empty = node.attributes.int_or("noop_with_empty_axes", 0) != 0;
  const int code = reduce_code(node.op_type);
  const std::string op = node.op_type;
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  // Integers and booleans (ReduceMax, ReduceMin) compare in their own type.
  const bool exact = !is_cuda_float_or_double(dtype);
  const std::string kernel = b.instantiate(
      exact ? "reduce_extreme" : "reduce", t,
      fmt::format("i64 n, int rank, Dims out_shape, Dims kept_strides, int red_rank, Dims red_shape, Dims red_strides, "
                  "i64 red_count, int op, const {0}* x, {0}* y",
                  t),
      "n, rank, out_shape, kept_strides, red_rank, red_shape, red_strides, red_count, op, x, y");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    auto read = axes_input ? axes_input->read(ctx) : Expected<std::optional<std::vector<int64_t>>>(axes_attr);
    if (!read) return std::unexpected(read.error());
    const std::optional<std::vector<int64_t>>& axes = *read;
    if ((!axes || axes->empty()) && noop_empty) {
      ctx.set_output(0, x);
      return {};
    }
    std::vector<bool> reduced(s.size(), !axes || axes->empty());
    for (int64_t a : axes.value_or(std::vector<int64_t>{})) {
      const auto k = axis_index(ctx, a, s);
      if (!k) return std::unexpected(k.error());
      reduced[*k] = true;
    }
    const Shape strides = contiguous_strides(s);
    Shape full, kept_strides, red_shape, red_strides, out;
    for (std::size_t k = 0; k < s.size(); ++k) {
      full.push_back(reduced[k] ? 1 : s[k]);
      kept_strides.push_back(strides[k]);
      if (reduced[k]) {
        red_shape.push_back(s[k]);
        red_strides.push_back(strides[k]);
      }
      if (!reduced[k] || keepdims) out.push_back(reduced[k] ? 1 : s[k]);
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(full);
    if (n == 0) return {};
    if (exact && shape_numel(red_shape) == 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: reduces an empty set of {} values to {}", ctx.where(), dtype_name(dtype), shape_to_string(out)),
                  fmt::format("{} of an empty set is defined for float types only (as -inf or inf)", op),
                  "reduce over axes that are not empty, or cast the input to float first");
    coalesce_dims(full, std::span(&kept_strides, 1));
    coalesce_dims(red_shape, std::span(&red_strides, 1));
    KernelArgs args;
    args.add(n).add(static_cast<int>(full.size())).add(to_kernel_dims(full)).add(to_kernel_dims(kept_strides));
    args.add(static_cast<int>(red_shape.size())).add(to_kernel_dims(red_shape)).add(to_kernel_dims(red_strides));
    args.add(shape_numel(red_shape)).add(exact ? static_cast<int>(code == reduce_code("ReduceMax")) : code);
    args.ptr(dev(x)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

bool is_arg_type(DType t) { return is_cuda_float(t) || t == DType::kInt32 || t == DType::kInt64; }

KernelMatch check_arg_reduce(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_dtypes(ctx, {0}, is_arg_type, "float, float16, int32 and int64"));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  return KernelMatch::supported();
}

Expected<void> build_arg_reduce(PlanBuilder& b, const Node& node) {
  const int64_t axis_attr = node.attributes.int_or("axis", 0);
  const bool keepdims = node.attributes.int_or("keepdims", 1) != 0;
  const bool last = node.attributes.int_or("select_last_index", 0) != 0;
  const bool is_max = node.op_type == "ArgMax";
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel =
      b.instantiate("arg_reduce", t, fmt::format("i64 n, i64 axis_dim, i64 inner, const {}* x, i64* y, int is_max, int last", t),
                    "n, axis_dim, inner, x, y, is_max, last");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    const auto axis = axis_index(ctx, axis_attr, s);
    if (!axis) return std::unexpected(axis.error());
    const std::size_t a = *axis;
    if (s[a] == 0) return fail(ErrorCode::kRuntime, fmt::format("{}: the axis is empty", ctx.where()));
    Shape out = s;
    if (keepdims) out[a] = 1;
    else out.erase(out.begin() + static_cast<std::ptrdiff_t>(a));
    auto y = ctx.output(0, DType::kInt64, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    int64_t inner = 1;
    for (std::size_t k = a + 1; k < s.size(); ++k) inner *= s[k];
    KernelArgs args;
    args.add(n).add(s[a]).add(inner).ptr(dev(x)).ptr(dev_mut(*y)).add(is_max ? 1 : 0).add(last ? 1 : 0);
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> reduce_ops() {
  std::vector<CudaOpDef> ops;
  auto add = [&](const char* op, int64_t axes_input_since, int64_t until = 0) {
    for (CudaOpDef& def : make_op_versions(op, {1, axes_input_since}, check_reduce, build_reduce, until))
      ops.push_back(std::move(def));
  };
  add("ReduceSum", 13);
  add("ReduceMean", 18);
  for (const char* op : {"ReduceMax", "ReduceMin"})  // 20: booleans
    for (CudaOpDef& def : make_op_versions(op, {1, 18, 20}, check_reduce, build_reduce, 23)) ops.push_back(std::move(def));
  add("ReduceProd", 18);
  add("ReduceSumSquare", 18);
  add("ReduceL1", 18);
  add("ReduceL2", 18);
  add("ReduceLogSumExp", 18);
  add("ReduceLogSum", 18);
  ops.push_back(make_op("ArgMax", 1, check_arg_reduce, build_arg_reduce));  // 12: select_last_index
  ops.push_back(make_op("ArgMin", 1, check_arg_reduce, build_arg_reduce));
  return ops;
}

}  // namespace nxrt::cuda
