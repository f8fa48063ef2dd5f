// TensorDiff: max errors, the smallest passing tolerances and the log10 error histogram.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "nxrt/io/compare.h"

using namespace nxrt;

TEST_CASE("tensor diff reports the tolerances that would pass", "[io][tensor_diff]") {
  const Tensor expected = Tensor::from_vector<float>({5}, {1, 2, 4, -8, 0});
  const Tensor actual = Tensor::from_vector<float>({5}, {1, 2.5f, 4.0625f, -8, 0});
  const TensorDiff d = compare_tensors(actual, expected, 0.1, 0);
  CHECK_FALSE(d.ok);
  CHECK(d.mismatches == 1);
  CHECK(d.first_mismatch == 1);
  CHECK(d.max_abs == 0.5);
  CHECK(d.max_rel == 0.25);
  CHECK(d.min_atol == 0.5);
  CHECK(d.min_rtol == 0.25);
  CHECK(d.exact == 3);
  CHECK(d.nonfinite == 0);
  CHECK(d.log10_buckets == std::map<int, int64_t>{{-2, 1}, {-1, 1}});
  CHECK(compare_tensors(actual, expected, d.min_rtol, 0).ok);
  CHECK(compare_tensors(actual, expected, 0, d.min_atol).ok);
}

TEST_CASE("tensor diff: no relative tolerance passes an error where zero is expected", "[io][tensor_diff]") {
  const TensorDiff d = compare_tensors(Tensor::from_vector<float>({2}, {1, 1e-3f}), Tensor::from_vector<float>({2}, {1, 0}));
  CHECK(std::isinf(d.min_rtol));
  CHECK(d.min_atol == Approx(1e-3));
  CHECK(d.log10_buckets == std::map<int, int64_t>{{-3, 1}});
}

TEST_CASE("tensor diff: NaN matches NaN only, and then no tolerance passes", "[io][tensor_diff]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const TensorDiff same = compare_tensors(Tensor::from_vector<float>({2}, {nan, 1}), Tensor::from_vector<float>({2}, {nan, 1}));
  CHECK(same.ok);
  CHECK(same.exact == 2);
  CHECK(same.min_atol == 0);
  const TensorDiff d = compare_tensors(Tensor::from_vector<float>({2}, {nan, 1}), Tensor::from_vector<float>({2}, {0, 1}));
  CHECK(d.nonfinite == 1);
  CHECK(std::isinf(d.min_atol));
  CHECK(std::isinf(d.min_rtol));
}

TEST_CASE("tensor diff: integers compare exactly whatever the tolerance", "[io][tensor_diff]") {
  const TensorDiff d = compare_tensors(Tensor::from_vector<int64_t>({3}, {1, 2, 30}),
                                       Tensor::from_vector<int64_t>({3}, {1, 2, 3}), 100, 100);
  CHECK_FALSE(d.ok);
  CHECK(d.max_abs == 27);
  CHECK(d.log10_buckets == std::map<int, int64_t>{{1, 1}});
  CHECK(std::isinf(d.min_atol));
}

TEST_CASE("tensor diff: shape problems and sequences", "[io][tensor_diff]") {
  const TensorDiff shape = compare_tensors(Tensor::from_vector<float>({2}, {1, 2}), Tensor::from_vector<float>({1}, {1}));
  CHECK(shape.problem == "shape [2] where [1] was expected");
  CHECK(std::isinf(shape.min_atol));
  const RuntimeValue a = RuntimeValue::sequence(DType::kFloat32, {Tensor::from_vector<float>({1}, {1.5f}),
                                                                  Tensor::from_vector<float>({1}, {2.02f})});
  const RuntimeValue e = RuntimeValue::sequence(DType::kFloat32, {Tensor::from_vector<float>({1}, {1}),
                                                                  Tensor::from_vector<float>({1}, {2})});
  const TensorDiff d = compare_values(a, e);
  CHECK(d.elements == 2);
  CHECK(d.min_atol == 0.5);
  CHECK(d.log10_buckets.at(-1) == 1);
  CHECK(d.log10_buckets.at(-2) == 1);
}
