// Compress, NonZero, NonMaxSuppression and Unique: outputs sized by their inputs' values. The
// values that decide the size (Compress's condition, NonZero's and Unique's input, the boxes and
// scores) are read on the host, which waits for the stream unless the host already knows them.
// Compress then gathers the selected slices on the device; the others upload what they found
// (and keep it on the host for later readers).
#include <fmt/format.h>

#include <cstring>

#include "nxrt/ep/nms.h"
#include "nxrt/ep/unique.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_compress(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kBool, "Compress: condition is {}; it must be bool", dtype_name(ctx.input_dtype(1)));
  const auto rank = ctx.input_rank(1);
  NXRT_REQUIRE(!rank || *rank == 1, "Compress: condition has rank {}; it must be 1-D", *rank);
  if (const auto axis = ctx.attrs().get_int("axis"); axis && ctx.input_rank(0))
    NXRT_REQUIRE(*axis >= -*ctx.input_rank(0) && *axis < *ctx.input_rank(0), "Compress: axis {} is out of range for rank {}",
                 *axis, *ctx.input_rank(0));
  return KernelMatch::supported();
}

// Compress: the slices (along `axis`, or the elements of the flattened input) whose condition
// is true, through Gather's kernel with the selected indices as its index table.
Expected<void> build_compress(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::optional<int64_t> axis_attr = node.attributes.get_int("axis");
  const std::string t(element_type(dtype));
  const std::string kernel = b.instantiate(
      "gather", t + ", long long", fmt::format("i64 n, i64 inner, i64 axis_dim, i64 idx_count, const {0}* data, const long long* idx, {0}* out", t),
      "n, inner, axis_dim, idx_count, data, idx, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    std::size_t a = 0;
    if (axis_attr) {
      auto axis = axis_index(ctx, *axis_attr, in);
      if (!axis) return std::unexpected(axis.error());
      a = *axis;
    }
    const int64_t dim = axis_attr ? in[a] : x.numel();
    auto condition = ctx.input_on_host(1);
    if (!condition) return std::unexpected(condition.error());
    std::vector<int64_t> selected;
    const bool* cond = condition->data_as<bool>();
    for (int64_t i = 0; i < condition->numel(); ++i) {
      if (!cond[i]) continue;
      if (i >= dim)
        return fail(ErrorCode::kRuntime, fmt::format("{}: condition selects index {} but the {} has only {} entries", ctx.where(), i,
                                                     axis_attr ? fmt::format("axis {} of input {}", a, shape_to_string(in))
                                                               : std::string("flattened input"),
                                                     dim),
                    "a condition may be shorter than the axis, not longer with true entries beyond it", "fix the condition input");
      selected.push_back(i);
    }
    const auto count = static_cast<int64_t>(selected.size());
    Shape out{count};
    int64_t inner = 1;
    if (axis_attr) {
      out = in;
      out[a] = count;
      inner = dims_product(in, a + 1, in.size());
    }
    auto y = ctx.output(0, dtype, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    auto idx = ctx.upload(Tensor::from_vector<int64_t>({count}, selected));
    if (!idx) return std::unexpected(idx.error());
    KernelArgs args;
    args.add(n).add(inner).add(dim).add(count).ptr(dev(x)).ptr(dev(*idx)).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

KernelMatch check_non_zero(const NodeContext& ctx) { return require_fixed_size(ctx, 0); }

// Whether element i of host tensor x is non-zero: float types by value (-0 is zero), the
// others by their bytes.
bool is_non_zero(const Tensor& x, int64_t i) {
  switch (x.dtype()) {
    case DType::kFloat32: return x.data_as<float>()[i] != 0.f;
    case DType::kFloat64: return x.data_as<double>()[i] != 0.0;
    case DType::kFloat16:
    case DType::kBFloat16: return (x.data_as<uint16_t>()[i] & 0x7fff) != 0;
    default: {
      const std::size_t size = dtype_size(x.dtype());
      const auto* bytes = static_cast<const unsigned char*>(x.view().data()) + static_cast<std::size_t>(i) * size;
      for (std::size_t k = 0; k < size; ++k)
        if (bytes[k] != 0) return true;
      return false;
    }
  }
}

// NonZero: [rank, count] coordinates of the non-zero elements in row-major order (a scalar
// counts as one element of a 1-D tensor, as numpy.nonzero does).
Expected<void> build_non_zero(PlanBuilder& b, const Node& node) {
  b.add_step(make_step(node, "host", [](StepContext& ctx) -> Expected<void> {
    auto x = ctx.input_on_host(0);
    if (!x) return std::unexpected(x.error());
    const Tensor host = x->view().is_contiguous() ? *x : copy_to_contiguous(x->view());
    std::vector<int64_t> found;
    for (int64_t i = 0; i < host.numel(); ++i)
      if (is_non_zero(host, i)) found.push_back(i);
    const Shape shape = host.shape().empty() ? Shape{1} : host.shape();
    const auto count = static_cast<int64_t>(found.size());
    std::vector<int64_t> coordinates(shape.size() * found.size());
    for (int64_t k = 0; k < count; ++k) {
      int64_t rest = found[static_cast<std::size_t>(k)];
      for (std::size_t d = shape.size(); d-- > 0;) {
        coordinates[d * found.size() + static_cast<std::size_t>(k)] = rest % shape[d];
        rest /= shape[d];
      }
    }
    return ctx.set_output_from_host(0, Tensor::from_vector<int64_t>({static_cast<int64_t>(shape.size()), count}, coordinates));
  }));
  return {};
}

// Boxes and scores are float; the three scalar operands are optional.
KernelMatch check_nms(const NodeContext& ctx) {
  for (std::size_t i : {0, 1, 3, 4})
    if (ctx.has_input(i))
      NXRT_REQUIRE(ctx.input_dtype(i) == DType::kFloat32, "NonMaxSuppression: input {} is {}; it must be float", i,
                   dtype_name(ctx.input_dtype(i)));
  if (ctx.has_input(2))
    NXRT_REQUIRE(ctx.input_dtype(2) == DType::kInt64, "NonMaxSuppression: max_output_boxes_per_class is {}; it must be int64",
                 dtype_name(ctx.input_dtype(2)));
  const int64_t center = ctx.attrs().int_or("center_point_box", 0);
  NXRT_REQUIRE(center == 0 || center == 1, "NonMaxSuppression: center_point_box {} is not valid; use 0 or 1", center);
  return KernelMatch::supported();
}

// NonMaxSuppression: the selection (nxrt/ep/nms.h) runs on the host, on the boxes and scores
// read back; the [count, 3] indices are uploaded.
Expected<void> build_nms(PlanBuilder& b, const Node& node) {
  const bool center = node.attributes.int_or("center_point_box", 0) == 1;
  b.add_step(make_step(node, "host", [center](StepContext& ctx) -> Expected<void> {
    Tensor on_host[5];
    for (std::size_t i = 0; i < 5; ++i) {
      if (!ctx.has_input(i)) continue;
      auto t = ctx.input_on_host(i);
      if (!t) return std::unexpected(t.error());
      on_host[i] = t->view().is_contiguous() ? *t : copy_to_contiguous(t->view());
    }
    auto given = [&](std::size_t i) { return on_host[i].defined() && on_host[i].numel() > 0; };
    NmsParams params;
    params.max_per_class = given(2) ? on_host[2].data_as<int64_t>()[0] : 0;
    params.iou_threshold = given(3) ? on_host[3].data_as<float>()[0] : 0.f;
    if (given(4)) params.score_threshold = on_host[4].data_as<float>()[0];
    params.center_point_box = center;
    auto selected = select_boxes(on_host[0], on_host[1], params);
    if (!selected) return forward_error(std::move(selected), ctx.where());
    const auto count = static_cast<int64_t>(selected->size() / 3);
    return ctx.set_output_from_host(0, Tensor::from_vector<int64_t>({count, 3}, *selected));
  }));
  return {};
}

KernelMatch check_unique(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  NXRT_REQUIRE(!is_subbyte(ctx.input_dtype(0)), "Unique: input 0 is {}; the cuda EP takes whole-byte types",
               dtype_name(ctx.input_dtype(0)));
  return KernelMatch::supported();
}

// Unique: the grouping runs on the host (nxrt/ep/unique.h, as on the cpu EP); the distinct
// slices, their first indices, the inverse indices and the counts are uploaded.
Expected<void> build_unique(PlanBuilder& b, const Node& node) {
  const std::optional<int64_t> axis = node.attributes.get_int("axis");
  const bool sorted = node.attributes.int_or("sorted", 1) != 0;
  b.add_step(make_step(node, "host", [=](StepContext& ctx) -> Expected<void> {
    auto x = ctx.input_on_host(0);
    if (!x) return std::unexpected(x.error());
    const Tensor host = x->view().is_contiguous() ? *x : copy_to_contiguous(x->view());
    auto groups = find_unique(host, axis, sorted);
    if (!groups) return forward_error(std::move(groups), ctx.where());
    const UniqueGroups& g = *groups;
    const auto unique = static_cast<int64_t>(g.first.size());
    Tensor y = Tensor::empty(host.dtype(), g.shape);
    const std::size_t slice = static_cast<std::size_t>(g.inner) * dtype_size(host.dtype());
    const auto* in = static_cast<const std::byte*>(host.view().data());
    auto* out = static_cast<std::byte*>(y.mut().data());
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t p = 0; p < unique; ++p)
        std::memcpy(out + static_cast<std::size_t>(o * unique + p) * slice,
                    in + static_cast<std::size_t>(o * g.count + g.first[static_cast<std::size_t>(p)]) * slice, slice);
    if (auto r = ctx.set_output_from_host(0, y); !r) return r;
    const std::vector<int64_t>* lists[] = {&g.first, &g.inverse, &g.counts};
    for (std::size_t i = 1; i <= 3; ++i)
      if (ctx.wants_output(i))
        if (auto r = ctx.set_output_from_host(i, Tensor::from_vector<int64_t>({static_cast<int64_t>(lists[i - 1]->size())}, *lists[i - 1]));
            !r)
          return r;
    return {};
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> select_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Compress", 9, check_compress, build_compress));
  ops.push_back(make_op("NonZero", 9, check_non_zero, build_non_zero));
  for (auto& op : make_op_versions("NonMaxSuppression", {10, 11}, check_nms, build_nms)) ops.push_back(std::move(op));
  ops.push_back(make_op("Unique", 11, check_unique, build_unique));
  return ops;
}

}  // namespace nxrt::cuda
