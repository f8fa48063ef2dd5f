// The unary elementwise family against std:: references.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("Relu, Sigmoid and Clip match their definitions", "[cpu][unary]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {-2, -0.5f, 0, 0.5f, 1, 3});
  auto relu = run_on_cpu({.op_type = "Relu", .inputs = {x}});
  REQUIRE(relu);
  CHECK(compare_tensors((*relu)[0], Tensor::from_vector<float>({2, 3}, {0, 0, 0, 0.5f, 1, 3})).empty());

  auto sig = run_on_cpu({.op_type = "Sigmoid", .inputs = {x}});
  REQUIRE(sig);
  for (int i = 0; i < 6; ++i)
    CHECK((*sig)[0].data_as<float>()[i] == Approx(1 / (1 + std::exp(-x.data_as<float>()[i]))));

  auto clip = run_on_cpu({.op_type = "Clip", .inputs = {x, Tensor::from_vector<float>({}, {-1}),
                                                          Tensor::from_vector<float>({}, {1})}});
  REQUIRE(clip);
  CHECK(compare_tensors((*clip)[0], Tensor::from_vector<float>({2, 3}, {-1, -0.5f, 0, 0.5f, 1, 1})).empty());
}

TEST_CASE("unary ops decline integer inputs with the supported types", "[cpu][unary][claim]") {
  auto m = claim_on_cpu({.op_type = "Relu", .inputs = {Tensor::from_vector<int32_t>({2}, {1, -1})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Relu: input 0 has type int32; the cpu EP supports float, double for Relu");
}
