// CenterCropPad-18: crops each listed axis around its centre, or pads it with zeros on both
// sides (the extra element going to the end), to the sizes of input `shape`.
#include <cstring>
#include <vector>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The output shape: `sizes` on `axes` (all axes when none are given), input dims elsewhere.
Expected<Shape> cropped_shape(const Shape& in, const std::vector<int64_t>& axes, const std::vector<int64_t>& sizes) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> all(in.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int64_t>(i);
  auto normalized = normalize_axes("CenterCropPad", axes.empty() ? all : axes, rank, true);
  if (!normalized) return std::unexpected(std::move(normalized.error()));
  if (normalized->size() != sizes.size())
    return fail(ErrorCode::kRuntime,
                fmt::format("CenterCropPad: shape has {} values for {} axes", sizes.size(), normalized->size()),
                "input shape gives one size per axis (per dim of the input when axes is not set)",
                "fix the node's shape input or its axes attribute");
  Shape out = in;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 0)
      return fail(ErrorCode::kRuntime, fmt::format("CenterCropPad: size {} for axis {} is negative", sizes[i],
                                                   (*normalized)[i]));
    out[static_cast<std::size_t>((*normalized)[i])] = sizes[i];
  }
  return out;
}

KernelMatch check_center_crop_pad(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "CenterCropPad: expected 2 inputs (input_data, shape)");
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(t != DType::kUndefined && t != DType::kString && dtype_size(t) > 0,
               "CenterCropPad: input 0 has type {}; the cpu EP supports every fixed-size type", dtype_name(t));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  const auto sizes = constant_ints(ctx, 1);
  const auto in = ctx.input_static_shape(0);
  if (sizes && in)
    if (auto out = cropped_shape(*in, ctx.attrs().ints_or("axes", {}), *sizes); !out) return declined_by(out.error());
  return KernelMatch::supported(copy_cost(ctx));
}

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto out_shape = cropped_shape(in, axes_, ctx.input(1).to_int64_vector());
    if (!out_shape) return std::unexpected(std::move(out_shape.error()));
    auto y = ctx.output(0, x.dtype(), *out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const std::size_t elem = dtype_size(x.dtype()), rank = in.size();
    const auto* src = x.data_as<std::byte>();
    auto* dst = y->mut_as<std::byte>();
    std::memset(dst, 0, static_cast<std::size_t>(y->numel()) * elem);
    if (y->numel() == 0 || x.numel() == 0) return {};
    // Output index o maps to input index o + shift (crop: shift > 0, pad: shift < 0).
    std::vector<int64_t> shift(rank), in_stride(rank, 1);
    for (std::size_t d = 0; d < rank; ++d) {
      const int64_t s = in[d], t = (*out_shape)[d];
      shift[d] = s >= t ? (s - t) / 2 : -((t - s) / 2);
    }
    for (std::size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * in[d];
    std::vector<int64_t> o(rank, 0);
    for (int64_t i = 0; i < y->numel(); ++i) {
      int64_t offset = 0;
      bool inside = true;
      for (std::size_t d = 0; d < rank && inside; ++d) {
        const int64_t at = o[d] + shift[d];
        inside = at >= 0 && at < in[d];
        offset += at * in_stride[d];
      }
      if (inside) std::memcpy(dst + static_cast<std::size_t>(i) * elem, src + static_cast<std::size_t>(offset) * elem, elem);
      for (std::size_t d = rank; d-- > 0;) {
        if (++o[d] < (*out_shape)[d]) break;
        o[d] = 0;
      }
    }
    return {};
  }

 private:
  std::vector<int64_t> axes_;
};

}  // namespace

std::vector<KernelDef> center_crop_pad_kernels() {
  return {KernelDef{{"", "CenterCropPad", 18}, 0, check_center_crop_pad, [](const NodeContext& ctx) {
                      return make_kernel<CenterCropPadKernel>(ctx.attrs().ints_or("axes", {}));
                    }}};
}

}  // namespace nxrt::cpu
