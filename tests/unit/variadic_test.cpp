// Min, Max, Sum and Mean over 1..N broadcast inputs against hand-computed results.
#include <catch2/catch.hpp>

#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("variadic ops broadcast every input together", "[cpu][variadic][elementwise]") {
  const Tensor a = Tensor::from_vector<float>({2, 1}, {1, 10});
  const Tensor b = Tensor::from_vector<float>({3}, {5, 0, 20});
  const Tensor c = Tensor::from_vector<float>({2, 3}, {2, 2, 2, 2, 2, 2});
  CHECK(test::compare_tensors(run_one({.op_type = "Max", .opset = 8, .inputs = {a, b, c}}),
                        Tensor::from_vector<float>({2, 3}, {5, 2, 20, 10, 10, 20})).empty());
  CHECK(test::compare_tensors(run_one({.op_type = "Min", .inputs = {a, b, c}}),
                        Tensor::from_vector<float>({2, 3}, {1, 0, 1, 2, 0, 2})).empty());
  CHECK(test::compare_tensors(run_one({.op_type = "Sum", .inputs = {a, b, c}}),
                        Tensor::from_vector<float>({2, 3}, {8, 3, 23, 17, 12, 32})).empty());
  CHECK(test::compare_tensors(run_one({.op_type = "Mean", .inputs = {a, b, c}}),
                        Tensor::from_vector<float>({2, 3}, {8.0f / 3, 1, 23.0f / 3, 17.0f / 3, 4, 32.0f / 3})).empty());
}

TEST_CASE("variadic ops take one input, old opsets, and integers from Max-12", "[cpu][variadic][elementwise]") {
  const Tensor a = Tensor::from_vector<float>({2}, {3, -1});
  CHECK(test::compare_tensors(run_one({.op_type = "Sum", .opset = 1, .inputs = {a}}), a).empty());
  CHECK(test::compare_tensors(run_one({.op_type = "Mean", .opset = 6, .inputs = {a, a}}), a).empty());
  const Tensor u = Tensor::from_vector<uint16_t>({3}, {1, 60000, 7});
  const Tensor v = Tensor::from_vector<uint16_t>({3}, {2, 5, 7});
  CHECK(test::compare_tensors(run_one({.op_type = "Max", .opset = 12, .inputs = {u, v}}),
                        Tensor::from_vector<uint16_t>({3}, {2, 60000, 7})).empty());

  auto old = claim_on_cpu({.op_type = "Max", .opset = 8, .inputs = {u, v}});
  REQUIRE_FALSE(old);
  CHECK(old.reason() == "Max: input 0 has type uint16; the cpu EP supports float, double, float16 for Max");
  auto mixed = claim_on_cpu({.op_type = "Sum", .inputs = {a, Tensor::from_vector<double>({2}, {1, 2})}});
  REQUIRE_FALSE(mixed);
  CHECK(mixed.reason() ==
        "Sum: input 1 has type double and input 0 float; all inputs must have the same type (insert a Cast)");
}
