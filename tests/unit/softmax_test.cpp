// Softmax and LogSoftmax against a double-precision reference, for both axis semantics.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Normalizes groups of `len` elements spaced `inner` apart, in double.
template <class T>
Tensor reference(const Tensor& x, int64_t outer, int64_t len, int64_t inner, bool log) {
  std::vector<T> y(static_cast<std::size_t>(x.numel()));
  const T* in = x.data_as<T>();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < inner; ++c) {
      auto at = [&](int64_t j) { return static_cast<std::size_t>((o * len + j) * inner + c); };
      double m = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < len; ++j) m = std::max(m, static_cast<double>(in[at(j)]));
      double sum = 0;
      for (int64_t j = 0; j < len; ++j) sum += std::exp(static_cast<double>(in[at(j)]) - m);
      for (int64_t j = 0; j < len; ++j) {
        const double v = static_cast<double>(in[at(j)]) - m;
        y[at(j)] = static_cast<T>(log ? v - std::log(sum) : std::exp(v) / sum);
      }
    }
  return Tensor::from_vector<T>(x.shape(), y);
}

}  // namespace

TEST_CASE("Softmax-13 normalizes along one axis, last or not", "[cpu][softmax]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 37}, random_floats(2 * 3 * 37, 1, -4, 4));
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 13, .inputs = {x}}),
                        reference<float>(x, 6, 37, 1, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{1}}})}),
                        reference<float>(x, 2, 3, 37, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "LogSoftmax", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{0}}})}),
                        reference<float>(x, 1, 2, 111, true), 1e-5, 1e-5).empty());
  CHECK(compare_tensors(run_one({.op_type = "LogSoftmax", .opset = 13, .inputs = {x}}),
                        reference<float>(x, 6, 37, 1, true), 1e-5, 1e-5).empty());
}

TEST_CASE("Softmax-1..12 coerces the input to 2-D at axis, default 1", "[cpu][softmax]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 4}, random_floats(24, 2, -4, 4));
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 11, .inputs = {x}}),
                        reference<float>(x, 2, 12, 1, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 1, .inputs = {x}, .attrs = attrs({{"axis", int64_t{2}}})}),
                        reference<float>(x, 6, 4, 1, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "LogSoftmax", .opset = 12, .inputs = {x}, .attrs = attrs({{"axis", int64_t{0}}})}),
                        reference<float>(x, 1, 24, 1, true), 1e-5, 1e-5).empty());
}

TEST_CASE("Softmax is stable for large inputs and maps -inf to 0", "[cpu][softmax]") {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1000, 1001, 1002, -inf, 0, -inf});
  const Tensor y = run_one({.op_type = "Softmax", .opset = 13, .inputs = {x}});
  const float* v = y.data_as<float>();
  CHECK(v[0] == Approx(0.09003057));
  CHECK(v[1] == Approx(0.24472847));
  CHECK(v[2] == Approx(0.66524096));
  CHECK(v[3] == 0.0f);
  CHECK(v[4] == 1.0f);
  CHECK(v[5] == 0.0f);
  const Tensor l = run_one({.op_type = "LogSoftmax", .opset = 13, .inputs = {x}});
  CHECK(l.data_as<float>()[2] == Approx(-0.40760596));
  CHECK(l.data_as<float>()[4] == 0.0f);
}

TEST_CASE("Softmax over large rows and double data matches the reference", "[cpu][softmax]") {
  // Values span the whole exp range, so the vectorized exp is checked against libm's.
  const Tensor x = Tensor::from_vector<float>({64, 1000}, random_floats(64000, 3, -80, 80));
  for (int threads : {1, 4})
    CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 13, .inputs = {x}, .threads = threads}),
                          reference<float>(x, 64, 1000, 1, false), 1e-5, 1e-7).empty());
  const Tensor cols = Tensor::from_vector<float>({3, 50, 300}, random_floats(45000, 4, -4, 4));
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 13, .inputs = {cols}, .attrs = attrs({{"axis", int64_t{1}}}),
                                 .threads = 4}),
                        reference<float>(cols, 3, 50, 300, false)).empty());

  std::vector<double> d(60);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = std::sin(static_cast<double>(i)) * 10;
  const Tensor xd = Tensor::from_vector<double>({3, 20}, d);
  CHECK(compare_tensors(run_one({.op_type = "Softmax", .opset = 13, .inputs = {xd}}),
                        reference<double>(xd, 3, 20, 1, false), 1e-12, 1e-15).empty());
  CHECK(compare_tensors(run_one({.op_type = "LogSoftmax", .opset = 13, .inputs = {xd}}),
                        reference<double>(xd, 3, 20, 1, true), 1e-12, 1e-12).empty());
}

TEST_CASE("Softmax declines integer inputs and out-of-range axes", "[cpu][softmax][claim]") {
  auto ints = claim_on_cpu({.op_type = "Softmax", .inputs = {Tensor::from_vector<int32_t>({2}, {1, 2})}});
  REQUIRE_FALSE(ints);
  CHECK(ints.reason() == "Softmax: input 0 has type int32; the cpu EP supports float, double for Softmax");
  auto axis = claim_on_cpu({.op_type = "LogSoftmax", .inputs = {Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})},
                            .attrs = attrs({{"axis", int64_t{2}}})});
  REQUIRE_FALSE(axis);
  CHECK(axis.reason() == "LogSoftmax: axis 2 is out of range for an input of rank 2; valid axes are [-2, 1]");
}

TEST_CASE("Hardmax marks the first maximum along the axis or the coerced 2-D row", "[cpu][softmax][reduce]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, 3, 3, 4, 2, 0});
  CHECK(compare_tensors(run_one({.op_type = "Hardmax", .opset = 13, .inputs = {x}}),
                        Tensor::from_vector<float>({2, 3}, {0, 1, 0, 1, 0, 0})).empty());
  const Tensor cube = Tensor::from_vector<float>({2, 2, 2}, {1, 5, 2, 0, 0, 0, 9, 1});
  // Opset 11, axis 1: rows of 4 ([1, 5, 2, 0] and [0, 0, 9, 1]).
  CHECK(compare_tensors(run_one({.op_type = "Hardmax", .opset = 11, .inputs = {cube}}),
                        Tensor::from_vector<float>({2, 2, 2}, {0, 1, 0, 0, 0, 0, 1, 0})).empty());
  // Opset 13, axis 1: each (n, k) column of 2.
  CHECK(compare_tensors(run_one({.op_type = "Hardmax", .opset = 13, .inputs = {cube}, .attrs = attrs({{"axis", int64_t{1}}})}),
                        Tensor::from_vector<float>({2, 2, 2}, {0, 1, 1, 0, 0, 0, 1, 1})).empty());
  auto type = claim_on_cpu({.op_type = "Hardmax", .inputs = {Tensor::from_vector<int32_t>({2}, {1, 2})}});
  REQUIRE_FALSE(type);
  CHECK(type.reason() == "Hardmax: input 0 has type int32; the cpu EP supports float, double, float16 for Hardmax");
}
