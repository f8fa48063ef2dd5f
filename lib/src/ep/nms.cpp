// select_boxes (nxrt/ep/nms.h).
#include "nxrt/ep/nms.h"

#include <fmt/format.h>

#include <algorithm>

namespace nxrt {
namespace {

// A box as its corners, min first.
struct Box {
  float y1, x1, y2, x2;
};

Box corners(const float* b, bool center) {
  if (center) return {b[1] - b[3] / 2, b[0] - b[2] / 2, b[1] + b[3] / 2, b[0] + b[2] / 2};
  return {std::min(b[0], b[2]), std::min(b[1], b[3]), std::max(b[0], b[2]), std::max(b[1], b[3])};
}

// Whether IOU(a, b) exceeds the threshold; degenerate boxes never suppress.
bool suppresses(const Box& a, const Box& b, float threshold) {
  const float ih = std::min(a.y2, b.y2) - std::max(a.y1, b.y1);
  const float iw = std::min(a.x2, b.x2) - std::max(a.x1, b.x1);
  if (ih <= 0 || iw <= 0) return false;
  const float inter = ih * iw;
  const float area_a = (a.y2 - a.y1) * (a.x2 - a.x1), area_b = (b.y2 - b.y1) * (b.x2 - b.x1);
  const float uni = area_a + area_b - inter;
  if (area_a <= 0 || area_b <= 0 || uni <= 0) return false;
  return inter / uni > threshold;
}

}  // namespace

Expected<std::vector<int64_t>> select_boxes(const Tensor& boxes, const Tensor& scores, const NmsParams& params) {
  const Shape& bs = boxes.shape();
  const Shape& ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] || ss[2] != bs[1])
    return fail(ErrorCode::kRuntime,
                fmt::format("NonMaxSuppression: boxes {} and scores {} do not have shapes [B, N, 4] and [B, C, N]",
                            shape_to_string(bs), shape_to_string(ss)));
  if (params.iou_threshold < 0 || params.iou_threshold > 1)
    return fail(ErrorCode::kRuntime, fmt::format("NonMaxSuppression: iou_threshold {} is outside [0, 1]", params.iou_threshold));
  const int64_t batches = bs[0], spatial = bs[1], classes = ss[1];
  std::vector<int64_t> selected;  // triples (batch, class, box)
  std::vector<int64_t> order, kept;
  for (int64_t b = 0; b < batches; ++b) {
    const float* bb = boxes.data_as<float>() + b * spatial * 4;
    for (int64_t c = 0; c < classes; ++c) {
      const float* sc = scores.data_as<float>() + (b * classes + c) * spatial;
      order.clear();
      for (int64_t i = 0; i < spatial; ++i)
        if (!params.score_threshold || sc[i] > *params.score_threshold) order.push_back(i);
      // Ties keep the lower box index first, as the ONNX reference does.
      std::stable_sort(order.begin(), order.end(), [&](int64_t l, int64_t r) { return sc[l] > sc[r]; });
      kept.clear();
      for (int64_t i : order) {
        if (static_cast<int64_t>(kept.size()) >= params.max_per_class) break;
        const Box box = corners(bb + i * 4, params.center_point_box);
        const bool drop = std::ranges::any_of(
            kept, [&](int64_t k) { return suppresses(corners(bb + k * 4, params.center_point_box), box, params.iou_threshold); });
        if (drop) continue;
        kept.push_back(i);
        selected.insert(selected.end(), {b, c, i});
      }
    }
  }
  return selected;
}

}  // namespace nxrt
