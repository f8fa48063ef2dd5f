// RoiAlign and NonMaxSuppression against hand-computed results.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// A 4x4 map holding 4y + x, so a bilinear sample at (y, x) is 4y + x.
Tensor ramp() { return iota_float({1, 1, 4, 4}); }

Tensor roi_align(int64_t opset, const char* transform, const char* mode, int64_t ratio, std::vector<float> roi) {
  return run_one({.op_type = "RoiAlign", .opset = opset,
                  .inputs = {ramp(), Tensor::from_vector<float>({1, 4}, roi), int64s({0})},
                  .attrs = attrs({{"coordinate_transformation_mode", std::string(transform)},
                                  {"mode", std::string(mode)},
                                  {"sampling_ratio", ratio}})});
}

Tensor nms(const std::vector<float>& boxes, const std::vector<float>& scores, int64_t classes, int64_t max_out,
           float iou, std::optional<float> score_threshold = std::nullopt, int64_t center = 0) {
  const auto n = static_cast<int64_t>(boxes.size() / 4);
  std::vector<Tensor> inputs = {Tensor::from_vector<float>({1, n, 4}, boxes),
                                Tensor::from_vector<float>({1, classes, n}, scores),
                                Tensor::from_vector<int64_t>({1}, {max_out}), Tensor::from_vector<float>({1}, {iou})};
  if (score_threshold) inputs.push_back(Tensor::from_vector<float>({1}, {*score_threshold}));
  return run_one({.op_type = "NonMaxSuppression", .opset = 11, .inputs = inputs,
                  .attrs = attrs({{"center_point_box", center}})});
}

}  // namespace

TEST_CASE("RoiAlign samples bins bilinearly in both coordinate modes", "[cpu][resize][detection]") {
  // half_pixel shifts the roi [0, 3] to [-0.5, 2.5]: one sample at its center, 1.0.
  CHECK(compare_tensors(roi_align(16, "half_pixel", "avg", 1, {0, 0, 3, 3}), Tensor::from_vector<float>({1, 1, 1, 1}, {5}))
            .empty());
  CHECK(compare_tensors(roi_align(16, "output_half_pixel", "avg", 1, {0, 0, 3, 3}),
                        Tensor::from_vector<float>({1, 1, 1, 1}, {7.5f}))
            .empty());
  // RoiAlign-10 has no half-pixel shift; a 2x2 grid of samples at 0.5 and 1.5 averages to 5.
  CHECK(compare_tensors(roi_align(10, "half_pixel", "avg", 2, {0, 0, 2, 2}), Tensor::from_vector<float>({1, 1, 1, 1}, {5}))
            .empty());
  // Adaptive sampling (ratio 0): ceil(3 / 1) = 3 samples per axis at 0.5, 1.5, 2.5 average to 7.5.
  CHECK(compare_tensors(roi_align(16, "output_half_pixel", "avg", 0, {0, 0, 3, 3}),
                        Tensor::from_vector<float>({1, 1, 1, 1}, {7.5f}))
            .empty());
  // max: the largest weighted corner of the sample at (1.5, 1.5) is 0.25 * 10.
  CHECK(compare_tensors(roi_align(16, "output_half_pixel", "max", 1, {0, 0, 3, 3}),
                        Tensor::from_vector<float>({1, 1, 1, 1}, {2.5f}))
            .empty());
}

TEST_CASE("NonMaxSuppression selects by score and suppresses by IOU per class", "[cpu][resize][detection]") {
  // Box 1 overlaps box 0 with IOU 0.9 / 1.1; box 2 is apart.
  const std::vector<float> boxes = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 2, 1, 3};
  CHECK(compare_tensors(nms(boxes, {0.9f, 0.8f, 0.7f}, 1, 3, 0.5f), Tensor::from_vector<int64_t>({2, 3}, {0, 0, 0, 0, 0, 2}))
            .empty());
  CHECK(compare_tensors(nms(boxes, {0.9f, 0.8f, 0.7f}, 1, 3, 0.9f),
                        Tensor::from_vector<int64_t>({3, 3}, {0, 0, 0, 0, 0, 1, 0, 0, 2}))
            .empty());
  CHECK(compare_tensors(nms(boxes, {0.9f, 0.8f, 0.7f}, 1, 3, 0.5f, 0.75f), Tensor::from_vector<int64_t>({1, 3}, {0, 0, 0}))
            .empty());
  CHECK(compare_tensors(nms(boxes, {0.9f, 0.8f, 0.7f}, 1, 1, 0.5f), Tensor::from_vector<int64_t>({1, 3}, {0, 0, 0}))
            .empty());
  // Second class prefers box 2, then box 1 (box 0 is suppressed by box 1); equal scores keep index order.
  CHECK(compare_tensors(nms(boxes, {0.9f, 0.8f, 0.7f, 0.1f, 0.5f, 0.6f}, 2, 3, 0.5f),
                        Tensor::from_vector<int64_t>({4, 3}, {0, 0, 0, 0, 0, 2, 0, 1, 2, 0, 1, 1}))
            .empty());
  CHECK(compare_tensors(nms(boxes, {0.5f, 0.5f, 0.5f}, 1, 3, 0.5f), Tensor::from_vector<int64_t>({2, 3}, {0, 0, 0, 0, 0, 2}))
            .empty());
  // The same boxes as [x_center, y_center, width, height].
  const std::vector<float> centers = {0.5f, 0.5f, 1, 1, 0.6f, 0.5f, 1, 1, 2.5f, 0.5f, 1, 1};
  CHECK(compare_tensors(nms(centers, {0.9f, 0.8f, 0.7f}, 1, 3, 0.5f, std::nullopt, 1),
                        Tensor::from_vector<int64_t>({2, 3}, {0, 0, 0, 0, 0, 2}))
            .empty());
}

TEST_CASE("RoiAlign and NonMaxSuppression decline invalid attributes", "[cpu][resize][detection][claim]") {
  auto mode = claim_on_cpu({.op_type = "RoiAlign", .opset = 16,
                            .inputs = {ramp(), Tensor::from_vector<float>({1, 4}, {0, 0, 1, 1}), int64s({0})},
                            .attrs = attrs({{"mode", std::string("sum")}})});
  REQUIRE_FALSE(mode);
  CHECK(mode.reason() == "RoiAlign: mode 'sum' is not valid; use avg or max");

  auto center = claim_on_cpu({.op_type = "NonMaxSuppression", .opset = 11,
                              .inputs = {Tensor::from_vector<float>({1, 1, 4}, {0, 0, 1, 1}),
                                         Tensor::from_vector<float>({1, 1, 1}, {1})},
                              .attrs = attrs({{"center_point_box", int64_t{2}}})});
  REQUIRE_FALSE(center);
  CHECK(center.reason() == "NonMaxSuppression: center_point_box 2 is not valid; use 0 or 1");
}
