// Coordinate transforms and interpolation weights shared by Resize, Upsample and GridSample,
// as every EP computes them.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

namespace nxrt {

// Resize's coordinate_transformation_mode: how an output coordinate maps to the input.
enum class CoordinateTransform {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

inline std::optional<CoordinateTransform> parse_coordinate_transform(std::string_view name) {
  if (name == "half_pixel") return CoordinateTransform::kHalfPixel;
  if (name == "half_pixel_symmetric") return CoordinateTransform::kHalfPixelSymmetric;
  if (name == "pytorch_half_pixel") return CoordinateTransform::kPytorchHalfPixel;
  if (name == "align_corners") return CoordinateTransform::kAlignCorners;
  if (name == "asymmetric") return CoordinateTransform::kAsymmetric;
  if (name == "tf_half_pixel_for_nn") return CoordinateTransform::kTfHalfPixelForNn;
  if (name == "tf_crop_and_resize") return CoordinateTransform::kTfCropAndResize;
  return std::nullopt;
}

// One axis of a resize: `resized` is length_original * scale, which the ONNX reference uses
// even where it is not a whole number (scales given instead of sizes).
struct AxisMapping {
  double scale = 1;
  double original = 1;
  double resized = 1;
  double roi_start = 0;  // tf_crop_and_resize only, normalized to [0, 1]
  double roi_end = 1;
};

// The input coordinate output coordinate x maps to.
inline double source_coordinate(CoordinateTransform mode, double x, const AxisMapping& m) {
  switch (mode) {
    case CoordinateTransform::kHalfPixel:
      return (x + 0.5) / m.scale - 0.5;
    case CoordinateTransform::kHalfPixelSymmetric: {
      const double adjustment = std::floor(m.resized) / m.resized;
      const double offset = m.original / 2 * (1 - adjustment);
      return offset + (x + 0.5) / m.scale - 0.5;
    }
    case CoordinateTransform::kPytorchHalfPixel:
      return m.resized == 1 ? -0.5 : (x + 0.5) / m.scale - 0.5;
    case CoordinateTransform::kAlignCorners:
      return m.resized == 1 ? 0 : x * (m.original - 1) / (m.resized - 1);
    case CoordinateTransform::kAsymmetric:
      return x / m.scale;
    case CoordinateTransform::kTfHalfPixelForNn:
      return (x + 0.5) / m.scale;
    case CoordinateTransform::kTfCropAndResize: {
      const double span = (m.roi_end - m.roi_start) * (m.original - 1);
      const double start = m.roi_start * (m.original - 1);
      return m.resized == 1 ? start + span / 2 : start + x * span / (m.resized - 1);
    }
  }
  return x;
}

// Keys' cubic convolution kernel with coefficient a at distance d (support [-2, 2]).
inline double cubic_kernel(double d, double a) {
  d = std::abs(d);
  if (d <= 1) return ((a + 2) * d - (a + 3)) * d * d + 1;
  if (d < 2) return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  return 0;
}

// Weights of the taps floor(x)-1 .. floor(x)+2 for t = x - floor(x).
inline std::array<double, 4> cubic_weights(double t, double a) {
  return {cubic_kernel(t + 1, a), cubic_kernel(t, a), cubic_kernel(1 - t, a), cubic_kernel(2 - t, a)};
}

// The triangle (linear interpolation) kernel at distance d.
inline double linear_kernel(double d) { return std::max(0.0, 1 - std::abs(d)); }

}  // namespace nxrt
