// ONNX Runtime's quantized average pools (com.microsoft, opset 1): QLinearGlobalAveragePool and
// QLinearAveragePool, on uint8 or int8 X with one scale and one zero point, channels first (N x C
// x spatial) or, with channels_last 1, channels last (N x spatial x C). The outputs are ONNX
// Runtime 1.30's, bit for bit (testdata/com_microsoft), computed as it does:
// - QLinearGlobalAveragePool adds each channel's x - x_zero in int32, multiplies the sum by
//   x_scale / (y_scale * pixels), rounds, then adds y_zero;
// - QLinearAveragePool adds the window's taps inside X dequantized (x_scale * (x - x_zero)), in
//   float, in order; divides by their count, or with count_include_pad by the kernel's size
//   (ONNX Runtime's count, also where a ceil_mode window reaches past the padding); then
//   quantizes with y_zero added before rounding: round(v / y_scale + y_zero).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "common/byte_quantization.h"
#include "common/channels_last.h"
#include "common/kernel_util.h"
#include "common/pool_window.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The pooled outputs per image and channel, and how the dims of X and Y are ordered.
struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  int64_t in_pixels = 0, out_pixels = 0;
  bool channels_last = false;  // X and Y are N x spatial x C

  // Offset of channel c of image n's pixel 0, and the step from one pixel to the next.
  int64_t base(int64_t n, int64_t c, int64_t pixels) const {
    return channels_last ? n * pixels * channels + c : (n * channels + c) * pixels;
  }
  int64_t pixel_step() const { return channels_last ? channels : 1; }
};

// Claim checks both pools share: X uint8 or int8 of rank >= 3, per-tensor quantizations,
// channels_last 0 or 1.
KernelMatch check_quantized_pool(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kUInt8, DType::kInt8}));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 1, 2, ctx.input_dtype(0), "X"));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 3, 4, ctx.input_dtype(0), "Y"));
  const int64_t channels_last = ctx.attrs().int_or("channels_last", 0);
  NXRT_REQUIRE(channels_last == 0 || channels_last == 1, "{}: channels_last {} is not 0 or 1", op, channels_last);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) >= 3, "{}: X has rank {}; it must have a batch, a channel and at "
               "least one spatial dim", op, ctx.input_rank(0).value_or(3));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// ---- QLinearGlobalAveragePool ----

// X stored channels-last when the node says so (channels_last 1: X is N x spatial x C and Y N x
// 1... x C) or when the cpu EP's layout step keeps X so (Y keeps ONNX's N x C x 1..., the same
// bytes as N x 1... x C).
class QLinearGlobalAveragePoolKernel final : public Kernel {
 public:
  QLinearGlobalAveragePoolKernel(bool attribute_channels_last, bool layout_channels_last)
      : attribute_(attribute_channels_last), layout_(layout_channels_last) {}
  std::string_view variant() const override {
    return attribute_ || layout_ ? "qlinear-global-avgpool nhwc" : "qlinear-global-avgpool";
  }

  Expected<void> compute(KernelContext& ctx) override {
    auto q = read_per_tensor_quantizations<2>(ctx, "QLinearGlobalAveragePool", {1, 3});  // X, Y
    if (!q) return std::unexpected(q.error());
    const auto [qx, qy] = *q;
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();
    if (s.size() < 3)
      return fail(ErrorCode::kRuntime,
                  fmt::format("QLinearGlobalAveragePool: X {} has no spatial dims", shape_to_string(s)),
                  "X is N x C x spatial dims (N x spatial dims x C with channels_last 1)", "give X of rank 3 or more");
    PoolGeometry g;
    g.channels_last = attribute_ || layout_;
    g.batch = s[0];
    g.channels = g.channels_last ? s.back() : s[1];
    g.in_pixels = g.batch * g.channels > 0 ? x.numel() / (g.batch * g.channels) : 0;
    Shape out(s.size(), 1);
    out[0] = g.batch;
    out[attribute_ ? s.size() - 1 : 1] = g.channels;
    auto y = ctx.output(0, x.dtype(), out);
    if (!y) return std::unexpected(y.error());
    const float scale =
        g.in_pixels > 0 ? qx.scale / (qy.scale * static_cast<float>(g.in_pixels)) : 0.f;
    const int32_t offset = -qx.zero * static_cast<int32_t>(g.in_pixels);
    return visit_byte_type(x.dtype(), [&](auto tag) -> Expected<void> {
      using T = decltype(tag);
      const T* px = x.data_as<T>();
      T* py = y->template mut_as<T>();
      if (!g.channels_last) {
        ctx.parallel().for_range(g.batch * g.channels, std::max<int64_t>(1, 16384 / std::max<int64_t>(g.in_pixels, 1)),
                                 [&](int64_t p0, int64_t p1) {
                                   for (int64_t p = p0; p < p1; ++p) {
                                     const T* plane = px + p * g.in_pixels;
                                     int32_t sum = offset;
                                     for (int64_t i = 0; i < g.in_pixels; ++i) sum += plane[i];
                                     py[p] = quantize_rounded<T>(static_cast<float>(sum) * scale, qy.zero);
                                   }
                                 });
        return {};
      }
      ctx.parallel().for_range(g.batch, 1, [&](int64_t n0, int64_t n1) {
        std::vector<int32_t> sums(static_cast<std::size_t>(g.channels));
        for (int64_t n = n0; n < n1; ++n) {
          std::fill(sums.begin(), sums.end(), offset);
          const T* image = px + n * g.in_pixels * g.channels;
          for (int64_t i = 0; i < g.in_pixels; ++i)
            for (int64_t c = 0; c < g.channels; ++c) sums[static_cast<std::size_t>(c)] += image[i * g.channels + c];
          for (int64_t c = 0; c < g.channels; ++c)
            py[n * g.channels + c] =
                quantize_rounded<T>(static_cast<float>(sums[static_cast<std::size_t>(c)]) * scale, qy.zero);
        }
      });
      return {};
    });
  }

 private:
  bool attribute_, layout_;
};

// ---- QLinearAveragePool ----

// The sum of the window's taps inside X, each dequantized, in float, in the order ONNX Runtime
// adds them; without contraction, as it dequantizes X before it adds (and so with loops of its own
// here: for_each_tap would not be inlined into a function of other optimization attributes).
template <class T>
[[gnu::optimize("fp-contract=off")]] float dequantized_window_sum(const T* xp, int64_t step, const Window3& w,
                                                                  const Window& win, ByteQuantization qx) {
  float sum = 0;
  for (int64_t a = win.first[0]; a < win.second[0]; ++a)
    for (int64_t b = win.first[1]; b < win.second[1]; ++b)
      for (int64_t e = win.first[2]; e < win.second[2]; ++e) {
        const int64_t id = win.start[0] + a * w[0].dilation, ih = win.start[1] + b * w[1].dilation,
                      iw = win.start[2] + e * w[2].dilation;
        const int32_t x = xp[((id * w[1].in + ih) * w[2].in + iw) * step];
        sum += qx.scale * static_cast<float>(x - qx.zero);
      }
  return sum;
}

KernelMatch check_qlinear_average_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_quantized_pool(ctx));
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(kernel.has_value(), "QLinearAveragePool: the kernel_shape attribute is missing; it is required");
  const std::size_t spatial = kernel->size();
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "QLinearAveragePool: kernel_shape {} is {}-D; the cpu EP supports 1-D, 2-D and 3-D pooling", *kernel,
               spatial);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(static_cast<int64_t>(spatial) + 2) == static_cast<int64_t>(spatial) + 2,
               "QLinearAveragePool: X has rank {} but kernel_shape {} has {} dims", ctx.input_rank(0).value_or(0),
               *kernel, spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, true));
  const int64_t include = ctx.attrs().int_or("count_include_pad", 0);
  NXRT_REQUIRE(include == 0 || include == 1, "QLinearAveragePool: count_include_pad {} is not 0 or 1", include);
  return KernelMatch::supported(elementwise_cost(ctx, static_cast<double>(shape_numel(*kernel))));
}

class QLinearAveragePoolKernel final : public Kernel {
 public:
  QLinearAveragePoolKernel(WindowAttrs attrs, bool count_pad, bool channels_last)
      : attrs_(std::move(attrs)), count_pad_(count_pad), channels_last_(channels_last) {}
  std::string_view variant() const override { return channels_last_ ? "qlinear-avgpool nhwc" : "qlinear-avgpool"; }

  Expected<void> compute(KernelContext& ctx) override {
    auto q = read_per_tensor_quantizations<2>(ctx, "QLinearAveragePool", {1, 3});  // X, Y
    if (!q) return std::unexpected(q.error());
    const Tensor& x = ctx.input(0);
    const std::size_t spatial = attrs_.kernel.size();
    if (x.shape().size() != spatial + 2)
      return fail(ErrorCode::kRuntime,
                  fmt::format("QLinearAveragePool: X {} does not have the {} spatial dims of kernel_shape {}",
                              shape_to_string(x.shape()), spatial, attrs_.kernel),
                  "X is N x C x one dim per entry of kernel_shape (N x those dims x C with channels_last 1)",
                  fmt::format("give X of rank {}", spatial + 2));
    // Planes as channels-first ones: N x C x spatial.
    const Shape planar = channels_last_ ? channels_first_shape(x.shape()) : x.shape();
    auto w = plan_window(attrs_, std::span(planar).subspan(2), attrs_.kernel, "QLinearAveragePool");
    if (!w) return std::unexpected(w.error());
    const Shape out_planar = window_output_shape(planar[0], planar[1], *w, spatial);
    auto y = ctx.output(0, x.dtype(), channels_last_ ? channels_last_shape(out_planar) : out_planar);
    if (!y) return std::unexpected(y.error());
    const auto& [dd, dh, dw] = *w;
    PoolGeometry g{planar[0], planar[1], dd.in * dh.in * dw.in, dd.out * dh.out * dw.out, channels_last_};
    return visit_byte_type(x.dtype(), [&](auto tag) -> Expected<void> {
      using T = decltype(tag);
      const T* px = x.data_as<T>();
      T* py = y->template mut_as<T>();
      const int64_t step = g.pixel_step();
      const auto [qx, qy] = *q;
      const auto y_zero = static_cast<float>(qy.zero);
      const int64_t kernel_size = shape_numel(attrs_.kernel);
      const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(g.out_pixels, 1));  // planes per chunk
      ctx.parallel().for_range(g.batch * g.channels, grain, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t n = p / std::max<int64_t>(g.channels, 1), c = p % std::max<int64_t>(g.channels, 1);
          const T* xp = px + g.base(n, c, g.in_pixels);
          T* yp = py + g.base(n, c, g.out_pixels);
          for_each_output_window(*w, [&](int64_t o, const Window& win) {
            const float sum = dequantized_window_sum(xp, step, *w, win, qx);
            const int64_t count = count_pad_ ? kernel_size : win.valid_count();
            const float v = count > 0 ? sum / static_cast<float>(count) : 0.f;
            yp[o * step] = saturate_round<T>(v / qy.scale + y_zero);
          });
        }
      });
      return {};
    });
  }

 private:
  WindowAttrs attrs_;
  bool count_pad_, channels_last_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qlinear_global_average_pool_channels_last(const NodeContext& pool) {
  return make_kernel<QLinearGlobalAveragePoolKernel>(pool.attrs().int_or("channels_last", 0) == 1, true);
}

std::vector<KernelDef> qlinear_pool_kernels() {
  return {
      KernelDef{{"com.microsoft", "QLinearGlobalAveragePool", 1},
                0,
                check_quantized_pool,
                [](const NodeContext& ctx) {
                  return make_kernel<QLinearGlobalAveragePoolKernel>(ctx.attrs().int_or("channels_last", 0) == 1,
                                                                     false);
                }},
      KernelDef{{"com.microsoft", "QLinearAveragePool", 1},
                0,
                check_qlinear_average_pool,
                [](const NodeContext& ctx) {
                  const std::size_t spatial = ctx.attrs().ints_or("kernel_shape", {}).size();
                  return make_kernel<QLinearAveragePoolKernel>(read_window_attrs(ctx.attrs(), spatial),
                                                               ctx.attrs().int_or("count_include_pad", 0) == 1,
                                                               ctx.attrs().int_or("channels_last", 0) == 1);
                }},
  };
}

}  // namespace nxrt::cpu
