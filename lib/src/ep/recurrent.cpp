// The recurrent layers' attributes, claim checks and run sizes (nxrt/ep/recurrent.h).
#include "nxrt/ep/recurrent.h"

#include <fmt/format.h>

#include <cctype>

namespace nxrt {
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

std::vector<std::string> default_activations(RecurrentCell cell) {
  if (cell == RecurrentCell::kRnn) return {"Tanh"};
  if (cell == RecurrentCell::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

}  // namespace

const char* recurrent_cell_name(RecurrentCell cell) {
  return cell == RecurrentCell::kRnn ? "RNN" : cell == RecurrentCell::kGru ? "GRU" : "LSTM";
}

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

std::expected<RecurrentAttrs, std::string> read_recurrent_attrs(const AttributeMap& a, RecurrentCell cell) {
  RecurrentAttrs r;
  r.cell = cell;
  r.direction = a.string_or("direction", "forward");
  if (r.direction != "forward" && r.direction != "reverse" && r.direction != "bidirectional")
    return std::unexpected(
        fmt::format("direction '{}' is not an ONNX value; use forward, reverse or bidirectional", r.direction));
  r.hidden = a.int_or("hidden_size", 0);
  auto names = a.get_strings("activations").value_or(default_activations(cell));
  const std::size_t per_direction = recurrent_activation_count(cell);
  // One direction's list serves both directions of a bidirectional layer.
  if (r.directions() == 2 && names.size() == per_direction) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (names.size() != per_direction * static_cast<std::size_t>(r.directions()))
    return std::unexpected(fmt::format("activations has {} names; {} direction(s) need {}", names.size(),
                                       r.directions(), per_direction * static_cast<std::size_t>(r.directions())));
  auto acts = parse_rnn_activations(names, a.get_floats("activation_alpha").value_or(std::vector<float>{}),
                                    a.get_floats("activation_beta").value_or(std::vector<float>{}));
  if (!acts) return std::unexpected(acts.error());
  r.activations = std::move(*acts);
  r.clip = a.get_float("clip");
  r.linear_before_reset = a.int_or("linear_before_reset", 0) != 0;
  r.input_forget = a.int_or("input_forget", 0) != 0;
  r.batch_first = a.int_or("layout", 0) != 0;
  return r;
}

KernelMatch check_recurrent_node(const NodeContext& ctx, RecurrentCell cell) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "{}: X has rank {}; it must be 3", op, *ctx.input_rank(0));
  NXRT_REQUIRE(ctx.input_rank(1).value_or(3) == 3 && ctx.input_rank(2).value_or(3) == 3,
               "{}: W and R must have rank 3, got {} and {}", op, ctx.input_rank(1).value_or(3),
               ctx.input_rank(2).value_or(3));
  NXRT_REQUIRE(ctx.opset() >= 14 || ctx.attrs().int_or("layout", 0) == 0,
               "{}: the layout attribute needs opset 14, the node has opset {}", op, ctx.opset());
  const int64_t layout = ctx.attrs().int_or("layout", 0);
  NXRT_REQUIRE(layout == 0 || layout == 1, "{}: layout {} is not 0 or 1", op, layout);
  auto attrs = read_recurrent_attrs(ctx.attrs(), cell);
  NXRT_REQUIRE(attrs.has_value(), "{}: {}", op, attrs.error());
  NXRT_REQUIRE(!attrs->clip || *attrs->clip > 0, "{}: clip {} must be positive", op, attrs->clip.value_or(0));
  auto w = ctx.input_static_shape(1);
  if (!w) return KernelMatch::supported();
  const int64_t gates = recurrent_gate_count(cell);
  NXRT_REQUIRE((*w)[0] == attrs->directions(), "{}: W {} has {} directions; direction '{}' needs {}", op,
               shape_to_string(*w), (*w)[0], attrs->direction, attrs->directions());
  NXRT_REQUIRE(attrs->hidden == 0 || (*w)[1] == gates * attrs->hidden,
               "{}: W {} has {} rows; hidden_size {} needs {}", op, shape_to_string(*w), (*w)[1], attrs->hidden,
               gates * attrs->hidden);
  auto x = ctx.input_static_shape(0);
  if (!x) return KernelMatch::supported();
  Cost cost;
  // Per step and batch row: the input and recurrent products of every gate.
  const int64_t hidden = (*w)[1] / gates;
  cost.flops = 2.0 * static_cast<double>(attrs->directions() * (*x)[0] * (*x)[1] * gates * hidden *
                                         ((*w)[2] + hidden));
  return KernelMatch::supported(cost);
}

Expected<RecurrentDims> recurrent_dims(const RecurrentAttrs& attrs, const RecurrentShapes& s) {
  const char* op = recurrent_cell_name(attrs.cell);
  if (s.x.size() != 3 || s.r.size() != 3)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: X is {} and R {}; both must have rank 3", op, shape_to_string(s.x), shape_to_string(s.r)),
                "the model's shapes are inconsistent", "check X and R");
  RecurrentDims d;
  d.gates = recurrent_gate_count(attrs.cell);
  d.dirs = attrs.directions();
  d.seq = attrs.batch_first ? s.x[1] : s.x[0];
  d.batch = attrs.batch_first ? s.x[0] : s.x[1];
  d.input = s.x[2];
  d.hidden = attrs.hidden ? attrs.hidden : s.r[2];
  auto bad = [&](std::string what) {
    return fail(ErrorCode::kRuntime, fmt::format("{}: {}", op, what),
                "the shapes of the inputs disagree with each other or with the attributes",
                "check X, W, R, B, initial_h and the hidden_size and direction attributes");
  };
  const Shape w{d.dirs, d.gate_rows(), d.input}, r{d.dirs, d.gate_rows(), d.hidden};
  if (s.w != w) return bad(fmt::format("W is {}, expected {}", shape_to_string(s.w), shape_to_string(w)));
  if (s.r != r) return bad(fmt::format("R is {}, expected {}", shape_to_string(s.r), shape_to_string(r)));
  if (s.b && *s.b != d.dirs * 2 * d.gate_rows())
    return bad(fmt::format("B has {} values, expected [{},{}]", *s.b, d.dirs, 2 * d.gate_rows()));
  if (s.sequence_lens && *s.sequence_lens != d.batch)
    return bad(fmt::format("sequence_lens has {} values for batch {}", *s.sequence_lens, d.batch));
  for (const auto& [name, count] : {std::pair{"initial_h", s.initial_h}, std::pair{"initial_c", s.initial_c}})
    if (count && *count != d.dirs * d.batch * d.hidden)
      return bad(fmt::format("{} has {} values; expected {} (directions x batch x hidden)", name, *count,
                             d.dirs * d.batch * d.hidden));
  if (s.p && *s.p != d.dirs * 3 * d.hidden)
    return bad(fmt::format("P has {} values, expected [{},{}]", *s.p, d.dirs, 3 * d.hidden));
  return d;
}

Shape recurrent_y_shape(const RecurrentAttrs& attrs, const RecurrentDims& d) {
  return attrs.batch_first ? Shape{d.batch, d.seq, d.dirs, d.hidden} : Shape{d.seq, d.dirs, d.batch, d.hidden};
}
Shape recurrent_state_shape(const RecurrentAttrs& attrs, const RecurrentDims& d) {
  return attrs.batch_first ? Shape{d.batch, d.dirs, d.hidden} : Shape{d.dirs, d.batch, d.hidden};
}
int64_t recurrent_state_offset(const RecurrentAttrs& attrs, const RecurrentDims& d, int64_t dir, int64_t b) {
  return (attrs.batch_first ? b * d.dirs + dir : dir * d.batch + b) * d.hidden;
}
int64_t recurrent_state_row_stride(const RecurrentAttrs& attrs, const RecurrentDims& d) {
  return attrs.batch_first ? d.dirs * d.hidden : d.hidden;
}
int64_t recurrent_y_offset(const RecurrentAttrs& attrs, const RecurrentDims& d, int64_t t, int64_t dir, int64_t b) {
  return (attrs.batch_first ? (b * d.seq + t) * d.dirs + dir : (t * d.dirs + dir) * d.batch + b) * d.hidden;
}
int64_t recurrent_y_row_stride(const RecurrentAttrs& attrs, const RecurrentDims& d) {
  return attrs.batch_first ? d.seq * d.dirs * d.hidden : d.hidden;
}

}  // namespace nxrt
