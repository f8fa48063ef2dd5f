// Pooling over 1-D to 3-D windows: MaxPool (with its Indices output), AveragePool, LpPool,
// MaxUnpool, GlobalAveragePool, GlobalMaxPool and GlobalLpPool.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/broadcast.h"
#include "common/channels_last.h"
#include "common/kernel_util.h"
#include "common/pool_window.h"
#include "kernels/kernels.h"
#include "nxrt/ep/max_unpool.h"
#include "nxrt/ir/window.h"

namespace nxrt::cpu {
namespace {

// A windowed pool resolved for the runtime X, with output 0 allocated; sizes in elements.
struct PoolRun {
  Window3 w;
  Tensor y;
  int64_t planes, in, out;  // N * C planes of `in` input and `out` output elements
};

Expected<PoolRun> plan_pool(KernelContext& ctx, const WindowAttrs& attrs, const std::string& op) {
  const Tensor& x = ctx.input(0);
  if (x.shape().size() != attrs.kernel.size() + 2)
    return fail(ErrorCode::kRuntime, fmt::format("{}: X {} does not have the {} spatial dims of kernel_shape {}", op,
                                                 shape_to_string(x.shape()), attrs.kernel.size(), attrs.kernel));
  auto w = plan_window(attrs, std::span(x.shape()).subspan(2), attrs.kernel, op);
  if (!w) return std::unexpected(w.error());
  auto y = ctx.output(0, x.dtype(), window_output_shape(x.shape()[0], x.shape()[1], *w, attrs.kernel.size()));
  if (!y) return std::unexpected(y.error());
  const auto& [dd, dh, dw] = *w;
  return PoolRun{*w, std::move(*y), x.shape()[0] * x.shape()[1], dd.in * dh.in * dw.in, dd.out * dh.out * dw.out};
}

// Calls fn(plane, output index in the plane, window) for every output, planes in parallel.
template <class Fn>
void for_each_window(const PoolRun& run, const Parallel& parallel, Fn fn) {
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(run.out, 1));  // planes per chunk
  parallel.for_range(run.planes, grain, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane)
      for_each_output_window(run.w, [&](int64_t o, const Window& win) { fn(plane, o, win); });
  });
}

// Shared claim checks of the windowed pools: dtype, rank, window attributes.
KernelMatch check_window_pool(const NodeContext& ctx, std::initializer_list<DType> types) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, types));
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(kernel.has_value(), "{}: the kernel_shape attribute is missing; it is required", op);
  const std::size_t spatial = kernel->size();
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "{}: kernel_shape {} is {}-D; the cpu EP supports 1-D, 2-D and 3-D pooling", op, *kernel, spatial);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(static_cast<int64_t>(spatial) + 2) == static_cast<int64_t>(spatial) + 2,
               "{}: X has rank {} but kernel_shape {} has {} dims; X must be N x C x {} spatial dims", op,
               ctx.input_rank(0).value_or(0), *kernel, spatial, spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, true));
  auto x = ctx.input_static_shape(0);
  if (!x) return KernelMatch::supported();
  const WindowAttrs attrs = read_window_attrs(ctx.attrs(), spatial);
  auto w = plan_window(attrs, std::span(*x).subspan(2), attrs.kernel, op);
  NXRT_REQUIRE(w.has_value(), "{}", w.error().what);
  const Shape out = window_output_shape((*x)[0], (*x)[1], *w, spatial);
  Cost cost;
  cost.flops = static_cast<double>(shape_numel(out) * shape_numel(attrs.kernel));
  cost.bytes_moved =
      static_cast<double>((shape_numel(*x) + shape_numel(out)) * static_cast<int64_t>(dtype_size(ctx.input_dtype(0))));
  return KernelMatch::supported(cost);
}

// ---- MaxPool ----

KernelMatch check_max_pool(const NodeContext& ctx) {
  // int8 and uint8 arrived in opset 12.
  const KernelMatch window =
      ctx.opset() >= 12 ? check_window_pool(ctx, {DType::kFloat32, DType::kFloat64, DType::kInt8, DType::kUInt8})
                        : check_window_pool(ctx, {DType::kFloat32, DType::kFloat64});
  NXRT_REQUIRE_MATCH(window);
  const int64_t order = ctx.attrs().int_or("storage_order", 0);
  NXRT_REQUIRE(order == 0 || order == 1, "MaxPool: storage_order {} is not 0 (row major) or 1 (column major)", order);
  return window;
}

// MaxPool of 8-bit integers over 1-D and 2-D windows, without Indices: per output row, the
// element-wise maximum of the window's input rows (in vectors), then each output's maximum
// over its columns of that. Integers have no NaN, so the order of the taps cannot matter.
// (Bytes may alias anything: in functions of their own, with restrict, the loops below keep
// their pointers in registers and run in vectors.)
template <class T>
void max_into(T* __restrict acc, const T* __restrict row, int64_t count) {
  for (int64_t i = 0; i < count; ++i) acc[i] = std::max(acc[i], row[i]);
}

// pixel[c] = the maximum of pixels[t][c] over the `count` pixels (channels-last, `channels`
// values each; none: the window lies in the padding, and the lowest value), 64 bytes of
// channels at a time in a vector register over all the taps, where a loop over the channels per
// tap spent its time entering and leaving the loop (SqueezeNet's first MaxPool, 64 channels of
// 111x111: 0.082 -> 0.067 ms).
template <class T>
void max_of_pixels(const T* const* pixels, std::size_t count, int64_t channels, T* pixel) {
  typedef T Bytes __attribute__((vector_size(64)));
  constexpr int64_t kLanes = sizeof(Bytes) / sizeof(T);
  int64_t c = 0;
  for (; c + kLanes <= channels; c += kLanes) {
    Bytes best = Bytes{} + std::numeric_limits<T>::lowest();
    for (std::size_t t = 0; t < count; ++t) {
      Bytes v;
      std::memcpy(&v, pixels[t] + c, sizeof v);
      best = v > best ? v : best;
    }
    std::memcpy(pixel + c, &best, sizeof best);
  }
  for (; c < channels; ++c) {
    T best = std::numeric_limits<T>::lowest();
    for (std::size_t t = 0; t < count; ++t) best = std::max(best, pixels[t][c]);
    pixel[c] = best;
  }
}

// y[o] = the maximum of row_max over output column o's taps (`columns`, located in dim 2).
template <class T>
void max_over_columns(const T* __restrict row_max, const Window* __restrict columns, int64_t dilation, int64_t begin,
                      int64_t end, T* __restrict y) {
  for (int64_t o = begin; o < end; ++o) {
    const Window& c = columns[o];
    T best = std::numeric_limits<T>::lowest();
    for (int64_t e = c.first[2]; e < c.second[2]; ++e) best = std::max(best, row_max[c.start[2] + e * dilation]);
    y[o] = best;
  }
}

// even[j] = row[2j], odd[j] = row[2j + 1]: a row's columns by parity, for stride 2.
template <class T>
void split_by_parity(const T* __restrict row, int64_t count, T* __restrict even, T* __restrict odd) {
  for (int64_t j = 0; j < count / 2; ++j) {
    even[j] = row[2 * j];
    odd[j] = row[2 * j + 1];
  }
  if (count % 2 != 0) even[count / 2] = row[count - 1];
}

// How output columns read a row's maxima. Each column's taps (`columns`) serve the edges; the
// outputs [inner_begin, inner_end), whose taps all lie inside the row, are found as whole
// vectors at strides 1 and 2: tap e of output o reads phase r_e's element o + d_e, where phase
// r holds the columns r, r + stride, ... (the row itself at stride 1), so each tap is one
// vector maximum over a run of outputs.
struct ColumnPlan {
  std::vector<Window> columns;
  int64_t inner_begin = 0, inner_end = 0;
  int64_t phase_size = 0;                      // elements per phase
  std::vector<std::pair<int64_t, int64_t>> taps;  // (r_e, d_e) per tap

  explicit ColumnPlan(const WindowDim& dw) : columns(static_cast<std::size_t>(dw.out)) {
    for (int64_t o = 0; o < dw.out; ++o) locate(dw, o, 2, columns[static_cast<std::size_t>(o)]);
    if (dw.stride > 2) return;  // every output by its taps
    const int64_t s = dw.stride, span = (dw.kernel - 1) * dw.dilation;
    const int64_t last = dw.in - 1 + dw.pad_begin - span;  // the interior's last o * s
    inner_begin = std::min(dw.out, (dw.pad_begin + s - 1) / s);
    inner_end = last < 0 ? inner_begin : std::clamp(last / s + 1, inner_begin, dw.out);
    phase_size = (dw.in + s - 1) / s;
    for (int64_t e = 0; e < dw.kernel; ++e) {
      const int64_t c = e * dw.dilation - dw.pad_begin;  // output o reads column o * s + c
      const int64_t d = c >= 0 ? c / s : -((-c + s - 1) / s);
      taps.emplace_back(c - d * s, d);
    }
  }
};

// One output row from the row's maxima: the interior in vectors, the edges tap by tap.
// `phases` holds 2 * plan.phase_size elements of scratch.
template <class T>
void max_pool_columns(const T* row_max, const WindowDim& dw, const ColumnPlan& plan, T* phases, T* y) {
  max_over_columns(row_max, plan.columns.data(), dw.dilation, 0, plan.inner_begin, y);
  max_over_columns(row_max, plan.columns.data(), dw.dilation, plan.inner_end, dw.out, y);
  const int64_t n = plan.inner_end - plan.inner_begin;
  if (n <= 0) return;
  const T* phase[2] = {row_max, nullptr};
  if (dw.stride == 2) {
    split_by_parity(row_max, dw.in, phases, phases + plan.phase_size);
    phase[0] = phases;
    phase[1] = phases + plan.phase_size;
  }
  T* out = y + plan.inner_begin;
  const auto [r0, d0] = plan.taps.front();
  std::copy_n(phase[r0] + plan.inner_begin + d0, n, out);
  for (std::size_t e = 1; e < plan.taps.size(); ++e) {
    const auto [r, d] = plan.taps[e];
    max_into(out, phase[r] + plan.inner_begin + d, n);
  }
}

template <class T>
void max_pool_rows(const T* x, const PoolRun& run, const Parallel& parallel, T* y) {
  const auto& [dd, dh, dw] = run.w;
  const ColumnPlan plan(dw);
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(run.out, 1));
  parallel.for_range(run.planes, grain, [&](int64_t p0, int64_t p1) {
    std::vector<T> row_max(static_cast<std::size_t>(dw.in)), phases(static_cast<std::size_t>(2 * plan.phase_size));
    Window rows{};
    for (int64_t plane = p0; plane < p1; ++plane) {
      const T* xp = x + plane * run.in;
      T* yp = y + plane * run.out;
      for (int64_t oh = 0; oh < dh.out; ++oh, yp += dw.out) {
        locate(dh, oh, 1, rows);
        if (rows.first[1] == rows.second[1]) {  // the window lies in the padding
          std::fill_n(yp, dw.out, std::numeric_limits<T>::lowest());
          continue;
        }
        const T* first = xp + (rows.start[1] + rows.first[1] * dh.dilation) * dw.in;
        std::copy_n(first, dw.in, row_max.begin());
        for (int64_t a = rows.first[1] + 1; a < rows.second[1]; ++a)
          max_into(row_max.data(), xp + (rows.start[1] + a * dh.dilation) * dw.in, dw.in);
        max_pool_columns(row_max.data(), dw, plan, phases.data(), yp);
      }
    }
  });
}

class MaxPoolKernel final : public Kernel {
 public:
  // `by_rows`: X is claimed as 8-bit integers of at most 2 spatial dims (the depth of the
  // window then has one tap), Indices not wanted.
  MaxPoolKernel(WindowAttrs attrs, bool column_major, bool by_rows)
      : attrs_(std::move(attrs)), column_major_(column_major), by_rows_(by_rows) {}

  Expected<void> compute(KernelContext& ctx) override {
    switch (ctx.input(0).dtype()) {
      case DType::kFloat64:
        return run<double>(ctx);
      case DType::kInt8:
        return run<int8_t>(ctx);
      case DType::kUInt8:
        return run<uint8_t>(ctx);
      default:
        return run<float>(ctx);
    }
  }
  std::string_view variant() const override { return by_rows_ ? "maxpool-rows" : "maxpool-direct"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    auto run = plan_pool(ctx, attrs_, "MaxPool");
    if (!run) return std::unexpected(run.error());
    const auto& [dd, dh, dw] = run->w;
    const T* x = ctx.input(0).data_as<T>();
    T* y = run->y.mut_as<T>();
    if constexpr (std::is_integral_v<T>) {
      if (by_rows_) {
        max_pool_rows(x, *run, ctx.parallel(), y);
        return {};
      }
    }
    int64_t* indices = nullptr;
    if (ctx.wants_output(1)) {
      auto i = ctx.output(1, DType::kInt64, run->y.shape());
      if (!i) return std::unexpected(i.error());
      indices = i->mut_as<int64_t>();
    }
    for_each_window(*run, ctx.parallel(), [&](int64_t plane, int64_t o, const Window& win) {
      const T* xp = x + plane * run->in;
      T best = std::numeric_limits<T>::lowest();
      int64_t arg = -1;
      for_each_tap(run->w, win, [&](int64_t id, int64_t ih, int64_t iw) {
        const int64_t at = (id * dh.in + ih) * dw.in + iw;
        if (arg >= 0 && !(xp[at] > best)) return;
        best = xp[at];
        arg = column_major_ ? id + ih * dd.in + iw * dd.in * dh.in : at;
      });
      y[plane * run->out + o] = best;
      if (indices) indices[plane * run->out + o] = arg < 0 ? -1 : plane * run->in + arg;
    });
    return {};
  }

  WindowAttrs attrs_;
  bool column_major_;
  bool by_rows_;
};

Expected<std::unique_ptr<Kernel>> create_max_pool(const NodeContext& ctx) {
  const std::size_t spatial = ctx.attrs().ints_or("kernel_shape", {}).size();
  const DType x = ctx.input_dtype(0);
  const auto& outputs = ctx.node().outputs;
  const bool indices = outputs.size() > 1 && outputs[1] != kNoValue;
  const bool by_rows = (x == DType::kUInt8 || x == DType::kInt8) && !indices && spatial <= 2;
  return make_kernel<MaxPoolKernel>(read_window_attrs(ctx.attrs(), spatial),
                                    ctx.attrs().int_or("storage_order", 0) == 1, by_rows);
}

// MaxPool of 8-bit integers stored channels-last (N x H x W x C, the cpu EP's layout step,
// layout.h) over 2-D windows, without Indices: each output pixel is the element-wise maximum
// of its taps' pixels, all channels at once in vectors. Y is stored channels-last too.
class ChannelsLastMaxPoolKernel final : public Kernel {
 public:
  explicit ChannelsLastMaxPoolKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}
  std::string_view variant() const override { return "maxpool-pixels nhwc>nhwc"; }

  Expected<void> compute(KernelContext& ctx) override {
    switch (ctx.input(0).dtype()) {
      case DType::kInt8:
        return run<int8_t>(ctx);
      case DType::kUInt8:
        return run<uint8_t>(ctx);
      default:
        return fail(ErrorCode::kRuntime,
                    fmt::format("MaxPool: channels-last X of type {}", dtype_name(ctx.input(0).dtype())),
                    "the cpu EP keeps only uint8 and int8 MaxPools channels-last",
                    "report this as a bug in the cpu EP's layout step");
    }
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Shape& xs = ctx.input(0).shape();  // N x H x W x C
    if (xs.size() != 4 || attrs_.kernel.size() != 2)
      return fail(ErrorCode::kRuntime,
                  fmt::format("MaxPool: channels-last X {} with kernel_shape {}", shape_to_string(xs), attrs_.kernel),
                  "the cpu EP keeps only 2-D MaxPools channels-last",
                  "report this as a bug in the cpu EP's layout step");
    const Shape planar = channels_first_shape(xs);
    auto w = plan_window(attrs_, std::span(planar).subspan(2), attrs_.kernel, "MaxPool");
    if (!w) return std::unexpected(w.error());
    auto y = ctx.output(0, ctx.input(0).dtype(),
                        channels_last_shape(window_output_shape(planar[0], planar[1], *w, 2)));
    if (!y) return std::unexpected(y.error());
    const auto& [dd, dh, dw] = *w;
    const int64_t channels = planar[1], rows = planar[0] * dh.out;
    const T* x = ctx.input(0).data_as<T>();
    T* out = y->template mut_as<T>();
    ctx.parallel().for_range(rows, std::max<int64_t>(1, 65536 / std::max<int64_t>(dw.out * channels, 1)),
                             [&](int64_t r0, int64_t r1) {
      Window win{};
      std::vector<const T*> taps(static_cast<std::size_t>(dh.kernel * dw.kernel));
      for (int64_t row = r0; row < r1; ++row) {
        const int64_t n = row / dh.out, oh = row % dh.out;
        const T* image = x + n * dh.in * dw.in * channels;
        locate(dh, oh, 1, win);
        for (int64_t ow = 0; ow < dw.out; ++ow) {
          locate(dw, ow, 2, win);
          std::size_t count = 0;
          for (int64_t b = win.first[1]; b < win.second[1]; ++b)
            for (int64_t e = win.first[2]; e < win.second[2]; ++e) {
              const int64_t ih = win.start[1] + b * dh.dilation, iw = win.start[2] + e * dw.dilation;
              taps[count++] = image + (ih * dw.in + iw) * channels;
            }
          max_of_pixels(taps.data(), count, channels, out + (row * dw.out + ow) * channels);
        }
      }
    });
    return {};
  }

  WindowAttrs attrs_;
};

// GlobalAveragePool of float X stored channels-last (N x spatial... x C, the cpu EP's layout
// step) into Y of ONNX's shape N x C x 1...: per image, every pixel's channels added in vectors,
// pixel after pixel, so each channel's sum is the same float sum as GlobalPoolKernel's.
class ChannelsLastGlobalAveragePoolKernel final : public Kernel {
 public:
  std::string_view variant() const override { return "global-avgpool nhwc>nchw"; }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& s = x.shape();  // N x spatial... x C
    if (x.dtype() != DType::kFloat32 || s.size() < 3)
      return fail(ErrorCode::kRuntime,
                  fmt::format("GlobalAveragePool: channels-last X of type {} and shape {}", dtype_name(x.dtype()),
                              shape_to_string(s)),
                  "the cpu EP keeps only float X with spatial dims channels-last",
                  "report this as a bug in the cpu EP's layout step");
    Shape out(s.size(), 1);
    out[0] = s[0];
    out[1] = s.back();
    auto y = ctx.output(0, x.dtype(), out);
    if (!y) return std::unexpected(y.error());
    const int64_t channels = s.back(), pixels = x.numel() / std::max<int64_t>(1, s[0] * channels);
    const float* xd = x.data_as<float>();
    float* yd = y->mut_as<float>();
    ctx.parallel().for_range(s[0], 1, [&](int64_t n0, int64_t n1) {
      for (int64_t n = n0; n < n1; ++n) sum_pixels(xd + n * pixels * channels, pixels, channels, yd + n * channels);
    });
    return {};
  }

 private:
  // y[c] = the mean over the `pixels` pixels of x[p * channels + c].
  static void sum_pixels(const float* __restrict x, int64_t pixels, int64_t channels, float* __restrict y) {
    std::fill_n(y, channels, 0.f);
    for (int64_t p = 0; p < pixels; ++p)
      for (int64_t c = 0; c < channels; ++c) y[c] += x[p * channels + c];
    for (int64_t c = 0; c < channels; ++c) y[c] = pixels > 0 ? y[c] / static_cast<float>(pixels) : 0.f;
  }
};

// The pools that add term(x) over a window's taps inside the input, then write
// finish(sum, window): AveragePool and LpPool.
template <class T, class Term, class Finish>
Expected<void> sum_pool(KernelContext& ctx, const WindowAttrs& attrs, const std::string& op, Term term, Finish finish) {
  auto run = plan_pool(ctx, attrs, op);
  if (!run) return std::unexpected(run.error());
  const WindowDim& dh = run->w[1];
  const WindowDim& dw = run->w[2];
  const T* x = ctx.input(0).data_as<T>();
  T* y = run->y.mut_as<T>();
  for_each_window(*run, ctx.parallel(), [&](int64_t plane, int64_t o, const Window& win) {
    const T* xp = x + plane * run->in;
    T sum = 0;
    for_each_tap(run->w, win, [&](int64_t id, int64_t ih, int64_t iw) { sum += term(xp[(id * dh.in + ih) * dw.in + iw]); });
    y[plane * run->out + o] = finish(sum, win);
  });
  return {};
}

// ---- AveragePool ----

KernelMatch check_average_pool(const NodeContext& ctx) {
  const KernelMatch window = check_window_pool(ctx, {DType::kFloat32, DType::kFloat64});
  NXRT_REQUIRE_MATCH(window);
  const int64_t include = ctx.attrs().int_or("count_include_pad", 0);
  NXRT_REQUIRE(include == 0 || include == 1, "AveragePool: count_include_pad {} is not 0 or 1", include);
  return window;
}

class AveragePoolKernel final : public Kernel {
 public:
  AveragePoolKernel(WindowAttrs attrs, bool count_pad) : attrs_(std::move(attrs)), count_pad_(count_pad) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "avgpool-direct"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    return sum_pool<T>(ctx, attrs_, "AveragePool", [](T v) { return v; }, [this](T sum, const Window& win) {
      const int64_t count = count_pad_ ? win.padded_count() : win.valid_count();
      return count > 0 ? sum / static_cast<T>(count) : T(0);
    });
  }

  WindowAttrs attrs_;
  bool count_pad_;
};

Expected<std::unique_ptr<Kernel>> create_average_pool(const NodeContext& ctx) {
  const std::size_t spatial = ctx.attrs().ints_or("kernel_shape", {}).size();
  return make_kernel<AveragePoolKernel>(read_window_attrs(ctx.attrs(), spatial),
                                        ctx.attrs().int_or("count_include_pad", 0) == 1);
}

// ---- LpPool ----

KernelMatch check_lp_pool(const NodeContext& ctx) {
  const KernelMatch window = check_window_pool(ctx, {DType::kFloat32, DType::kFloat64});
  NXRT_REQUIRE_MATCH(window);
  const double p = lp_pool_exponent(ctx.attrs(), ctx.opset());
  NXRT_REQUIRE(p > 0, "LpPool: p {} is not positive", p);
  return window;
}

// y = (sum of |x|^p over the window's taps inside the input)^(1/p); pads add nothing.
template <class T>
T lp_root(T sum, double p) {
  if (p == 2) return std::sqrt(sum);
  if (p == 1) return sum;
  return static_cast<T>(std::pow(static_cast<double>(sum), 1.0 / p));
}

template <class T>
T lp_term(T v, double p) {
  if (p == 2) return v * v;
  if (p == 1) return std::abs(v);
  return static_cast<T>(std::pow(std::abs(static_cast<double>(v)), p));
}

class LpPoolKernel final : public Kernel {
 public:
  LpPoolKernel(WindowAttrs attrs, double p) : attrs_(std::move(attrs)), p_(p) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "lppool-direct"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    return sum_pool<T>(ctx, attrs_, "LpPool", [p = p_](T v) { return lp_term(v, p); },
                       [p = p_](T sum, const Window&) { return lp_root(sum, p); });
  }

  WindowAttrs attrs_;
  double p_;
};

Expected<std::unique_ptr<Kernel>> create_lp_pool(const NodeContext& ctx) {
  const std::size_t spatial = ctx.attrs().ints_or("kernel_shape", {}).size();
  return make_kernel<LpPoolKernel>(read_window_attrs(ctx.attrs(), spatial), lp_pool_exponent(ctx.attrs(), ctx.opset()));
}

// ---- MaxUnpool ----

using UnpoolTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;

KernelMatch check_max_unpool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, UnpoolTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == DType::kInt64,
               "MaxUnpool: output_shape has type {}; it must be int64", dtype_name(ctx.input_dtype(2)));
  const auto kernel = ctx.attrs().get_ints("kernel_shape");
  NXRT_REQUIRE(kernel.has_value(), "MaxUnpool: the kernel_shape attribute is missing; it is required");
  const std::size_t spatial = kernel->size();
  NXRT_REQUIRE(spatial >= 1 && spatial <= 3,
               "MaxUnpool: kernel_shape {} is {}-D; the cpu EP supports 1-D, 2-D and 3-D unpooling", *kernel, spatial);
  NXRT_REQUIRE(ctx.input_rank(0).value_or(static_cast<int64_t>(spatial) + 2) == static_cast<int64_t>(spatial) + 2,
               "MaxUnpool: X has rank {} but kernel_shape {} has {} dims; X must be N x C x {} spatial dims",
               ctx.input_rank(0).value_or(0), *kernel, spatial, spatial);
  NXRT_REQUIRE_MATCH(check_window_attrs(ctx, spatial, true));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Y is zero except at the positions I names, which take X's values. I indexes the unpooled
// shape (MaxPool's input); an output_shape input may enlarge it, keeping the positions.
class MaxUnpoolKernel final : public Kernel {
 public:
  explicit MaxUnpoolKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(UnpoolTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "scatter"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    if (indices.shape() != x.shape())
      return fail(ErrorCode::kRuntime,
                  fmt::format("MaxUnpool: I {} and X {} differ in shape", shape_to_string(indices.shape()),
                              shape_to_string(x.shape())),
                  "I holds one index per element of X", "feed MaxPool's Indices output for its Y");
    std::optional<std::vector<int64_t>> requested;
    if (ctx.has_input(2)) {
      const Tensor& given = ctx.input(2);
      requested.emplace(given.data_as<int64_t>(), given.data_as<int64_t>() + given.numel());
    }
    auto shapes = max_unpool_shapes(attrs_, x.shape(), requested);
    if (!shapes) return std::unexpected(std::move(shapes.error()));
    const Shape& pooled = shapes->pooled;
    const Shape& shape = shapes->output;
    auto y = ctx.output(0, x.dtype(), shape);
    if (!y) return std::unexpected(std::move(y.error()));
    T* out = y->mut_as<T>();
    std::fill(out, out + y->numel(), T(0));
    const T* in = x.data_as<T>();
    const int64_t* at = indices.data_as<int64_t>();
    const int64_t size = shape_numel(pooled);
    for (int64_t k = 0; k < x.numel(); ++k) {
      if (at[k] < 0 || at[k] >= size)
        return fail(ErrorCode::kRuntime,
                    fmt::format("MaxUnpool: index {} at position {} of I is outside the unpooled output {}", at[k], k,
                                shape_to_string(pooled)),
                    "indices address the flattened output of the pooled shape", "check I against X and kernel_shape");
      out[relocate(at[k], pooled, shape)] = in[k];
    }
    return {};
  }

  // An index of the pooled shape as the same coordinates in a larger output_shape: the
  // values keep their positions and the extra rows and columns stay zero.
  static int64_t relocate(int64_t index, const Shape& from, const Shape& to) {
    if (from == to) return index;
    int64_t out = 0, scale = 1;
    for (std::size_t d = from.size(); d-- > 0;) {
      out += (index % from[d]) * scale;
      index /= from[d];
      scale *= to[d];
    }
    return out;
  }

  WindowAttrs attrs_;
};

// ---- GlobalAveragePool, GlobalMaxPool ----

KernelMatch check_global_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) >= 3, "{}: X has rank {}; it must be N x C x at least one spatial dim",
               ctx.node().op_type, ctx.input_rank(0).value_or(3));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// Reduces every N x C plane of X to one value: reduce(plane pointer, plane size).
template <class T, class Reduce>
Expected<void> reduce_planes(KernelContext& ctx, const std::string& op, Reduce reduce) {
  const Tensor& x = ctx.input(0);
  const Shape& s = x.shape();
  if (s.size() < 3)
    return fail(ErrorCode::kRuntime, fmt::format("{}: X {} has no spatial dims", op, shape_to_string(s)));
  Shape out(s.size(), 1);
  out[0] = s[0];
  out[1] = s[1];
  auto y = ctx.output(0, x.dtype(), out);
  if (!y) return std::unexpected(y.error());
  const int64_t size = x.numel() / std::max<int64_t>(1, s[0] * s[1]);
  const T* xd = x.data_as<T>();
  T* yd = y->mut_as<T>();
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(size, 1));  // planes per chunk
  ctx.parallel().for_range(s[0] * s[1], grain, [&](int64_t p0, int64_t p1) {
    for (int64_t p = p0; p < p1; ++p) yd[p] = reduce(xd + p * size, size);
  });
  return {};
}

class GlobalPoolKernel final : public Kernel {
 public:
  explicit GlobalPoolKernel(bool max) : max_(max) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return max_ ? "global-maxpool" : "global-avgpool"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    if (max_)
      return reduce_planes<T>(ctx, "GlobalMaxPool", [](const T* p, int64_t n) {
        T m = n > 0 ? p[0] : std::numeric_limits<T>::lowest();
        for (int64_t i = 1; i < n; ++i) m = std::max(m, p[i]);
        return m;
      });
    return reduce_planes<T>(ctx, "GlobalAveragePool", [](const T* p, int64_t n) {
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += p[i];
      return n > 0 ? sum / static_cast<T>(n) : T(0);
    });
  }

  bool max_;
};

class GlobalLpPoolKernel final : public Kernel {
 public:
  explicit GlobalLpPoolKernel(double p) : p_(p) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(0).dtype() == DType::kFloat64) return run<double>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "global-lppool"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    return reduce_planes<T>(ctx, "GlobalLpPool", [p = p_](const T* x, int64_t n) {
      T sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += lp_term(x[i], p);
      return lp_root(sum, p);
    });
  }

  double p_;
};

KernelMatch check_global_lp_pool(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_global_pool(ctx));
  const double p = lp_pool_exponent(ctx.attrs(), ctx.opset());
  NXRT_REQUIRE(p > 0, "GlobalLpPool: p {} is not positive", p);
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

KernelDef global_lp_pool_def(int64_t since, int64_t until) {
  return KernelDef{{"", "GlobalLpPool", since}, until, check_global_lp_pool,
                   [](const NodeContext& ctx) {
                     return make_kernel<GlobalLpPoolKernel>(lp_pool_exponent(ctx.attrs(), ctx.opset()));
                   }};
}

KernelDef lp_pool_def(int64_t since, int64_t until) {
  return KernelDef{{"", "LpPool", since}, until, check_lp_pool, create_lp_pool};
}

KernelDef max_unpool_def(int64_t since, int64_t until) {
  return KernelDef{{"", "MaxUnpool", since}, until, check_max_unpool, [](const NodeContext& ctx) {
                     const std::size_t spatial = ctx.attrs().ints_or("kernel_shape", {}).size();
                     return make_kernel<MaxUnpoolKernel>(read_window_attrs(ctx.attrs(), spatial));
                   }};
}

KernelDef max_pool_def(int64_t since, int64_t until) {
  return KernelDef{{"", "MaxPool", since}, until, check_max_pool, create_max_pool};
}

KernelDef average_pool_def(int64_t since, int64_t until) {
  return KernelDef{{"", "AveragePool", since}, until, check_average_pool, create_average_pool};
}

KernelDef global_pool_def(const char* op, bool max) {
  return KernelDef{
      {"", op, 1}, 0, check_global_pool, [max](const NodeContext&) { return make_kernel<GlobalPoolKernel>(max); }};
}

}  // namespace

Expected<std::unique_ptr<Kernel>> make_global_average_pool_channels_last() {
  return make_kernel<ChannelsLastGlobalAveragePoolKernel>();
}

Expected<std::unique_ptr<Kernel>> make_max_pool_channels_last(const NodeContext& max_pool) {
  return make_kernel<ChannelsLastMaxPoolKernel>(
      read_window_attrs(max_pool.attrs(), max_pool.attrs().ints_or("kernel_shape", {}).size()));
}

std::vector<KernelDef> pool_kernels() {
  return {
      max_pool_def(1, 7),
      max_pool_def(8, 9),
      max_pool_def(10, 10),
      max_pool_def(11, 11),
      max_pool_def(12, 0),
      average_pool_def(1, 6),
      average_pool_def(7, 9),
      average_pool_def(10, 10),
      average_pool_def(11, 18),
      average_pool_def(19, 0),
      global_pool_def("GlobalAveragePool", false),
      global_pool_def("GlobalMaxPool", true),
      global_lp_pool_def(1, 1),
      global_lp_pool_def(2, 0),
      lp_pool_def(1, 1),
      lp_pool_def(2, 10),
      lp_pool_def(11, 17),
      lp_pool_def(18, 0),
      max_unpool_def(9, 10),
      max_unpool_def(11, 0),
  };
}

}  // namespace nxrt::cpu
