// exp over arrays: float in explicit SIMD vectors, double through std::exp.
#include "common/vector_math.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace nxrt::cpu {
namespace {

// Eight floats in the GCC/Clang vector extension, lowered to the target's widest fitting
// registers. Written as vectors because the compiler will not if-convert the clamps of a
// scalar version (comparisons may trap under the default -ftrapping-math) and so leaves
// the loop scalar.
typedef float Floats __attribute__((vector_size(32)));
typedef int32_t Ints __attribute__((vector_size(32)));
constexpr int64_t kWidth = 8;

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

}  // namespace

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

void exp_shifted(const double* x, double shift, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - shift);
}

void exp_shifted(const double* x, const double* shift, double* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - shift[i]);
}

}  // namespace nxrt::cpu
