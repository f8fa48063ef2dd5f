// Resize and Upsample against hand-computed values for each mode and coordinate transform.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor scales_of(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from_vector<float>({n}, v);
}

// Keys' cubic kernel with a = -0.75, written out independently of the EP's helper.
double keys(double d) {
  const double a = -0.75;
  d = std::abs(d);
  if (d <= 1) return (a + 2) * d * d * d - (a + 3) * d * d + 1;
  if (d < 2) return a * d * d * d - 5 * a * d * d + 8 * a * d - 4 * a;
  return 0;
}

}  // namespace

TEST_CASE("Resize nearest: half_pixel with each nearest_mode, and every element type", "[cpu][resize]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor y = run_one({.op_type = "Resize", .opset = 13,
                            .inputs = {x, Tensor{}, scales_of({1, 1, 2, 2})},
                            .attrs = attrs({{"mode", std::string("nearest")}})});
  CHECK(compare_tensors(y, Tensor::from_vector<float>({1, 1, 4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4})).empty());

  const Tensor u8 = Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {10, 20, 30, 40});
  const Tensor y8 = run_one({.op_type = "Resize", .opset = 13, .inputs = {u8, Tensor{}, scales_of({1, 1, 1, 2})},
                             .attrs = attrs({{"mode", std::string("nearest")}})});
  CHECK(compare_tensors(y8, Tensor::from_vector<uint8_t>({1, 1, 2, 4}, {10, 10, 20, 20, 30, 30, 40, 40})).empty());

  // int64 values beyond float precision survive: nearest is a gather.
  const int64_t big = (int64_t{1} << 60) + 1;
  const Tensor i64 = Tensor::from_vector<int64_t>({1, 2}, {big, 7});
  const Tensor y64 = run_one({.op_type = "Resize", .opset = 13, .inputs = {i64, Tensor{}, Tensor{}, int64s({1, 4})},
                              .attrs = attrs({{"mode", std::string("nearest")}})});
  CHECK(compare_tensors(y64, Tensor::from_vector<int64_t>({1, 4}, {big, big, 7, 7})).empty());

  // asymmetric, 1 -> 4 over [0, 1, 2]: x_original = o * 3 / 4 = 0, 0.75, 1.5, 2.25.
  const Tensor row = Tensor::from_vector<float>({1, 3}, {0, 1, 2});
  const auto nearest = [&](const char* mode) {
    return run_one({.op_type = "Resize", .opset = 13, .inputs = {row, Tensor{}, Tensor{}, int64s({1, 4})},
                    .attrs = attrs({{"mode", std::string("nearest")},
                                    {"coordinate_transformation_mode", std::string("asymmetric")},
                                    {"nearest_mode", std::string(mode)}})});
  };
  CHECK(compare_tensors(nearest("round_prefer_floor"), Tensor::from_vector<float>({1, 4}, {0, 1, 1, 2})).empty());
  CHECK(compare_tensors(nearest("round_prefer_ceil"), Tensor::from_vector<float>({1, 4}, {0, 1, 2, 2})).empty());
  CHECK(compare_tensors(nearest("floor"), Tensor::from_vector<float>({1, 4}, {0, 0, 1, 2})).empty());
  CHECK(compare_tensors(nearest("ceil"), Tensor::from_vector<float>({1, 4}, {0, 1, 2, 2})).empty());
}

TEST_CASE("Resize linear: half_pixel, align_corners, pytorch_half_pixel and integer rounding", "[cpu][resize]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor y = run_one({.op_type = "Resize", .opset = 13, .inputs = {x, Tensor{}, scales_of({1, 1, 2, 2})},
                            .attrs = attrs({{"mode", std::string("linear")}})});
  CHECK(compare_tensors(y, Tensor::from_vector<float>({1, 1, 4, 4}, {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,
                                                                      2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4}))
            .empty());

  // align_corners, 3 -> 5: x_original = o / 2.
  const Tensor row = Tensor::from_vector<float>({1, 3}, {0, 10, 20});
  const Tensor ac = run_one({.op_type = "Resize", .opset = 11, .inputs = {row, Tensor{}, scales_of({}), int64s({1, 5})},
                             .attrs = attrs({{"mode", std::string("linear")},
                                             {"coordinate_transformation_mode", std::string("align_corners")}})});
  CHECK(compare_tensors(ac, Tensor::from_vector<float>({1, 5}, {0, 5, 10, 15, 20})).empty());

  // pytorch_half_pixel maps a length-1 output to -0.5, which clamps to the first element.
  const Tensor pt = run_one({.op_type = "Resize", .opset = 13, .inputs = {row, Tensor{}, Tensor{}, int64s({1, 1})},
                             .attrs = attrs({{"mode", std::string("linear")},
                                             {"coordinate_transformation_mode", std::string("pytorch_half_pixel")}})});
  CHECK(compare_tensors(pt, Tensor::from_vector<float>({1, 1}, {0})).empty());

  // int8: x_original = -0.25, 0.25, 0.75, 1.25 over [0, 3] gives 0, 0.75, 2.25, 3, rounded.
  const Tensor i8 = Tensor::from_vector<int8_t>({1, 2}, {0, 3});
  const Tensor yi = run_one({.op_type = "Resize", .opset = 13, .inputs = {i8, Tensor{}, Tensor{}, int64s({1, 4})},
                             .attrs = attrs({{"mode", std::string("linear")}})});
  CHECK(compare_tensors(yi, Tensor::from_vector<int8_t>({1, 4}, {0, 1, 2, 3})).empty());
}

TEST_CASE("Resize cubic: Keys weights, exclude_outside renormalizes", "[cpu][resize]") {
  const std::vector<float> v = {1, 4, 2, 8};
  const Tensor x = Tensor::from_vector<float>({1, 4}, v);
  const auto at = [&](int64_t i) { return static_cast<double>(v[static_cast<std::size_t>(std::clamp<int64_t>(i, 0, 3))]); };
  // Output 1 of a 2x upsample, half_pixel: x_original = 0.25, taps -1..2 (tap -1 clamps to 0).
  const double w[4] = {keys(1.25), keys(0.25), keys(0.75), keys(1.75)};
  const double plain = w[0] * at(-1) + w[1] * at(0) + w[2] * at(1) + w[3] * at(2);
  const double excluded = (w[1] * at(0) + w[2] * at(1) + w[3] * at(2)) / (w[1] + w[2] + w[3]);
  for (int exclude = 0; exclude <= 1; ++exclude) {
    const Tensor y = run_one({.op_type = "Resize", .opset = 13, .inputs = {x, Tensor{}, scales_of({1, 2})},
                              .attrs = attrs({{"mode", std::string("cubic")}, {"exclude_outside", int64_t{exclude}}})});
    REQUIRE(y.shape() == Shape{1, 8});
    CHECK(y.data_as<float>()[1] == Approx(exclude ? excluded : plain).epsilon(1e-6));
  }
}

TEST_CASE("Resize tf_crop_and_resize uses the roi and the extrapolation value", "[cpu][resize]") {
  // Axis 1 over roi [0, 1.5] of 4 elements: x_original = 0, 1.5, 3, 4.5 (outside).
  const Tensor x = Tensor::from_vector<float>({1, 4}, {0, 1, 2, 3});
  const Tensor roi = Tensor::from_vector<float>({4}, {0, 0, 1, 1.5f});
  const Tensor y = run_one({.op_type = "Resize", .opset = 13, .inputs = {x, roi, Tensor{}, int64s({1, 4})},
                            .attrs = attrs({{"mode", std::string("linear")},
                                            {"coordinate_transformation_mode", std::string("tf_crop_and_resize")},
                                            {"extrapolation_value", 10.0f}})});
  CHECK(compare_tensors(y, Tensor::from_vector<float>({1, 4}, {0, 1.5f, 3, 10})).empty());
}

TEST_CASE("Resize-18: axes, keep_aspect_ratio_policy and antialias", "[cpu][resize]") {
  const Tensor x = Tensor::from_vector<float>({1, 1, 2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  // not_smaller picks the larger of 4/2 and 4/4: both axes scale by 2.
  const Tensor y = run_one({.op_type = "Resize", .opset = 18, .inputs = {x, Tensor{}, Tensor{}, int64s({4, 4})},
                            .attrs = attrs({{"axes", ints{2, 3}}, {"keep_aspect_ratio_policy", std::string("not_smaller")}})});
  REQUIRE(y.shape() == Shape{1, 1, 4, 8});
  CHECK(y.data_as<float>()[0] == 1);
  CHECK(y.data_as<float>()[31] == 8);

  // Antialiased 2x linear downsample: a triangle of half-width 2 input pixels.
  // Output 0 at x_original 0.5: weights 1,3,3,1 / 8 over inputs -1(=0), 0, 1, 2.
  const Tensor row = Tensor::from_vector<float>({1, 4}, {0, 1, 2, 3});
  const Tensor aa = run_one({.op_type = "Resize", .opset = 18, .inputs = {row, Tensor{}, scales_of({1, 0.5f})},
                             .attrs = attrs({{"mode", std::string("linear")}, {"antialias", int64_t{1}}})});
  CHECK(compare_tensors(aa, Tensor::from_vector<float>({1, 2}, {0.625f, 2.375f})).empty());
}

TEST_CASE("Upsample and Resize-10 use asymmetric coordinates", "[cpu][resize]") {
  const Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  const Tensor up7 = run_one({.op_type = "Upsample", .opset = 7, .inputs = {x},
                              .attrs = attrs({{"scales", floats{2, 2}}})});
  CHECK(compare_tensors(up7, Tensor::from_vector<float>({2, 4}, {1, 1, 2, 2, 1, 1, 2, 2})).empty());

  const Tensor up9 = run_one({.op_type = "Upsample", .opset = 9, .inputs = {x, scales_of({1, 2})},
                              .attrs = attrs({{"mode", std::string("linear")}})});
  CHECK(compare_tensors(up9, Tensor::from_vector<float>({1, 4}, {1, 1.5f, 2, 2})).empty());

  // Resize-10 rounds up when downsampling: x_original 1 / 0.6 = 1.67 takes element 2.
  const Tensor row = Tensor::from_vector<float>({1, 4}, {0, 1, 2, 3});
  const Tensor r10 = run_one({.op_type = "Resize", .opset = 10, .inputs = {row, scales_of({1, 0.6f})}});
  CHECK(compare_tensors(r10, Tensor::from_vector<float>({1, 2}, {0, 2})).empty());
}

TEST_CASE("Resize declines bad attributes and types, and rejects conflicting inputs", "[cpu][resize][claim]") {
  const Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto mode = claim_on_cpu({.op_type = "Resize", .opset = 13, .inputs = {x, Tensor{}, scales_of({1, 2})},
                            .attrs = attrs({{"mode", std::string("area")}})});
  REQUIRE_FALSE(mode);
  CHECK(mode.reason() == "Resize: mode 'area' is not valid at opset 13; use nearest, linear or cubic");

  auto b = claim_on_cpu({.op_type = "Resize", .opset = 13,
                         .inputs = {Tensor::empty(DType::kBool, {1, 2}), Tensor{}, scales_of({1, 2})},
                         .attrs = attrs({{"mode", std::string("linear")}})});
  REQUIRE_FALSE(b);
  CHECK(b.reason().starts_with("Resize: input 0 has type bool; the cpu EP supports float, double, float16, int8"));

  auto both = claim_on_cpu({.op_type = "Resize", .opset = 13, .inputs = {x, Tensor{}, scales_of({1, 2}), int64s({1, 4})}});
  REQUIRE_FALSE(both);
  CHECK(both.reason() == "Resize: both scales and sizes are given; give exactly one of them");

  auto sym = claim_on_cpu({.op_type = "Resize", .opset = 18, .inputs = {x, Tensor{}, scales_of({1, 2})},
                           .attrs = attrs({{"coordinate_transformation_mode", std::string("half_pixel_symmetric")}})});
  REQUIRE_FALSE(sym);
  CHECK(sym.reason() == "Resize: coordinate_transformation_mode 'half_pixel_symmetric' is not valid at opset 18");

  auto none = run_on_cpu({.op_type = "Resize", .opset = 13, .inputs = {x}});
  REQUIRE_FALSE(none);
  CHECK(none.error().what == "Resize: neither scales nor sizes is given");
}
