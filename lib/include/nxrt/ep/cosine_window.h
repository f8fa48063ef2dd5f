// The cosine-sum windows of ONNX 17 (HannWindow, HammingWindow, BlackmanWindow), shared by the
// EPs that generate them.
#pragma once

#include <array>

namespace nxrt {

// w[n] = a[0] - a[1] cos(2 pi n / N) + a[2] cos(4 pi n / N), with N the window's size
// (periodic) or size - 1 (symmetric).
struct CosineWindow {
  const char* op_type;
  std::array<double, 3> a;
};

inline constexpr std::array<CosineWindow, 3> kCosineWindows = {{
    {"HannWindow", {0.5, 0.5, 0.0}},
    {"HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0}},
    {"BlackmanWindow", {0.42, 0.5, 0.08}},
}};

}  // namespace nxrt
