// Einsum's equation and its contraction for concrete shapes, shared by the EPs that run it:
// every output element sums, over the summed labels, the product of one element per input,
// found by per-label strides; two-input contractions of the batched-GEMM form also come as
// one (gather, multiply, scatter).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

// One term of the equation: its labels in order (a-z are 0-25, A-Z 26-51), -1 where the
// ellipsis stands.
using EinsumTerm = std::vector<int>;

// The parsed equation, before ranks are known.
struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  std::optional<EinsumTerm> output;  // nullopt: implicit mode
};

// Parses the equation attribute; a malformed one is an kInvalidInput error saying why.
Expected<EinsumEquation> parse_einsum_equation(std::string equation);

// The contraction for concrete input shapes: the output's labels' extents, the summed
// labels' extents, and each input's element stride per label.
struct EinsumPlan {
  Shape output_shape;
  std::vector<int64_t> out_extents, sum_extents;
  std::vector<std::vector<int64_t>> out_strides, sum_strides;  // [input][label position]
  bool diagonal = false;                                       // some term repeats a label
};

// Binds the labels to the shapes (ellipsis dims broadcast like numpy's); shapes that do not
// fit the equation are a kRuntime error naming the input, dim and sizes.
Expected<EinsumPlan> plan_einsum(const EinsumEquation& eq, std::span<const Shape> shapes, std::string_view equation);

// A two-input contraction as batched GEMM: every label of size > 1 is a batch label (in
// both inputs and the output), m (first input and output), n (second input and output) or k
// (both inputs, summed). A is gathered by (a_extents, a_strides) into [batch, m, k], B into
// [batch, k, n], and the [batch, m, n] product is scattered by (c_extents, c_strides).
struct EinsumGemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  std::vector<int64_t> a_extents, a_strides, b_extents, b_strides, c_extents, c_strides;
};

// nullopt for what has no such form: diagonals, labels summed within one input, an empty sum.
std::optional<EinsumGemm> plan_einsum_gemm(const EinsumPlan& plan);

}  // namespace nxrt
