// mel_weight_matrix (nxrt/ep/mel_weight_matrix.h).
#include "nxrt/ep/mel_weight_matrix.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace nxrt {
namespace {

constexpr double kFar = 1e15;  // beyond any row, and exact in both double and int64

}  // namespace

Expected<std::vector<double>> mel_weight_matrix(const MelParams& p) {
  const int64_t mels = p.num_mel_bins, dft_length = p.dft_length;
  if (mels < 1 || dft_length < 1 || p.sample_rate < 1)
    return fail(ErrorCode::kRuntime,
                fmt::format("MelWeightMatrix: num_mel_bins {}, dft_length {} and sample_rate {} must be positive", mels,
                            dft_length, p.sample_rate),
                "the filter bank needs positive sizes", "check the inputs");
  if (!std::isfinite(p.lower_edge_hertz) || !std::isfinite(p.upper_edge_hertz))
    return fail(ErrorCode::kRuntime,
                fmt::format("MelWeightMatrix: the edges {} Hz and {} Hz are not finite", p.lower_edge_hertz,
                            p.upper_edge_hertz),
                "the filters lie between two finite frequencies", "check lower_edge_hertz and upper_edge_hertz");
  const int64_t bins = dft_length / 2 + 1;
  auto mel = [](double f) { return 2595 * std::log10(1 + f / 700); };
  const double low_mel = mel(p.lower_edge_hertz);
  const double step = (mel(p.upper_edge_hertz) - low_mel) / static_cast<double>(mels + 2);
  std::vector<int64_t> edges(static_cast<std::size_t>(mels + 2));
  for (int64_t i = 0; i < mels + 2; ++i) {
    const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595) - 1);
    // Edges far outside the rows only shape the slopes; clamped so that the cast is defined.
    const double edge = std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(p.sample_rate));
    edges[static_cast<std::size_t>(i)] = static_cast<int64_t>(std::clamp(edge, -kFar, kFar));
  }
  std::vector<double> w(static_cast<std::size_t>(bins * mels), 0.0);
  auto set = [&](int64_t row, int64_t col, double v) {
    if (row >= 0 && row < bins) w[static_cast<std::size_t>(row * mels + col)] = v;
  };
  for (int64_t i = 0; i < mels; ++i) {
    const int64_t left = edges[static_cast<std::size_t>(i)], center = edges[static_cast<std::size_t>(i + 1)],
                  right = edges[static_cast<std::size_t>(i + 2)];
    // Rising from left to center, falling from center to right; only rows [0, bins) are kept.
    if (center == left) set(center, i, 1.0);
    for (int64_t j = std::max<int64_t>(left, 0); center != left && j <= std::min(center, bins - 1); ++j)
      set(j, i, static_cast<double>(j - left) / static_cast<double>(center - left));
    for (int64_t j = std::max<int64_t>(center, 0); j < std::min(right, bins); ++j)
      set(j, i, static_cast<double>(right - j) / static_cast<double>(right - center));
  }
  return w;
}

}  // namespace nxrt
