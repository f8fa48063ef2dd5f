// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss: hand-computed losses for each
// reduction, weights, ignore_index (negative included), N-d inputs and the log_prob output.
#include <catch2/catch.hpp>

#include <cmath>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Log-probabilities of 2 samples over 3 classes, targets 2 and 0: losses 3 and 0.5.
const Tensor kLogProb = Tensor::from_vector<float>({2, 3}, {-1, -2, -3, -0.5f, -1.5f, -2.5f});
const Tensor kWeights = Tensor::from_vector<float>({3}, {0.1f, 0.2f, 0.3f});

Tensor nll(Tensor target, AttributeMap a, bool weighted = false) {
  std::vector<Tensor> inputs{kLogProb, std::move(target)};
  if (weighted) inputs.push_back(kWeights);
  return run_one({.op_type = "NegativeLogLikelihoodLoss", .opset = 13, .inputs = inputs, .attrs = std::move(a)});
}

Tensor scalar(float v) { return Tensor::from_vector<float>({}, {v}); }

}  // namespace

TEST_CASE("NegativeLogLikelihoodLoss reduces none, sum and mean", "[cpu][loss]") {
  const Tensor target = Tensor::from_vector<int64_t>({2}, {2, 0});
  CHECK(compare_tensors(nll(target, attrs({{"reduction", std::string("none")}})),
                        Tensor::from_vector<float>({2}, {3, 0.5f})).empty());
  CHECK(compare_tensors(nll(target, attrs({{"reduction", std::string("sum")}})), scalar(3.5f)).empty());
  CHECK(compare_tensors(nll(target, {}), scalar(1.75f)).empty());
  // Weighted mean divides by the weights of the targets: (0.9 + 0.05) / (0.3 + 0.1).
  CHECK(compare_tensors(nll(target, {}, true), scalar(2.375f)).empty());
}

TEST_CASE("NegativeLogLikelihoodLoss leaves out ignored targets, negative ones included", "[cpu][loss]") {
  // Target 0 ignored: only 0.9 with weight 0.3 counts.
  CHECK(compare_tensors(nll(Tensor::from_vector<int64_t>({2}, {2, 0}), attrs({{"ignore_index", int64_t{0}}}), true),
                        scalar(3)).empty());
  const Tensor negative = Tensor::from_vector<int32_t>({2}, {2, -1});
  CHECK(compare_tensors(nll(negative, attrs({{"ignore_index", int64_t{-1}}})), scalar(3)).empty());
  CHECK(compare_tensors(nll(negative, attrs({{"ignore_index", int64_t{-1}}, {"reduction", std::string("none")}})),
                        Tensor::from_vector<float>({2}, {3, 0})).empty());
}

TEST_CASE("NegativeLogLikelihoodLoss over N-d inputs picks the class per position", "[cpu][loss]") {
  // (N=1, C=2, d=2): position 0 takes class 1 (-3), position 1 class 0 (-2).
  const Tensor x = Tensor::from_vector<double>({1, 2, 2}, {-1, -2, -3, -4});
  const Tensor y = run_one({.op_type = "NegativeLogLikelihoodLoss", .opset = 12,
                            .inputs = {x, Tensor::from_vector<int64_t>({1, 2}, {1, 0})},
                            .attrs = attrs({{"reduction", std::string("none")}})});
  CHECK(compare_tensors(y, Tensor::from_vector<double>({1, 2}, {3, 2})).empty());
}

TEST_CASE("SoftmaxCrossEntropyLoss applies log-softmax over the class axis", "[cpu][loss]") {
  const Tensor scores = Tensor::from_vector<float>({2, 3}, {0, 0, 0, 1, 2, 3});
  auto out = run_on_cpu({.op_type = "SoftmaxCrossEntropyLoss", .opset = 13,
                         .inputs = {scores, Tensor::from_vector<int64_t>({2}, {1, 2})},
                         .attrs = attrs({{"reduction", std::string("none")}}), .outputs = 2});
  REQUIRE(out);
  // log(3), and logsumexp(1, 2, 3) - 3.
  const float lse = 3 + std::log(1 + std::exp(-1.0f) + std::exp(-2.0f));
  CHECK(compare_tensors((*out)[0], Tensor::from_vector<float>({2}, {std::log(3.0f), lse - 3})).empty());
  CHECK(compare_tensors((*out)[1], Tensor::from_vector<float>({2, 3}, {-std::log(3.0f), -std::log(3.0f), -std::log(3.0f),
                                                                       1 - lse, 2 - lse, 3 - lse})).empty());
  const Tensor mean = run_one({.op_type = "SoftmaxCrossEntropyLoss", .opset = 12,
                               .inputs = {scores, Tensor::from_vector<int64_t>({2}, {1, 2}), kWeights}});
  CHECK(compare_tensors(mean, scalar((0.2f * std::log(3.0f) + 0.3f * (lse - 3)) / 0.5f)).empty());
}

TEST_CASE("losses reject out-of-range targets and decline unknown reductions", "[cpu][loss][claim]") {
  auto bad = run_on_cpu({.op_type = "NegativeLogLikelihoodLoss", .opset = 13,
                         .inputs = {kLogProb, Tensor::from_vector<int64_t>({2}, {3, 0})}});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "NegativeLogLikelihoodLoss: target 3 at position 0 is out of range");
  auto reduction = claim_on_cpu({.op_type = "SoftmaxCrossEntropyLoss", .opset = 13,
                                 .inputs = {kLogProb, Tensor::from_vector<int64_t>({2}, {1, 0})},
                                 .attrs = attrs({{"reduction", std::string("avg")}})});
  REQUIRE_FALSE(reduction);
  CHECK(reduction.reason() == "SoftmaxCrossEntropyLoss: reduction 'avg' is not one of none, sum, mean");
}
