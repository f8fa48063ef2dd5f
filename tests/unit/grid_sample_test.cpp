// GridSample against hand-computed samples for each mode, padding and align_corners, in 1, 2 and 3
// spatial dimensions.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// One output location per grid point (x, y) of a [1, 1, P, 2] grid.
Tensor sample(const Tensor& x, std::vector<float> points, const char* mode, const char* padding, int64_t align,
              int64_t opset = 16) {
  const auto p = static_cast<int64_t>(points.size() / 2);
  return run_one({.op_type = "GridSample", .opset = opset,
                  .inputs = {x, Tensor::from_vector<float>({1, 1, p, 2}, points)},
                  .attrs = attrs({{"mode", std::string(mode)},
                                  {"padding_mode", std::string(padding)},
                                  {"align_corners", align}})});
}

}  // namespace

TEST_CASE("GridSample bilinear maps corners by align_corners and pads by padding_mode", "[cpu][resize][grid_sample]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // align_corners=1: -1 and 1 are the corner pixel centers.
  CHECK(compare_tensors(sample(x, {-1, -1, 1, 1, 0, 0, 1, -1}, "bilinear", "zeros", 1),
                        Tensor::from_vector<float>({1, 1, 1, 4}, {1, 4, 2.5f, 2}))
            .empty());
  // align_corners=0: (-1, -1) is pixel (-0.5, -0.5), a quarter inside the first pixel.
  CHECK(compare_tensors(sample(x, {-1, -1}, "bilinear", "zeros", 0), Tensor::from_vector<float>({1, 1, 1, 1}, {0.25f}))
            .empty());
  CHECK(compare_tensors(sample(x, {-1, -1}, "bilinear", "border", 0), Tensor::from_vector<float>({1, 1, 1, 1}, {1}))
            .empty());
  // Reflection about the image edge at -0.5: pixel -1.5 reflects to 0.5, halfway between 1 and 2.
  CHECK(compare_tensors(sample(x, {-2, -1}, "bilinear", "reflection", 0),
                        Tensor::from_vector<float>({1, 1, 1, 1}, {1.5f}))
            .empty());
}

TEST_CASE("GridSample nearest and bicubic", "[cpu][resize][grid_sample]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  // (0.2, -0.6) is pixel (0.7, -0.1): rounds to column 1, row 0.
  CHECK(compare_tensors(sample(x, {0.2f, -0.6f}, "nearest", "zeros", 0), Tensor::from_vector<float>({1, 1, 1, 1}, {2}))
            .empty());

  // Bicubic reproduces a linear ramp (4y + x) where all 16 taps are inside the image.
  std::vector<float> ramp(16);
  for (int i = 0; i < 16; ++i) ramp[static_cast<std::size_t>(i)] = static_cast<float>(i);
  const Tensor r = Tensor::from_vector<float>({1, 1, 4, 4}, ramp);
  CHECK(compare_tensors(sample(r, {0, 0, -1, -1}, "bicubic", "border", 1),
                        Tensor::from_vector<float>({1, 1, 1, 2}, {7.5f, 0}))
            .empty());
  // Opset 20 spells the modes linear and cubic.
  CHECK(compare_tensors(sample(r, {0, 0}, "cubic", "border", 1, 20), Tensor::from_vector<float>({1, 1, 1, 1}, {7.5f}))
            .empty());
}

TEST_CASE("GridSample-20 samples volumes with the grid listing x, y, z", "[cpu][resize][grid_sample]") {
  // Value 1 + 4z + 2y + x at voxel (z, y, x).
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto volume = [&](std::vector<float> points, const char* mode, const char* padding, int64_t align) {
    const auto p = static_cast<int64_t>(points.size() / 3);
    return run_one({.op_type = "GridSample", .opset = 20,
                    .inputs = {x, Tensor::from_vector<float>({1, 1, 1, p, 3}, points)},
                    .attrs = attrs({{"mode", std::string(mode)},
                                    {"padding_mode", std::string(padding)},
                                    {"align_corners", align}})});
  };
  // align_corners=1: the centre averages all eight voxels; (0.5, 0, -1) is voxel (0, 0.5, 0.75).
  CHECK(compare_tensors(volume({0, 0, 0, 1, -1, 1, -1, 1, -1, 0.5f, 0, -1}, "linear", "zeros", 1),
                        Tensor::from_vector<float>({1, 1, 1, 1, 4}, {4.5f, 6, 3, 2.75f}))
            .empty());
  // align_corners=0: (-1, -1, -1) is voxel (-0.5, -0.5, -0.5); only one of its eight corners is inside.
  CHECK(compare_tensors(volume({-1, -1, -1}, "linear", "zeros", 0), Tensor::from_vector<float>({1, 1, 1, 1, 1}, {0.125f}))
            .empty());
  CHECK(compare_tensors(volume({-1, -1, -1}, "linear", "border", 0), Tensor::from_vector<float>({1, 1, 1, 1, 1}, {1}))
            .empty());
  // (0.2, -0.6, 0.9) is voxel (z 1.4, y -0.1, x 0.7): rounds to (1, 0, 1).
  CHECK(compare_tensors(volume({0.2f, -0.6f, 0.9f}, "nearest", "zeros", 0),
                        Tensor::from_vector<float>({1, 1, 1, 1, 1}, {6}))
            .empty());
}

TEST_CASE("GridSample-20 samples a 1-D signal", "[cpu][resize][grid_sample]") {
  const Tensor y = run_one({.op_type = "GridSample", .opset = 20,
                            .inputs = {Tensor::from_vector<float>({1, 1, 3}, {1, 2, 4}),
                                       Tensor::from_vector<float>({1, 2, 1}, {0, 0.5f})},
                            .attrs = attrs({{"align_corners", int64_t{1}}})});
  CHECK(compare_tensors(y, Tensor::from_vector<float>({1, 1, 2}, {2, 3})).empty());
}

TEST_CASE("GridSample declines other ranks and mode names", "[cpu][resize][grid_sample][claim]") {
  const Tensor x5 = Tensor::from_vector<float>({1, 1, 1, 1, 1}, {1});
  const Tensor grid5 = Tensor::from_vector<float>({1, 1, 1, 1, 3}, {0, 0, 0});
  auto rank = claim_on_cpu({.op_type = "GridSample", .opset = 16, .inputs = {x5, grid5}});
  REQUIRE_FALSE(rank);
  CHECK(rank.reason() == "GridSample-16: X has rank 5; opset 16 defines GridSample on 4-D (N, C, H, W) inputs only; "
                         "export with opset 20 or later for volumetric (5-D) inputs");
  CHECK(claim_on_cpu({.op_type = "GridSample", .opset = 20, .inputs = {x5, grid5}}));

  auto cubic = claim_on_cpu({.op_type = "GridSample", .opset = 20, .inputs = {x5, grid5},
                             .attrs = attrs({{"mode", std::string("cubic")}})});
  REQUIRE_FALSE(cubic);
  CHECK(cubic.reason() == "GridSample-20: mode 'cubic' is defined for 2-D spatial inputs (X of rank 4) only, X has "
                          "rank 5; use linear or nearest");

  auto grid = claim_on_cpu({.op_type = "GridSample", .opset = 20,
                            .inputs = {x5, Tensor::from_vector<float>({1, 1, 1, 2}, {0, 0})}});
  REQUIRE_FALSE(grid);
  CHECK(grid.reason() == "GridSample: grid has shape [1,1,1,2]; for X of rank 5 expected [N, 3 output sizes, 3]");

  auto mode = claim_on_cpu({.op_type = "GridSample", .opset = 16,
                            .inputs = {Tensor::from_vector<float>({1, 1, 1, 1}, {1}),
                                       Tensor::from_vector<float>({1, 1, 1, 2}, {0, 0})},
                            .attrs = attrs({{"mode", std::string("linear")}})});
  REQUIRE_FALSE(mode);
  CHECK(mode.reason() == "GridSample: mode 'linear' is not valid at opset 16; use bilinear, nearest or bicubic");
}
