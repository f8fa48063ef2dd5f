// MaxRoiPool on the cpu EP: bins of each region take their maximum; regions smaller than the
// grid repeat pixels, regions off the image give 0; bad rois are declined or refused.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

namespace {

using nxrt::Tensor;
using nxrt::test::attrs;
using nxrt::test::ints;

}  // namespace

TEST_CASE("MaxRoiPool takes each bin's maximum, repeats a one-pixel region and gives 0 off the image",
          "[cpu][max_roi_pool]") {
  const Tensor x = nxrt::test::iota_float({1, 1, 4, 4});  // 0..15, row by row
  const Tensor rois = Tensor::from_vector<float>({3, 5}, {0, 0, 0, 3, 3,        // the whole image: 2x2 bins
                                                          0, 1, 1, 1, 1,        // one pixel (x 1, y 1): 5
                                                          0, 10, 10, 12, 12});  // past the image
  const Tensor y = nxrt::test::run_one(
      {.op_type = "MaxRoiPool", .inputs = {x, rois}, .attrs = attrs({{"pooled_shape", ints{2, 2}}})});
  const std::string diff = nxrt::test::compare_tensors(
      y, Tensor::from_vector<float>({3, 1, 2, 2}, {5, 7, 13, 15, 5, 5, 5, 5, 0, 0, 0, 0}));
  INFO(diff);
  CHECK(diff.empty());
  // spatial_scale 0.5 maps (0, 0, 6, 6) onto pixels 0..3.
  const Tensor scaled = nxrt::test::run_one(
      {.op_type = "MaxRoiPool", .inputs = {x, Tensor::from_vector<float>({1, 5}, {0, 0, 0, 6, 6})},
       .attrs = attrs({{"pooled_shape", ints{1, 1}}, {"spatial_scale", 0.5f}})});
  CHECK(scaled.data_as<float>()[0] == 15.f);
}

TEST_CASE("MaxRoiPool declines a missing pooled_shape and refuses a batch index past the batch",
          "[cpu][max_roi_pool][claim]") {
  const Tensor x = nxrt::test::iota_float({1, 1, 4, 4});
  const Tensor rois = Tensor::from_vector<float>({1, 5}, {1, 0, 0, 3, 3});
  auto unpooled = nxrt::test::claim_on_cpu({.op_type = "MaxRoiPool", .inputs = {x, rois}});
  REQUIRE_FALSE(unpooled);
  CHECK(unpooled.reason() == "MaxRoiPool: pooled_shape is []; it must be two positive sizes [height, width]");
  auto wide = nxrt::test::claim_on_cpu({.op_type = "MaxRoiPool",
                                        .inputs = {x, Tensor::from_vector<float>({1, 4}, {0, 0, 3, 3})},
                                        .attrs = attrs({{"pooled_shape", ints{1, 1}}})});
  REQUIRE_FALSE(wide);
  CHECK(wide.reason() == "MaxRoiPool: rois have shape [1,4]; they must be [num_rois, 5] (batch index, x1, y1, x2, y2)");
  auto past = nxrt::test::run_on_cpu({.op_type = "MaxRoiPool", .inputs = {x, rois},
                                      .attrs = attrs({{"pooled_shape", ints{1, 1}}})});
  REQUIRE_FALSE(past);
  CHECK(past.error().what == "MaxRoiPool: roi 0 names batch index 1 of a batch of 1");
}
