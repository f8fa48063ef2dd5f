// Conv on float, 1-D to 3-D (groups, pads, strides, dilations, auto_pad, bias): im2col and
// the packed GEMM with weights packed at creation; depthwise convolutions run directly.
#include <algorithm>
#include <optional>

#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/scratch_pool.h"
#include "nxrt/ir/window.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The largest im2col buffer (in floats) each thread may allocate for itself.
constexpr int64_t kOwnColumnFloats = int64_t{1} << 20;

// A Conv resolved for concrete shapes of X, W and the bias.
struct ConvPlan {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::size_t spatial = 0;
  Window3 window{};

  int64_t in_size() const { return window[0].in * window[1].in * window[2].in; }
  int64_t out_size() const { return window[0].out * window[1].out * window[2].out; }
  int64_t kernel_size() const { return window[0].kernel * window[1].kernel * window[2].kernel; }
  int64_t group_in() const { return channels / group; }
  int64_t group_out() const { return out_channels / group; }
  // One input channel per group: a direct loop beats im2col.
  bool depthwise() const { return is_depthwise(group, group_in()); }
  // The input already is the GEMM's B matrix.
  bool pointwise() const { return is_pointwise(window); }
  Shape out_shape() const { return window_output_shape(batch, out_channels, window, spatial); }
};

Expected<ConvPlan> plan_conv(const WindowAttrs& attrs, int64_t group, const Shape& x, const Shape& w,
                             const Shape* bias) {
  auto bad = [&](std::string what, std::string why) {
    return fail(ErrorCode::kRuntime, "Conv: " + std::move(what), std::move(why),
                "check the shapes of X and W against the group attribute");
  };
  if (x.size() != w.size() || x.size() < 3 || x.size() > 5)
    return bad(fmt::format("X {} and W {} must have the same rank, 3 to 5", shape_to_string(x), shape_to_string(w)),
               "the cpu EP supports 1-D, 2-D and 3-D convolutions");
  if (w[0] % group != 0 || x[1] != w[1] * group)
    return bad(fmt::format("X {} and W {} do not fit group {}", shape_to_string(x), shape_to_string(w), group),
               fmt::format("X needs W[1]*group = {} channels and W[0] must be a multiple of the group", w[1] * group));
  if (!attrs.kernel.empty() && !std::equal(attrs.kernel.begin(), attrs.kernel.end(), w.begin() + 2, w.end()))
    return bad(fmt::format("kernel_shape {} differs from the spatial dims of W {}", attrs.kernel, shape_to_string(w)),
               "kernel_shape must match W");
  if (bias && (bias->size() != 1 || (*bias)[0] != w[0]))
    return bad(fmt::format("the bias has shape {}; expected [{}]", shape_to_string(*bias), w[0]),
               "the bias holds one value per output channel");
  ConvPlan p;
  p.batch = x[0];
  p.channels = x[1];
  p.out_channels = w[0];
  p.group = group;
  p.spatial = x.size() - 2;
  auto window = plan_window(attrs, std::span(x).subspan(2), std::span(w).subspan(2), "Conv");
  if (!window) return std::unexpected(window.error());
  p.window = *window;
  return p;
}

// Writes one depth row across consecutive strips of a packed B operand, in pixel order:
// `width` lanes fill a strip, then writing continues in the next one.
class StripWriter {
 public:
  StripWriter(float* first, int64_t width, int64_t strip_stride) : dst_(first), width_(width), stride_(strip_stride) {}
  // Writes value(0), ..., value(count - 1).
  template <class Value>
  void put(int64_t count, Value value) {
    for (int64_t i = 0; i < count;) {
      const int64_t run = std::min(count - i, width_ - lane_);
      for (int64_t j = 0; j < run; ++j) dst_[lane_ + j] = value(i + j);
      i += run;
      lane_ += run;
      if (lane_ == width_) {
        lane_ = 0;
        dst_ += stride_;
      }
    }
  }
  void zeros(int64_t count) {
    put(count, [](int64_t) { return 0.f; });
  }
  // Zeros the lanes past the last pixel, as the GEMM expects of a partial strip.
  void finish() {
    if (lane_ > 0) zeros(width_ - lane_);
  }

 private:
  float* dst_;
  int64_t width_, stride_, lane_ = 0;
};

// Strips im2col fills together: each depth row is written as long runs along output rows,
// while the strips being written (their distance is often a multiple of 4 KiB) stay few
// enough not to evict each other from the caches.
constexpr int64_t kStripsPerBlock = 4;

// im2col straight into the GEMM's packed B layout, so no packing pass follows: depth rows
// are (input channel, kernel tap), columns output pixels.
void im2col_packed(const ConvPlan& p, const float* x, PackedMatrix& col, const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t width = col.strip_width(), out = p.out_size(), stride = width * col.depth();
  // Per depth row: its input channel and where its tap sits relative to a window's origin.
  struct Tap {
    const float* channel;
    int64_t d, h, w;            // tap offsets along each dim, pads included
    int64_t w_first, w_second;  // the output columns whose tap lands inside the input row
  };
  std::vector<Tap> taps;
  for (int64_t r = 0; r < col.depth(); ++r) {
    const int64_t e = r % dw.kernel, b = (r / dw.kernel) % dh.kernel;
    const int64_t a = (r / (dw.kernel * dh.kernel)) % dd.kernel, c = r / p.kernel_size();
    const auto [w_first, w_second] = valid_outputs(dw, e);
    taps.push_back(Tap{x + c * p.in_size(), a * dd.dilation - dd.pad_begin, b * dh.dilation - dh.pad_begin,
                       e * dw.dilation - dw.pad_begin, w_first, w_second});
  }
  // A block's pixels as runs along output rows.
  struct Run {
    int64_t count, od, oh, ow;
  };
  const int64_t block = kStripsPerBlock * width;
  parallel.for_range((out + block - 1) / block, 1, [&](int64_t b0, int64_t b1) {
    std::vector<Run> runs;
    for (int64_t blk = b0; blk < b1; ++blk) {
      runs.clear();
      const int64_t end = std::min(out, (blk + 1) * block);
      for (int64_t o = blk * block; o < end;) {
        const int64_t ow = o % dw.out, oh = (o / dw.out) % dh.out, od = o / (dw.out * dh.out);
        runs.push_back(Run{std::min(end - o, dw.out - ow), od, oh, ow});
        o += runs.back().count;
      }
      float* first = col.mutable_strip(blk * kStripsPerBlock);
      for (const Tap& t : taps) {
        StripWriter writer(first, width, stride);
        first += width;
        for (const Run& run : runs) {
          const int64_t id = run.od * dd.stride + t.d, ih = run.oh * dh.stride + t.h;
          if (id < 0 || id >= dd.in || ih < 0 || ih >= dh.in) {
            writer.zeros(run.count);
            continue;
          }
          const int64_t run_end = run.ow + run.count;
          const int64_t lo = std::clamp(t.w_first, run.ow, run_end), hi = std::clamp(t.w_second, lo, run_end);
          const float* row = t.channel + (id * dh.in + ih) * dw.in;
          writer.zeros(lo - run.ow);
          if (dw.stride == 1)
            writer.put(hi - lo, [row, at = lo + t.w](int64_t i) { return row[at + i]; });
          else
            writer.put(hi - lo, [row, lo, tw = t.w, s = dw.stride](int64_t i) { return row[(lo + i) * s + tw]; });
          writer.zeros(run_end - hi);
        }
        writer.finish();
      }
    }
  });
}

// Each output channel sees one input channel: loop over output rows, kernel taps inner.
void conv_depthwise(const ConvPlan& p, const float* x, const float* w, const float* bias, float* y,
                    const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.window;
  const int64_t out = p.out_size(), in = p.in_size(), ksize = p.kernel_size();
  const int64_t multiplier = p.group_out();
  std::vector<std::pair<int64_t, int64_t>> w_range;  // per kernel column: the outputs it reaches
  for (int64_t e = 0; e < dw.kernel; ++e) w_range.push_back(valid_outputs(dw, e));
  parallel.for_range(p.batch * p.out_channels, 1, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const int64_t n = plane / p.out_channels, oc = plane % p.out_channels;
      const float* xp = x + (n * p.channels + oc / multiplier) * in;
      const float* wp = w + oc * ksize;
      float* yp = y + plane * out;
      std::fill(yp, yp + out, bias ? bias[oc] : 0.f);
      for (int64_t od = 0; od < dd.out; ++od) {
        for (int64_t oh = 0; oh < dh.out; ++oh) {
          float* row = yp + (od * dh.out + oh) * dw.out;
          for (int64_t a = 0; a < dd.kernel; ++a) {
            const int64_t id = od * dd.stride - dd.pad_begin + a * dd.dilation;
            if (id < 0 || id >= dd.in) continue;
            for (int64_t b = 0; b < dh.kernel; ++b) {
              const int64_t ih = oh * dh.stride - dh.pad_begin + b * dh.dilation;
              if (ih < 0 || ih >= dh.in) continue;
              const float* src = xp + (id * dh.in + ih) * dw.in;
              for (int64_t e = 0; e < dw.kernel; ++e) {
                const float wv = wp[(a * dh.kernel + b) * dw.kernel + e];
                const auto [w_lo, w_hi] = w_range[static_cast<std::size_t>(e)];
                const int64_t offset = e * dw.dilation - dw.pad_begin;
                if (dw.stride == 1) {
                  for (int64_t ow = w_lo; ow < w_hi; ++ow) row[ow] += wv * src[ow + offset];
                } else {
                  for (int64_t ow = w_lo; ow < w_hi; ++ow) row[ow] += wv * src[ow * dw.stride + offset];
                }
              }
            }
          }
        }
      }
    }
  });
}

KernelMatch check_conv(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kFloat32}));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == DType::kFloat32,
               "Conv: the bias has type {}; the cpu EP supports float like X and W", dtype_name(ctx.input_dtype(2)));
  const std::optional<int64_t> rank = ctx.input_rank(0) ? ctx.input_rank(0) : ctx.input_rank(1);
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(rank || kernel,
               "Conv: the ranks of X and W are unknown and kernel_shape is absent; run shape "
               "inference or give the model value_info for X");
  const int64_t spatial = rank ? *rank - 2 : static_cast<int64_t>(kernel->size());
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "Conv: {}-D convolution is not supported by the cpu EP; it supports 1-D, 2-D and 3-D (X of rank 3 to 5)",
               spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, static_cast<std::size_t>(spatial), false));
  const int64_t group = ctx.attrs().int_or("group", 1);
  NXRT_REQUIRE(group >= 1, "Conv: group {} is below 1", group);
  auto x = ctx.input_static_shape(0), w = ctx.input_static_shape(1);
  auto bias = ctx.has_input(2) ? ctx.input_static_shape(2) : std::nullopt;
  if (!x || !w || (ctx.has_input(2) && !bias)) return KernelMatch::supported();
  auto plan = plan_conv(read_window_attrs(ctx.attrs(), static_cast<std::size_t>(spatial)), group, *x, *w,
                        bias ? &*bias : nullptr);
  NXRT_REQUIRE(plan.has_value(), "{}", plan.error().what);
  Cost cost;
  cost.flops = 2.0 * static_cast<double>(plan->batch * plan->out_channels * plan->out_size() * plan->group_in() *
                                         plan->kernel_size());
  cost.bytes_moved = 4.0 * static_cast<double>(shape_numel(*x) + shape_numel(*w) + shape_numel(plan->out_shape()) +
                                               (bias ? shape_numel(*bias) : 0));
  return KernelMatch::supported(cost);
}

class ConvKernel final : public Kernel {
 public:
  // `packed_w`: per group, the constant weights packed as the GEMM's A; empty otherwise.
  ConvKernel(WindowAttrs attrs, int64_t group, std::vector<PackedMatrix> packed_w, std::string variant)
      : attrs_(std::move(attrs)), group_(group), packed_w_(std::move(packed_w)), variant_(std::move(variant)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    auto plan = plan_conv(attrs_, group_, x.shape(), w.shape(), bias ? &bias->shape() : nullptr);
    if (!plan) return std::unexpected(plan.error());
    auto y = ctx.output(0, DType::kFloat32, plan->out_shape());
    if (!y) return std::unexpected(y.error());
    const float* bd = bias ? bias->data_as<float>() : nullptr;
    if (plan->depthwise())
      conv_depthwise(*plan, x.data_as<float>(), w.data_as<float>(), bd, y->mut_as<float>(), ctx.parallel());
    else
      conv_gemm(*plan, x.data_as<float>(), w.data_as<float>(), bd, y->mut_as<float>(), ctx.parallel());
    return {};
  }
  std::string_view variant() const override { return variant_; }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_w_); }

 private:
  // Per (image, group): Y_g (out channels x pixels) = W_g (out channels x taps) * im2col(X_g).
  void conv_gemm(const ConvPlan& p, const float* x, const float* w, const float* bias, float* y,
                 const Parallel& parallel) {
    const int64_t cg = p.group_in(), mg = p.group_out(), kdim = cg * p.kernel_size();
    const int64_t out = p.out_size(), in = p.in_size();
    const bool pointwise = p.pointwise();
    auto one = [&](int64_t task, PackedMatrix* col, const Parallel& par) {
      const int64_t n = task / p.group, g = task % p.group;
      const float* xg = x + (n * p.channels + g * cg) * in;
      float* yg = y + (n * p.out_channels + g * mg) * out;
      if (bias)
        for (int64_t i = 0; i < mg; ++i) std::fill(yg + i * out, yg + (i + 1) * out, bias[g * mg + i]);
      if (!pointwise) im2col_packed(p, xg, *col, par);
      const GemmOperand a = packed_w_.empty() ? GemmOperand::matrix(w + g * mg * kdim, kdim)
                                              : GemmOperand::of(packed_w_[static_cast<std::size_t>(g)]);
      const GemmOperand b = pointwise ? GemmOperand::matrix(xg, out) : GemmOperand::of(*col);
      gemm(mg, out, kdim, 1.f, a, b, bias ? 1.f : 0.f, yg, out, par);
    };
    // Enough (image, group) products for every thread: run them side by side, each on
    // one thread, unless each would need a large im2col buffer of its own. Splitting
    // every product instead costs two synchronisations per product.
    const int64_t tasks = p.batch * p.group;
    const int64_t col_floats = pointwise ? 0 : out * kdim;
    if (tasks >= 2 * parallel.threads() &&
        (col_floats <= kOwnColumnFloats || static_cast<double>(mg * out * kdim) < kSmallGemm)) {
      parallel.for_range(tasks, 1, [&](int64_t t0, int64_t t1) {
        const SerialParallel serial;
        PackedMatrix col = PackedMatrix::allocate(GemmSide::kB, pointwise ? 0 : out, kdim);
        for (int64_t t = t0; t < t1; ++t) one(t, &col, serial);
      });
      return;
    }
    auto col = cols_.take();
    if (!pointwise && (!*col || (*col)->outer() != out || (*col)->depth() != kdim))
      *col = PackedMatrix::allocate(GemmSide::kB, out, kdim);
    for (int64_t t = 0; t < tasks; ++t) one(t, pointwise ? nullptr : &**col, parallel);
  }

  WindowAttrs attrs_;
  int64_t group_;
  std::vector<PackedMatrix> packed_w_;
  std::string variant_;
  ScratchPool<std::optional<PackedMatrix>> cols_;  // im2col workspaces, kept between runs
};

// The implementation a node gets, from what is static: weights' shape, strides and pads.
std::string conv_variant(const Shape& w, const WindowAttrs& a, int64_t group, bool packed) {
  if (w.size() >= 3 && is_depthwise(group, w[1])) return "conv-depthwise-direct";
  const std::string suffix = packed ? "-gemm-packed" : "-gemm";
  const bool unit = w.size() >= 3 && std::all_of(w.begin() + 2, w.end(), [](int64_t k) { return k == 1; }) &&
                    std::ranges::all_of(a.strides, [](int64_t s) { return s == 1; }) &&
                    (a.auto_pad != "NOTSET" || std::ranges::all_of(a.pads, [](int64_t v) { return v == 0; }));
  return (unit ? "conv-1x1" : "conv-im2col") + suffix;
}

Expected<std::unique_ptr<Kernel>> create_conv(const NodeContext& ctx) {
  const int64_t group = ctx.attrs().int_or("group", 1);
  const WeightHandle* wh = ctx.constant_input(1);
  const std::size_t spatial =
      static_cast<std::size_t>(ctx.input_rank(0)   ? *ctx.input_rank(0) - 2
                               : ctx.input_rank(1) ? *ctx.input_rank(1) - 2
                                                   : ctx.attrs().ints_or("kernel_shape", {}).size());
  WindowAttrs attrs = read_window_attrs(ctx.attrs(), spatial);
  std::vector<PackedMatrix> packed;
  const Shape ws = wh ? wh->shape() : ctx.input_static_shape(1).value_or(Shape{});
  // Depthwise weights are used as they are; inconsistent shapes are reported when run.
  if (wh && wh->dtype() == DType::kFloat32 && ws.size() >= 3 && ws[0] > 0 && ws[0] % group == 0 &&
      !is_depthwise(group, ws[1])) {
    auto groups = pack_weight_groups(ctx, *wh, group, ws[0] / group, shape_numel(ws) / ws[0], false);
    if (!groups) return std::unexpected(std::move(groups.error()));
    packed = std::move(*groups);
  }
  std::string variant = conv_variant(ws, attrs, group, !packed.empty());
  return make_kernel<ConvKernel>(std::move(attrs), group, std::move(packed), std::move(variant));
}

}  // namespace

std::vector<KernelDef> conv_kernels() {
  return {
      {{"", "Conv", 1}, 10, check_conv, create_conv},
      {{"", "Conv", 11}, 0, check_conv, create_conv},
  };
}

}  // namespace nxrt::cpu
