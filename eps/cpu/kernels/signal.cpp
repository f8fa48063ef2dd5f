// Signal processing: DFT, STFT, the cosine-sum windows (Hann, Hamming, Blackman) and
// MelWeightMatrix, computed in double and stored in the requested type.
#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/cosine_window.h"
#include "nxrt/ep/mel_weight_matrix.h"

namespace nxrt::cpu {
namespace {

// The single integer of a scalar (or one-element) input.
int64_t scalar_int(const Tensor& t) { return t.to_int64_vector().at(0); }

// Declines unless input i, when present, is a one-element int32/int64 tensor.
KernelMatch check_scalar_int(const NodeContext& ctx, std::size_t i, std::string_view what) {
  if (i >= ctx.input_count() || !ctx.has_input(i)) return KernelMatch::supported();
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kInt32, DType::kInt64}));
  const auto n = static_numel(ctx.input_type(i));
  NXRT_REQUIRE(!n || *n == 1, "{}: {} (input {}) has {} values; it must be a scalar", ctx.node().op_type, what, i, *n);
  return KernelMatch::supported();
}

// One DFT of length n: out[k] = scale * sum_j in[j] * exp(sign * 2*pi*i * j*k / n) for k <
// out_len; `in` has in_len complex values (zero beyond), both interleaved re, im.
class DftPlan {
 public:
  DftPlan(int64_t n, bool inverse) : n_(n), inverse_(inverse), cos_(static_cast<std::size_t>(n)), sin_(cos_.size()) {
    for (int64_t m = 0; m < n; ++m) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
      cos_[static_cast<std::size_t>(m)] = std::cos(angle);
      sin_[static_cast<std::size_t>(m)] = (inverse ? 1 : -1) * std::sin(angle);
    }
  }

  void run(const double* in, int64_t in_len, double* out, int64_t out_len) const {
    const int64_t used = std::min(in_len, n_);
    const double scale = inverse_ ? 1.0 / static_cast<double>(n_) : 1.0;
    for (int64_t k = 0; k < out_len; ++k) {
      double re = 0, im = 0;
      int64_t m = 0;  // j*k mod n, kept without overflow
      for (int64_t j = 0; j < used; ++j) {
        const double c = cos_[static_cast<std::size_t>(m)], s = sin_[static_cast<std::size_t>(m)];
        re += in[2 * j] * c - in[2 * j + 1] * s;
        im += in[2 * j] * s + in[2 * j + 1] * c;
        m += k;
        if (m >= n_) m %= n_;
      }
      out[2 * k] = re * scale;
      out[2 * k + 1] = im * scale;
    }
  }

 private:
  int64_t n_;
  bool inverse_;
  std::vector<double> cos_, sin_;
};

// ---- DFT ----

// DFT-17 takes the axis as an attribute (default 1); DFT-20 as optional input 2 (default -2,
// the last signal axis), nullopt when that input is computed at run time.
std::optional<int64_t> dft_axis(const NodeContext& ctx) {
  if (ctx.opset() < 20) return ctx.attrs().int_or("axis", 1);
  if (ctx.input_count() < 3 || !ctx.has_input(2)) return -2;
  const auto v = ctx.constant_ints(2);
  return v && v->size() == 1 ? std::optional<int64_t>(v->front()) : std::nullopt;
}

KernelMatch check_dft(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 1, "dft_length"));
  if (ctx.opset() >= 20) {
    NXRT_REQUIRE(!ctx.attrs().has("axis"),
                 "DFT: opset {} takes the axis as input 2, but the node has an axis attribute; re-export the model "
                 "for this opset", ctx.opset());
    NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 2, "axis"));
  }
  const std::optional<int64_t> given_axis = dft_axis(ctx);
  if (auto rank = ctx.input_rank(0); rank && given_axis) {
    NXRT_REQUIRE(*rank >= 2, "DFT: the input has rank {}; it needs a signal axis and a last dim of 1 or 2", *rank);
    const int64_t axis = *given_axis;
    const int64_t a = axis < 0 ? axis + *rank : axis;
    NXRT_REQUIRE(a >= 0 && a < *rank - 1, "DFT: axis {} is out of range for rank {}; the last dim holds re, im", axis,
                 *rank);
  }
  if (auto shape = ctx.input_static_shape(0))
    NXRT_REQUIRE(shape->back() == 1 || shape->back() == 2,
                 "DFT: the input's last dim is {}; it must be 1 (real) or 2 (complex)", shape->back());
  return KernelMatch::supported();
}

class DftKernel final : public Kernel {
 public:
  // axis_input: DFT-20, the axis comes from input 2 (default -2) instead of `axis`.
  DftKernel(int64_t axis, bool axis_input, bool inverse, bool onesided)
      : axis_(axis), axis_input_(axis_input), inverse_(inverse), onesided_(onesided) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t given = axis_input_ && ctx.input_count() > 2 && ctx.has_input(2) ? scalar_int(ctx.input(2)) : axis_;
    const int64_t axis = given < 0 ? given + rank : given;
    const int64_t components = shape.back();
    if (rank < 2 || axis < 0 || axis >= rank - 1 || (components != 1 && components != 2))
      return fail(ErrorCode::kRuntime, fmt::format("DFT: input {} does not fit axis {}", shape_to_string(shape), given),
                  "the input needs the signal axis before a last dim of 1 (real) or 2 (complex)",
                  "check the input's shape and the axis attribute");
    const int64_t in_len = shape[static_cast<std::size_t>(axis)];
    const int64_t n = ctx.has_input(1) && ctx.input_count() > 1 ? scalar_int(ctx.input(1)) : in_len;
    if (n < 1)
      return fail(ErrorCode::kRuntime, fmt::format("DFT: dft_length is {}", n), "the DFT needs a length >= 1",
                  "give a positive dft_length");
    const int64_t out_len = onesided_ ? n / 2 + 1 : n;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= shape[static_cast<std::size_t>(d)];
    for (int64_t d = axis + 1; d < rank - 1; ++d) inner *= shape[static_cast<std::size_t>(d)];
    Shape out_shape = shape;
    out_shape[static_cast<std::size_t>(axis)] = out_len;
    out_shape.back() = 2;
    auto y = ctx.output(0, dtype_of<T>(), out_shape);
    if (!y) return std::unexpected(y.error());
    const T* in = x.data_as<T>();
    T* out = y->template mut_as<T>();
    const DftPlan plan(n, inverse_);
    ctx.parallel().for_range(outer * inner, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> signal(static_cast<std::size_t>(2 * in_len)), spectrum(static_cast<std::size_t>(2 * out_len));
      for (int64_t job = b0; job < b1; ++job) {
        const int64_t o = job / inner, i = job % inner;
        for (int64_t j = 0; j < in_len; ++j) {
          const T* e = in + ((o * in_len + j) * inner + i) * components;
          signal[static_cast<std::size_t>(2 * j)] = static_cast<double>(e[0]);
          signal[static_cast<std::size_t>(2 * j + 1)] = components == 2 ? static_cast<double>(e[1]) : 0.0;
        }
        plan.run(signal.data(), in_len, spectrum.data(), out_len);
        for (int64_t k = 0; k < out_len; ++k) {
          T* e = out + ((o * out_len + k) * inner + i) * 2;
          e[0] = static_cast<T>(spectrum[static_cast<std::size_t>(2 * k)]);
          e[1] = static_cast<T>(spectrum[static_cast<std::size_t>(2 * k + 1)]);
        }
      }
    });
    return {};
  }

  int64_t axis_;
  bool axis_input_;
  bool inverse_;
  bool onesided_;
};

// ---- STFT ----

KernelMatch check_stft(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 1, "frame_step"));
  NXRT_REQUIRE(ctx.has_input(1), "STFT: the frame_step input is missing; it is required");
  NXRT_REQUIRE(ctx.input_count() <= 2 || !ctx.has_input(2) || ctx.input_dtype(2) == ctx.input_dtype(0),
               "STFT: the window has type {} and the signal {}; they must match", dtype_name(ctx.input_dtype(2)),
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 3, "frame_length"));
  NXRT_REQUIRE((ctx.input_count() > 2 && ctx.has_input(2)) || (ctx.input_count() > 3 && ctx.has_input(3)),
               "STFT: neither window nor frame_length is given; one of them sets the frame length");
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "STFT: the signal has rank {}; it must be [batch, length, 1 or 2]",
               *ctx.input_rank(0));
  return KernelMatch::supported();
}

class StftKernel final : public Kernel {
 public:
  explicit StftKernel(bool onesided) : onesided_(onesided) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const Tensor* window = ctx.input_count() > 2 && ctx.has_input(2) ? &ctx.input(2) : nullptr;
    const int64_t step = scalar_int(ctx.input(1));
    const int64_t frame = ctx.input_count() > 3 && ctx.has_input(3) ? scalar_int(ctx.input(3)) : window->numel();
    auto bad = [&](std::string what) {
      return fail(ErrorCode::kRuntime, "STFT: " + what, "the signal, frame_step, window and frame_length disagree",
                  "check the STFT inputs");
    };
    if (shape.size() != 3 || (shape[2] != 1 && shape[2] != 2))
      return bad(fmt::format("the signal is {}; it must be [batch, length, 1 or 2]", shape_to_string(shape)));
    if (step < 1 || frame < 1 || frame > shape[1])
      return bad(fmt::format("frame_step {} and frame_length {} do not fit a signal of length {}", step, frame,
                             shape[1]));
    if (window && window->numel() != frame)
      return bad(fmt::format("the window has {} values but frame_length is {}", window->numel(), frame));
    const int64_t batch = shape[0], length = shape[1], components = shape[2];
    const int64_t frames = 1 + (length - frame) / step;
    const int64_t bins = onesided_ ? frame / 2 + 1 : frame;
    auto y = ctx.output(0, dtype_of<T>(), {batch, frames, bins, 2});
    if (!y) return std::unexpected(y.error());
    const T* in = x.data_as<T>();
    const T* win = window ? window->data_as<T>() : nullptr;
    T* out = y->template mut_as<T>();
    const DftPlan plan(frame, false);
    ctx.parallel().for_range(batch * frames, 1, [&](int64_t b0, int64_t b1) {
      std::vector<double> signal(static_cast<std::size_t>(2 * frame)), spectrum(static_cast<std::size_t>(2 * bins));
      for (int64_t job = b0; job < b1; ++job) {
        const int64_t b = job / frames, f = job % frames;
        for (int64_t j = 0; j < frame; ++j) {
          const T* e = in + (b * length + f * step + j) * components;
          const double w = win ? static_cast<double>(win[j]) : 1.0;
          signal[static_cast<std::size_t>(2 * j)] = static_cast<double>(e[0]) * w;
          signal[static_cast<std::size_t>(2 * j + 1)] = components == 2 ? static_cast<double>(e[1]) * w : 0.0;
        }
        plan.run(signal.data(), frame, spectrum.data(), bins);
        std::transform(spectrum.begin(), spectrum.end(), out + job * bins * 2,
                       [](double v) { return static_cast<T>(v); });
      }
    });
    return {};
  }

  bool onesided_;
};

// ---- Windows and MelWeightMatrix ----

// output_datatype names an ONNX type the kernels can store.
KernelMatch check_output_datatype(const NodeContext& ctx) {
  const int64_t code = ctx.attrs().int_or("output_datatype", 1);
  const auto t = dtype_from_onnx(static_cast<int32_t>(code));
  NXRT_REQUIRE(t && *t != DType::kBool && *t != DType::kString && *t != DType::kBFloat16 && *t != DType::kUndefined,
               "{}: output_datatype {} is not supported by the cpu EP; it supports the float and integer types",
               ctx.node().op_type, code);
  return KernelMatch::supported();
}

// Writes values (computed in double) to output 0 as the node's output_datatype.
Expected<void> write_as(KernelContext& ctx, DType dtype, const Shape& shape, const std::vector<double>& values) {
  auto y = ctx.output(0, dtype, shape);
  if (!y) return std::unexpected(y.error());
  return dispatch_dtype(AllNumericTypes{}, dtype, [&](auto tag) -> Expected<void> {
    using O = typename decltype(tag)::type;
    O* out = y->template mut_as<O>();
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = static_cast<O>(static_cast<ComputeType<O>>(values[i]));
    return {};
  });
}

KernelMatch check_window(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "{}: the size input is missing; it is required", ctx.node().op_type);
  NXRT_REQUIRE_MATCH(check_scalar_int(ctx, 0, "size"));
  return check_output_datatype(ctx);
}

// One of kCosineWindows (nxrt/ep/cosine_window.h).
class CosineWindowKernel final : public Kernel {
 public:
  CosineWindowKernel(std::array<double, 3> a, bool periodic, DType dtype) : a_(a), periodic_(periodic), dtype_(dtype) {}

  Expected<void> compute(KernelContext& ctx) override {
    const int64_t size = scalar_int(ctx.input(0));
    if (size < 0)
      return fail(ErrorCode::kRuntime, fmt::format("window size {} is negative", size), "a window needs size >= 0",
                  "give a non-negative size");
    const double n_total = static_cast<double>(periodic_ ? size : size - 1);
    std::vector<double> w(static_cast<std::size_t>(size));
    for (int64_t n = 0; n < size; ++n) {
      const double angle = 2 * std::numbers::pi * static_cast<double>(n) / n_total;
      w[static_cast<std::size_t>(n)] = a_[0] - a_[1] * std::cos(angle) + a_[2] * std::cos(2 * angle);
    }
    return write_as(ctx, dtype_, {size}, w);
  }

 private:
  std::array<double, 3> a_;
  bool periodic_;
  DType dtype_;
};

KernelDef window_def(const char* op, std::array<double, 3> a) {
  return KernelDef{{"", op, 17}, 0, check_window, [a](const NodeContext& ctx) {
                     const auto dtype = *dtype_from_onnx(static_cast<int32_t>(ctx.attrs().int_or("output_datatype", 1)));
                     return make_kernel<CosineWindowKernel>(a, ctx.attrs().int_or("periodic", 1) != 0, dtype);
                   }};
}

KernelMatch check_mel_weight_matrix(const NodeContext& ctx) {
  for (std::size_t i : {0, 1, 2}) NXRT_REQUIRE_MATCH(check_scalar_int(ctx, i, "an integer parameter"));
  for (std::size_t i : {3, 4}) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kFloat32, DType::kFloat64}));
  return check_output_datatype(ctx);
}

// The filter bank (nxrt/ep/mel_weight_matrix.h) from the five scalar inputs.
class MelWeightMatrixKernel final : public Kernel {
 public:
  explicit MelWeightMatrixKernel(DType dtype) : dtype_(dtype) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto as_double = [&](std::size_t i) {
      const Tensor& t = ctx.input(i);
      return t.dtype() == DType::kFloat32 ? static_cast<double>(*t.data_as<float>()) : *t.data_as<double>();
    };
    const MelParams params{.num_mel_bins = scalar_int(ctx.input(0)),
                           .dft_length = scalar_int(ctx.input(1)),
                           .sample_rate = scalar_int(ctx.input(2)),
                           .lower_edge_hertz = as_double(3),
                           .upper_edge_hertz = as_double(4)};
    auto w = mel_weight_matrix(params);
    if (!w) return std::unexpected(w.error());
    return write_as(ctx, dtype_, {params.dft_length / 2 + 1, params.num_mel_bins}, *w);
  }

 private:
  DType dtype_;
};

Expected<std::unique_ptr<Kernel>> create_dft(const NodeContext& ctx) {
  const bool axis_input = ctx.opset() >= 20;
  return make_kernel<DftKernel>(axis_input ? -2 : ctx.attrs().int_or("axis", 1), axis_input,
                                ctx.attrs().int_or("inverse", 0) != 0, ctx.attrs().int_or("onesided", 0) != 0);
}

}  // namespace

std::vector<KernelDef> signal_kernels() {
  std::vector<KernelDef> defs = {
      KernelDef{{"", "DFT", 17}, 19, check_dft, create_dft},
      KernelDef{{"", "DFT", 20}, 0, check_dft, create_dft},
      KernelDef{{"", "STFT", 17}, 0, check_stft,
                [](const NodeContext& ctx) {
                  return make_kernel<StftKernel>(ctx.attrs().int_or("onesided", 1) != 0);
                }},
      KernelDef{{"", "MelWeightMatrix", 17}, 0, check_mel_weight_matrix,
                [](const NodeContext& ctx) {
                  return make_kernel<MelWeightMatrixKernel>(
                      *dtype_from_onnx(static_cast<int32_t>(ctx.attrs().int_or("output_datatype", 1))));
                }},
  };
  for (const CosineWindow& w : kCosineWindows) defs.push_back(window_def(w.op_type, w.a));
  return defs;
}

}  // namespace nxrt::cpu
