// Array primitives that vectorize: sums and maxima with independent lanes, exp, and
// float <-> float16 conversion (softmax, normalization, reduction and Cast share them).
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// Partial results per lane: a single running float sum or max must be evaluated in order
// (the compiler may not reassociate), sixteen independent ones fill vector registers.
inline constexpr int64_t kLanes = 16;

// Sum of x[0, n) accumulated in Acc (double for float data keeps long rows accurate).
template <class Acc, class T>
Acc lane_sum(const T* x, int64_t n) {
  Acc lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) lanes[j] += static_cast<Acc>(x[i + j]);
  Acc sum = 0;
  for (int64_t j = 0; j < kLanes; ++j) sum += lanes[j];
  for (; i < n; ++i) sum += static_cast<Acc>(x[i]);
  return sum;
}

// Sum of (x[i] - mean)^2 over [0, n), in Acc.
template <class Acc, class T>
Acc lane_squared_deviation(const T* x, int64_t n, Acc mean) {
  Acc lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t j = 0; j < kLanes; ++j) {
      const Acc d = static_cast<Acc>(x[i + j]) - mean;
      lanes[j] += d * d;
    }
  Acc sum = 0;
  for (int64_t j = 0; j < kLanes; ++j) sum += lanes[j];
  for (; i < n; ++i) {
    const Acc d = static_cast<Acc>(x[i]) - mean;
    sum += d * d;
  }
  return sum;
}

// Maximum of x[0, n), n >= 1, in SIMD vectors (the compiler does not vectorize a max
// reduction by itself under IEEE semantics). NaNs may be skipped: a row holding one still
// yields NaN in softmax, where exp(NaN - max) propagates it.
float lane_max(const float* x, int64_t n);
double lane_max(const double* x, int64_t n);

// y[i] = exp(x[i] - shift). The float version evaluates exp in SIMD registers (Cephes'
// reduction and polynomial, within 1 ulp of std::exp; results below FLT_MIN flush to 0):
// std::exp is a libm call per element and would dominate a softmax.
void exp_shifted(const float* x, float shift, float* y, int64_t n);
void exp_shifted(const double* x, double shift, double* y, int64_t n);
// y[i] = exp(x[i] - shift[i]).
void exp_shifted(const float* x, const float* shift, float* y, int64_t n);
void exp_shifted(const double* x, const double* shift, double* y, int64_t n);

// y[i] = 1 / (1 + exp(-x[i])), exp evaluated as exp_shifted's (Sigmoid's float kernel:
// std::exp per element took 5 ns).
void sigmoid(const float* x, float* y, int64_t n);

// The GELU family in SIMD registers, exp as exp_shifted's. gelu_erf: x * Phi(x), Phi the normal CDF
// through Abramowitz and Stegun's erfc approximation 7.1.26 (Phi within 7e-8 of the exact one, as
// ONNX Runtime's MLAS also approximates erf); gelu_tanh: 0.5 x (1 + tanh(sqrt(2 / pi) (x +
// 0.044715 x^3))); quick_gelu: x * sigmoid(alpha x).
void gelu_erf(const float* x, float* y, int64_t n);
void gelu_tanh(const float* x, float* y, int64_t n);
void quick_gelu(const float* x, float alpha, float* y, int64_t n);

// IEEE binary16 bit patterns from floats, rounded to nearest even (NaN stays NaN, overflow
// gives infinity), and back (exact).
void floats_to_halves(const float* x, uint16_t* y, int64_t n);
void halves_to_floats(const uint16_t* x, float* y, int64_t n);

}  // namespace nxrt::cpu
