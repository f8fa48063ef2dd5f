// The recurrent layers RNN, GRU and LSTM as every EP that runs them reads them: their gate
// activations, attributes, the claim checks that do not depend on the EP's dtypes, and the
// sizes of one run with the checks that need the inputs' shapes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/error.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

enum class RecurrentCell { kRnn, kGru, kLstm };

// Gates per cell (the row blocks of W and R): RNN i; GRU z, r, h; LSTM i, o, f, c.
constexpr int64_t recurrent_gate_count(RecurrentCell cell) {
  return cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 3 : 4;
}
// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
constexpr std::size_t recurrent_activation_count(RecurrentCell cell) {
  return cell == RecurrentCell::kRnn ? 1 : cell == RecurrentCell::kGru ? 2 : 3;
}
const char* recurrent_cell_name(RecurrentCell cell);  // "RNN", "GRU", "LSTM"

// A gate activation, named by the activations attribute, with its parameters from
// activation_alpha / activation_beta.
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

// The attributes of a node, validated.
struct RecurrentAttrs {
  RecurrentCell cell = RecurrentCell::kRnn;
  std::string direction = "forward";
  int64_t hidden = 0;                      // 0: taken from R at run time
  std::vector<RnnActivation> activations;  // recurrent_activation_count per direction, per direction
  std::optional<float> clip;
  bool linear_before_reset = false;
  bool input_forget = false;
  bool batch_first = false;  // layout 1

  int64_t directions() const { return direction == "bidirectional" ? 2 : 1; }
  // Whether direction `dir` (0 or 1) walks the sequence from its end.
  bool reversed(int64_t dir) const { return direction == "reverse" || dir == 1; }
  // The activations of direction `dir`: f, then g and h where the cell has them.
  const RnnActivation* activations_of(int64_t dir) const {
    return activations.data() + dir * static_cast<int64_t>(recurrent_activation_count(cell));
  }
};
std::expected<RecurrentAttrs, std::string> read_recurrent_attrs(const AttributeMap& attrs, RecurrentCell cell);

// Inputs X, W, R, B, sequence_lens, initial_h, initial_c, P; outputs Y, Y_h, Y_c. Declines
// what no EP can run: ranks other than 3, layout before opset 14, attributes ONNX does not
// define, W's directions or rows disagreeing with the attributes. Supported carries the
// products' flops. Dtypes are the EP's to check.
KernelMatch check_recurrent_node(const NodeContext& ctx, RecurrentCell cell);

// The sizes of one run.
struct RecurrentDims {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;

  int64_t gate_rows() const { return gates * hidden; }
};

// What recurrent_dims checks: the shapes of X, W and R, and the element counts of the optional
// inputs the node has (nullopt: absent).
struct RecurrentShapes {
  Shape x, w, r;
  std::optional<int64_t> b, sequence_lens, initial_h, initial_c, p;
};
// The sizes, or a kRuntime error naming the input whose shape disagrees with the others or with
// the attributes.
Expected<RecurrentDims> recurrent_dims(const RecurrentAttrs& attrs, const RecurrentShapes& shapes);

// Y: [seq, dirs, batch, hidden], or [batch, seq, dirs, hidden] in layout 1.
Shape recurrent_y_shape(const RecurrentAttrs& attrs, const RecurrentDims& d);
// Y_h, Y_c, initial_h and initial_c: [dirs, batch, hidden], or [batch, dirs, hidden] in layout 1.
Shape recurrent_state_shape(const RecurrentAttrs& attrs, const RecurrentDims& d);
// Element offset of (dir, batch row b) in a state tensor, and the distance between batch rows
// (the hidden values of one row are contiguous).
int64_t recurrent_state_offset(const RecurrentAttrs& attrs, const RecurrentDims& d, int64_t dir, int64_t b);
int64_t recurrent_state_row_stride(const RecurrentAttrs& attrs, const RecurrentDims& d);
// Element offset of (step t, dir, batch row b) in Y, and the distance between batch rows.
int64_t recurrent_y_offset(const RecurrentAttrs& attrs, const RecurrentDims& d, int64_t t, int64_t dir, int64_t b);
int64_t recurrent_y_row_stride(const RecurrentAttrs& attrs, const RecurrentDims& d);

}  // namespace nxrt
