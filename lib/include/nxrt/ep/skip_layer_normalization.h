// ONNX Runtime's residual-and-normalization fusions (com.microsoft) as every EP reads them, as its
// transformer optimizer and GenAI model builder write them: each row of the hidden (last) dim of
//   sum = input + skip (+ bias)
// normalized. SkipLayerNormalization: inputs input, skip, gamma, beta, bias; (sum - mean) /
// sqrt(variance + epsilon) · gamma (+ beta). SkipSimplifiedLayerNormalization (RMS): inputs
// input, skip, gamma, bias; sum / sqrt(mean(sum²) + epsilon) · gamma. Input [batch, sequence,
// hidden] or [tokens, hidden]; skip input's shape or its trailing dims (repeated over the leading
// ones); gamma, beta and bias [hidden]; all of one type; epsilon defaults to 1e-12. Optional
// outputs: mean and inv_std_var (float, [..., 1]; the simplified form writes 0 for mean, as ONNX
// Runtime does) and input_skip_bias_sum (the input's type and shape).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// Where a form's inputs are: beta only in SkipLayerNormalization, bias after it.
struct SkipNormForm {
  bool simplified = false;
  std::string_view op() const { return simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization"; }
  std::optional<std::size_t> beta() const { return simplified ? std::nullopt : std::optional<std::size_t>(3); }
  std::size_t bias() const { return simplified ? 3 : 4; }
  // gamma, bias and (when the form has it) beta: one value per hidden element.
  std::vector<std::size_t> vectors() const;

  static SkipNormForm of(const Node& node) { return {node.op_type == "SkipSimplifiedLayerNormalization"}; }
};

// Declines what no EP implements: skip or gamma missing, inputs of more than one type, and, where
// shapes are static, what check_skip_norm_shapes would refuse. The EPs add their types.
KernelMatch check_skip_norm_node(const NodeContext& ctx);

// The shapes of a run (input, skip, and the form's vectors: null when absent): input rank 2 or 3,
// skip its trailing dims, the vectors one value per hidden element; an error names the input.
Expected<void> check_skip_norm_shapes(SkipNormForm form, const Shape& input, const Shape& skip,
                                      const std::vector<const Shape*>& vectors);
// The same for a run, from any context with has_input(i) and input(i) (the EPs' kernel and step
// contexts).
template <class Context>
Expected<void> check_skip_norm_shapes(SkipNormForm form, const Context& ctx) {
  std::vector<const Shape*> vectors;
  for (std::size_t i : form.vectors()) vectors.push_back(given_shape(ctx, i));
  return check_skip_norm_shapes(form, ctx.input(0).shape(), ctx.input(1).shape(), vectors);
}

}  // namespace nxrt
