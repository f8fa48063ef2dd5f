// Element- and slice-wise indexing of any dtype: GatherElements, GatherND, ScatterElements
// (and its deprecated alias Scatter), ScatterND with the add/mul/max/min reductions.
#include <algorithm>
#include <string>

#include "common/elementwise.h"
#include "common/index_util.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"
#include "nxrt/ep/scatter_reduction.h"

namespace nxrt::cpu {
namespace {

// Out-of-range errors and shape errors share this shape.
std::unexpected<Error> shape_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, std::move(what), std::move(why), "fix the shapes of the node's inputs");
}

// Output 0 of `out_shape` where element i is data[offsets[i]].
Expected<void> gather_at(KernelContext& ctx, const Tensor& data, Shape out_shape, const std::vector<int64_t>& offsets) {
  auto y = ctx.output(0, data.dtype(), std::move(out_shape));
  if (!y) return std::unexpected(std::move(y.error()));
  visit_element_type(data.dtype(), [&]<class T>(std::type_identity<T>) {
    const T* src = data.data_as<T>();
    T* dst = y->mut_as<T>();
    ctx.parallel().for_range(static_cast<int64_t>(offsets.size()), kGrainElements, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) dst[i] = src[offsets[static_cast<std::size_t>(i)]];
    });
  });
  return {};
}

template <class T>
void combine(T& dst, T src, ScatterReduction reduction) {
  using C = ComputeType<T>;
  const C a = static_cast<C>(dst), b = static_cast<C>(src);
  switch (reduction) {
    case ScatterReduction::kNone: dst = src; return;
    case ScatterReduction::kAdd: dst = static_cast<T>(a + b); return;
    case ScatterReduction::kMul: dst = static_cast<T>(a * b); return;
    case ScatterReduction::kMax: dst = static_cast<T>(std::max(a, b)); return;
    case ScatterReduction::kMin: dst = static_cast<T>(std::min(a, b)); return;
  }
}

// Output 0 = a copy of input 0 (data) where update element i is combined into element
// offsets[i], in order (repeated offsets accumulate, or the last one wins without reduction).
Expected<void> scatter_at(KernelContext& ctx, const Tensor& updates, const std::vector<int64_t>& offsets,
                          ScatterReduction reduction) {
  const Tensor& data = ctx.input(0);
  auto y = ctx.output(0, data.dtype(), data.shape());
  if (!y) return std::unexpected(std::move(y.error()));
  copy_elements(data.dtype(), y->mut().data(), data.view().data(), data.numel());
  if (reduction == ScatterReduction::kNone) {
    visit_element_type(data.dtype(), [&]<class T>(std::type_identity<T>) {
      const T* src = updates.data_as<T>();
      T* dst = y->mut_as<T>();
      for (std::size_t i = 0; i < offsets.size(); ++i) dst[offsets[i]] = src[i];
    });
    return {};
  }
  return dispatch_dtype(AllNumericTypes{}, data.dtype(), [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    const T* src = updates.data_as<T>();
    T* dst = y->template mut_as<T>();
    for (std::size_t i = 0; i < offsets.size(); ++i) combine(dst[offsets[i]], src[i], reduction);
    return {};
  });
}

KernelMatch check_reduction(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_scatter_reduction(ctx));
  const std::string& op = ctx.node().op_type;
  const std::string name = ctx.attrs().string_or("reduction", "none");
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(name == "none" || t == DType::kUndefined || (t != DType::kString && t != DType::kBool),
               "{}: reduction '{}' on type {} is not supported by the cpu EP; it reduces numeric types", op, name,
               dtype_name(t));
  return KernelMatch::supported();
}

// Data and updates/indices of one node: tensors, int32/int64 indices, updates like data.
KernelMatch check_indexing_inputs(const NodeContext& ctx, bool has_updates) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.has_input(0), "{}: input 0 (data) is missing; it is required", op);
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  if (!has_updates) return KernelMatch::supported();
  NXRT_REQUIRE(ctx.has_input(2), "{}: input 2 (updates) is missing; it is required", op);
  NXRT_REQUIRE(ctx.input_dtype(2) == ctx.input_dtype(0) || ctx.input_dtype(2) == DType::kUndefined,
               "{}: updates has type {} but data has type {}; they must match", op, dtype_name(ctx.input_dtype(2)),
               dtype_name(ctx.input_dtype(0)));
  return KernelMatch::supported();
}

// GatherElements / ScatterElements: indices (and updates) have data's rank; every axis but
// `axis` of the indices fits in data's.
Expected<std::vector<int64_t>> element_offsets(std::string_view op, const Shape& data, const Shape& indices_shape,
                                               const Tensor& indices, int64_t axis_attr, bool allow_negative) {
  const auto rank = static_cast<int64_t>(data.size());
  auto axis = normalize_axes(op, std::span(&axis_attr, 1), rank, true);
  if (!axis) return std::unexpected(std::move(axis.error()));
  const int64_t a = axis->front();
  if (indices_shape.size() != data.size())
    return shape_error(fmt::format("{}: indices have shape {} but data has shape {}", op,
                                   shape_to_string(indices_shape), shape_to_string(data)),
                       "indices must have the rank of data");
  for (int64_t d = 0; d < rank; ++d)
    if (d != a && indices_shape[static_cast<std::size_t>(d)] > data[static_cast<std::size_t>(d)])
      return shape_error(fmt::format("{}: indices shape {} exceeds data shape {} on axis {}", op,
                                     shape_to_string(indices_shape), shape_to_string(data), d),
                         fmt::format("on every axis but axis {} the indices address data elements directly", a));
  auto values = resolve_indices(op, indices, a, data[static_cast<std::size_t>(a)], allow_negative);
  if (!values) return std::unexpected(std::move(values.error()));
  const Shape strides = contiguous_strides(data);
  std::vector<int64_t> offsets = strided_offsets(indices_shape, strides, a);
  for (std::size_t i = 0; i < offsets.size(); ++i) offsets[i] += (*values)[i] * strides[static_cast<std::size_t>(a)];
  return offsets;
}

KernelMatch check_elements(const NodeContext& ctx, bool scatter) {
  NXRT_REQUIRE_MATCH(check_indexing_inputs(ctx, scatter));
  NXRT_REQUIRE_MATCH(check_axis_in_range(ctx, ctx.attrs().int_or("axis", 0)));
  const auto data_rank = ctx.input_rank(0), indices_rank = ctx.input_rank(1);
  NXRT_REQUIRE(!data_rank || !indices_rank || *data_rank == *indices_rank,
               "{}: indices have rank {} but data has rank {}; they must be equal", ctx.node().op_type,
               indices_rank.value_or(0), data_rank.value_or(0));
  if (scatter) NXRT_REQUIRE_MATCH(check_reduction(ctx));
  return KernelMatch::supported(copy_cost(ctx));
}

KernelMatch check_gather_elements(const NodeContext& ctx) { return check_elements(ctx, false); }

class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(int64_t axis) : axis_(axis) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    auto offsets = element_offsets("GatherElements", data.shape(), indices.shape(), indices, axis_, true);
    if (!offsets) return std::unexpected(std::move(offsets.error()));
    return gather_at(ctx, data, indices.shape(), *offsets);
  }

 private:
  int64_t axis_;
};

KernelMatch check_scatter_elements(const NodeContext& ctx) { return check_elements(ctx, true); }

class ScatterElementsKernel final : public Kernel {
 public:
  ScatterElementsKernel(std::string op, int64_t axis, bool negative_indices, ScatterReduction reduction)
      : op_(std::move(op)), axis_(axis), negative_indices_(negative_indices), reduction_(reduction) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    if (updates.shape() != indices.shape())
      return shape_error(fmt::format("{}: updates have shape {} but indices have shape {}", op_,
                                     shape_to_string(updates.shape()), shape_to_string(indices.shape())),
                         "each index places the update at the same position");
    auto offsets = element_offsets(op_, data.shape(), indices.shape(), indices, axis_, negative_indices_);
    if (!offsets) return std::unexpected(std::move(offsets.error()));
    return scatter_at(ctx, updates, *offsets, reduction_);
  }

 private:
  std::string op_;
  int64_t axis_;
  bool negative_indices_;
  ScatterReduction reduction_;
};

KernelDef scatter_elements_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_scatter_elements, [](const NodeContext& ctx) {
                     return make_kernel<ScatterElementsKernel>(ctx.node().op_type, ctx.attrs().int_or("axis", 0),
                                                               ctx.opset() >= 11, scatter_reduction_of(ctx.node()));
                   }};
}

// GatherND / ScatterND: indices [..., k] address slices data[i0..ik-1, ...] after
// `batch_dims` leading axes shared by data and indices. Returns the element offset of each
// slice's first element, in the order of the index tuples, and the slice size.
struct NdPlan {
  std::vector<int64_t> slice_offsets;
  int64_t slice_size = 0;
  Shape out_shape;  // indices.shape[:-1] + data.shape[batch_dims + k:]
};

Expected<NdPlan> plan_nd(std::string_view op, const Shape& data, const Tensor& indices, int64_t batch_dims) {
  const Shape& ishape = indices.shape();
  const auto r = static_cast<int64_t>(data.size()), q = static_cast<int64_t>(ishape.size());
  if (q < 1 || r < 1)
    return shape_error(fmt::format("{}: data has shape {} and indices {}", op, shape_to_string(data),
                                   shape_to_string(ishape)),
                       "data and indices must have rank 1 or more");
  if (batch_dims >= std::min(q, r))
    return shape_error(fmt::format("{}: batch_dims={} with data of rank {} and indices of rank {}", op, batch_dims,
                                   r, q),
                       "batch_dims must be less than both ranks");
  const int64_t k = ishape.back();
  if (k < 1 || k > r - batch_dims)
    return shape_error(fmt::format("{}: the last indices dim is {} with data of shape {} and batch_dims={}", op, k,
                                   shape_to_string(data), batch_dims),
                       fmt::format("each index tuple addresses 1 to {} axes of data", r - batch_dims));
  for (int64_t d = 0; d < batch_dims; ++d)
    if (data[static_cast<std::size_t>(d)] != ishape[static_cast<std::size_t>(d)])
      return shape_error(fmt::format("{}: batch axis {} has size {} in data but {} in indices", op, d,
                                     data[static_cast<std::size_t>(d)], ishape[static_cast<std::size_t>(d)]),
                         "the batch_dims leading axes of data and indices must be equal");
  const auto b = static_cast<std::size_t>(batch_dims), ku = static_cast<std::size_t>(k);
  NdPlan plan;
  plan.out_shape.assign(ishape.begin(), ishape.end() - 1);
  plan.out_shape.insert(plan.out_shape.end(), data.begin() + static_cast<std::ptrdiff_t>(b + ku), data.end());
  plan.slice_size = dims_product(data, b + ku, data.size());
  const int64_t batch_stride = dims_product(data, b, data.size());
  const int64_t tuples_per_batch = dims_product(ishape, b, ishape.size() - 1);
  const Shape strides = contiguous_strides(data);
  const std::vector<int64_t> values = indices.to_int64_vector();
  const int64_t tuples = dims_product(ishape, 0, ishape.size() - 1);
  plan.slice_offsets.resize(static_cast<std::size_t>(tuples));
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = (t / std::max<int64_t>(tuples_per_batch, 1)) * batch_stride;
    for (std::size_t j = 0; j < ku; ++j) {
      const auto position = static_cast<int64_t>(static_cast<std::size_t>(t) * ku + j);
      auto i = resolve_index(op, values[static_cast<std::size_t>(position)], position,
                             static_cast<int64_t>(b + j), data[b + j], true);
      if (!i) return std::unexpected(std::move(i.error()));
      offset += *i * strides[b + j];
    }
    plan.slice_offsets[static_cast<std::size_t>(t)] = offset;
  }
  return plan;
}

// Per-element offsets of every slice of the plan, slice by slice.
std::vector<int64_t> expand_slices(const NdPlan& plan) {
  std::vector<int64_t> offsets;
  offsets.reserve(plan.slice_offsets.size() * static_cast<std::size_t>(plan.slice_size));
  for (int64_t base : plan.slice_offsets)
    for (int64_t e = 0; e < plan.slice_size; ++e) offsets.push_back(base + e);
  return offsets;
}

KernelMatch check_gather_nd(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_indexing_inputs(ctx, false));
  NXRT_REQUIRE(ctx.opset() >= 12 || !ctx.attrs().has("batch_dims"),
               "GatherND: batch_dims is an attribute of GatherND-12 and later; this node has opset {}", ctx.opset());
  const int64_t batch_dims = ctx.attrs().int_or("batch_dims", 0);
  NXRT_REQUIRE(batch_dims >= 0, "GatherND: batch_dims={} is negative; it must be 0 or more", batch_dims);
  const auto data_rank = ctx.input_rank(0), indices_rank = ctx.input_rank(1);
  NXRT_REQUIRE(!data_rank || !indices_rank || batch_dims < std::min(*data_rank, *indices_rank),
               "GatherND: batch_dims={} must be less than the ranks of data ({}) and indices ({})", batch_dims,
               data_rank.value_or(0), indices_rank.value_or(0));
  return KernelMatch::supported(copy_cost(ctx));
}

class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(int64_t batch_dims) : batch_dims_(batch_dims) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    auto plan = plan_nd("GatherND", data.shape(), ctx.input(1), batch_dims_);
    if (!plan) return std::unexpected(std::move(plan.error()));
    return gather_at(ctx, data, std::move(plan->out_shape), expand_slices(*plan));
  }

 private:
  int64_t batch_dims_;
};

KernelMatch check_scatter_nd(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_indexing_inputs(ctx, true));
  NXRT_REQUIRE_MATCH(check_reduction(ctx));
  return KernelMatch::supported(copy_cost(ctx));
}

class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(ScatterReduction reduction) : reduction_(reduction) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& updates = ctx.input(2);
    auto plan = plan_nd("ScatterND", ctx.input(0).shape(), ctx.input(1), 0);
    if (!plan) return std::unexpected(std::move(plan.error()));
    if (updates.shape() != plan->out_shape)
      return shape_error(fmt::format("ScatterND: updates have shape {}, expected {}", shape_to_string(updates.shape()),
                                     shape_to_string(plan->out_shape)),
                         "updates are shaped indices.shape[:-1] + data.shape[k:] for index tuples of length k");
    return scatter_at(ctx, updates, expand_slices(*plan), reduction_);
  }

 private:
  ScatterReduction reduction_;
};

}  // namespace

std::vector<KernelDef> scatter_gather_kernels() {
  auto gather_elements = [](const NodeContext& ctx) {
    return make_kernel<GatherElementsKernel>(ctx.attrs().int_or("axis", 0));
  };
  auto gather_nd = [](const NodeContext& ctx) {
    return make_kernel<GatherNDKernel>(ctx.attrs().int_or("batch_dims", 0));
  };
  auto scatter_nd = [](const NodeContext& ctx) { return make_kernel<ScatterNDKernel>(scatter_reduction_of(ctx.node())); };
  return {
      {{"", "GatherElements", 11}, 12, check_gather_elements, gather_elements},
      {{"", "GatherElements", 13}, 0, check_gather_elements, gather_elements},
      {{"", "GatherND", 11}, 11, check_gather_nd, gather_nd},
      {{"", "GatherND", 12}, 12, check_gather_nd, gather_nd},
      {{"", "GatherND", 13}, 0, check_gather_nd, gather_nd},
      scatter_elements_def("Scatter", 9, 10),
      scatter_elements_def("Scatter", 11, 0),
      scatter_elements_def("ScatterElements", 11, 12),
      scatter_elements_def("ScatterElements", 13, 15),
      scatter_elements_def("ScatterElements", 16, 17),
      scatter_elements_def("ScatterElements", 18, 0),
      {{"", "ScatterND", 11}, 12, check_scatter_nd, scatter_nd},
      {{"", "ScatterND", 13}, 15, check_scatter_nd, scatter_nd},
      {{"", "ScatterND", 16}, 17, check_scatter_nd, scatter_nd},
      {{"", "ScatterND", 18}, 0, check_scatter_nd, scatter_nd},
  };
}

}  // namespace nxrt::cpu
