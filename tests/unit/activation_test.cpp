// The activation family against their formulas, and PRelu's slope broadcasting.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <vector>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Runs `op` on a few values around 0 and checks each output against `ref`.
void check_formula(const std::string& op, int64_t opset, const AttributeMap& attributes,
                   const std::function<double(double)>& ref) {
  const std::vector<float> v = {-3, -1, -0.25f, 0, 0.25f, 1, 3, 25};
  const Tensor y = run_one({.op_type = op, .opset = opset, .inputs = {Tensor::from_vector<float>({8}, v)},
                            .attrs = attributes});
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO(op << " at " << v[i]);
    CHECK(y.data_as<float>()[i] == Approx(ref(v[i])).margin(1e-6));
  }
}

}  // namespace

TEST_CASE("activations match their formulas with default and given attributes", "[cpu][activation][elementwise]") {
  check_formula("Elu", 6, attrs({{"alpha", 2.0f}}), [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; });
  check_formula("Elu", 1, {}, [](double x) { return x < 0 ? std::exp(x) - 1 : x; });
  check_formula("Selu", 6, {}, [](double x) {
    return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * (std::exp(x) - 1));
  });
  check_formula("Celu", 12, attrs({{"alpha", 2.0f}}),
                [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); });
  check_formula("HardSigmoid", 6, attrs({{"alpha", 0.5f}}),
                [](double x) { return std::clamp(0.5 * x + 0.5, 0.0, 1.0); });
  check_formula("HardSwish", 14, {}, [](double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); });
  check_formula("Softplus", 1, {}, [](double x) { return std::log(std::exp(x) + 1); });
  check_formula("Softsign", 1, {}, [](double x) { return x / (1 + std::abs(x)); });
  check_formula("Mish", 18, {}, [](double x) { return x * std::tanh(std::log(1 + std::exp(x))); });
  check_formula("ThresholdedRelu", 10, attrs({{"alpha", 0.25f}}), [](double x) { return x > 0.25 ? x : 0; });
  check_formula("Shrink", 9, attrs({{"lambd", 1.0f}, {"bias", 0.5f}}),
                [](double x) { return x < -1 ? x + 0.5 : (x > 1 ? x - 0.5 : 0); });
}

TEST_CASE("PRelu broadcasts the slope onto X; opset 6 takes one slope per channel", "[cpu][activation][elementwise]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 2}, {-1, 1, -2, 2, -3, 3, -4, 4, -5, 5, -6, 6});
  const Tensor slope = Tensor::from_vector<float>({3, 1}, {0.5f, 0.25f, 2});
  const std::vector<float> expected = {-0.5f, 1, -0.5f, 2, -6, 3, -2, 4, -1.25f, 5, -12, 6};
  CHECK(compare_tensors(run_one({.op_type = "PRelu", .inputs = {x, slope}}),
                        Tensor::from_vector<float>({2, 3, 2}, expected)).empty());
  const Tensor channel = Tensor::from_vector<float>({3}, {0.5f, 0.25f, 2});
  CHECK(compare_tensors(run_one({.op_type = "PRelu", .opset = 6, .inputs = {x, channel}}),
                        Tensor::from_vector<float>({2, 3, 2}, expected)).empty());

  auto wide = claim_on_cpu({.op_type = "PRelu", .inputs = {Tensor::from_vector<float>({2}, {1, 2}),
                                                           Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})}});
  REQUIRE_FALSE(wide);
  CHECK(wide.reason() == "PRelu: slope [2,2] does not broadcast onto X [2]; give a slope whose dims are 1 or X's, "
                         "aligned at the right");
  auto ints = claim_on_cpu({.op_type = "Elu", .inputs = {Tensor::from_vector<int32_t>({1}, {1})}});
  REQUIRE_FALSE(ints);
  CHECK(ints.reason() == "Elu: input 0 has type int32; the cpu EP supports float, double, float16 for Elu");
}
