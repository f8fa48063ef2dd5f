// NonMaxSuppression's selection, on host tensors, shared by the EPs that run it (the cpu EP,
// and the cuda EP after reading its inputs back): per batch and class, the boxes scoring above
// the threshold, best first (ties to the lower index), each kept unless it overlaps a kept box
// by more than the IoU threshold, up to the per-class limit.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

struct NmsParams {
  int64_t max_per_class = 0;             // max_output_boxes_per_class (absent: 0, nothing selected)
  float iou_threshold = 0;               // in [0, 1]
  std::optional<float> score_threshold;  // absent: every box is a candidate
  bool center_point_box = false;         // boxes as [x_center, y_center, width, height]
};

// boxes [B, N, 4] and scores [B, C, N], contiguous float on the host. Returns the selected
// (batch, class, box) triples, flattened in output order; shapes that do not fit, or an IoU
// threshold outside [0, 1], are a kRuntime error.
Expected<std::vector<int64_t>> select_boxes(const Tensor& boxes, const Tensor& scores, const NmsParams& params);

}  // namespace nxrt
