#include "common/int_depthwise.h"

#include <algorithm>
#include <array>
#include <optional>
#include <type_traits>

#include "common/requantize.h"

#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
#include <immintrin.h>
#define NXRT_DEPTHWISE_QUADS 1
#elif defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace nxrt::cpu {

template <class TX, class TW>
DepthwiseWeights::DepthwiseWeights(const TW* w, const std::vector<int32_t>& w_zero, TX x_zp, int64_t kernel_rows_,
                                   int64_t kernel_width_, int64_t channels_)
    : x_zero(x_zp),
      kernel_rows(kernel_rows_),
      kernel_width(kernel_width_),
      channels(channels_),
      by_tap(static_cast<std::size_t>(kernel_rows_ * kernel_width_ * channels_)),
      start(static_cast<std::size_t>(channels_)) {
  const int64_t taps = this->taps();
  bool fits_int8 = true;
  for (int64_t c = 0; c < channels; ++c) {
    const int32_t wz = w_zero.empty() ? 0 : w_zero[w_zero.size() == 1 ? 0 : static_cast<std::size_t>(c)];
    for (int64_t t = 0; t < taps; ++t) {
      const int32_t v = static_cast<int32_t>(w[c * taps + t]) - wz;
      by_tap[static_cast<std::size_t>(t * channels + c)] = v;
      start[static_cast<std::size_t>(c)] -= static_cast<int32_t>(x_zp) * v;
      fits_int8 = fits_int8 && v >= -128 && v <= 127;
    }
  }
#if defined(NXRT_DEPTHWISE_QUADS)
  if (!fits_int8 || channels < 16) return;
  row_quads = (kernel_width + 3) / 4;
  blocks = channels / 16;
  quad_weights.resize(static_cast<std::size_t>(kernel_rows * row_quads * blocks * 64));
  std::fill(quad_weights.data(), quad_weights.data() + quad_weights.size(), int8_t{0});
  quad_start.assign(static_cast<std::size_t>(blocks * 16), 0);
  const int32_t unsigned_zero = static_cast<int32_t>(x_zp) + (std::is_signed_v<TX> ? 128 : 0);
  for (int64_t c = 0; c < blocks * 16; ++c)
    for (int64_t r = 0; r < kernel_rows; ++r)
      for (int64_t e = 0; e < kernel_width; ++e) {
        const int32_t v = by_tap[static_cast<std::size_t>((r * kernel_width + e) * channels + c)];
        quad_weights.data()[(((r * row_quads + e / 4) * blocks + c / 16) * 16 + c % 16) * 4 + e % 4] =
            static_cast<int8_t>(v);
        quad_start[static_cast<std::size_t>(c)] -= unsigned_zero * v;
      }
#else
  (void)fits_int8;
#endif
}

bool DepthwiseWeights::fit(int32_t x_zp, const Window3& window, int64_t c) const {
  return x_zero == x_zp && channels == c && kernel_width == window[2].kernel &&
         kernel_rows == window[0].kernel * window[1].kernel;
}

namespace {

// The channels from `first` on of one output pixel, a tap at a time: acc[c] = start[c] + sum over
// taps t of src[t][c] * w[t][c] (src[t]: tap t's pixel of X, or the padding). With AVX-512
// sixteen channels at a time in a vector register, then the rest one by one.
template <class TX>
void pixel_by_taps(const TX* const* src, const DepthwiseWeights& w, int64_t first, int32_t* acc) {
  const int64_t taps = w.taps(), channels = w.channels;
  const int32_t* by_tap = w.by_tap.data();
  int64_t c = first;
#if defined(__AVX512F__)
  for (; c + 16 <= channels; c += 16) {
    __m512i sum = _mm512_loadu_si512(w.start.data() + c);
    for (int64_t t = 0; t < taps; ++t) {
      const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src[t] + c));
      const __m512i x = std::is_signed_v<TX> ? _mm512_maskz_cvtepi8_epi32(0xffff, bytes)
                                             : _mm512_maskz_cvtepu8_epi32(0xffff, bytes);
      sum = _mm512_add_epi32(sum, _mm512_mullo_epi32(x, _mm512_loadu_si512(by_tap + t * channels + c)));
    }
    _mm512_storeu_si512(acc + c, sum);
  }
#endif
  for (; c < channels; ++c) {
    int32_t sum = w.start[static_cast<std::size_t>(c)];
    for (int64_t t = 0; t < taps; ++t) sum += static_cast<int32_t>(src[t][c]) * by_tap[t * channels + c];
    acc[c] = sum;
  }
}

// Each tap's pixel of X (or the padding) for the output pixels of a row, one after the other:
// `at(ow)` gives output column ow's, the columns in order. Between the first and last columns
// whose taps all lie inside the input's row, every tap moves on by one stride.
template <class TX>
class TapSources {
 public:
  TapSources(const Window3& window, const TX* x, int64_t channels, const TX* padding)
      : window_(window), x_(x), channels_(channels), padding_(padding) {
    const auto& [dd, dh, dw] = window;
    const std::size_t taps = static_cast<std::size_t>(dd.kernel * dh.kernel * dw.kernel);
    src_.assign(taps, padding);
    step_.assign(taps, 0);
    kernel_rows_.assign(static_cast<std::size_t>(dd.kernel * dh.kernel), nullptr);
    inner_first_ = std::min(dw.out, (dw.pad_begin + dw.stride - 1) / dw.stride);
    const int64_t last_start = dw.in - 1 - (dw.kernel - 1) * dw.dilation + dw.pad_begin;  // of an inner window
    inner_end_ = last_start < 0 ? inner_first_ : std::clamp(last_start / dw.stride + 1, inner_first_, dw.out);
  }

  // Starts output row (od, oh).
  void start_row(int64_t od, int64_t oh) {
    const auto& [dd, dh, dw] = window_;
    for (int64_t a = 0; a < dd.kernel; ++a)
      for (int64_t b = 0; b < dh.kernel; ++b) {
        const int64_t id = od * dd.stride - dd.pad_begin + a * dd.dilation;
        const int64_t ih = oh * dh.stride - dh.pad_begin + b * dh.dilation;
        const bool inside = id >= 0 && id < dd.in && ih >= 0 && ih < dh.in;
        const auto r = static_cast<std::size_t>(a * dh.kernel + b);
        kernel_rows_[r] = inside ? x_ + (id * dh.in + ih) * dw.in * channels_ : nullptr;
        for (int64_t e = 0; e < dw.kernel; ++e)
          step_[r * static_cast<std::size_t>(dw.kernel) + static_cast<std::size_t>(e)] =
              inside ? dw.stride * channels_ : 0;
      }
  }

  const TX* const* at(int64_t ow) {
    const WindowDim& dw = window_[2];
    if (ow > inner_first_ && ow < inner_end_) {  // every tap one stride on from the last output's
      for (std::size_t t = 0; t < src_.size(); ++t) src_[t] += step_[t];
      return src_.data();
    }
    std::size_t t = 0;
    for (const TX* kernel_row : kernel_rows_)
      for (int64_t e = 0; e < dw.kernel; ++e) {
        const int64_t iw = ow * dw.stride - dw.pad_begin + e * dw.dilation;
        src_[t++] = kernel_row && iw >= 0 && iw < dw.in ? kernel_row + iw * channels_ : padding_;
      }
    return src_.data();
  }

 private:
  const Window3& window_;
  const TX* x_;
  int64_t channels_;
  const TX* padding_;
  std::vector<const TX*> src_;
  std::vector<int64_t> step_;             // from one output's tap to the next one's
  std::vector<const TX*> kernel_rows_;    // null in the padding
  int64_t inner_first_ = 0, inner_end_ = 0;  // the outputs whose taps all lie inside the input's row
};

#if defined(NXRT_DEPTHWISE_QUADS)
// Input rows interleaved for vpdpbusd: for output column ow, quad q of a kernel row and block b,
// 64 bytes at ((ow * row_quads + q) * blocks + b) * 64, the block's 16 channels' values at the
// quad's four taps, a channel's four side by side, as uint8. Taps in the padding or past the
// kernel's width read x_zp. Each row is interleaved once and kept while later output rows read
// it: row (id, ih) in slot (id mod depth span, ih mod height span), where the spans are the
// kernel's extents (dilated), so that no two kernel rows of one output row share a slot. The
// slots live in `storage`, which the caller keeps between calls: allocated per call, the 126 KiB
// of 144 channels 56 wide were fresh pages in some runs, 31 page faults that took 0.35 ms.
template <class TX>
class InterleavedRows {
 public:
  InterleavedRows(const Window3& window, const TX* x, const DepthwiseWeights& w, const TX* padding,
                  AlignedBuffer<uint8_t>& storage)
      : window_(window), x_(x), w_(w), padding_(padding), data_(storage) {
    const auto& [dd, dh, dw] = window;
    span_d_ = (dd.kernel - 1) * dd.dilation + 1;
    span_h_ = (dh.kernel - 1) * dh.dilation + 1;
    row_bytes_ = dw.out * w.row_quads * w.blocks * 64;
    const int64_t slots = span_d_ * span_h_;
    tags_.assign(static_cast<std::size_t>(slots), -1);
    data_.resize(static_cast<std::size_t>((slots + 1) * row_bytes_));
    interleave(nullptr, padding_row());
  }

  // Input row (id, ih), or one of the padding where that lies outside the input.
  const uint8_t* row(int64_t id, int64_t ih) {
    const auto& [dd, dh, dw] = window_;
    if (id < 0 || id >= dd.in || ih < 0 || ih >= dh.in) return padding_row();
    const int64_t slot = id % span_d_ * span_h_ + ih % span_h_, tag = id * dh.in + ih;
    uint8_t* out = data_.data() + slot * row_bytes_;
    if (tags_[static_cast<std::size_t>(slot)] != tag) {
      interleave(x_ + tag * dw.in * w_.channels, out);
      tags_[static_cast<std::size_t>(slot)] = tag;
    }
    return out;
  }

 private:
  uint8_t* padding_row() { return data_.data() + static_cast<int64_t>(tags_.size()) * row_bytes_; }

  // `row` of X (null: the padding) into `out`: per 16 channels, four 16-byte loads in one
  // vector, interleaved so that each channel's four taps are neighbours (vpermb).
  void interleave(const TX* row, uint8_t* out) const {
    static constexpr auto kInterleave = [] {
      std::array<uint8_t, 64> index{};
      for (int t = 0; t < 4; ++t)
        for (int c = 0; c < 16; ++c) index[static_cast<std::size_t>(4 * c + t)] = static_cast<uint8_t>(16 * t + c);
      return index;
    }();
    const __m512i interleave = _mm512_loadu_si512(kInterleave.data());
    const __m512i to_unsigned = _mm512_set1_epi8(static_cast<char>(0x80));
    const WindowDim& dw = window_[2];
    const int64_t channels = w_.channels, quads = w_.row_quads, blocks = w_.blocks;
    auto load = [](const TX* p) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)); };
    for (int64_t ow = 0; ow < dw.out; ++ow)
      for (int64_t q = 0; q < quads; ++q) {
        std::array<const TX*, 4> src{};
        for (int64_t e = 0; e < 4; ++e) {
          const int64_t tap = 4 * q + e, iw = ow * dw.stride - dw.pad_begin + tap * dw.dilation;
          src[static_cast<std::size_t>(e)] =
              row && tap < dw.kernel && iw >= 0 && iw < dw.in ? row + iw * channels : padding_;
        }
        uint8_t* quad = out + (ow * quads + q) * blocks * 64;
        for (int64_t b = 0; b < blocks; ++b) {
          const int64_t c = 16 * b;
          __m512i v = _mm512_zextsi128_si512(load(src[0] + c));
          v = _mm512_inserti32x4(v, load(src[1] + c), 1);
          v = _mm512_inserti32x4(v, load(src[2] + c), 2);
          v = _mm512_inserti32x4(v, load(src[3] + c), 3);
          v = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, interleave, v);  // (zero-masked: see requantize.h)
          if constexpr (std::is_signed_v<TX>) v = _mm512_xor_si512(v, to_unsigned);
          _mm512_storeu_si512(quad + 64 * b, v);
        }
      }
  }

  const Window3& window_;
  const TX* x_;
  const DepthwiseWeights& w_;
  const TX* padding_;
  int64_t span_d_ = 1, span_h_ = 1, row_bytes_ = 0;
  std::vector<int64_t> tags_;  // per slot, the row it holds (id * height + ih), or -1
  AlignedBuffer<uint8_t>& data_;
};
#endif

// depthwise_rows with Q the output: uint8_t or int8_t requantized, int32_t the sums as they are.
// KernelRows and RowQuads, where not 0, are w's, known when compiling so that g++ unrolls the
// loops over them (a 3x3 kernel: three vpdpbusd per block).
template <class TX, class Q, int KernelRows, int RowQuads>
void rows_into(const Window3& window, const TX* x, const DepthwiseWeights& w, const DepthwiseOutput& out, int64_t r0,
               int64_t r1) {
  const auto& [dd, dh, dw] = window;
  constexpr bool kRequantized = !std::is_same_v<Q, int32_t>;
  // Kept in locals: read through `w` and `out`, g++ loads them again after every byte store.
  const int64_t channels = w.channels;
  Q* const y = kRequantized ? static_cast<Q*>(out.requantized) : nullptr;
  const float* const scale = out.scale;
  const int32_t* const bias = out.bias;
  const std::vector<TX> padding(static_cast<std::size_t>(channels), static_cast<TX>(w.x_zero));
  std::vector<int32_t> acc(static_cast<std::size_t>(channels));
  int64_t first_by_taps = 0;  // the channels from here on go a tap at a time
#if defined(NXRT_DEPTHWISE_QUADS)
  const RequantizeVectors<std::conditional_t<kRequantized, Q, uint8_t>> requantize(out.zero);
  const int64_t kernel_rows = KernelRows ? KernelRows : w.kernel_rows, quads = RowQuads ? RowQuads : w.row_quads;
  const int64_t blocks = w.blocks;
  const int64_t column_bytes = quads * blocks * 64;  // an output column's in an interleaved row
  const int8_t* const quad_weights = w.quad_weights.data();
  std::optional<InterleavedRows<TX>> interleaved;
  std::vector<const uint8_t*> rows(static_cast<std::size_t>(kernel_rows));  // an output row's kernel rows
  std::vector<int32_t> starts(static_cast<std::size_t>(blocks * 16));      // quad_start plus the bias
  if (blocks > 0) {
    thread_local AlignedBuffer<uint8_t> interleaved_storage;  // this thread's, kept (see InterleavedRows)
    interleaved.emplace(window, x, w, padding.data(), interleaved_storage);
    first_by_taps = blocks * 16;
    for (int64_t c = 0; c < first_by_taps; ++c)
      starts[static_cast<std::size_t>(c)] =
          w.quad_start[static_cast<std::size_t>(c)] + (kRequantized && bias ? bias[c] : 0);
  }
#endif
  const bool by_taps = first_by_taps < channels;
  TapSources<TX> sources(window, x, channels, padding.data());
  for (int64_t row = r0; row < r1; ++row) {
    const int64_t od = row / dh.out, oh = row % dh.out;
    if (by_taps) sources.start_row(od, oh);
#if defined(NXRT_DEPTHWISE_QUADS)
    if (interleaved)
      for (int64_t a = 0; a < dd.kernel; ++a)
        for (int64_t b = 0; b < dh.kernel; ++b)
          rows[static_cast<std::size_t>(a * dh.kernel + b)] = interleaved->row(
              od * dd.stride - dd.pad_begin + a * dd.dilation, oh * dh.stride - dh.pad_begin + b * dh.dilation);
#endif
    for (int64_t ow = 0; ow < dw.out; ++ow) {
      const int64_t o = row * dw.out + ow;
#if defined(NXRT_DEPTHWISE_QUADS)
      // Block b: one vpdpbusd per quad of each kernel row, from the rows' interleaved values.
      for (int64_t b = 0; b < blocks; ++b) {
        __m512i sum = _mm512_loadu_si512(starts.data() + 16 * b);
#pragma GCC unroll 8
        for (int64_t r = 0; r < kernel_rows; ++r) {
          const uint8_t* values = rows[static_cast<std::size_t>(r)] + ow * column_bytes + 64 * b;
          const int8_t* weights = quad_weights + r * column_bytes + 64 * b;
#pragma GCC unroll 4
          for (int64_t q = 0; q < quads; ++q)
            sum = _mm512_dpbusd_epi32(sum, _mm512_loadu_si512(values + q * blocks * 64),
                                      _mm512_loadu_si512(weights + q * blocks * 64));
        }
        if constexpr (kRequantized) {
          requantize.store(sum, _mm512_loadu_ps(scale + 16 * b), y + o * channels + 16 * b, 0xffff);
        } else {
          _mm512_storeu_si512(acc.data() + 16 * b, sum);
        }
      }
#endif
      if (by_taps) {
        const int64_t f = first_by_taps;
        pixel_by_taps(sources.at(ow), w, f, acc.data());
        if constexpr (kRequantized)
          requantize_row(acc.data() + f, bias ? bias + f : nullptr, scale + f, out.zero, channels - f,
                         y + o * channels + f);
      }
      if constexpr (!kRequantized)
        for (int64_t c = 0; c < channels; ++c) out.planes[c * out.plane + o] = acc[static_cast<std::size_t>(c)];
    }
  }
}

// rows_into for requantized Q, its kernel rows and quads known when compiling for a 3x3 kernel.
template <class TX, class Q>
void requantized_rows(const Window3& window, const TX* x, const DepthwiseWeights& w, const DepthwiseOutput& out,
                      int64_t r0, int64_t r1) {
  if (w.kernel_rows == 3 && w.row_quads == 1) return rows_into<TX, Q, 3, 1>(window, x, w, out, r0, r1);
  rows_into<TX, Q, 0, 0>(window, x, w, out, r0, r1);
}

}  // namespace

template <class TX>
void depthwise_rows(const Window3& window, const TX* x, const DepthwiseWeights& w, const DepthwiseOutput& out,
                    int64_t r0, int64_t r1) {
  if (!out.requantized) return rows_into<TX, int32_t, 0, 0>(window, x, w, out, r0, r1);
  if (out.is_signed) return requantized_rows<TX, int8_t>(window, x, w, out, r0, r1);
  requantized_rows<TX, uint8_t>(window, x, w, out, r0, r1);
}

template DepthwiseWeights::DepthwiseWeights(const uint8_t*, const std::vector<int32_t>&, uint8_t, int64_t, int64_t,
                                            int64_t);
template DepthwiseWeights::DepthwiseWeights(const int8_t*, const std::vector<int32_t>&, uint8_t, int64_t, int64_t,
                                            int64_t);
template DepthwiseWeights::DepthwiseWeights(const uint8_t*, const std::vector<int32_t>&, int8_t, int64_t, int64_t,
                                            int64_t);
template DepthwiseWeights::DepthwiseWeights(const int8_t*, const std::vector<int32_t>&, int8_t, int64_t, int64_t,
                                            int64_t);
template void depthwise_rows<uint8_t>(const Window3&, const uint8_t*, const DepthwiseWeights&, const DepthwiseOutput&,
                                      int64_t, int64_t);
template void depthwise_rows<int8_t>(const Window3&, const int8_t*, const DepthwiseWeights&, const DepthwiseOutput&,
                                     int64_t, int64_t);

}  // namespace nxrt::cpu
