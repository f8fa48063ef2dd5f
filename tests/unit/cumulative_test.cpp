// CumSum: inclusive, exclusive, reversed and both, along each axis, and the decline reasons.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor cumsum(const Tensor& x, Tensor axis, AttributeMap a = {}, int64_t opset = 14) {
  return run_one({.op_type = "CumSum", .opset = opset, .inputs = {x, std::move(axis)}, .attrs = std::move(a)});
}

}  // namespace

TEST_CASE("CumSum sums inclusively, exclusively and in reverse", "[cpu][cumulative]") {
  const Tensor x = Tensor::from_vector<float>({5}, {1, 2, 3, 4, 5});
  const Tensor axis = Tensor::from_vector<int32_t>({}, {0});
  CHECK(test::compare_tensors(cumsum(x, axis, {}, 11), Tensor::from_vector<float>({5}, {1, 3, 6, 10, 15})).empty());
  CHECK(test::compare_tensors(cumsum(x, axis, attrs({{"exclusive", int64_t{1}}})),
                        Tensor::from_vector<float>({5}, {0, 1, 3, 6, 10})).empty());
  CHECK(test::compare_tensors(cumsum(x, axis, attrs({{"reverse", int64_t{1}}})),
                        Tensor::from_vector<float>({5}, {15, 14, 12, 9, 5})).empty());
  CHECK(test::compare_tensors(cumsum(x, axis, attrs({{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}})),
                        Tensor::from_vector<float>({5}, {14, 12, 9, 5, 0})).empty());
}

TEST_CASE("CumSum runs along any axis of integer and double data", "[cpu][cumulative]") {
  const Tensor i = Tensor::from_vector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(test::compare_tensors(cumsum(i, Tensor::from_vector<int64_t>({}, {0})),
                        Tensor::from_vector<int32_t>({2, 3}, {1, 2, 3, 5, 7, 9})).empty());
  const Tensor l = Tensor::from_vector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  CHECK(test::compare_tensors(cumsum(l, Tensor::from_vector<int32_t>({1}, {-1})),
                        Tensor::from_vector<int64_t>({2, 3}, {1, 3, 6, 4, 9, 15})).empty());
  const Tensor d = Tensor::from_vector<double>({2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  CHECK(test::compare_tensors(cumsum(d, Tensor::from_vector<int64_t>({}, {1}), attrs({{"reverse", int64_t{1}}})),
                        Tensor::from_vector<double>({2, 2, 2}, {4, 6, 3, 4, 12, 14, 7, 8})).empty());
  // Wide rows (more columns than one block) in parallel.
  const Tensor w = Tensor::from_vector<float>({3, 1000}, std::vector<float>(3000, 1));
  const Tensor y = run_one({.op_type = "CumSum", .opset = 14, .inputs = {w, Tensor::from_vector<int64_t>({}, {0})},
                            .threads = 4});
  CHECK(y.data_as<float>()[2999] == 3);
  CHECK(y.data_as<float>()[1000] == 2);
}

TEST_CASE("CumSum declines a float axis and an out-of-range constant axis", "[cpu][cumulative][claim]") {
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  auto type = claim_on_cpu({.op_type = "CumSum", .opset = 14, .inputs = {x, Tensor::from_vector<float>({}, {0})}});
  REQUIRE_FALSE(type);
  CHECK(type.reason() == "CumSum: input 1 has type float; the cpu EP supports int32, int64 for CumSum");
  auto range = claim_on_cpu({.op_type = "CumSum", .opset = 14, .inputs = {x, Tensor::from_vector<int64_t>({}, {1})},
                             .constant = {false, true}});
  REQUIRE_FALSE(range);
  CHECK(range.reason() == "CumSum: axis 1 is out of range for an input of rank 1; valid axes are [-1, 0]");
}
