// Subgraphs exporters emit for one operation (LayerNormalization written out with
// ReduceMean, Gelu with Erf), recognised so that the oneDNN EP runs each as one primitive.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "nxrt/ir/graph.h"

namespace nxrt::onednn {

// Whether a value is a weight known at compile time. Scalars a pattern reads (epsilon, the
// exponent, Gelu's constants) must also be initializers with data; weights (gamma, beta) may
// be prepared weights standing in for initializers (EPContext blobs).
using IsConstant = std::function<bool(ValueId)>;

struct PatternMatch {
  enum class Kind { kLayerNorm, kGelu };
  Kind kind = Kind::kLayerNorm;
  std::vector<NodeId> members;  // in graph order; the last computes `output`
  NodeId anchor = -1;           // the node whose op's lowering runs the pattern (ReduceMean, Erf)
  ValueId input = kNoValue;
  ValueId output = kNoValue;
  // kLayerNorm: y = (x - mean) / sqrt(var + epsilon) * scale + shift over the last
  // `normalized_dims` dims of x; scale and shift are optional (kNoValue).
  int64_t normalized_dims = 0;
  float epsilon = 0;
  ValueId scale = kNoValue;
  ValueId shift = kNoValue;
};

// Whether `v` is an initializer with data (the claims' view of constants).
bool is_initializer(const Graph& g, ValueId v);

// LayerNormalization written out as ReduceMean(x) -> Sub(x, mean) -> Pow(d, 2) (or Mul(d, d))
// -> ReduceMean -> Add(var, epsilon) -> Sqrt -> Div(d, std), then optionally Mul(., gamma) and
// Add(., beta), over the last axes of x; every intermediate value is used only inside it.
// nullopt unless `any_member` is one of the nodes of such a complete subgraph.
std::optional<PatternMatch> match_layer_norm(const Graph& g, NodeId any_member, const IsConstant& is_constant);
std::optional<PatternMatch> match_layer_norm(const Graph& g, NodeId any_member);

// Gelu with erf written out: x * 0.5 * (1 + erf(x / sqrt(2))) as Div(x, sqrt(2)) (or
// Mul(x, 1/sqrt(2))) -> Erf -> Add(., 1) -> Mul(x, .) -> Mul(., 0.5), in any operand order,
// with the halving applied to x or to (1 + erf) first instead.
std::optional<PatternMatch> match_gelu(const Graph& g, NodeId any_member);

// The pattern `any_member` belongs to, of either kind.
std::optional<PatternMatch> match_pattern(const Graph& g, NodeId any_member, const IsConstant& is_constant);

}  // namespace nxrt::onednn
