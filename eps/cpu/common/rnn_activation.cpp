// Parsing of the RNN family's activations attribute.
#include "common/rnn_activation.h"

#include <cctype>

#include <fmt/format.h>

namespace nxrt::cpu {
namespace {

struct ActivationSpec {
  const char* name;  // lower case
  RnnActivation::Kind kind;
  int params;  // 0: none, 1: alpha, 2: alpha and beta
  float default_alpha;
  float default_beta;
};

constexpr ActivationSpec kActivations[] = {
    {"relu", RnnActivation::Kind::kRelu, 0, 0, 0},
    {"tanh", RnnActivation::Kind::kTanh, 0, 0, 0},
    {"sigmoid", RnnActivation::Kind::kSigmoid, 0, 0, 0},
    {"affine", RnnActivation::Kind::kAffine, 2, 1.f, 0.f},
    {"leakyrelu", RnnActivation::Kind::kLeakyRelu, 1, 0.01f, 0},
    {"thresholdedrelu", RnnActivation::Kind::kThresholdedRelu, 1, 1.f, 0},
    {"scaledtanh", RnnActivation::Kind::kScaledTanh, 2, 1.f, 1.f},
    {"hardsigmoid", RnnActivation::Kind::kHardSigmoid, 2, 0.2f, 0.5f},
    {"elu", RnnActivation::Kind::kElu, 1, 1.f, 0},
    {"softsign", RnnActivation::Kind::kSoftsign, 0, 0, 0},
    {"softplus", RnnActivation::Kind::kSoftplus, 0, 0, 0},
};

}  // namespace

std::expected<std::vector<RnnActivation>, std::string> parse_rnn_activations(const std::vector<std::string>& names,
                                                                              const std::vector<float>& alphas,
                                                                              const std::vector<float>& betas) {
  std::vector<RnnActivation> out;
  std::size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const ActivationSpec* spec = nullptr;
    for (const ActivationSpec& s : kActivations)
      if (lower == s.name) spec = &s;
    if (!spec)
      return std::unexpected(fmt::format(
          "activation '{}' is not supported; use Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, "
          "ScaledTanh, HardSigmoid, Elu, Softsign or Softplus",
          name));
    RnnActivation a{spec->kind, spec->default_alpha, spec->default_beta};
    if (spec->params >= 1 && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (spec->params >= 2 && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

}  // namespace nxrt::cpu
