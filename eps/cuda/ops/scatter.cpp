// GatherND, ScatterND, ScatterElements and Scatter (its opset 9 name): data movement driven
// by index tensors, for any fixed-size dtype. The scatters copy data to the output, then put
// the updates: stored for reduction "none", combined atomically for add, mul, max and min
// (numeric dtypes; updates to one element combine in no set order, so float sums may differ
// from the cpu EP's in the last bits).
#include <fmt/format.h>

#include "nxrt/ep/scatter_reduction.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// The node's reduction as the kernel library's scatter_store takes it: kScatterNone (0) to
// kScatterMin (4), in ScatterReduction's order.
int reduction_code(const Node& node) { return static_cast<int>(scatter_reduction_of(node)); }

KernelMatch check_indexed(const NodeContext& ctx, std::size_t indices, bool int32_too) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  const DType t = ctx.input_dtype(indices);
  NXRT_REQUIRE(t == DType::kInt64 || (int32_too && t == DType::kInt32), "{}: indices are {}; expected {}", ctx.node().op_type,
               dtype_name(t), int32_too ? "int32 or int64" : "int64");
  return KernelMatch::supported();
}

// The scatters: check_indexed, and a reduction the kernels know for the data's dtype.
KernelMatch check_scatter(const NodeContext& ctx, bool int32_too) {
  NXRT_REQUIRE_MATCH(check_indexed(ctx, 1, int32_too));
  NXRT_REQUIRE_MATCH(check_scatter_reduction(ctx));
  const std::string& op = ctx.node().op_type;
  const std::string reduction = ctx.attrs().string_or("reduction", "none");
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(reduction == "none" || ((is_floating(t) || is_integer(t)) && !is_byte_float(t) && !is_subbyte(t)),
               "{}: reduction '{}' on {} data; the cuda EP reduces float16, bfloat16, float, double and 8- to 64-bit "
               "integers",
               op, reduction, dtype_name(t));
  return KernelMatch::supported();
}

KernelMatch check_gather_nd(const NodeContext& ctx) { return check_indexed(ctx, 1, false); }
KernelMatch check_scatter_nd(const NodeContext& ctx) { return check_scatter(ctx, false); }
KernelMatch check_scatter_elements(const NodeContext& ctx) { return check_scatter(ctx, true); }

// The element type a scatter's kernel moves: the data's bytes for reduction none, its
// arithmetic type otherwise.
std::string scatter_element_type(DType dtype, int reduction) {
  return std::string(reduction == 0 ? element_type(dtype) : chain_storage_type(dtype));
}

// GatherND: out = indices.shape[:-1] + data.shape[batch_dims + q:], q = indices.shape[-1].
Expected<void> build_gather_nd(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int64_t batch_dims = node.attributes.int_or("batch_dims", 0);
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate(
      "gather_nd", t,
      fmt::format("i64 n, i64 slice, int q, i64 tuples_per_batch, i64 batch_elements, Dims shape, Dims strides, const i64* idx, "
                  "const {0}* data, {0}* out",
                  t),
      "n, slice, q, tuples_per_batch, batch_elements, shape, strides, idx, data, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Shape& ds = data.shape();
    const Shape& is = idx.shape();
    const auto bd = static_cast<std::size_t>(batch_dims);
    if (is.empty() || bd >= is.size() || bd + static_cast<std::size_t>(is.back()) > ds.size() ||
        !std::equal(is.begin(), is.begin() + static_cast<std::ptrdiff_t>(bd), ds.begin()))
      return fail(ErrorCode::kRuntime, fmt::format("{}: indices {} do not index data {} with batch_dims {}", ctx.where(),
                                                   shape_to_string(is), shape_to_string(ds), batch_dims));
    const auto q = static_cast<std::size_t>(is.back());
    Shape out(is.begin(), is.end() - 1);
    out.insert(out.end(), ds.begin() + static_cast<std::ptrdiff_t>(bd + q), ds.end());
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    const Shape indexed(ds.begin() + static_cast<std::ptrdiff_t>(bd), ds.end());  // the dims after the batch dims
    const Shape strides = contiguous_strides(indexed);
    const int64_t slice = dims_product(ds, bd + q, ds.size());
    const int64_t tuples_per_batch = dims_product(is, bd, is.size() - 1);
    KernelArgs args;
    args.add(n).add(slice).add(static_cast<int>(q)).add(tuples_per_batch).add(shape_numel(indexed));
    args.add(to_kernel_dims(indexed)).add(to_kernel_dims(strides)).ptr(dev(idx)).ptr(dev(data)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

// out = data, as one strided copy (the scatters write into it after).
Expected<Tensor> copy_of_data(StepContext& ctx, const std::string& copy, const Tensor& data) {
  auto y = ctx.output(0, data.dtype(), data.shape());
  if (!y) return std::unexpected(y.error());
  const Shape strides = contiguous_strides(data.shape());
  if (auto r = strided_copy(ctx, copy, data.shape(), strides, 0, dev(data), strides, 0, dev_mut(*y)); !r)
    return std::unexpected(r.error());
  return y;
}

Expected<void> build_scatter_nd(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const int reduction = reduction_code(node);
  const std::string t = scatter_element_type(dtype, reduction);
  const std::string copy = strided_copy_kernel(b, dtype);
  const std::string kernel = b.instantiate(
      "scatter_nd", fmt::format("{}, {}", t, reduction),
      fmt::format("i64 n, i64 slice, int q, Dims shape, Dims strides, const i64* idx, const {0}* updates, {0}* out", t),
      "n, slice, q, shape, strides, idx, updates, out");
  b.add_step(make_step(node, "nvrtc:" + copy + "+" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const Shape& ds = data.shape();
    const Shape& is = idx.shape();
    const auto q = is.empty() ? std::size_t{0} : static_cast<std::size_t>(is.back());
    Shape expected(is.begin(), is.end() - (is.empty() ? 0 : 1));
    if (!is.empty()) expected.insert(expected.end(), ds.begin() + static_cast<std::ptrdiff_t>(std::min(q, ds.size())), ds.end());
    if (is.empty() || q > ds.size() || updates.shape() != expected)
      return fail(ErrorCode::kRuntime, fmt::format("{}: data {}, indices {} and updates {} do not fit (updates should be {})",
                                                   ctx.where(), shape_to_string(ds), shape_to_string(is),
                                                   shape_to_string(updates.shape()), shape_to_string(expected)));
    auto y = copy_of_data(ctx, copy, data);
    if (!y) return std::unexpected(y.error());
    const int64_t n = updates.numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(dims_product(ds, q, ds.size())).add(static_cast<int>(q)).add(to_kernel_dims(ds));
    args.add(to_kernel_dims(contiguous_strides(ds))).ptr(dev(idx)).ptr(dev(updates)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

Expected<void> build_scatter_elements(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const DType idx_dtype = b.graph().value(node.inputs[1]).type.dtype;
  const int64_t axis_attr = node.attributes.int_or("axis", 0);
  const int reduction = reduction_code(node);
  const std::string t = scatter_element_type(dtype, reduction), i(idx_dtype == DType::kInt32 ? "int" : "long long");
  const std::string copy = strided_copy_kernel(b, dtype);
  const std::string kernel = b.instantiate(
      "scatter_elements", fmt::format("{}, {}, {}", t, i, reduction),
      fmt::format("i64 n, int rank, Dims idx_shape, Dims data_strides, int axis, i64 axis_dim, const {}* idx, "
                  "const {}* updates, {}* out",
                  i, t, t),
      "n, rank, idx_shape, data_strides, axis, axis_dim, idx, updates, out");
  b.add_step(make_step(node, "nvrtc:" + copy + "+" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& data = ctx.input(0);
    const Tensor& idx = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    const Shape& ds = data.shape();
    const Shape& is = idx.shape();
    const auto axis = axis_index(ctx, axis_attr, ds);
    if (!axis) return std::unexpected(axis.error());
    bool fits = is.size() == ds.size() && updates.shape() == is;
    for (std::size_t d = 0; fits && d < ds.size(); ++d) fits = d == *axis || is[d] <= ds[d];
    if (!fits)
      return fail(ErrorCode::kRuntime, fmt::format("{}: data {}, indices {} and updates {} do not fit", ctx.where(),
                                                   shape_to_string(ds), shape_to_string(is), shape_to_string(updates.shape())));
    auto y = copy_of_data(ctx, copy, data);
    if (!y) return std::unexpected(y.error());
    const int64_t n = idx.numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n).add(static_cast<int>(ds.size())).add(to_kernel_dims(is)).add(to_kernel_dims(contiguous_strides(ds)));
    args.add(static_cast<int>(*axis)).add(ds[*axis]).ptr(dev(idx)).ptr(dev(updates)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> scatter_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("GatherND", 11, check_gather_nd, build_gather_nd));  // 12: batch_dims
  // 13: bfloat16; 16: the add and mul reductions; 18: max and min.
  for (auto& op : make_op_versions("ScatterND", {11, 13, 16, 18}, check_scatter_nd, build_scatter_nd)) ops.push_back(std::move(op));
  for (auto& op : make_op_versions("ScatterElements", {11, 13, 16, 18}, check_scatter_elements, build_scatter_elements))
    ops.push_back(std::move(op));
  // Scatter (9, deprecated at 11) is ScatterElements without reductions (its checks find none).
  ops.push_back(make_op("Scatter", 9, check_scatter_elements, build_scatter_elements));
  ops.back().def.until_version = 10;
  return ops;
}

}  // namespace nxrt::cuda
