// DeformConv-19/22 in float, 2-D (nxrt/ep/deform_conv.h): per image and group, chunks of output
// pixels are unrolled into columns of bilinear samples (one row per input channel and kernel
// tap, scaled by the mask), which the packed GEMM multiplies by the group's weights.
#include <algorithm>
#include <cmath>
#include <vector>

#include "common/gemm.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/deform_conv.h"

namespace nxrt::cpu {
namespace {

// Output pixels unrolled at a time: 256 columns of C / group * kH * kW samples.
constexpr int64_t kPixelChunk = 256;

KernelMatch check_deform_conv(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat32, "DeformConv: X is {}; the cpu EP runs DeformConv in float",
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_deform_conv_node(ctx));
  const auto x = ctx.input_static_shape(0), w = ctx.input_static_shape(1), offset = ctx.input_static_shape(2);
  if (!x || !w || !offset) return KernelMatch::supported();
  auto plan = plan_deform_conv(read_deform_conv_attrs(ctx.attrs()), *x, *w, *offset, nullptr, nullptr);
  if (!plan) return declined_by(plan.error());  // check_deform_conv_node planned these shapes already
  // Two FLOPs per multiply-add and about ten per bilinear sample.
  const double samples = static_cast<double>(plan->batch * plan->channels * plan->taps() * plan->pixels());
  const double macs = samples * static_cast<double>(plan->out_channels / plan->group);
  Cost cost;
  cost.flops = 2 * macs + 10 * samples;
  cost.bytes_moved = 4.0 * static_cast<double>(shape_numel(*x) + shape_numel(*w) + shape_numel(*offset) * 3 / 2 +
                                               shape_numel(plan->y_shape()));
  return KernelMatch::supported(cost);
}

// The plane's value at (h, w), bilinear between its four neighbours; a neighbour outside the
// plane reads 0.
float bilinear(const float* plane, int64_t height, int64_t width, float h, float w) {
  if (!(h > -1.f && h < static_cast<float>(height) && w > -1.f && w < static_cast<float>(width))) return 0.f;
  const float h_floor = std::floor(h), w_floor = std::floor(w);
  const auto h0 = static_cast<int64_t>(h_floor), w0 = static_cast<int64_t>(w_floor);
  const float dh = h - h_floor, dw = w - w_floor;
  auto at = [&](int64_t r, int64_t c) { return r >= 0 && r < height && c >= 0 && c < width ? plane[r * width + c] : 0.f; };
  return (1 - dh) * ((1 - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) +
         dh * ((1 - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
}

class DeformConvKernel final : public Kernel {
 public:
  explicit DeformConvKernel(DeformConvAttrs attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& offset = ctx.input(2);
    const Tensor* bias = ctx.has_input(3) ? &ctx.input(3) : nullptr;
    const Tensor* mask = ctx.has_input(4) ? &ctx.input(4) : nullptr;
    auto plan = plan_deform_conv(attrs_, x.shape(), w.shape(), offset.shape(), bias ? &bias->shape() : nullptr,
                                 mask ? &mask->shape() : nullptr);
    if (!plan) return std::unexpected(std::move(plan.error()));
    const DeformConvPlan& p = *plan;
    auto y = ctx.output(0, DType::kFloat32, p.y_shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t group_in = p.channels / p.group, group_out = p.out_channels / p.group;
    const int64_t depth = group_in * p.taps(), pixels = p.pixels();
    std::vector<float> columns(static_cast<std::size_t>(depth * std::min(kPixelChunk, pixels)));
    float* out = y->mut_as<float>();
    for (int64_t n = 0; n < p.batch; ++n)
      for (int64_t g = 0; g < p.group; ++g)
        for (int64_t p0 = 0; p0 < pixels; p0 += kPixelChunk) {
          const int64_t count = std::min(kPixelChunk, pixels - p0);
          unroll(p, x.data_as<float>(), offset.data_as<float>(), mask ? mask->data_as<float>() : nullptr, n, g, p0,
                 count, columns.data(), ctx.parallel());
          float* y_group = out + (n * p.out_channels + g * group_out) * pixels + p0;
          gemm(group_out, count, depth, 1.f, GemmOperand::matrix(w.data_as<float>() + g * group_out * depth, depth),
               GemmOperand::matrix(columns.data(), count), 0.f, y_group, pixels, ctx.parallel());
        }
    if (bias) {
      const float* b = bias->data_as<float>();
      ctx.parallel().for_range(p.batch * p.out_channels, 1, [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane)
          for (float* v = out + plane * pixels; v != out + (plane + 1) * pixels; ++v) *v += b[plane % p.out_channels];
      });
    }
    return {};
  }
  std::string_view variant() const override { return "bilinear-columns-gemm"; }

 private:
  // columns[(c * kH * kW + tap) * count + k]: channel c of group g, kernel tap `tap`, output
  // pixel p0 + k of image n, sampled at its offset and scaled by its mask.
  static void unroll(const DeformConvPlan& p, const float* x, const float* offset, const float* mask, int64_t n,
                     int64_t g, int64_t p0, int64_t count, float* columns, const Parallel& parallel) {
    const int64_t group_in = p.channels / p.group, per_offset_group = p.channels / p.offset_group;
    const int64_t plane = p.height * p.width, pixels = p.pixels();
    parallel.for_range(group_in * p.taps(), 1, [&](int64_t begin, int64_t end) {
      for (int64_t row = begin; row < end; ++row) {
        const int64_t c = g * group_in + row / p.taps(), tap = row % p.taps();
        const int64_t i = tap / p.kernel_w, j = tap % p.kernel_w;
        const int64_t og = c / per_offset_group;
        const float* dh = offset + ((n * p.offset_group + og) * p.taps() + tap) * 2 * pixels;
        const float* dw = dh + pixels;
        const float* scale = mask ? mask + ((n * p.offset_group + og) * p.taps() + tap) * pixels : nullptr;
        const float* image = x + (n * p.channels + c) * plane;
        float* dst = columns + row * count;
        for (int64_t k = 0; k < count; ++k) {
          const int64_t pixel = p0 + k, oh = pixel / p.out_w, ow = pixel % p.out_w;
          const float h = static_cast<float>(oh * p.stride_h - p.pad_top + i * p.dilation_h) + dh[pixel];
          const float w = static_cast<float>(ow * p.stride_w - p.pad_left + j * p.dilation_w) + dw[pixel];
          const float v = bilinear(image, p.height, p.width, h, w);
          dst[k] = scale ? v * scale[pixel] : v;
        }
      }
    });
  }

  DeformConvAttrs attrs_;
};

}  // namespace

std::vector<KernelDef> deform_conv_kernels() {
  return {KernelDef{{"", "DeformConv", 19}, 0, check_deform_conv, [](const NodeContext& ctx) {
                      return make_kernel<DeformConvKernel>(read_deform_conv_attrs(ctx.attrs()));
                    }}};
}

}  // namespace nxrt::cpu
