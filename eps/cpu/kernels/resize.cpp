// Resize (opsets 10-19) and Upsample (1, 7, 9): nearest, n-linear and n-cubic resampling over
// every resized axis, with per-axis tap tables (lib's nxrt/ep/resize.h) built once per call.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/resize.h"

namespace nxrt::cpu {
namespace {

using NearestTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

// Checks Resize (all versions) and Upsample (all versions): lib's checks of the attributes and
// operands (nxrt/ep/resize.h), then the element types the cpu EP takes.
KernelMatch check_resize(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_type(0) == nullptr || ctx.input_type(0)->kind == ValueType::Kind::kTensor,
               "{}: input 0 is not a tensor; the cpu EP supports tensors only", op);
  NXRT_REQUIRE_MATCH(check_resize_node(ctx));
  const ResizeConfig c = make_resize_config(ctx.node());
  if (c.mode == ResizeMode::kNearest) NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, NearestTypes{}));
  else NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, AllNumericTypes{}));
  if (c.inputs.roi >= 0 && ctx.has_input(static_cast<std::size_t>(c.inputs.roi))) {
    const DType t = ctx.input_dtype(static_cast<std::size_t>(c.inputs.roi));
    NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat64 || t == DType::kFloat16,
                 "{}: roi has type {}; the cpu EP supports float, double, float16", op, dtype_name(t));
  }
  // Flops: one multiply-add per tap, taps multiplying over the axes whose length changes.
  double flops = 0;
  const auto xs = ctx.input_static_shape(0);
  const auto ys = ctx.output_type(0) ? ctx.output_type(0)->static_shape() : std::nullopt;
  if (c.mode != ResizeMode::kNearest && xs && ys && xs->size() == ys->size()) {
    flops = 2;
    for (std::size_t d = 0; d < xs->size(); ++d)
      if ((*xs)[d] != (*ys)[d]) flops *= c.mode == ResizeMode::kLinear ? 2 : 4;
  }
  return KernelMatch::supported(elementwise_cost(ctx, flops));
}

// The values of roi (float, double or float16) as doubles.
std::vector<double> to_doubles(const Tensor& t) {
  std::vector<double> v(static_cast<std::size_t>(t.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t.dtype() == DType::kFloat64) v[i] = t.data_as<double>()[i];
    else if (t.dtype() == DType::kFloat16) v[i] = static_cast<float>(t.data_as<Half>()[i]);
    else v[i] = t.data_as<float>()[i];
  }
  return v;
}

// Reads the operands a resize gives at run time and plans it (nxrt/ep/resize.h).
Expected<ResizePlan> plan_from_inputs(const ResizeConfig& c, const KernelContext& ctx, const std::string& op) {
  const auto given = [&](int i) {
    return i >= 0 && ctx.has_input(static_cast<std::size_t>(i)) && ctx.input(static_cast<std::size_t>(i)).numel() > 0;
  };
  ResizeOperands operands;
  if (given(c.inputs.scales)) {
    const Tensor& s = ctx.input(static_cast<std::size_t>(c.inputs.scales));
    operands.scales.assign(s.data_as<float>(), s.data_as<float>() + s.numel());
  }
  if (given(c.inputs.sizes)) operands.sizes = ctx.input(static_cast<std::size_t>(c.inputs.sizes)).to_int64_vector();
  if (c.transform == CoordinateTransform::kTfCropAndResize && given(c.inputs.roi))
    operands.roi = to_doubles(ctx.input(static_cast<std::size_t>(c.inputs.roi)));
  return plan_resize(c, ctx.input(0).shape(), operands, op);
}

// Converts an interpolated value to the element type: integers round to nearest and saturate.
template <class T>
T to_element(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    v = std::nearbyint(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<ComputeType<T>>(v));
  }
}

// The source rows (offset and weight) one output row blends, from every axis but the last.
struct RowTaps {
  std::vector<std::pair<int64_t, double>> taps, next;
  bool outside = false;

  void build(int64_t row, const std::vector<ResizeAxis>& axes, const Shape& strides) {
    taps.assign(1, {0, 1.0});
    outside = false;
    int64_t rem = row;
    for (std::size_t d = axes.size() - 1; d-- > 0;) {
      const ResizeAxis& p = axes[d];
      const int64_t o = rem % p.out;
      rem /= p.out;
      if (!p.outside.empty() && p.outside[static_cast<std::size_t>(o)]) outside = true;
      const auto at = static_cast<std::size_t>(o * p.taps);
      if (p.taps == 1) {
        for (auto& t : taps) t.first += p.index[at] * strides[d];
        continue;
      }
      next.clear();
      for (const auto& t : taps)
        for (std::size_t k = 0; k < static_cast<std::size_t>(p.taps); ++k)
          if (p.weight[at + k] != 0) next.emplace_back(t.first + p.index[at + k] * strides[d], t.second * p.weight[at + k]);
      taps.swap(next);
    }
  }
};

int64_t row_grain(int64_t row_length) { return std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row_length, 1)); }

// Every axis takes one source index per output: a gather, exact for every element type.
template <class T>
void gather_rows(const Parallel& par, const Tensor& x, T* dst, const ResizePlan& plan, T extrapolation) {
  const T* src = x.data_as<T>();
  const Shape strides = contiguous_strides(x.shape());
  const ResizeAxis& last = plan.axes.back();
  const int64_t rows = shape_numel(plan.out_shape) / last.out;
  par.for_range(rows, row_grain(last.out), [&](int64_t begin, int64_t end) {
    RowTaps row;
    for (int64_t r = begin; r < end; ++r) {
      row.build(r, plan.axes, strides);
      T* out = dst + r * last.out;
      if (row.outside) {
        std::fill(out, out + last.out, extrapolation);
        continue;
      }
      const T* base = src + row.taps[0].first;
      for (int64_t i = 0; i < last.out; ++i) out[i] = base[last.index[static_cast<std::size_t>(i)]];
      if (!last.outside.empty())
        for (int64_t i = 0; i < last.out; ++i)
          if (last.outside[static_cast<std::size_t>(i)]) out[i] = extrapolation;
    }
  });
}

// acc[i] += scale * sum over the K taps of output i along the last axis.
template <int K, class T, class A>
void blend_row(const T* base, const int64_t* idx, const A* w, int64_t n, int64_t taps, A scale, A* acc) {
  const int64_t k_count = K > 0 ? K : taps;
  for (int64_t i = 0; i < n; ++i) {
    A s = 0;
    for (int64_t k = 0; k < k_count; ++k)
      s += w[i * k_count + k] * static_cast<A>(static_cast<ComputeType<T>>(base[idx[i * k_count + k]]));
    acc[i] += scale * s;
  }
}

// Linear or cubic taps on some axis: weighted sums accumulated in A, one output row at a time.
template <class T, class A>
void blend_rows(const Parallel& par, const Tensor& x, T* dst, const ResizePlan& plan, T extrapolation) {
  const T* src = x.data_as<T>();
  const Shape strides = contiguous_strides(x.shape());
  const ResizeAxis& last = plan.axes.back();
  const std::vector<A> weights(last.weight.begin(), last.weight.end());
  const int64_t rows = shape_numel(plan.out_shape) / last.out;
  par.for_range(rows, row_grain(last.out * last.taps), [&](int64_t begin, int64_t end) {
    RowTaps row;
    std::vector<A> acc(static_cast<std::size_t>(last.out));
    for (int64_t r = begin; r < end; ++r) {
      row.build(r, plan.axes, strides);
      T* out = dst + r * last.out;
      if (row.outside) {
        std::fill(out, out + last.out, extrapolation);
        continue;
      }
      std::fill(acc.begin(), acc.end(), A(0));
      for (const auto& [offset, weight] : row.taps) {
        const T* base = src + offset;
        const A scale = static_cast<A>(weight);
        switch (last.taps) {
          case 1: blend_row<1>(base, last.index.data(), weights.data(), last.out, 1, scale, acc.data()); break;
          case 2: blend_row<2>(base, last.index.data(), weights.data(), last.out, 2, scale, acc.data()); break;
          case 4: blend_row<4>(base, last.index.data(), weights.data(), last.out, 4, scale, acc.data()); break;
          default: blend_row<0>(base, last.index.data(), weights.data(), last.out, last.taps, scale, acc.data());
        }
      }
      for (int64_t i = 0; i < last.out; ++i)
        out[i] = !last.outside.empty() && last.outside[static_cast<std::size_t>(i)]
                     ? extrapolation
                     : to_element<T>(static_cast<double>(acc[static_cast<std::size_t>(i)]));
    }
  });
}

class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(ResizeConfig config, std::string op) : c_(std::move(config)), op_(std::move(op)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_from_inputs(c_, ctx, op_);
    if (!plan) return std::unexpected(std::move(plan.error()));
    const Tensor& x = ctx.input(0);
    const bool gather = std::ranges::all_of(plan->axes, [](const ResizeAxis& p) { return p.taps == 1; });
    if (std::ranges::all_of(plan->axes, [](const ResizeAxis& p) { return p.identity; })) {
      ctx.set_output(0, x);
      return {};
    }
    auto y = ctx.output(0, x.dtype(), plan->out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    if (y->numel() == 0) return {};
    if (x.shape().empty()) {
      return dispatch_dtype(NearestTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
        using T = typename decltype(tag)::type;
        y->mut_as<T>()[0] = x.data_as<T>()[0];
        return {};
      });
    }
    if (gather) {
      return dispatch_dtype(NearestTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
        using T = typename decltype(tag)::type;
        gather_rows<T>(ctx.parallel(), x, y->mut_as<T>(), *plan, to_element<T>(c_.extrapolation));
        return {};
      });
    }
    return dispatch_dtype(AllNumericTypes{}, x.dtype(), [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
      blend_rows<T, A>(ctx.parallel(), x, y->mut_as<T>(), *plan, to_element<T>(c_.extrapolation));
      return {};
    });
  }
  std::string_view variant() const override { return "separable-taps"; }

 private:
  ResizeConfig c_;
  std::string op_;
};

KernelDef resize_def(const char* op, int64_t since, int64_t until) {
  return KernelDef{{"", op, since}, until, check_resize, [](const NodeContext& ctx) {
                     return make_kernel<ResizeKernel>(make_resize_config(ctx.node()), ctx.node().op_type);
                   }};
}

}  // namespace

std::vector<KernelDef> resize_kernels() {
  return {
      resize_def("Upsample", 1, 6),
      resize_def("Upsample", 7, 8),
      resize_def("Upsample", 9, 9),
      resize_def("Resize", 10, 10),
      resize_def("Resize", 11, 12),
      resize_def("Resize", 13, 17),
      resize_def("Resize", 18, 23),
  };
}

}  // namespace nxrt::cpu
