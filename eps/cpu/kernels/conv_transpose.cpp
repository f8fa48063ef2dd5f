// ConvTranspose on float and double, 1-D to 3-D (groups, strides, dilations, pads,
// output_padding, output_shape, auto_pad, bias): W^T * X on the GEMM, then col2im.
#include <algorithm>
#include <optional>

#include "common/broadcast.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "nxrt/ir/window.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The attributes of a ConvTranspose node beyond the shared window ones.
struct ConvTransposeAttrs {
  WindowAttrs window;
  int64_t group = 1;
  std::vector<int64_t> output_padding;  // one per spatial dim
  std::vector<int64_t> output_shape;    // empty when absent; else the spatial output sizes
};

ConvTransposeAttrs read_conv_transpose_attrs(const AttributeMap& attrs, std::size_t spatial) {
  ConvTransposeAttrs a;
  a.window = read_window_attrs(attrs, spatial);
  a.group = attrs.int_or("group", 1);
  a.output_padding = attrs.ints_or("output_padding", std::vector<int64_t>(spatial, 0));
  a.output_shape = attrs.ints_or("output_shape", {});
  // output_shape may also spell out N and C: only the spatial sizes matter.
  if (a.output_shape.size() == spatial + 2) a.output_shape.erase(a.output_shape.begin(), a.output_shape.begin() + 2);
  return a;
}

int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// One spatial dim of a transposed convolution: input pixel i, kernel tap t write output
// i * stride + t * dilation - pad_begin when that lies in [0, out). pad_begin may be
// negative when output_shape asks for more than the full result (the rest is bias).
struct TransposeDim {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0;

  // The inputs [first, second) whose tap t lands inside the output.
  std::pair<int64_t, int64_t> inputs_of_tap(int64_t t) const {
    // valid_outputs answers the same question with the roles of input and output swapped.
    return valid_outputs(WindowDim{out, in, kernel, stride, 1, -(t * dilation - pad_begin), 0}, 0);
  }
};

// A ConvTranspose resolved for concrete shapes of X, W and the bias.
struct ConvTransposePlan {
  int64_t batch = 0, channels = 0, out_channels = 0, group = 1;
  std::size_t spatial = 0;
  std::array<TransposeDim, 3> dims{};  // depth, height, width; leading dims of size 1

  int64_t in_size() const { return dims[0].in * dims[1].in * dims[2].in; }
  int64_t out_size() const { return dims[0].out * dims[1].out * dims[2].out; }
  int64_t kernel_size() const { return dims[0].kernel * dims[1].kernel * dims[2].kernel; }
  int64_t group_in() const { return channels / group; }
  int64_t group_out() const { return out_channels / group; }
  Shape out_shape() const {
    Shape s{batch, out_channels};
    for (std::size_t i = 3 - spatial; i < 3; ++i) s.push_back(dims[i].out);
    return s;
  }
};

Expected<ConvTransposePlan> plan_conv_transpose(const ConvTransposeAttrs& attrs, const Shape& x, const Shape& w,
                                                const Shape* bias) {
  auto bad = [&](std::string what, std::string why) {
    return fail(ErrorCode::kRuntime, "ConvTranspose: " + std::move(what), std::move(why),
                "check the shapes of X and W against the group and window attributes");
  };
  const WindowAttrs& wa = attrs.window;
  if (x.size() != w.size() || x.size() < 3 || x.size() > 5)
    return bad(fmt::format("X {} and W {} must have the same rank, 3 to 5", shape_to_string(x), shape_to_string(w)),
               "the cpu EP supports 1-D, 2-D and 3-D transposed convolutions");
  const std::size_t spatial = x.size() - 2;
  if (wa.strides.size() != spatial || wa.dilations.size() != spatial || wa.pads.size() != 2 * spatial ||
      attrs.output_padding.size() != spatial || (!attrs.output_shape.empty() && attrs.output_shape.size() != spatial))
    return bad(fmt::format("X {} has {} spatial dims but strides {}, dilations {}, pads {}, output_padding {} or "
                           "output_shape {} do not",
                           shape_to_string(x), spatial, wa.strides, wa.dilations, wa.pads, attrs.output_padding,
                           attrs.output_shape),
               "every window attribute needs one value per spatial dim (pads two)");
  if (x[1] != w[0] || x[1] % attrs.group != 0)
    return bad(fmt::format("X {} and W {} do not fit group {}", shape_to_string(x), shape_to_string(w), attrs.group),
               "W[0] must equal the channels of X, a multiple of the group");
  if (!wa.kernel.empty() && !std::equal(wa.kernel.begin(), wa.kernel.end(), w.begin() + 2, w.end()))
    return bad(fmt::format("kernel_shape {} differs from the spatial dims of W {}", wa.kernel, shape_to_string(w)),
               "kernel_shape must match W");
  ConvTransposePlan p;
  p.batch = x[0];
  p.channels = x[1];
  p.group = attrs.group;
  p.out_channels = w[1] * attrs.group;
  p.spatial = spatial;
  if (bias && (bias->size() != 1 || (*bias)[0] != p.out_channels))
    return bad(fmt::format("the bias has shape {}; expected [{}]", shape_to_string(*bias), p.out_channels),
               "the bias holds one value per output channel (W[1] * group)");
  for (std::size_t i = 0; i < spatial; ++i) {
    TransposeDim& d = p.dims[3 - spatial + i];
    d.in = x[i + 2];
    d.kernel = w[i + 2];
    d.stride = wa.strides[i];
    d.dilation = wa.dilations[i];
    const int64_t full = d.stride * (d.in - 1) + attrs.output_padding[i] + (d.kernel - 1) * d.dilation + 1;
    const bool upper = wa.auto_pad == "SAME_UPPER";
    if (!attrs.output_shape.empty()) {
      d.out = attrs.output_shape[i];
      const int64_t total = full - d.out;
      d.pad_begin = upper ? floor_half(total) : total - floor_half(total);
    } else if (upper || wa.auto_pad == "SAME_LOWER") {
      // As ONNX's shape inference: the window overhang past the stride is cut off.
      const int64_t total = std::max<int64_t>(0, (d.kernel - 1) * d.dilation + 1 - d.stride);
      d.pad_begin = upper ? total / 2 : total - total / 2;
      d.out = full - total;
    } else if (wa.auto_pad == "VALID") {
      d.out = full;
    } else {
      d.pad_begin = wa.pads[i];
      d.out = full - wa.pads[i] - wa.pads[i + spatial];
    }
    if (d.out < 1)
      return bad(fmt::format("spatial dim {} of the output would be {}", i, d.out),
                 fmt::format("input {} with stride {}, kernel {}, dilation {} and pads {} leaves no output", d.in,
                             d.stride, d.kernel, d.dilation, wa.pads));
  }
  return p;
}

KernelMatch check_conv_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatTypes{}));
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(ctx.input_dtype(1) == t, "ConvTranspose: W has type {} and X {}; they must match",
               dtype_name(ctx.input_dtype(1)), dtype_name(t));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == t, "ConvTranspose: B has type {} and X {}; they must match",
               dtype_name(ctx.input_dtype(2)), dtype_name(t));
  const std::optional<int64_t> rank = ctx.input_rank(0) ? ctx.input_rank(0) : ctx.input_rank(1);
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(rank || kernel,
               "ConvTranspose: the ranks of X and W are unknown and kernel_shape is absent; run shape inference or "
               "give the model value_info for X");
  const int64_t spatial = rank ? *rank - 2 : static_cast<int64_t>(kernel->size());
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "ConvTranspose: {}-D is not supported by the cpu EP; it supports 1-D, 2-D and 3-D (X of rank 3 to 5)",
               spatial);
  const auto s = static_cast<std::size_t>(spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, s, false));
  const ConvTransposeAttrs attrs = read_conv_transpose_attrs(ctx.attrs(), s);
  NXRT_REQUIRE(attrs.group >= 1, "ConvTranspose: group {} is below 1", attrs.group);
  NXRT_REQUIRE(attrs.output_padding.size() == s, "ConvTranspose: output_padding {} has {} values for {} spatial dims",
               attrs.output_padding, attrs.output_padding.size(), s);
  NXRT_REQUIRE(std::ranges::all_of(attrs.output_padding, [](int64_t v) { return v >= 0; }),
               "ConvTranspose: output_padding {} has a negative value", attrs.output_padding);
  NXRT_REQUIRE(attrs.output_shape.empty() || attrs.output_shape.size() == s,
               "ConvTranspose: output_shape {} has {} values; expected {} (the spatial output sizes)",
               ctx.attrs().ints_or("output_shape", {}), ctx.attrs().ints_or("output_shape", {}).size(), s);
  auto x = ctx.input_static_shape(0), w = ctx.input_static_shape(1);
  auto bias = ctx.has_input(2) ? ctx.input_static_shape(2) : std::nullopt;
  if (!x || !w || (ctx.has_input(2) && !bias)) return KernelMatch::supported();
  auto plan = plan_conv_transpose(attrs, *x, *w, bias ? &*bias : nullptr);
  NXRT_REQUIRE(plan.has_value(), "{}", plan.error().what);
  Cost cost;
  cost.flops = 2.0 * static_cast<double>(plan->batch * plan->channels * plan->in_size() * plan->group_out() *
                                         plan->kernel_size());
  cost.bytes_moved = static_cast<double>(dtype_size(t)) *
                     static_cast<double>(shape_numel(*x) + shape_numel(*w) + shape_numel(plan->out_shape()) +
                                         (bias ? shape_numel(*bias) : 0));
  return KernelMatch::supported(cost);
}

// Adds every column row (output channel, tap) into the output plane it lands on. Rows of
// one output channel are summed by one thread, so planes are written without races.
template <class T>
void col2im(const ConvTransposePlan& p, const T* col, const T* bias, T* y, const Parallel& parallel) {
  const auto& [dd, dh, dw] = p.dims;
  const int64_t in = p.in_size(), out = p.out_size(), ksize = p.kernel_size();
  parallel.for_range(p.group_out(), 1, [&](int64_t m0, int64_t m1) {
    for (int64_t m = m0; m < m1; ++m) {
      T* plane = y + m * out;
      std::fill(plane, plane + out, bias ? bias[m] : T(0));
      for (int64_t tap = 0; tap < ksize; ++tap) {
        const int64_t a = tap / (dh.kernel * dw.kernel), b = (tap / dw.kernel) % dh.kernel, e = tap % dw.kernel;
        const T* row = col + (m * ksize + tap) * in;
        const auto [d0, d1] = dd.inputs_of_tap(a);
        const auto [h0, h1] = dh.inputs_of_tap(b);
        const auto [w0, w1] = dw.inputs_of_tap(e);
        const int64_t ow_offset = e * dw.dilation - dw.pad_begin;
        for (int64_t id = d0; id < d1; ++id) {
          const int64_t od = id * dd.stride + a * dd.dilation - dd.pad_begin;
          for (int64_t ih = h0; ih < h1; ++ih) {
            const int64_t oh = ih * dh.stride + b * dh.dilation - dh.pad_begin;
            const T* src = row + (id * dh.in + ih) * dw.in;
            T* dst = plane + (od * dh.out + oh) * dw.out + ow_offset;
            if (dw.stride == 1) {
              for (int64_t iw = w0; iw < w1; ++iw) dst[iw] += src[iw];
            } else {
              for (int64_t iw = w0; iw < w1; ++iw) dst[iw * dw.stride] += src[iw];
            }
          }
        }
      }
    }
  });
}

class ConvTransposeKernel final : public Kernel {
 public:
  // `packed_w`: per group, the constant float weights packed as the GEMM's A (W_g^T).
  ConvTransposeKernel(ConvTransposeAttrs attrs, std::vector<PackedMatrix> packed_w)
      : attrs_(std::move(attrs)), packed_w_(std::move(packed_w)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override {
    return packed_w_.empty() ? "convtranspose-gemm-col2im" : "convtranspose-gemm-packed-col2im";
  }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_w_); }

 private:
  // Per (image, group): col (output channels * taps x input pixels) = W_g^T * X_g, then
  // col2im scatters it into Y_g.
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    auto plan = plan_conv_transpose(attrs_, x.shape(), w.shape(), bias ? &bias->shape() : nullptr);
    if (!plan) return std::unexpected(plan.error());
    const ConvTransposePlan& p = *plan;
    auto y = ctx.output(0, x.dtype(), p.out_shape());
    if (!y) return std::unexpected(y.error());
    const int64_t cg = p.group_in(), mg = p.group_out(), rows = mg * p.kernel_size();
    const int64_t in = p.in_size(), out = p.out_size();
    std::vector<T> col(static_cast<std::size_t>(rows * in));
    const T* xd = x.data_as<T>();
    const T* wd = w.data_as<T>();
    const T* bd = bias ? bias->data_as<T>() : nullptr;
    T* yd = y->mut_as<T>();
    for (int64_t n = 0; n < p.batch; ++n) {
      for (int64_t g = 0; g < p.group; ++g) {
        const T* xg = xd + (n * p.channels + g * cg) * in;
        const T* wg = wd + g * cg * rows;
        if constexpr (std::is_same_v<T, float>) {
          const GemmOperand a = packed_w_.empty() ? GemmOperand::matrix(wg, rows, true)
                                                  : GemmOperand::of(packed_w_[static_cast<std::size_t>(g)]);
          gemm(rows, in, cg, 1.f, a, GemmOperand::matrix(xg, in), 0.f, col.data(), in, ctx.parallel());
        } else {
          reference_gemm<T>(rows, in, cg, T(1), wg, true, xg, false, T(0), col.data());
        }
        col2im<T>(p, col.data(), bd ? bd + g * mg : nullptr, yd + (n * p.out_channels + g * mg) * out, ctx.parallel());
      }
    }
    return {};
  }

  ConvTransposeAttrs attrs_;
  std::vector<PackedMatrix> packed_w_;
};

Expected<std::unique_ptr<Kernel>> create_conv_transpose(const NodeContext& ctx) {
  const std::size_t spatial =
      static_cast<std::size_t>(ctx.input_rank(0)   ? *ctx.input_rank(0) - 2
                               : ctx.input_rank(1) ? *ctx.input_rank(1) - 2
                                                   : ctx.attrs().ints_or("kernel_shape", {}).size());
  ConvTransposeAttrs attrs = read_conv_transpose_attrs(ctx.attrs(), spatial);
  std::vector<PackedMatrix> packed;
  const WeightHandle* wh = ctx.constant_input(1);
  // W is C x M/group x taps: group g's rows of W_g^T are its M/group * taps columns.
  if (wh && wh->dtype() == DType::kFloat32 && wh->shape().size() >= 3 && wh->shape()[0] > 0 &&
      wh->shape()[0] % attrs.group == 0) {
    const Shape& ws = wh->shape();
    auto groups = pack_weight_groups(ctx, *wh, attrs.group, shape_numel(ws) / ws[0], ws[0] / attrs.group, true);
    if (!groups) return std::unexpected(std::move(groups.error()));
    packed = std::move(*groups);
  }
  return make_kernel<ConvTransposeKernel>(std::move(attrs), std::move(packed));
}

}  // namespace

std::vector<KernelDef> conv_transpose_kernels() {
  return {
      {{"", "ConvTranspose", 1}, 10, check_conv_transpose, create_conv_transpose},
      {{"", "ConvTranspose", 11}, 0, check_conv_transpose, create_conv_transpose},
  };
}

}  // namespace nxrt::cpu
