// Tensors generated from a few numbers: Range (an arithmetic sequence), OneHot (indices
// expanded along a new axis) and EyeLike (an identity-like matrix shaped like its input).
#include <algorithm>
#include <cmath>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using RangeTypes = TypeList<float, double, int16_t, int32_t, int64_t>;
using EyeLikeTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

// Range: start, limit and delta are scalars of one type.
KernelMatch check_range(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE(ctx.input_count() == 3, "Range: expected 3 inputs (start, limit, delta), got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, RangeTypes{}));
  for (std::size_t i = 1; i < 3; ++i) {
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "Range: input {} has type {}, expected {} like start", i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  for (std::size_t i = 0; i < 3; ++i) {
    const auto n = static_numel(ctx.input_type(i));
    NXRT_REQUIRE(!n || *n == 1, "Range: input {} has {} elements; start, limit and delta must be scalars", i, *n);
  }
  return KernelMatch::supported();
}

class RangeKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(RangeTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  static Expected<void> run(KernelContext& ctx) {
    const T start = ctx.input(0).data_as<T>()[0];
    const T limit = ctx.input(1).data_as<T>()[0];
    const T delta = ctx.input(2).data_as<T>()[0];
    if (delta == T(0))
      return fail(ErrorCode::kRuntime, fmt::format("Range: delta is 0 (start {}, limit {})", start, limit),
                  "the sequence would never reach its limit", "give a non-zero delta");
    int64_t count = 0;
    if constexpr (std::is_floating_point_v<T>) {
      const double n =
          std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
      if (!std::isfinite(n) || n > 9.2e18)
        return fail(ErrorCode::kRuntime,
                    fmt::format("Range: start {}, limit {} and delta {} give {} elements", start, limit, delta, n),
                    "the element count must be finite", "check the range inputs");
      count = std::max<int64_t>(static_cast<int64_t>(n), 0);
    } else {
      const int64_t diff = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
      const int64_t step = delta;
      // Ceiling division: the quotient rounds toward zero, so add one when a remainder
      // points the same way as the step.
      int64_t n = diff / step;
      if (diff % step != 0 && ((diff > 0) == (step > 0))) ++n;
      count = std::max<int64_t>(n, 0);
    }
    auto y = ctx.output(0, dtype_of<T>(), {count});
    if (!y) return std::unexpected(std::move(y.error()));
    T* out = y->template mut_as<T>();
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
    return {};
  }
};

// OneHot: indices and depth of any numeric type (cast to int64), values [off, on] of any
// type; OneHot-11 also counts negative indices from the back of the depth.
KernelMatch check_one_hot(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE(ctx.input_count() == 3 && ctx.has_input(2), "OneHot: expected 3 inputs (indices, depth, values), got {}",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, EyeLikeTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, EyeLikeTypes{}));
  NXRT_REQUIRE(ctx.input_dtype(2) != DType::kUndefined && dtype_size(ctx.input_dtype(2)) > 0,
               "OneHot: the type of values is unknown; run shape inference or give the model value_info for it");
  const auto depth_n = static_numel(ctx.input_type(1));
  NXRT_REQUIRE(!depth_n || *depth_n == 1, "OneHot: depth has {} elements; it must be a scalar", *depth_n);
  const auto values_n = static_numel(ctx.input_type(2));
  NXRT_REQUIRE(!values_n || *values_n == 2, "OneHot: values has {} elements; it must be [off_value, on_value]",
               *values_n);
  const int64_t axis = ctx.attrs().int_or("axis", -1);
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(axis >= -*rank - 1 && axis <= *rank, "OneHot: axis {} is out of range [{}, {}] for indices of rank {}",
                 axis, -*rank - 1, *rank, *rank);
  }
  return KernelMatch::supported();
}

class OneHotKernel final : public Kernel {
 public:
  OneHotKernel(int64_t axis, bool negative_indices) : axis_(axis), negative_indices_(negative_indices) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& values = ctx.input(2);
    const auto depth_values = numeric_as_int64(ctx.input(1));
    if (depth_values.size() != 1 || values.numel() != 2)
      return fail(ErrorCode::kRuntime,
                  fmt::format("OneHot: depth has {} elements and values {}", depth_values.size(), values.numel()),
                  "depth must be a scalar and values must hold [off_value, on_value]", "fix the node's inputs");
    const int64_t depth = depth_values[0];
    if (depth < 1)
      return fail(ErrorCode::kRuntime, fmt::format("OneHot: depth is {}", depth),
                  "the one-hot axis needs at least one class", "give a depth of 1 or more");
    const int64_t rank = indices.shape().size();
    if (axis_ < -rank - 1 || axis_ > rank)
      return fail(ErrorCode::kRuntime,
                  fmt::format("OneHot: axis {} is out of range [{}, {}] for indices of shape {}", axis_, -rank - 1,
                              rank, shape_to_string(indices.shape())),
                  "the new axis goes between existing ones or at either end", "fix the axis attribute");
    const auto axis = static_cast<std::size_t>(axis_ < 0 ? axis_ + rank + 1 : axis_);
    Shape out_shape = indices.shape();
    out_shape.insert(out_shape.begin() + static_cast<std::ptrdiff_t>(axis), depth);
    auto y = ctx.output(0, values.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t inner = dims_product(indices.shape(), axis, indices.shape().size());
    const std::vector<int64_t> idx = numeric_as_int64(indices);
    visit_element_type(values.dtype(), [&]<class T>(std::type_identity<T>) {
      const T off = values.data_as<T>()[0];
      const T on = values.data_as<T>()[1];
      T* out = y->mut_as<T>();
      std::fill_n(out, y->numel(), off);
      for (std::size_t i = 0; i < idx.size(); ++i) {
        int64_t d = idx[i];
        if (d < 0 && negative_indices_) d += depth;
        if (d < 0 || d >= depth) continue;  // out-of-range indices give a row of off_value
        const int64_t outer = static_cast<int64_t>(i) / inner, j = static_cast<int64_t>(i) % inner;
        out[(outer * depth + d) * inner + j] = on;
      }
    });
    return {};
  }

 private:
  int64_t axis_;
  bool negative_indices_;
};

KernelDef one_hot_def(int64_t since, int64_t until) {
  return KernelDef{{"", "OneHot", since}, until, check_one_hot, [](const NodeContext& ctx) {
                     return make_kernel<OneHotKernel>(ctx.attrs().int_or("axis", -1), ctx.opset() >= 11);
                   }};
}

// EyeLike: a 2-D input; the output type is the dtype attribute or else the input's.
KernelMatch check_eye_like(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, EyeLikeTypes{}));
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank == 2, "EyeLike: input has rank {}; it must be 2-D", *rank);
  }
  if (const auto code = ctx.attrs().get_int("dtype")) {
    const auto t = dtype_from_onnx(static_cast<int32_t>(*code));
    const std::initializer_list<DType> allowed = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kInt8,
                                                  DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,
                                                  DType::kUInt32,  DType::kInt64,   DType::kUInt64,  DType::kBool};
    NXRT_REQUIRE(t && std::find(allowed.begin(), allowed.end(), *t) != allowed.end(),
                 "EyeLike: dtype {} ({}) is not supported by the cpu EP; use one of {}", *code,
                 t ? dtype_name(*t) : "unknown", dtype_list(allowed));
  }
  return KernelMatch::supported();
}

class EyeLikeKernel final : public Kernel {
 public:
  EyeLikeKernel(std::optional<DType> dtype, int64_t k) : dtype_(dtype), k_(k) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Shape& shape = ctx.input(0).shape();
    if (shape.size() != 2)
      return fail(ErrorCode::kRuntime, fmt::format("EyeLike: input has shape {}", shape_to_string(shape)),
                  "EyeLike takes a 2-D input", "give a matrix");
    const DType dtype = dtype_.value_or(ctx.input(0).dtype());
    auto y = ctx.output(0, dtype, shape);
    if (!y) return std::unexpected(std::move(y.error()));
    return dispatch_dtype(EyeLikeTypes{}, dtype, [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      T* out = y->template mut_as<T>();
      const int64_t rows = shape[0], cols = shape[1];
      std::fill_n(out, rows * cols, T(0));
      // Row i holds its one at column i + k, when that column exists.
      for (int64_t i = std::max<int64_t>(0, -k_); i < rows && i + k_ < cols; ++i) out[i * cols + i + k_] = T(1);
      return {};
    });
  }

 private:
  std::optional<DType> dtype_;
  int64_t k_;
};

}  // namespace

std::vector<KernelDef> generators_kernels() {
  return {
      KernelDef{{"", "Range", 11}, 0, check_range, [](const NodeContext&) { return make_kernel<RangeKernel>(); }},
      one_hot_def(9, 10),
      one_hot_def(11, 0),
      KernelDef{{"", "EyeLike", 9},
                0,
                check_eye_like,
                [](const NodeContext& ctx) {
                  std::optional<DType> dtype;
                  if (const auto code = ctx.attrs().get_int("dtype"))
                    dtype = dtype_from_onnx(static_cast<int32_t>(*code));
                  return make_kernel<EyeLikeKernel>(dtype, ctx.attrs().int_or("k", 0));
                }},
  };
}

}  // namespace nxrt::cpu
