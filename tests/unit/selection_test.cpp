// Compress, NonZero, Unique, TopK and ReverseSequence against hand-computed outputs.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {


std::vector<Tensor> run_all(const NodeSpec& spec) {
  auto r = run_on_cpu(spec);
  if (!r) FAIL(r.error().render());
  return *r;
}

}  // namespace

TEST_CASE("Compress selects slices along an axis or elements of the flattened input", "[cpu][selection]") {
  const Tensor x = iota_float({3, 2});  // [[0,1],[2,3],[4,5]]
  CHECK(compare_tensors(run_one({.op_type = "Compress",
                                 .opset = 11,
                                 .inputs = {x, bools({3}, {0, 1, 1})},
                                 .attrs = attrs({{"axis", int64_t{0}}})}),
                        Tensor::from_vector<float>({2, 2}, {2, 3, 4, 5}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Compress",
                                 .opset = 11,
                                 .inputs = {x, bools({2}, {0, 1})},
                                 .attrs = attrs({{"axis", int64_t{-1}}})}),
                        Tensor::from_vector<float>({3, 1}, {1, 3, 5}))
            .empty());
  // Flattened, with a condition shorter than the input.
  CHECK(compare_tensors(run_one({.op_type = "Compress", .opset = 9, .inputs = {x, bools({5}, {0, 1, 0, 0, 1})}}),
                        Tensor::from_vector<float>({2}, {1, 4}))
            .empty());
  auto r = run_on_cpu({.op_type = "Compress",
                       .opset = 11,
                       .inputs = {x, bools({4}, {0, 0, 0, 1})},
                       .attrs = attrs({{"axis", int64_t{0}}})});
  REQUIRE_FALSE(r);
  CHECK_THAT(
      r.error().render(),
      Catch::Contains("Compress: condition selects index 3 but the axis 0 of input shape [3,2] has only 3 entries"));
  auto neg = claim_on_cpu(
      {.op_type = "Compress", .opset = 9, .inputs = {x, bools({2}, {1, 1})}, .attrs = attrs({{"axis", int64_t{-1}}})});
  REQUIRE_FALSE(neg);
  CHECK(neg.reason() ==
        "Compress: axis -1 is negative; Compress accepts negative axes from opset 11 on and this node has opset 9");
  auto cond = claim_on_cpu({.op_type = "Compress", .opset = 11, .inputs = {x, int64s({1, 0})}});
  REQUIRE_FALSE(cond);
  CHECK(cond.reason() == "Compress: input 1 has type int64; the cpu EP supports bool for Compress");
}

TEST_CASE("NonZero lists coordinates of non-zero elements, one row per axis", "[cpu][selection]") {
  CHECK(compare_tensors(run_one({.op_type = "NonZero", .opset = 13, .inputs = {bools({2, 2}, {1, 0, 1, 1})}}),
                        Tensor::from_vector<int64_t>({2, 3}, {0, 1, 1, 0, 0, 1}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "NonZero",
                                 .opset = 9,
                                 .inputs = {Tensor::from_vector<float>({2, 3}, {0, 2, -0.0f, 0, 0, 1.5f})}}),
                        Tensor::from_vector<int64_t>({2, 2}, {0, 1, 1, 2}))
            .empty());
  const Tensor none =
      run_one({.op_type = "NonZero", .opset = 13, .inputs = {Tensor::from_vector<int32_t>({3}, {0, 0, 0})}});
  CHECK(none.shape() == Shape{1, 0});
  CHECK(compare_tensors(run_one({.op_type = "NonZero", .opset = 13, .inputs = {Tensor::from_vector<int32_t>({}, {4})}}),
                        Tensor::from_vector<int64_t>({1, 1}, {0}))
            .empty());
}

TEST_CASE("Unique returns values, first indices, inverse indices and counts", "[cpu][selection]") {
  const Tensor x = Tensor::from_vector<float>({6}, {2, 1, 1, 3, 4, 3});
  auto unsorted = run_all(
      {.op_type = "Unique", .opset = 11, .inputs = {x}, .attrs = attrs({{"sorted", int64_t{0}}}), .outputs = 4});
  CHECK(compare_tensors(unsorted[0], Tensor::from_vector<float>({4}, {2, 1, 3, 4})).empty());
  CHECK(compare_tensors(unsorted[1], int64s({0, 1, 3, 4})).empty());
  CHECK(compare_tensors(unsorted[2], int64s({0, 1, 1, 2, 3, 2})).empty());
  CHECK(compare_tensors(unsorted[3], int64s({1, 2, 2, 1})).empty());
  auto sorted = run_all({.op_type = "Unique", .opset = 11, .inputs = {x}, .outputs = 4});
  CHECK(compare_tensors(sorted[0], Tensor::from_vector<float>({4}, {1, 2, 3, 4})).empty());
  CHECK(compare_tensors(sorted[1], int64s({1, 0, 3, 4})).empty());
  CHECK(compare_tensors(sorted[2], int64s({1, 0, 0, 2, 3, 2})).empty());
  CHECK(compare_tensors(sorted[3], int64s({2, 1, 2, 1})).empty());
  // A 2-D input without axis is flattened.
  auto flat = run_all(
      {.op_type = "Unique", .opset = 11, .inputs = {Tensor::from_vector<int64_t>({2, 2}, {1, 3, 2, 3})}, .outputs = 4});
  CHECK(compare_tensors(flat[0], int64s({1, 2, 3})).empty());
  CHECK(compare_tensors(flat[1], int64s({0, 2, 1})).empty());
  CHECK(compare_tensors(flat[2], int64s({0, 2, 1, 2})).empty());
  CHECK(compare_tensors(flat[3], int64s({1, 1, 2})).empty());
}

TEST_CASE("Unique with an axis compares whole slices", "[cpu][selection]") {
  const Tensor rows = Tensor::from_vector<float>({3, 3}, {1, 0, 0, 1, 0, 0, 2, 3, 4});
  auto r = run_all(
      {.op_type = "Unique", .opset = 11, .inputs = {rows}, .attrs = attrs({{"axis", int64_t{0}}}), .outputs = 4});
  CHECK(compare_tensors(r[0], Tensor::from_vector<float>({2, 3}, {1, 0, 0, 2, 3, 4})).empty());
  CHECK(compare_tensors(r[1], int64s({0, 2})).empty());
  CHECK(compare_tensors(r[2], int64s({0, 0, 1})).empty());
  CHECK(compare_tensors(r[3], int64s({2, 1})).empty());
  // The spec's example 4: slices along axis 1 of a [2,4,2] tensor.
  const Tensor x = Tensor::from_vector<float>({2, 4, 2}, {1, 1, 0, 1, 2, 1, 0, 1, 1, 1, 0, 1, 2, 1, 0, 1});
  auto s =
      run_all({.op_type = "Unique", .opset = 11, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-2}}}), .outputs = 4});
  CHECK(compare_tensors(s[0], Tensor::from_vector<float>({2, 3, 2}, {0, 1, 1, 1, 2, 1, 0, 1, 1, 1, 2, 1})).empty());
  CHECK(compare_tensors(s[1], int64s({1, 0, 2})).empty());
  CHECK(compare_tensors(s[2], int64s({1, 0, 2, 0})).empty());
  CHECK(compare_tensors(s[3], int64s({2, 1, 1})).empty());
  auto m = claim_on_cpu({.op_type = "Unique", .opset = 11, .inputs = {rows}, .attrs = attrs({{"axis", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Unique: axis 2 is out of range for an input of rank 2; valid axes are [-2, 1]");
}

TEST_CASE("TopK returns the k largest or smallest, ties in index order", "[cpu][selection]") {
  const Tensor x = Tensor::from_vector<float>({2, 4}, {3, 1, 3, 2, 0, 5, 5, 5});
  auto largest = run_all({.op_type = "TopK", .opset = 11, .inputs = {x, int64s({2})}, .outputs = 2});
  CHECK(compare_tensors(largest[0], Tensor::from_vector<float>({2, 2}, {3, 3, 5, 5})).empty());
  CHECK(compare_tensors(largest[1], Tensor::from_vector<int64_t>({2, 2}, {0, 2, 1, 2})).empty());
  auto smallest = run_all({.op_type = "TopK",
                           .opset = 11,
                           .inputs = {x, int64s({3})},
                           .attrs = attrs({{"largest", int64_t{0}}}),
                           .outputs = 2});
  CHECK(compare_tensors(smallest[0], Tensor::from_vector<float>({2, 3}, {1, 2, 3, 0, 5, 5})).empty());
  CHECK(compare_tensors(smallest[1], Tensor::from_vector<int64_t>({2, 3}, {1, 3, 0, 0, 1, 2})).empty());
  // Axis 0, TopK-1's k attribute.
  auto cols = run_all({.op_type = "TopK",
                       .opset = 1,
                       .inputs = {x},
                       .attrs = attrs({{"k", int64_t{1}}, {"axis", int64_t{0}}}),
                       .outputs = 2});
  CHECK(compare_tensors(cols[0], Tensor::from_vector<float>({1, 4}, {3, 5, 5, 5})).empty());
  CHECK(compare_tensors(cols[1], Tensor::from_vector<int64_t>({1, 4}, {0, 1, 1, 1})).empty());
  // Integers from TopK-11 on.
  auto ints = run_all({.op_type = "TopK",
                       .opset = 11,
                       .inputs = {Tensor::from_vector<int32_t>({3}, {-1, 7, 7}), int64s({2})},
                       .outputs = 2});
  CHECK(compare_tensors(ints[0], Tensor::from_vector<int32_t>({2}, {7, 7})).empty());
  CHECK(compare_tensors(ints[1], int64s({1, 2})).empty());
}

TEST_CASE("TopK rejects k beyond the axis and integer inputs before opset 11", "[cpu][selection]") {
  const Tensor x = iota_float({2, 3});
  auto r = run_on_cpu({.op_type = "TopK", .opset = 10, .inputs = {x, int64s({4})}, .outputs = 2});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().render(), Catch::Contains("TopK: k is 4 but axis 1 of input shape [2,3] has 3 elements"));
  auto m = claim_on_cpu({.op_type = "TopK",
                         .opset = 10,
                         .inputs = {Tensor::from_vector<int32_t>({2}, {1, 2}), int64s({1})},
                         .outputs = 2});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "TopK: input 0 has type int32; the cpu EP supports float, double, float16 for TopK");
}

TEST_CASE("ReverseSequence reverses each batch entry's prefix along the time axis", "[cpu][selection]") {
  const Tensor x = iota_float({4, 4});
  // time_axis 0, batch_axis 1 (the defaults): column b reverses its first lens[b] rows.
  CHECK(compare_tensors(run_one({.op_type = "ReverseSequence", .opset = 10, .inputs = {x, int64s({4, 3, 2, 1})}}),
                        Tensor::from_vector<float>({4, 4}, {12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14, 15}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "ReverseSequence",
                                 .opset = 10,
                                 .inputs = {x, int64s({1, 2, 3, 4})},
                                 .attrs = attrs({{"batch_axis", int64_t{0}}, {"time_axis", int64_t{1}}})}),
                        Tensor::from_vector<float>({4, 4}, {0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13, 12}))
            .empty());
  auto r = run_on_cpu({.op_type = "ReverseSequence", .opset = 10, .inputs = {x, int64s({5, 1, 1, 1})}});
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().render(),
             Catch::Contains("ReverseSequence: sequence_lens[0] is 5 but the time axis has 4 steps"));
  auto m = claim_on_cpu({.op_type = "ReverseSequence",
                         .opset = 10,
                         .inputs = {x, int64s({1, 1, 1, 1})},
                         .attrs = attrs({{"batch_axis", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ReverseSequence: batch_axis 2 and time_axis 0 must be 0 and 1 in some order");
}
