// The gate activations of RNN, GRU and LSTM, named by their `activations` attribute with
// parameters from activation_alpha / activation_beta.
#pragma once

#include <algorithm>
#include <cmath>
#include <expected>
#include <string>
#include <vector>

namespace nxrt::cpu {

struct RnnActivation {
  enum class Kind { kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu,
                    kSoftsign, kSoftplus };
  Kind kind = Kind::kTanh;
  float alpha = 0;
  float beta = 0;

  template <class T>
  T operator()(T x) const {
    const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
    switch (kind) {
      case Kind::kRelu: return std::max(x, T(0));
      case Kind::kTanh: return std::tanh(x);
      case Kind::kSigmoid: return T(1) / (T(1) + std::exp(-x));
      case Kind::kAffine: return a * x + b;
      case Kind::kLeakyRelu: return x >= 0 ? x : a * x;
      case Kind::kThresholdedRelu: return x > a ? x : T(0);
      case Kind::kScaledTanh: return a * std::tanh(b * x);
      case Kind::kHardSigmoid: return std::clamp(a * x + b, T(0), T(1));
      case Kind::kElu: return x >= 0 ? x : a * (std::exp(x) - T(1));
      case Kind::kSoftsign: return x / (T(1) + std::abs(x));
      case Kind::kSoftplus: return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activations named in `names` (case-insensitive ONNX names), taking their alphas and
// betas in order from the two lists (only the activations that have the parameter consume
// one; missing values take ONNX's defaults). The error text names the unknown activation.
std::expected<std::vector<RnnActivation>, std::string> parse_rnn_activations(const std::vector<std::string>& names,
                                                                              const std::vector<float>& alphas,
                                                                              const std::vector<float>& betas);

}  // namespace nxrt::cpu
