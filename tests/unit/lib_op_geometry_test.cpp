// lib's op geometry that the cpu and cuda EPs share: CenterCropPad's plan, AffineGrid's output
// shape, GroupNormalization's shape checks and LpPool's exponent. The kernels' own tests run
// these through both EPs; here each rule is checked on its own, errors included.
#include <catch2/catch.hpp>

#include "nxrt/ep/affine_grid.h"
#include "nxrt/ep/center_crop_pad.h"
#include "nxrt/ep/group_norm.h"
#include "kernel_harness.h"
#include "nxrt/ir/window.h"

using namespace nxrt;

TEST_CASE("CenterCropPad's plan crops and pads around the centre", "[lib][geometry]") {
  // Axis 0 crops 7 to 4 (drops 1 before, 2 after); axis 1 pads 3 to 6 (1 before, 2 after).
  auto both = plan_center_crop_pad({7, 3}, {}, {4, 6});
  REQUIRE(both);
  CHECK(both->out == Shape{4, 6});
  CHECK(both->begins == std::vector<int64_t>{-1, 1});
  // Listed axes only, negative ones counted from the end; the others keep their size.
  auto last = plan_center_crop_pad({2, 5, 8}, {-1}, {3});
  REQUIRE(last);
  CHECK(last->out == Shape{2, 5, 3});
  CHECK(last->begins == std::vector<int64_t>{0, 0, -2});
}

TEST_CASE("CenterCropPad's plan says which size or axis is wrong", "[lib][geometry]") {
  auto count = plan_center_crop_pad({2, 3}, {}, {2});
  REQUIRE_FALSE(count);
  CHECK(count.error().what == "CenterCropPad: shape has 1 values for 2 axes");
  auto repeated = plan_center_crop_pad({2, 3}, {1, -1}, {2, 2});
  REQUIRE_FALSE(repeated);
  CHECK(repeated.error().what == "CenterCropPad: axis -1 is repeated in axes");
  auto range = plan_center_crop_pad({2, 3}, {2}, {2});
  REQUIRE_FALSE(range);
  CHECK(range.error().what == "CenterCropPad: axis 2 is out of range for an input of rank 2");
  auto negative = plan_center_crop_pad({2, 3}, {0}, {-1});
  REQUIRE_FALSE(negative);
  CHECK(negative.error().what == "CenterCropPad: size -1 for axis 0 is negative");
}

TEST_CASE("AffineGrid's output shape follows size and checks theta", "[lib][geometry]") {
  auto grid2 = affine_grid_output_shape({2, 2, 3}, {2, 5, 4, 6});
  REQUIRE(grid2);
  CHECK(*grid2 == Shape{2, 4, 6, 2});
  auto grid3 = affine_grid_output_shape({1, 3, 4}, {1, 1, 2, 3, 4});
  REQUIRE(grid3);
  CHECK(*grid3 == Shape{1, 2, 3, 4, 3});
  auto misfit = affine_grid_output_shape({1, 2, 3}, {1, 1, 2, 3, 4});
  REQUIRE_FALSE(misfit);
  CHECK(misfit.error().what == "AffineGrid: theta [1,2,3] does not fit size [1,1,2,3,4]");
  auto batch = affine_grid_output_shape({2, 2, 3}, {1, 1, 4, 4});
  REQUIRE_FALSE(batch);
  CHECK(batch.error().what == "AffineGrid: theta [2,2,3] does not fit size [1,1,4,4]");
  auto negative = affine_grid_output_shape({1, 2, 3}, {1, 1, -4, 4});
  REQUIRE_FALSE(negative);
  CHECK(negative.error().what == "AffineGrid: size [1,1,-4,4] has a negative dim");
  CHECK_FALSE(affine_grid_output_shape({1, 2, 3}, {1}));
}

TEST_CASE("GroupNormalization's shapes: scale and bias per group at 18, per channel at 21", "[lib][geometry]") {
  CHECK_FALSE(group_norm_per_channel(18));
  CHECK(group_norm_per_channel(21));
  // 6 channels in 3 groups.
  CHECK(check_group_norm_shapes(false, 3, {2, 6, 4}, {3}, {3}));
  CHECK(check_group_norm_shapes(true, 3, {2, 6, 4}, {6}, {6}));
  auto per_group = check_group_norm_shapes(true, 3, {2, 6, 4}, {3}, {3});
  REQUIRE_FALSE(per_group);
  CHECK(per_group.error().what == "GroupNormalization: X [2,6,4], scale [3] and bias [3] do not fit 3 groups");
  CHECK(per_group.error().why == "from opset 21, scale and bias hold one value per channel (dim 1 of X)");
  auto split = check_group_norm_shapes(false, 4, {2, 6, 4}, {4}, {4});
  REQUIRE_FALSE(split);
  CHECK(split.error().why == "before opset 21, scale and bias hold one value per group");
  CHECK_FALSE(check_group_norm_shapes(false, 1, {6}, {1}, {1}));
}

TEST_CASE("LpPool's p is a float at opset 1 and an int from opset 2", "[lib][geometry]") {
  const AttributeMap none;
  CHECK(lp_pool_exponent(none, 1) == 2.0);
  CHECK(lp_pool_exponent(none, 18) == 2.0);
  CHECK(lp_pool_exponent(test::attrs({{"p", 3.0f}}), 1) == 3.0);
  CHECK(lp_pool_exponent(test::attrs({{"p", int64_t{1}}}), 11) == 1.0);
}
