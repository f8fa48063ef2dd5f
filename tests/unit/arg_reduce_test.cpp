// ArgMax and ArgMin: hand-computed indices for keepdims, negative axes and
// select_last_index, a reference loop over a large input, and the decline reasons.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor arg(const std::string& op, int64_t opset, const Tensor& x, AttributeMap a) {
  return run_one({.op_type = op, .opset = opset, .inputs = {x}, .attrs = std::move(a)});
}

}  // namespace

TEST_CASE("ArgMax and ArgMin pick the first extreme, or the last with select_last_index", "[cpu][reduce][arg_reduce]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {2, 1, 2, 0, 5, 5});
  CHECK(compare_tensors(arg("ArgMax", 13, x, attrs({{"axis", int64_t{1}}})),
                        Tensor::from_vector<int64_t>({2, 1}, {0, 1})).empty());
  CHECK(compare_tensors(arg("ArgMax", 12, x, attrs({{"axis", int64_t{1}}, {"select_last_index", int64_t{1}}})),
                        Tensor::from_vector<int64_t>({2, 1}, {2, 2})).empty());
  CHECK(compare_tensors(arg("ArgMin", 1, x, attrs({{"keepdims", int64_t{0}}})),
                        Tensor::from_vector<int64_t>({3}, {1, 0, 0})).empty());
  CHECK(compare_tensors(arg("ArgMin", 11, x, attrs({{"axis", int64_t{-1}}})),
                        Tensor::from_vector<int64_t>({2, 1}, {1, 0})).empty());
  const Tensor i = Tensor::from_vector<int32_t>({4}, {3, -1, 3, -1});
  CHECK(compare_tensors(arg("ArgMin", 13, i, attrs({{"select_last_index", int64_t{1}}, {"keepdims", int64_t{0}}})),
                        Tensor::from_vector<int64_t>({}, {3})).empty());
}

TEST_CASE("ArgMax along a middle axis matches a reference loop, serial and parallel", "[cpu][reduce][arg_reduce]") {
  const Shape s{4, 300, 70};
  const Tensor x = Tensor::from_vector<float>(s, random_floats(4 * 300 * 70, 11));
  std::vector<int64_t> expected;
  for (int64_t o = 0; o < s[0]; ++o)
    for (int64_t c = 0; c < s[2]; ++c) {
      int64_t best = 0;
      for (int64_t j = 1; j < s[1]; ++j)
        if (x.data_as<float>()[(o * s[1] + j) * s[2] + c] > x.data_as<float>()[(o * s[1] + best) * s[2] + c]) best = j;
      expected.push_back(best);
    }
  for (int threads : {1, 4})
    CHECK(compare_tensors(run_one({.op_type = "ArgMax", .opset = 13, .inputs = {x},
                                   .attrs = attrs({{"axis", int64_t{1}}, {"keepdims", int64_t{0}}}), .threads = threads}),
                          Tensor::from_vector<int64_t>({4, 70}, expected)).empty());
}

TEST_CASE("ArgMax declines negative axes before opset 11 and out-of-range axes", "[cpu][reduce][arg_reduce][claim]") {
  const Tensor x = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  auto negative = claim_on_cpu({.op_type = "ArgMax", .opset = 1, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-1}}})});
  REQUIRE_FALSE(negative);
  CHECK(negative.reason() == "ArgMax: axis -1 is negative, which opset 1 does not allow; use axis -1 + rank or opset 11+");
  auto range = claim_on_cpu({.op_type = "ArgMin", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{2}}})});
  REQUIRE_FALSE(range);
  CHECK(range.reason() == "ArgMin: axis 2 is out of range for an input of rank 2; valid axes are [-2, 1]");
}
