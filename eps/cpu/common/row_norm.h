// Layer normalization of one row of floats, as ONNX Runtime's fused normalizations compute it
// (SkipLayerNormalization and its simplified form, EmbedLayerNormalization): statistics in
// double, the row scaled in float.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "common/vector_math.h"

namespace nxrt::cpu {

struct RowStatistics {
  double mean = 0;     // 0 for the RMS form
  double inv_std = 0;  // 1 / sqrt(mean squared deviation from `mean` + epsilon)
};

inline RowStatistics row_statistics(const float* x, int64_t n, double epsilon, bool rms) {
  const double count = static_cast<double>(std::max<int64_t>(n, 1));
  const double mean = rms ? 0.0 : lane_sum<double>(x, n) / count;
  return {mean, 1.0 / std::sqrt(lane_squared_deviation<double>(x, n, mean) / count + epsilon)};
}

// y[i] = (x[i] - mean) * inv_std * gamma[i] (+ beta[i] when beta is not empty).
template <class T>
void normalize_row_to(const float* x, int64_t n, RowStatistics s, const std::vector<float>& gamma,
                      const std::vector<float>& beta, T* y) {
  const auto m = static_cast<float>(s.mean), k = static_cast<float>(s.inv_std);
  for (int64_t i = 0; i < n; ++i) {
    const auto at = static_cast<std::size_t>(i);
    y[i] = static_cast<T>((x[at] - m) * k * gamma[at] + (beta.empty() ? 0.f : beta[at]));
  }
}

}  // namespace nxrt::cpu
