// exp and float16 conversion over arrays in explicit SIMD vectors; exp of double through
// std::exp.
#include "common/vector_math.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace nxrt::cpu {
namespace {

// Floats in the GCC/Clang vector extension: sixteen where the target has AVX-512's 64-byte
// registers, else eight (lowered to the widest registers that fit). Written as vectors because
// the compiler will not if-convert the clamps of a scalar version (comparisons may trap under
// the default -ftrapping-math) and so leaves the loop scalar.
#if defined(__AVX512F__)
constexpr int kVectorBytes = 64;
#else
constexpr int kVectorBytes = 32;
#endif
typedef float Floats __attribute__((vector_size(kVectorBytes)));
typedef int32_t Ints __attribute__((vector_size(kVectorBytes)));
typedef uint32_t Uints __attribute__((vector_size(kVectorBytes)));
typedef uint16_t Halves __attribute__((vector_size(kVectorBytes / 2)));
typedef double Doubles __attribute__((vector_size(kVectorBytes)));
constexpr int64_t kWidth = kVectorBytes / 4;

Floats exp_vector(Floats x) {
  const Floats lo = Floats{} - 87.33654475f;   // ln(FLT_MIN)
  const Floats hi = Floats{} + 88.3762626647949f;  // keeps 2^n a normal float
  constexpr float kRound = 12582912.0f;          // 1.5 * 2^23: adding it rounds to an integer
  Floats xc = x < lo ? lo : x;
  xc = xc > hi ? hi : xc;
  const Floats t = xc * 1.44269504088896341f + kRound;
  const Floats n = t - kRound;
  // n as an integer, read from the low mantissa bits of t.
  const Ints ni = std::bit_cast<Ints>(t) - std::bit_cast<int32_t>(kRound);
  // Cody-Waite: ln 2 split in two so r = x - n ln 2 keeps its low bits.
  Floats r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  Floats p = Floats{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const Ints scale_bits = (ni + 127) << 23;
  const Floats y = p * std::bit_cast<Floats>(scale_bits);
  return x < lo ? Floats{} : y;
}

Floats load(const float* p) {
  Floats v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The last n < kWidth elements go through a zero-padded vector.
Floats load_tail(const float* p, int64_t n) {
  Floats v{};
  std::memcpy(&v, p, static_cast<std::size_t>(n) * sizeof(float));
  return v;
}

void store_tail(float* p, Floats v, int64_t n) {
  std::memcpy(p, &v, static_cast<std::size_t>(n) * sizeof(float));
}

// float -> binary16 bits, the branch-free scheme of Marat Dukhan's FP16 library: scaling by
// 2^112 * 2^-110 and adding a bias of the value's binade makes the FPU round at binary16
// precision (to nearest even), subnormals included.
Uints float_to_half_bits(Floats f) {
  const Uints w = std::bit_cast<Uints>(f);
  Floats base = (std::bit_cast<Floats>(w & 0x7fffffffu) * 0x1.0p+112f) * 0x1.0p-110f;
  const Uints shl1_w = w + w;
  const Uints sign = w & 0x80000000u;
  Uints bias = shl1_w & 0xff000000u;
  bias = bias < 0x71000000u ? Uints{} + 0x71000000u : bias;
  base = std::bit_cast<Floats>((bias >> 1) + 0x07800000u) + base;
  const Uints bits = std::bit_cast<Uints>(base);
  const Uints nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  return (sign >> 16) | (shl1_w > 0xff000000u ? Uints{} + 0x7e00u : nonsign);
}

// binary16 bits (zero-extended) -> float: normals by rebiasing the exponent, subnormals by
// subtracting a magic 0.5.
Floats half_bits_to_float(Uints h) {
  const Uints w = h << 16;
  const Uints sign = w & 0x80000000u;
  const Uints two_w = w + w;
  const Floats normal = std::bit_cast<Floats>((two_w >> 4) + (0xe0u << 23)) * 0x1.0p-112f;
  const Floats subnormal = std::bit_cast<Floats>((two_w >> 17) | (126u << 23)) - 0.5f;
  const Uints magnitude = two_w < (1u << 27) ? std::bit_cast<Uints>(subnormal) : std::bit_cast<Uints>(normal);
  return std::bit_cast<Floats>(sign | magnitude);
}

Uints load_halves(const uint16_t* p, int64_t n) {
  Halves v{};
  std::memcpy(&v, p, static_cast<std::size_t>(n) * sizeof(uint16_t));
  return __builtin_convertvector(v, Uints);
}

void store_halves(uint16_t* p, Uints v, int64_t n) {
  const Halves h = __builtin_convertvector(v, Halves);
  std::memcpy(p, &h, static_cast<std::size_t>(n) * sizeof(uint16_t));
}

// Vector-wide running maximum, then across lanes and over the tail.
template <class V, class T>
T max_of(const T* x, int64_t n) {
  constexpr auto kW = static_cast<int64_t>(sizeof(V) / sizeof(T));
  T m = x[0];
  int64_t i = 0;
  if (n >= kW) {
    V acc;
    std::memcpy(&acc, x, sizeof acc);
    for (i = kW; i + kW <= n; i += kW) {
      V v;
      std::memcpy(&v, x + i, sizeof v);
      acc = acc < v ? v : acc;
    }
    for (int64_t j = 0; j < kW; ++j) m = m < acc[j] ? acc[j] : m;
  }
  for (; i < n; ++i) m = m < x[i] ? x[i] : m;
  return m;
}

}  // namespace

float lane_max(const float* x, int64_t n) { return max_of<Floats>(x, n); }
double lane_max(const double* x, int64_t n) { return max_of<Doubles>(x, n); }

void floats_to_halves(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) store_halves(y + i, float_to_half_bits(load(x + i)), kWidth);
  if (i < n) store_halves(y + i, float_to_half_bits(load_tail(x + i, n - i)), n - i);
}

void halves_to_floats(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const Floats v = half_bits_to_float(load_halves(x + i, kWidth));
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) store_tail(y + i, half_bits_to_float(load_halves(x + i, n - i)), n - i);
}

void exp_shifted(const float* x, float shift, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const Floats v = exp_vector(load(x + i) - shift);
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) store_tail(y + i, exp_vector(load_tail(x + i, n - i) - shift), n - i);
}

void exp_shifted(const float* x, const float* shift, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const Floats v = exp_vector(load(x + i) - load(shift + i));
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) store_tail(y + i, exp_vector(load_tail(x + i, n - i) - load_tail(shift + i, n - i)), n - i);
}

namespace {

// x * Phi(x): Phi(x) = erfc(-x / sqrt 2) / 2, erfc(a) for a >= 0 as Abramowitz and Stegun's
// 7.1.26, t (a1 + t (a2 + ... + t a5)) exp(-a^2) with t = 1 / (1 + p a), and erfc(-a) = 2 - erfc(a).
Floats gelu_erf_vector(Floats x) {
  const Floats a = (x < 0 ? -x : x) * 0.70710678118654752f;
  const Floats t = 1.0f / (1.0f + 0.3275911f * a);
  Floats poly = t * 1.061405429f - 1.453152027f;
  poly = poly * t + 1.421413741f;
  poly = poly * t - 0.284496736f;
  poly = poly * t + 0.254829592f;
  const Floats half_erfc = 0.5f * t * poly * exp_vector(-a * a);
  return x * (x < 0 ? half_erfc : 1.0f - half_erfc);
}

// 0.5 x (1 + tanh(z)), z = sqrt(2 / pi) (x + 0.044715 x^3), as x e / (e + 1) with e = exp(2z)
// (1 + tanh(z) = 2e / (e + 1); no cancellation where tanh(z) nears -1).
Floats gelu_tanh_vector(Floats x) {
  const Floats e = exp_vector(1.5957691216057308f * (x + 0.044715f * x * x * x));
  return x * (e / (e + 1.0f));
}

// fn over x in vectors, the tail zero-padded.
template <class Fn>
void map_vectors(const float* x, float* y, int64_t n, Fn fn) {
  int64_t i = 0;
  for (; i + kWidth <= n; i += kWidth) {
    const Floats v = fn(load(x + i));
    std::memcpy(y + i, &v, sizeof v);
  }
  if (i < n) store_tail(y + i, fn(load_tail(x + i, n - i)), n - i);
}

}  // namespace

void sigmoid(const float* x, float* y, int64_t n) {
  map_vectors(x, y, n, [](Floats v) { return 1.0f / (1.0f + exp_vector(-v)); });
}

void gelu_erf(const float* x, float* y, int64_t n) { map_vectors(x, y, n, gelu_erf_vector); }

void gelu_tanh(const float* x, float* y, int64_t n) { map_vectors(x, y, n, gelu_tanh_vector); }

void quick_gelu(const float* x, float alpha, float* y, int64_t n) {
  map_vectors(x, y, n, [alpha](Floats v) { return v / (1.0f + exp_vector(-alpha * v)); });
}

void exp_shifted(const double* x, double shift, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - shift);
}

void exp_shifted(const double* x, const double* shift, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - shift[i]);
}

}  // namespace nxrt::cpu
