// Requantization: int32 sums of an integer product back to uint8 or int8. saturate_round is
// every quantizing op's last step; the rest is QLinearConv's form, saturate(round_half_even((sum
// + bias) * scale) + zero_point): the zero point added after rounding, as ONNX Runtime's MLAS
// does (added before, the sum would round once more where the product has a fraction, and a
// value in a few hundred thousand came out a step away from ORT's).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#if defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace nxrt::cpu {

// v rounded half to even (the default rounding mode), then clamped to Q's range.
template <class Q>
Q saturate_round(float v) {
  const float r = std::nearbyint(v);
  const float lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  return static_cast<Q>(std::clamp(r, lo, hi));
}

// v quantized with zero point `zero`: rounded half to even, then moved by `zero` and clamped to
// Q's range (ONNX Runtime's order: v + zero would round once more where v has a fraction).
template <class Q>
Q quantize_rounded(float v, float zero) {
  return saturate_round<Q>(std::nearbyint(v) + zero);
}

// quantize_rounded<Q>((sum + bias) * scale, zero), the sum wrapping as int32 does: one value of
// requantize_lanes.
template <class Q>
Q requantize_value(int32_t sum, int32_t bias, float scale, float zero) {
  const auto biased = static_cast<int32_t>(static_cast<uint32_t>(sum) + static_cast<uint32_t>(bias));
  return quantize_rounded<Q>(static_cast<float>(biased) * scale, zero);
}

inline constexpr int64_t kRequantizeLanes = 16;

// out[l] = requantize_value<Q>(sums[l], bias[l], scale[l], zero) for the 16 lanes l, in vector
// registers: the products clamped to Q's range less the zero point (whole numbers, so before or
// after rounding is the same, and no integer overflows), rounded half to even, moved by the zero
// point. With AVX-512 rounded by the conversion to integers (the default rounding mode) and
// saturated to Q as the bytes are stored; elsewhere, in GCC's portable vectors, by adding and
// taking away 1.5 * 2^23 (exact below 2^22).
#if defined(__AVX512F__)
// Requantizing to Q with zero point `zero`, its constants in vector registers (built once for
// many vectors). (Zero-masked forms throughout: GCC 12 warns of the plain ones' undefined start.)
template <class Q>
struct RequantizeVectors {
  static_assert(sizeof(Q) == 1 && kRequantizeLanes == 16);
  static constexpr __mmask16 kAll = 0xffff;
  __m512 hi, lo;
  __m512i zero;

  explicit RequantizeVectors(float z)
      : hi(_mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::max()) - z)),
        lo(_mm512_set1_ps(static_cast<float>(std::numeric_limits<Q>::lowest()) - z)),
        zero(_mm512_set1_epi32(static_cast<int32_t>(z))) {}

  // The lanes of `mask` of requantize_value<Q>(biased, 0, scale, zero) stored at out (the
  // others not written). Clamped to Q's range less the zero point, the sum with it needs no
  // further clamp: the saturating stores only narrow.
  [[gnu::always_inline]] void store(__m512i biased, __m512 scale, Q* out, __mmask16 mask) const {
    __m512 v = _mm512_maskz_mul_ps(kAll, _mm512_maskz_cvtepi32_ps(kAll, biased), scale);
    v = _mm512_maskz_max_ps(kAll, _mm512_maskz_min_ps(kAll, v, hi), lo);
    const __m512i rounded = _mm512_add_epi32(_mm512_maskz_cvtps_epi32(kAll, v), zero);
    if constexpr (std::is_signed_v<Q>) {
      _mm512_mask_cvtsepi32_storeu_epi8(out, mask, rounded);
    } else {
      _mm512_mask_cvtusepi32_storeu_epi8(out, mask, rounded);
    }
  }
};

// The first n of 16 lanes (none for n <= 0).
inline __mmask16 first_lanes(int64_t n) {
  return n <= 0 ? __mmask16{0} : n >= 16 ? __mmask16{0xffff} : static_cast<__mmask16>((1u << n) - 1);
}

// The lanes of `mask` only (the others neither read nor written).
template <class Q>
inline void requantize_masked_lanes(const int32_t* sums, const int32_t* bias, const float* scale, float zero, Q* out,
                                    __mmask16 mask) {
  const __m512i biased = _mm512_add_epi32(_mm512_maskz_loadu_epi32(mask, sums), _mm512_maskz_loadu_epi32(mask, bias));
  RequantizeVectors<Q>(zero).store(biased, _mm512_maskz_loadu_ps(mask, scale), out, mask);
}

template <class Q>
inline void requantize_lanes(const int32_t* sums, const int32_t* bias, const float* scale, float zero, Q* out) {
  requantize_masked_lanes(sums, bias, scale, zero, out, 0xffff);
}
#else
template <class Q>
inline void requantize_lanes(const int32_t* sums, const int32_t* bias, const float* scale, float zero, Q* out) {
  using Floats = float __attribute__((vector_size(64)));
  using Ints = int32_t __attribute__((vector_size(64)));
  using Words = uint32_t __attribute__((vector_size(64)));
  using SignedBytes = int8_t __attribute__((vector_size(16)));
  using UnsignedBytes = uint8_t __attribute__((vector_size(16)));
  using Bytes = std::conditional_t<std::is_signed_v<Q>, SignedBytes, UnsignedBytes>;
  static_assert(sizeof(Floats) / sizeof(float) == kRequantizeLanes && sizeof(Q) == 1);
  constexpr float kRound = 12582912.f;
  const Floats lo = Floats{} + (static_cast<float>(std::numeric_limits<Q>::lowest()) - zero);
  const Floats hi = Floats{} + (static_cast<float>(std::numeric_limits<Q>::max()) - zero);
  Words s, b;
  Floats sc;
  std::memcpy(&s, sums, sizeof s);
  std::memcpy(&b, bias, sizeof b);
  std::memcpy(&sc, scale, sizeof sc);
  Floats v = __builtin_convertvector(reinterpret_cast<Ints>(s + b), Floats) * sc;  // wrapping sum
  v = v < lo ? lo : v;
  v = v > hi ? hi : v;
  v = (v + kRound) - kRound + zero;
  const Bytes q = __builtin_convertvector(__builtin_convertvector(v, Ints), Bytes);
  std::memcpy(out, &q, sizeof q);
}
#endif

// requantize_lanes for the first `count` (below 16) lanes only.
template <class Q>
inline void requantize_first_lanes(const int32_t* sums, const int32_t* bias, const float* scale, float zero, Q* out,
                                   int64_t count) {
#if defined(__AVX512F__)
  requantize_masked_lanes(sums, bias, scale, zero, out, first_lanes(count));
#else
  for (int64_t i = 0; i < count; ++i) out[i] = requantize_value<Q>(sums[i], bias[i], scale[i], zero);
#endif
}

// out[j] = requantize_value<Q>(sums[j], bias[j], scale[j], zero) for j in [0, count): a row of
// sums with a bias (none: null) and scale per column, sixteen at a time, the rest in one masked
// vector.
template <class Q>
void requantize_row(const int32_t* sums, const int32_t* bias, const float* scale, float zero, int64_t count, Q* out) {
  static constexpr int32_t kNoBias[kRequantizeLanes] = {};
  int64_t j = 0;
  for (; j + kRequantizeLanes <= count; j += kRequantizeLanes)
    requantize_lanes(sums + j, bias ? bias + j : kNoBias, scale + j, zero, out + j);
  if (j < count) requantize_first_lanes(sums + j, bias ? bias + j : kNoBias, scale + j, zero, out + j, count - j);
}

// out[r * out_ld + j] = requantize_value<Q>(sums[r * sums_ld + j], bias[j], scale[j], zero) for
// r in [0, rows), j in [0, count): rows of a GEMM's tile. With AVX-512 and at most 32 columns, the
// columns' biases and scales, and the constants, are loaded once for all the rows.
template <class Q>
void requantize_rows(const int32_t* sums, int64_t sums_ld, int64_t rows, const int32_t* bias, const float* scale,
                     float zero, int64_t count, Q* out, int64_t out_ld) {
#if defined(__AVX512F__)
  if (count <= 2 * kRequantizeLanes) {
    const __mmask16 low = first_lanes(count), high = first_lanes(count - kRequantizeLanes);
    const RequantizeVectors<Q> k(zero);
    const __m512i b0 = bias ? _mm512_maskz_loadu_epi32(low, bias) : _mm512_setzero_si512();
    const __m512i b1 = bias ? _mm512_maskz_loadu_epi32(high, bias + kRequantizeLanes) : _mm512_setzero_si512();
    const __m512 s0 = _mm512_maskz_loadu_ps(low, scale), s1 = _mm512_maskz_loadu_ps(high, scale + kRequantizeLanes);
    for (int64_t r = 0; r < rows; ++r) {
      const int32_t* row = sums + r * sums_ld;
      Q* o = out + r * out_ld;
      k.store(_mm512_add_epi32(_mm512_maskz_loadu_epi32(low, row), b0), s0, o, low);
      if (high) k.store(_mm512_add_epi32(_mm512_maskz_loadu_epi32(high, row + kRequantizeLanes), b1), s1,
                        o + kRequantizeLanes, high);
    }
    return;
  }
#endif
  for (int64_t r = 0; r < rows; ++r) requantize_row(sums + r * sums_ld, bias, scale, zero, count, out + r * out_ld);
}

// out[i] = requantize_value<Q>(sums[i], bias, scale, zero) for i in [0, count): one output
// channel's sums.
template <class Q>
void requantize_channel(const int32_t* sums, int64_t count, int32_t bias, float scale, float zero, Q* out) {
  int32_t biases[kRequantizeLanes];
  float scales[kRequantizeLanes];
  std::fill_n(biases, kRequantizeLanes, bias);
  std::fill_n(scales, kRequantizeLanes, scale);
  int64_t i = 0;
  for (; i + kRequantizeLanes <= count; i += kRequantizeLanes)
    requantize_lanes(sums + i, biases, scales, zero, out + i);
  for (; i < count; ++i) out[i] = requantize_value<Q>(sums[i], bias, scale, zero);
}

}  // namespace nxrt::cpu
