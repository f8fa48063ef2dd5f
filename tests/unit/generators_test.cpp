// Range, OneHot and EyeLike against hand-computed outputs, their runtime errors and declines.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

template <class T>
Tensor scalar(T v) {
  return Tensor::from_vector<T>({}, {v});
}

std::string error_text(const Expected<std::vector<Tensor>>& r) { return r ? std::string() : r.error().render(); }

}  // namespace

TEST_CASE("Range counts ceil((limit - start) / delta) elements of every type", "[cpu][selection][generators]") {
  CHECK(
      compare_tensors(run_one({.op_type = "Range", .opset = 11, .inputs = {scalar(1.0f), scalar(5.0f), scalar(2.0f)}}),
                      Tensor::from_vector<float>({2}, {1, 3}))
          .empty());
  CHECK(compare_tensors(run_one({.op_type = "Range", .opset = 11, .inputs = {scalar(0.5), scalar(2.0), scalar(0.5)}}),
                        Tensor::from_vector<double>({3}, {0.5, 1, 1.5}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Range",
                                 .opset = 11,
                                 .inputs = {scalar<int32_t>(10), scalar<int32_t>(6), scalar<int32_t>(-3)}}),
                        Tensor::from_vector<int32_t>({2}, {10, 7}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Range",
                                 .opset = 11,
                                 .inputs = {scalar<int64_t>(-2), scalar<int64_t>(4), scalar<int64_t>(3)}}),
                        Tensor::from_vector<int64_t>({2}, {-2, 1}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Range",
                                 .opset = 11,
                                 .inputs = {scalar<int16_t>(3), scalar<int16_t>(9), scalar<int16_t>(3)}}),
                        Tensor::from_vector<int16_t>({2}, {3, 6}))
            .empty());
  // A limit behind the start gives an empty sequence.
  const Tensor empty = run_one({.op_type = "Range", .opset = 11, .inputs = {scalar(5.0f), scalar(1.0f), scalar(1.0f)}});
  CHECK(empty.shape() == Shape{0});
}

TEST_CASE("Range rejects delta 0 at run time and mixed types at claim", "[cpu][selection][generators]") {
  auto r = run_on_cpu({.op_type = "Range", .opset = 11, .inputs = {scalar(1.0f), scalar(5.0f), scalar(0.0f)}});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().render(), Catch::Contains("Range: delta is 0 (start 1, limit 5)"));
  CHECK_THAT(r.error().render(), Catch::Contains("Range_0"));
  auto m = claim_on_cpu({.op_type = "Range", .opset = 11, .inputs = {scalar(1.0f), scalar(5.0), scalar(1.0f)}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Range: input 1 has type double, expected float like start");
  auto u8 = claim_on_cpu(
      {.op_type = "Range", .opset = 11, .inputs = {scalar<uint8_t>(1), scalar<uint8_t>(5), scalar<uint8_t>(1)}});
  REQUIRE_FALSE(u8);
  CHECK(u8.reason() ==
        "Range: input 0 has type uint8; the cpu EP supports float, double, int16, int32, int64 for Range");
}

TEST_CASE("OneHot places on_value along the axis; negative indices count from the back in OneHot-11",
          "[cpu][selection][generators]") {
  const Tensor values = Tensor::from_vector<int32_t>({2}, {0, 5});
  // Default axis -1, depth as float.
  CHECK(compare_tensors(run_one({.op_type = "OneHot",
                                 .opset = 11,
                                 .inputs = {Tensor::from_vector<int64_t>({3}, {0, 2, 1}), scalar(3.0f), values}}),
                        Tensor::from_vector<int32_t>({3, 3}, {5, 0, 0, 0, 0, 5, 0, 5, 0}))
            .empty());
  // Axis 0 on [2] indices (as floats): output[idx[i], i] = on.
  CHECK(compare_tensors(run_one({.op_type = "OneHot",
                                 .opset = 11,
                                 .inputs = {Tensor::from_vector<float>({2}, {1, 2}), scalar<int64_t>(3),
                                            Tensor::from_vector<float>({2}, {-1, 1})},
                                 .attrs = attrs({{"axis", int64_t{0}}})}),
                        Tensor::from_vector<float>({3, 2}, {-1, -1, 1, -1, -1, 1}))
            .empty());
  // Axis -2 on [2,2] indices: the new axis sits in the middle.
  CHECK(compare_tensors(
            run_one({.op_type = "OneHot",
                     .opset = 11,
                     .inputs = {Tensor::from_vector<int64_t>({2, 2}, {0, 1, 1, 0}), scalar<int64_t>(2), values},
                     .attrs = attrs({{"axis", int64_t{-2}}})}),
            Tensor::from_vector<int32_t>({2, 2, 2}, {5, 0, 0, 5, 0, 5, 5, 0}))
            .empty());
  const Tensor negative = Tensor::from_vector<int64_t>({3}, {-1, 4, 1});
  CHECK(compare_tensors(run_one({.op_type = "OneHot", .opset = 11, .inputs = {negative, scalar<int64_t>(3), values}}),
                        Tensor::from_vector<int32_t>({3, 3}, {0, 0, 5, 0, 0, 0, 0, 5, 0}))
            .empty());
  // OneHot-9: anything outside [0, depth) is a row of off_value.
  CHECK(compare_tensors(run_one({.op_type = "OneHot", .opset = 9, .inputs = {negative, scalar<int64_t>(3), values}}),
                        Tensor::from_vector<int32_t>({3, 3}, {0, 0, 0, 0, 0, 0, 0, 5, 0}))
            .empty());
}

TEST_CASE("OneHot rejects depth below 1 at run time and malformed values at claim", "[cpu][selection][generators]") {
  const Tensor indices = Tensor::from_vector<int64_t>({2}, {0, 1});
  auto r = run_on_cpu({.op_type = "OneHot",
                       .opset = 11,
                       .inputs = {indices, scalar<int64_t>(0), Tensor::from_vector<float>({2}, {0, 1})}});
  CHECK_THAT(error_text(r), Catch::Contains("OneHot: depth is 0"));
  auto m = claim_on_cpu({.op_type = "OneHot",
                         .opset = 11,
                         .inputs = {indices, scalar<int64_t>(2), Tensor::from_vector<float>({3}, {0, 1, 2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "OneHot: values has 3 elements; it must be [off_value, on_value]");
  auto a = claim_on_cpu({.op_type = "OneHot",
                         .opset = 11,
                         .inputs = {indices, scalar<int64_t>(2), Tensor::from_vector<float>({2}, {0, 1})},
                         .attrs = attrs({{"axis", int64_t{3}}})});
  REQUIRE_FALSE(a);
  CHECK(a.reason() == "OneHot: axis 3 is out of range [-2, 1] for indices of rank 1");
}

TEST_CASE("EyeLike puts ones on diagonal k with the input's type or the dtype attribute",
          "[cpu][selection][generators]") {
  const Tensor x = Tensor::from_vector<int32_t>({3, 4}, std::vector<int32_t>(12, 7));
  CHECK(compare_tensors(run_one({.op_type = "EyeLike", .opset = 9, .inputs = {x}}),
                        Tensor::from_vector<int32_t>({3, 4}, {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "EyeLike",
                                 .opset = 9,
                                 .inputs = {x},
                                 .attrs = attrs({{"k", int64_t{1}}, {"dtype", int64_t{1}}})}),
                        Tensor::from_vector<float>({3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "EyeLike",
                                 .opset = 9,
                                 .inputs = {x},
                                 .attrs = attrs({{"k", int64_t{-2}}, {"dtype", int64_t{11}}})}),
                        Tensor::from_vector<double>({3, 4}, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}))
            .empty());
  auto m = claim_on_cpu({.op_type = "EyeLike", .opset = 9, .inputs = {iota_float({2, 2, 2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "EyeLike: input has rank 3; it must be 2-D");
  auto s = claim_on_cpu({.op_type = "EyeLike", .opset = 9, .inputs = {x}, .attrs = attrs({{"dtype", int64_t{8}}})});
  REQUIRE_FALSE(s);
  CHECK_THAT(s.reason(), Catch::StartsWith("EyeLike: dtype 8 (string) is not supported by the cpu EP"));
}
