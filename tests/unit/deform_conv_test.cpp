// DeformConv-19 on the cpu EP: with zero offsets it is Conv; offsets move each tap's sample
// bilinearly (zeros off the image), the mask scales the samples; shapes that do not fit are
// declined or refused with what they should be.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

namespace {

using nxrt::DType;
using nxrt::Shape;
using nxrt::Tensor;
using nxrt::test::attrs;
using nxrt::test::ints;
using nxrt::test::random_tensor;
using nxrt::test::run_one;

Tensor zeros(Shape shape) {
  Tensor t = Tensor::empty(DType::kFloat32, shape);
  std::fill_n(t.mut_as<float>(), t.numel(), 0.f);
  return t;
}

void check_close(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  const std::string diff = nxrt::test::compare_tensors(actual, expected, rtol, atol);
  INFO(diff);
  CHECK(diff.empty());
}

}  // namespace

TEST_CASE("DeformConv with zero offsets is the grouped, padded, strided, dilated Conv", "[cpu][deform_conv]") {
  const Tensor x = random_tensor({2, 4, 7, 6}, 1), w = random_tensor({6, 2, 3, 2}, 2, -1, 1);
  const Tensor b = random_tensor({6}, 3, -1, 1);
  const auto window = attrs({{"group", int64_t{2}}, {"pads", ints{1, 0, 2, 1}},
                             {"strides", ints{2, 1}}, {"dilations", ints{1, 2}}});
  const Tensor conv = run_one({.op_type = "Conv", .inputs = {x, w, b}, .attrs = window});
  const Shape& y = conv.shape();  // [2, 6, 4, 4]
  auto deform_attrs = window;
  deform_attrs.set("offset_group", nxrt::Attribute{int64_t{2}});
  const Tensor deformed = run_one({.op_type = "DeformConv", .opset = 19,
                                   .inputs = {x, w, zeros({2, 2 * 6 * 2, y[2], y[3]}), b}, .attrs = deform_attrs});
  check_close(deformed, conv, 1e-5, 1e-5);
}

TEST_CASE("DeformConv samples bilinearly at the offsets, zeros off the image, scaled by the mask",
          "[cpu][deform_conv]") {
  // X = 0..8 on a 3x3 plane, W all ones 2x2: output (0, 0) sums x[0..1][0..1] = 8.
  Tensor x = Tensor::from_vector<float>({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  const Tensor w = Tensor::from_vector<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  Tensor offset = zeros({1, 8, 2, 2});
  offset.mut_as<float>()[0] = 0.5f;        // tap (0, 0) of output (0, 0) moves down half a row: (0 + 3) / 2
  offset.mut_as<float>()[7 * 4 + 3] = 1.f;  // tap (1, 1) of output (1, 1) moves right to column 3, off the image
  const Tensor y = run_one({.op_type = "DeformConv", .opset = 19, .inputs = {x, w, offset}});
  check_close(y, Tensor::from_vector<float>({1, 1, 2, 2}, {9.5f, 12, 20, 24 - 8}), 1e-6, 0);
  // A mask of 0.5 on tap (0, 0) everywhere halves that tap's sample.
  Tensor mask = Tensor::empty(DType::kFloat32, {1, 4, 2, 2});
  std::fill_n(mask.mut_as<float>(), 16, 1.f);
  std::fill_n(mask.mut_as<float>(), 4, 0.5f);
  const Tensor masked = run_one({.op_type = "DeformConv", .opset = 19, .inputs = {x, w, offset, Tensor(), mask}});
  check_close(masked, Tensor::from_vector<float>({1, 1, 2, 2}, {9.5f - 0.75f, 11.5f, 18.5f, 16 - 2}),
                          1e-6, 0);
}

TEST_CASE("DeformConv declines what it does not run and names the shape that does not fit", "[cpu][deform_conv]") {
  const Tensor w = random_tensor({2, 1, 2, 2}, 4, -1, 1);
  auto rank3 = nxrt::test::claim_on_cpu({.op_type = "DeformConv", .opset = 19,
                                         .inputs = {random_tensor({1, 1, 5}, 5), w, zeros({1, 8, 4})}});
  REQUIRE_FALSE(rank3);
  CHECK(rank3.reason() == "DeformConv: X has rank 3; nxrt implements the 2-D form (X of rank 4, [N, C, H, W])");
  const Tensor x = random_tensor({1, 1, 4, 4}, 6);
  auto offset = nxrt::test::claim_on_cpu({.op_type = "DeformConv", .opset = 19, .inputs = {x, w, zeros({1, 8, 4, 4})}});
  REQUIRE_FALSE(offset);
  CHECK(offset.reason() == "DeformConv: offset has shape [1,8,4,4]; it must be [1,8,3,3]; fix the model: the offset "
                           "and mask come from the layer in front of the DeformConv, and their shapes follow from X, W "
                           "and the attributes");
  auto groups = nxrt::test::claim_on_cpu(
      {.op_type = "DeformConv", .opset = 19, .inputs = {x, w, zeros({1, 8, 3, 3})}, .attrs = attrs({{"group", int64_t{2}}})});
  REQUIRE_FALSE(groups);
  CHECK_THAT(groups.reason(), Catch::StartsWith("DeformConv: X [1,1,4,4] and W [2,1,2,2] do not fit group 2"));
  Tensor half = Tensor::empty(DType::kFloat16, {1, 1, 4, 4});
  auto f16 = nxrt::test::claim_on_cpu({.op_type = "DeformConv", .opset = 19, .inputs = {half, w, zeros({1, 8, 3, 3})}});
  REQUIRE_FALSE(f16);
  CHECK(f16.reason() == "DeformConv: X is float16; the cpu EP runs DeformConv in float");
}
