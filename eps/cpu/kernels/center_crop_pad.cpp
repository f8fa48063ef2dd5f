// CenterCropPad-18: crops each listed axis around its centre, or pads it with zeros on both
// sides (the extra element going to the end), to the sizes of input `shape`.
#include <cstring>
#include <vector>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/center_crop_pad.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_center_crop_pad(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_center_crop_pad_node(ctx));
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(t != DType::kUndefined && t != DType::kString && dtype_size(t) > 0,
               "CenterCropPad: input 0 has type {}; the cpu EP supports every fixed-size type", dtype_name(t));
  return KernelMatch::supported(copy_cost(ctx));
}

class CenterCropPadKernel final : public Kernel {
 public:
  explicit CenterCropPadKernel(std::vector<int64_t> axes) : axes_(std::move(axes)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    auto plan = plan_center_crop_pad(in, axes_, ctx.input(1).to_int64_vector());
    if (!plan) return std::unexpected(std::move(plan.error()));
    const Shape& out_shape = plan->out;
    auto y = ctx.output(0, x.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const std::size_t elem = dtype_size(x.dtype()), rank = in.size();
    const auto* src = x.data_as<std::byte>();
    auto* dst = y->mut_as<std::byte>();
    std::memset(dst, 0, static_cast<std::size_t>(y->numel()) * elem);
    if (y->numel() == 0 || x.numel() == 0) return {};
    // Output index o maps to input index o - begin (crop: begin < 0, pad: begin > 0).
    std::vector<int64_t> in_stride(rank, 1);
    for (std::size_t d = rank; d-- > 1;) in_stride[d - 1] = in_stride[d] * in[d];
    std::vector<int64_t> o(rank, 0);
    for (int64_t i = 0; i < y->numel(); ++i) {
      int64_t offset = 0;
      bool inside = true;
      for (std::size_t d = 0; d < rank && inside; ++d) {
        const int64_t at = o[d] - plan->begins[d];
        inside = at >= 0 && at < in[d];
        offset += at * in_stride[d];
      }
      if (inside) std::memcpy(dst + static_cast<std::size_t>(i) * elem, src + static_cast<std::size_t>(offset) * elem, elem);
      for (std::size_t d = rank; d-- > 0;) {
        if (++o[d] < out_shape[d]) break;
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
