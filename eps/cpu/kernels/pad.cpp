// Pad of any dtype: constant, edge, reflect and wrap modes, negative pads crop; each output
// row maps back to one input row (or the constant) through a per-axis source index table.
#include <algorithm>
#include <string>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr int64_t kConstant = -1;  // a source index meaning "the pad value"

enum class PadMode { kConstant, kEdge, kReflect, kWrap };

std::optional<PadMode> parse_mode(const std::string& mode, int64_t opset) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "wrap" && opset >= 19) return PadMode::kWrap;
  return std::nullopt;
}

// The input index output position `o` of an axis of size `dim` reads (kConstant for the
// pad value), with `begin` elements padded (or, negative, cropped) before it.
int64_t source_index(int64_t o, int64_t begin, int64_t dim, PadMode mode) {
  const int64_t i = o - begin;
  if (i >= 0 && i < dim) return i;
  switch (mode) {
    case PadMode::kConstant: return kConstant;
    case PadMode::kEdge: return std::clamp<int64_t>(i, 0, dim - 1);
    case PadMode::kWrap: return ((i % dim) + dim) % dim;
    case PadMode::kReflect: {
      if (dim == 1) return 0;
      // Mirror without repeating the edge: period 2*(dim-1).
      const int64_t period = 2 * (dim - 1);
      const int64_t m = ((i % period) + period) % period;
      return m < dim ? m : period - m;
    }
  }
  return kConstant;
}

// The full-rank [begins..., ends...] pads from the given ones and the axes they apply to.
Expected<std::vector<int64_t>> full_pads(const std::vector<int64_t>& pads, const std::optional<std::vector<int64_t>>& axes,
                                         int64_t rank) {
  const auto n = axes ? static_cast<int64_t>(axes->size()) : rank;
  if (static_cast<int64_t>(pads.size()) != 2 * n)
    return fail(ErrorCode::kRuntime,
                fmt::format("Pad: pads has {} entries for {} axes of an input of rank {}", pads.size(), n, rank),
                "pads holds a begin and an end count per padded axis", "give 2 * (number of axes) pads");
  if (!axes) return pads;
  auto resolved = normalize_axes("Pad", *axes, rank, true);
  if (!resolved) return std::unexpected(std::move(resolved.error()));
  std::vector<int64_t> out(static_cast<std::size_t>(2 * rank), 0);
  for (std::size_t k = 0; k < resolved->size(); ++k) {
    const auto a = static_cast<std::size_t>((*resolved)[k]);
    out[a] = pads[k];
    out[a + static_cast<std::size_t>(rank)] = pads[k + resolved->size()];
  }
  return out;
}

// The types a Pad-1/2 value attribute converts to (the spec's float16, float and double, and
// the integers and bool).
using PadValueTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;
bool holds_pad_value(DType type) {
  return dispatch_dtype(PadValueTypes{}, type, [](auto) -> Expected<void> { return {}; }).has_value();
}

// A one-element tensor of `type` (holds_pad_value) holding `value` (the float `value` attribute
// of Pad-1/2).
Tensor scalar_of(DType type, double value) {
  Tensor t = Tensor::empty(type, {});
  (void)dispatch_dtype(PadValueTypes{}, type, [&](auto tag) -> Expected<void> {
                         using T = typename decltype(tag)::type;
                         *t.mut_as<T>() = static_cast<T>(static_cast<ComputeType<T>>(value));
                         return {};
                       });
  return t;
}

// Pad-1 names the pads `paddings`, Pad-2 `pads`; from Pad-11 on they are input 1.
const char* pads_attribute(int64_t opset) { return opset < 2 ? "paddings" : "pads"; }

KernelMatch check_pad(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Pad: input 0 (data) is missing; it is required");
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  const std::string mode = ctx.attrs().string_or("mode", "constant");
  NXRT_REQUIRE(parse_mode(mode, ctx.opset()).has_value(),
               "Pad: mode '{}' is not defined for Pad-{}; the modes are constant, reflect, edge{}", mode, ctx.opset(),
               ctx.opset() >= 19 ? ", wrap" : " (wrap from opset 19)");
  const auto rank = ctx.input_rank(0);
  if (ctx.opset() < 11) {
    const auto pads = ctx.attrs().get_ints(pads_attribute(ctx.opset()));
    NXRT_REQUIRE(pads.has_value(), "Pad: the {} attribute (ints) is missing; Pad-{} requires it",
                 pads_attribute(ctx.opset()), ctx.opset());
    NXRT_REQUIRE(!rank || static_cast<int64_t>(pads->size()) == 2 * *rank,
                 "Pad: {} has {} entries for an input of rank {}; it needs {}", pads_attribute(ctx.opset()),
                 pads->size(), rank.value_or(0), 2 * rank.value_or(0));
    const float value = ctx.attrs().float_or("value", 0.f);
    NXRT_REQUIRE(value == 0 || holds_pad_value(ctx.input_dtype(0)),
                 "Pad: value={} at opset {} for {} data; the cpu EP pads that type with zeros only (this form of Pad "
                 "is defined for float16, float and double)", value, ctx.opset(), dtype_name(ctx.input_dtype(0)));
    return KernelMatch::supported(copy_cost(ctx));
  }
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  if (ctx.has_input(2))
    NXRT_REQUIRE(ctx.input_dtype(2) == ctx.input_dtype(0) || ctx.input_dtype(2) == DType::kUndefined,
                 "Pad: constant_value has type {} but data has type {}; they must match",
                 dtype_name(ctx.input_dtype(2)), dtype_name(ctx.input_dtype(0)));
  if (ctx.has_input(3)) {
    NXRT_REQUIRE(ctx.opset() >= 18, "Pad: input 3 (axes) is defined from Pad-18 on; this node has opset {}",
                 ctx.opset());
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 3, {DType::kInt32, DType::kInt64}));
  }
  return KernelMatch::supported(copy_cost(ctx));
}

class PadKernel final : public Kernel {
 public:
  // attr_pads/attr_value: Pad-1/2's attributes; nullopt reads inputs 1-3.
  PadKernel(PadMode mode, std::optional<std::vector<int64_t>> attr_pads, double attr_value)
      : mode_(mode), attr_pads_(std::move(attr_pads)), attr_value_(attr_value) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    const auto rank = static_cast<int64_t>(in.size());
    std::optional<std::vector<int64_t>> axes;
    if (!attr_pads_ && ctx.has_input(3)) axes = ctx.input(3).to_int64_vector();
    auto pads = full_pads(attr_pads_ ? *attr_pads_ : ctx.input(1).to_int64_vector(), axes, rank);
    if (!pads) return std::unexpected(std::move(pads.error()));
    Shape out(in.size());
    std::vector<std::vector<int64_t>> source(in.size());
    for (std::size_t d = 0; d < in.size(); ++d) {
      const int64_t begin = (*pads)[d], end = (*pads)[d + in.size()];
      out[d] = in[d] + begin + end;
      if (out[d] < 0)
        return fail(ErrorCode::kRuntime,
                    fmt::format("Pad: pads {} and {} on axis {} of size {} leave a negative size", begin, end, d, in[d]),
                    "negative pads crop, at most the whole axis", "fix the pads");
      if (in[d] == 0 && out[d] > 0 && mode_ != PadMode::kConstant)
        return fail(ErrorCode::kRuntime, fmt::format("Pad: axis {} is empty and cannot be padded in this mode", d),
                    "edge, reflect and wrap copy input elements, and the axis has none", "use mode constant");
      for (int64_t o = 0; o < out[d]; ++o) source[d].push_back(source_index(o, begin, in[d], mode_));
    }
    auto y = ctx.output(0, x.dtype(), out);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t total = shape_numel(out);
    if (total == 0) return {};
    const Tensor fill = pad_value(ctx, x.dtype());
    const Shape strides = contiguous_strides(in);
    const int64_t inner = out.empty() ? 1 : out.back();
    const std::vector<int64_t> scalar_map{0};
    const std::vector<int64_t>& last = out.empty() ? scalar_map : source.back();
    visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
      const T* src = x.data_as<T>();
      T* dst = y->mut_as<T>();
      const T value = *fill.data_as<T>();
      const int64_t rows = total / inner;
      ctx.parallel().for_range(rows, std::max<int64_t>(1, kGrainElements / inner), [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          int64_t base = 0;
          bool constant_row = false;
          for (std::size_t d = out.size() - (out.empty() ? 0 : 1), rest = static_cast<std::size_t>(r); d-- > 0;) {
            const int64_t s = source[d][rest % static_cast<std::size_t>(out[d])];
            rest /= static_cast<std::size_t>(out[d]);
            constant_row = constant_row || s == kConstant;
            base += s * strides[d];
          }
          T* row = dst + r * inner;
          if (constant_row) {
            std::fill_n(row, inner, value);
            continue;
          }
          for (int64_t j = 0; j < inner; ++j) {
            const int64_t s = last[static_cast<std::size_t>(j)];
            row[j] = s == kConstant ? value : src[base + s];
          }
        }
      });
    });
    return {};
  }

 private:
  Tensor pad_value(const KernelContext& ctx, DType type) const {
    if (!attr_pads_ && ctx.has_input(2) && ctx.input(2).numel() > 0) return ctx.input(2);
    if (type == DType::kString) return Tensor::empty(type, {});
    return scalar_of(type, attr_pads_ ? attr_value_ : 0.0);
  }

  PadMode mode_;
  std::optional<std::vector<int64_t>> attr_pads_;
  double attr_value_;
};

KernelDef pad_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Pad", since}, until, check_pad, [](const NodeContext& ctx) {
                     const PadMode mode =
                         parse_mode(ctx.attrs().string_or("mode", "constant"), ctx.opset()).value_or(PadMode::kConstant);
                     auto pads = ctx.opset() < 11 ? ctx.attrs().get_ints(pads_attribute(ctx.opset())) : std::nullopt;
                     return make_kernel<PadKernel>(mode, std::move(pads), ctx.attrs().float_or("value", 0.0f));
                   }};
}

}  // namespace

std::vector<KernelDef> pad_kernels() {
  return {pad_def(1, 1), pad_def(2, 10), pad_def(11, 12), pad_def(13, 17), pad_def(18, 18), pad_def(19, 0)};
}

}  // namespace nxrt::cpu
