// DequantizeConstants: DequantizeLinear of an initializer, computed once at load time.
#include <fmt/format.h>

#include <unordered_set>

#include "nxrt/ir/passes.h"

namespace nxrt {
namespace {

// The largest float tensor the pass writes: a float copy takes four times the memory of 8-bit
// weights, which for a large model's weights outweighs dequantizing them on every run.
constexpr int64_t kMaxDequantizedBytes = int64_t{64} << 20;

// The initializer `v` holds, when it is one that cannot change at run time (not a graph input
// a caller may override, nor an outer scope's value).
std::optional<Tensor> fixed_initializer(const Graph& graph, ValueId v) {
  if (v == kNoValue) return std::nullopt;
  const Value& value = graph.value(v);
  if (!value.initializer || value.is_graph_input || value.is_outer_scope) return std::nullopt;
  auto t = value.initializer->materialize();
  if (!t) return std::nullopt;
  return std::move(*t);
}

// Calls fn with a value of `t` as a tag for the integer types DequantizeLinear's run-time
// kernel subtracts exactly; false for the others.
template <class Fn>
bool visit_dequantizable(DType t, Fn&& fn) {
  switch (t) {
    case DType::kUInt8: fn(uint8_t{}); return true;
    case DType::kInt8: fn(int8_t{}); return true;
    case DType::kUInt16: fn(uint16_t{}); return true;
    case DType::kInt16: fn(int16_t{}); return true;
    case DType::kInt32: fn(int32_t{}); return true;
    default: return false;
  }
}

// y[i] = (x[i] - zero[c]) * scale[c] for the n elements of x, c = i / inner % count (zero may
// be null: 0), the difference exact in int64 as the run-time kernel takes it.
template <class T>
void dequantize_into(const T* x, const T* zero, const float* scale, int64_t inner, int64_t count, int64_t n,
                     float* y) {
  for (int64_t start = 0, c = 0; start < n; start += inner, c = (c + 1) % count) {
    const int64_t z = zero ? static_cast<int64_t>(zero[c]) : 0;
    for (int64_t i = start; i < start + inner; ++i)
      y[i] = static_cast<float>(static_cast<int64_t>(x[i]) - z) * scale[c];
  }
}

// y = (x - zero_point) * scale of a DequantizeLinear whose inputs are all fixed initializers:
// scale float per tensor or per axis (no blocks), x and the zero point of an integer type of
// up to 32 bits, y float; nullopt for anything else, which stays a node.
std::optional<Tensor> dequantized(const Graph& graph, const Node& dq) {
  if (dq.inputs.size() < 2 || dq.outputs.size() != 1 || dq.attributes.int_or("block_size", 0) != 0 ||
      dq.attributes.int_or("output_dtype", 1) != 1)
    return std::nullopt;
  const auto x = fixed_initializer(graph, dq.inputs[0]);
  const auto scale = fixed_initializer(graph, dq.inputs[1]);
  if (!x || !scale || scale->dtype() != DType::kFloat32 || scale->shape().size() > 1) return std::nullopt;
  if (x->numel() * int64_t{4} > kMaxDequantizedBytes) return std::nullopt;
  std::optional<Tensor> zero;
  if (dq.inputs.size() > 2 && dq.inputs[2] != kNoValue) {
    zero = fixed_initializer(graph, dq.inputs[2]);
    if (!zero || zero->dtype() != x->dtype() || zero->numel() != scale->numel()) return std::nullopt;
  }
  // Per axis: element i's scale is scale[i / inner % count]; per tensor, inner covers x.
  int64_t inner = x->numel(), count = 1;
  if (scale->numel() != 1) {
    if (dq.opset < 13) return std::nullopt;  // per axis came with opset 13
    const auto rank = static_cast<int64_t>(x->shape().size());
    int64_t axis = dq.attributes.int_or("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank || x->shape()[static_cast<std::size_t>(axis)] != scale->numel()) return std::nullopt;
    count = scale->numel();
    inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x->shape()[static_cast<std::size_t>(d)];
  }
  std::optional<Tensor> y;
  visit_dequantizable(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    y = Tensor::empty(DType::kFloat32, x->shape());
    dequantize_into(x->data_as<T>(), zero ? zero->data_as<T>() : nullptr, scale->data_as<float>(), inner, count,
                    x->numel(), y->mut_as<float>());
  });
  return y;
}

}  // namespace

Expected<std::vector<std::string>> DequantizeConstants::run(Graph& graph) const {
  std::unordered_set<ValueId> read_by_name;
  for (const Node& node : graph.nodes) read_by_name.insert(node.implicit_inputs.begin(), node.implicit_inputs.end());
  std::vector<std::string> changes;
  std::vector<NodeId> folded;
  for (const Node& node : graph.nodes) {
    if (!node.domain.empty() || node.op_type != "DequantizeLinear" || node.outputs.size() != 1 ||
        node.outputs[0] == kNoValue)
      continue;
    Value& out = graph.value(node.outputs[0]);
    if (out.is_graph_output || read_by_name.contains(node.outputs[0])) continue;
    auto y = dequantized(graph, node);
    if (!y) continue;
    changes.push_back(fmt::format("computed DequantizeLinear '{}' of initializer '{}' at load time: '{}' = float{} "
                                  "({} bytes)",
                                  node.name, graph.value(node.inputs[0]).name, out.name, shape_to_string(y->shape()),
                                  y->numel() * 4));
    out.type.dtype = DType::kFloat32;
    std::vector<Dim> dims;
    for (int64_t d : y->shape()) dims.push_back(Dim{d, {}});
    out.type.shape = std::move(dims);
    out.initializer = WeightHandle::resident(std::move(*y));
    folded.push_back(node.id);
  }
  if (!folded.empty()) remove_nodes(graph, folded);
  return changes;
}

}  // namespace nxrt
