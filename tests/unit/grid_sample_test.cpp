// GridSample against hand-computed samples for each mode, padding and align_corners.
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

TEST_CASE("GridSample declines other ranks and mode names", "[cpu][resize][grid_sample][claim]") {
  const Tensor x5 = Tensor::from_vector<float>({1, 1, 1, 1, 1}, {1});
  auto rank = claim_on_cpu({.op_type = "GridSample", .opset = 16,
                            .inputs = {x5, Tensor::from_vector<float>({1, 1, 1, 1, 3}, {0, 0, 0})}});
  REQUIRE_FALSE(rank);
  CHECK(rank.reason() == "GridSample: X has rank 5; the cpu EP supports 4-D (N, C, H, W) inputs only");

  auto mode = claim_on_cpu({.op_type = "GridSample", .opset = 16,
                            .inputs = {Tensor::from_vector<float>({1, 1, 1, 1}, {1}),
                                       Tensor::from_vector<float>({1, 1, 1, 2}, {0, 0})},
                            .attrs = attrs({{"mode", std::string("linear")}})});
  REQUIRE_FALSE(mode);
  CHECK(mode.reason() == "GridSample: mode 'linear' is not valid at opset 16; use bilinear, nearest or bicubic");
}
