// Output comparison with BENCHMARKS.md's rule: |a - e| <= atol + rtol * |e| elementwise,
// exact for integers, booleans and strings, NaN equal to NaN.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "nxrt/ep/runtime_value.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

inline constexpr double kDefaultRtol = 1e-3;
inline constexpr double kDefaultAtol = 1e-5;

struct TensorDiff {
  bool ok = true;
  std::string problem;        // dtype or shape mismatch; empty when they agree
  int64_t elements = 0;
  int64_t mismatches = 0;
  int64_t first_mismatch = -1;  // flat index
  double max_abs = 0;           // over all elements
  double max_rel = 0;           // |a - e| / |e| over elements with e != 0
  double actual_at_first = 0;
  double expected_at_first = 0;
  // The smallest tolerances under which every element passes: atol with rtol = 0 and rtol
  // with atol = 0. Infinite when none does (a NaN or infinity against something else, an
  // integer mismatch for min_rtol where 0 was expected, or a dtype/shape problem).
  double min_atol = 0;
  double min_rtol = 0;
  // Histogram of |actual - expected|: `exact` counts equal elements (strings included),
  // `log10_buckets[k]` those with 10^k <= error < 10^(k+1), `nonfinite` NaN/infinity mismatches.
  int64_t exact = 0;
  int64_t nonfinite = 0;
  std::map<int, int64_t> log10_buckets;
};

TensorDiff compare_tensors(const Tensor& actual, const Tensor& expected, double rtol = kDefaultRtol,
                           double atol = kDefaultAtol);

// The same rule over values: sequences item by item (element counts and flat indices run
// across the items), and an empty optional equals only an empty optional.
TensorDiff compare_values(const RuntimeValue& actual, const RuntimeValue& expected, double rtol = kDefaultRtol,
                          double atol = kDefaultAtol);

// Element i of a contiguous numeric view as double (float16, bfloat16 and bool included);
// NaN for strings and other non-numeric types.
double element_as_double(const TensorView& view, int64_t i);

// float16 / bfloat16 bit patterns to float (for comparisons and printing).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace nxrt
