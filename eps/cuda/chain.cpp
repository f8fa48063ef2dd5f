// Elementwise chains: grouping, code generation, and the step that launches the kernel.
#include "chain.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "index_space.h"
#include "nxrt/ep/cast_rounding.h"
#include "nxrt/ep/subbyte.h"
#include "ops/op_util.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

struct ChainInput {
  ValueId value;
  Broadcast rule;
  auto operator<=>(const ChainInput&) const = default;
};

class ChainStep final : public Step {
 public:
  ChainStep(std::string kernel, std::vector<Broadcast> rules, DType out_dtype)
      : kernel_(std::move(kernel)), rules_(std::move(rules)), out_dtype_(out_dtype) {}

  std::string variant() const override { return "nvrtc:" + kernel_; }

  Expected<void> run(StepContext& ctx) const override {
    Shape out;  // numpy broadcast of the kNumpy inputs
    for (std::size_t i = 0; i < rules_.size(); ++i) {
      if (rules_[i] != Broadcast::kNumpy) continue;
      const Shape& s = ctx.input(i).shape();
      if (s.size() > out.size()) out.insert(out.begin(), s.size() - out.size(), 1);
      for (std::size_t k = 0; k < s.size(); ++k) {
        int64_t& o = out[out.size() - s.size() + k];
        const int64_t d = s[k];
        if (d == o || d == 1) continue;
        if (o != 1)
          return fail(ErrorCode::kRuntime, fmt::format("{}: shapes do not broadcast", ctx.where()),
                      fmt::format("input {} is {} and the output so far is {}", i, shape_to_string(s),
                                  shape_to_string(out)));
        o = d;
      }
    }
    if (out.size() > static_cast<std::size_t>(kMaxRank))
      return fail(ErrorCode::kRuntime, fmt::format("{}: rank {} exceeds the cuda EP's {}", ctx.where(), out.size(), kMaxRank));
    auto y = ctx.output(0, out_dtype_, out);
    if (!y) return std::unexpected(y.error());
    const int64_t n = shape_numel(out);
    if (n == 0) return {};
    std::vector<Shape> strides;
    for (std::size_t i = 0; i < rules_.size(); ++i) {
      auto s = broadcast_strides(ctx, i, out);
      if (!s) return std::unexpected(s.error());
      strides.push_back(std::move(*s));
    }
    Shape space = out;
    coalesce_dims(space, strides);
    KernelArgs args;
    args.add(n).add(static_cast<int>(space.size())).add(to_kernel_dims(space));
    for (std::size_t i = 0; i < rules_.size(); ++i) args.add(to_kernel_dims(strides[i])).ptr(dev(ctx.input(i)));
    args.ptr(dev_mut(*y));
    return ctx.launch(kernel_, n, args);
  }

 private:
  // Strides (in elements) that read input i at each index of the output shape.
  Expected<Shape> broadcast_strides(StepContext& ctx, std::size_t i, const Shape& out) const {
    const Shape& s = ctx.input(i).shape();
    Shape strides(out.size(), 0);
    if (rules_[i] == Broadcast::kChannel) {
      if (out.size() < 2 || shape_numel(s) != out[1])
        return fail(ErrorCode::kRuntime, fmt::format("{}: input {} is {}, expected [{}]", ctx.where(), i,
                                                     shape_to_string(s), out.size() < 2 ? 0 : out[1]));
      strides[1] = 1;
      return strides;
    }
    const Shape own = contiguous_strides(s);
    for (std::size_t k = 0; k < s.size(); ++k)
      if (s[k] != 1) strides[out.size() - s.size() + k] = own[k];
    return strides;
  }

  std::string kernel_;
  std::vector<Broadcast> rules_;
  DType out_dtype_;
};

}  // namespace

ChainFuser::ChainFuser(const Graph& graph, const OpTable& ops, const Partition& partition)
    : graph_(graph), ops_(ops), members_(partition.nodes.begin(), partition.nodes.end()),
      outputs_(partition.outputs.begin(), partition.outputs.end()) {}

bool ChainFuser::is_elementwise(const Node& node) const { return ops_.elementwise_def(node) != nullptr; }

bool ChainFuser::fusible(ValueId v) const {
  if (v == kNoValue || outputs_.contains(v)) return false;
  const Value& value = graph_.value(v);
  if (value.is_graph_output || value.producer < 0 || value.consumers.size() != 1) return false;
  return members_.contains(value.producer) && members_.contains(value.consumers.front()) &&
         is_elementwise(graph_.node(value.producer)) && is_elementwise(graph_.node(value.consumers.front()));
}

ValueId ChainFuser::chain_input(const Node& node) const {
  for (ValueId v : node.inputs)
    if (fusible(v)) return v;
  return kNoValue;
}

bool ChainFuser::continues(const Node& node) const {
  const ValueId out = node.outputs.front();
  if (!fusible(out)) return false;
  return chain_input(graph_.node(graph_.value(out).consumers.front())) == out;
}

Expected<void> ChainFuser::add(PlanBuilder& builder, const Node& node) {
  const ValueId in = chain_input(node);
  std::size_t c = chains_.size();
  if (in != kNoValue) c = chain_of_.at(graph_.value(in).producer);
  if (c == chains_.size()) chains_.emplace_back();
  chains_[c].push_back(&node);
  chain_of_[node.id] = c;
  if (continues(node)) return {};
  return emit(builder, chains_[c]);
}

Expected<void> ChainFuser::emit(PlanBuilder& builder, const std::vector<const Node*>& chain) const {
  std::vector<ChainInput> inputs;
  std::map<ValueId, std::string> local;  // in-chain values -> their variable
  std::string body;
  auto input_expr = [&](ValueId v, Broadcast rule) {
    if (auto it = local.find(v); it != local.end()) return it->second;
    const ChainInput key{v, rule};
    auto at = std::find(inputs.begin(), inputs.end(), key);
    if (at == inputs.end()) at = inputs.insert(inputs.end(), key);
    return fmt::format("x{}", at - inputs.begin());
  };
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const Node& n = *chain[k];
    const ElementwiseDef& def = *ops_.elementwise_def(n);
    const Broadcast node_rule = def.broadcast_of ? def.broadcast_of(graph_, n) : def.broadcast;
    std::vector<std::string> args;
    for (std::size_t i = 0; i < n.inputs.size(); ++i) {
      if (i >= def.read_inputs) break;  // type-only inputs are not loaded
      const Broadcast rule = node_rule == Broadcast::kChannel && i >= def.channel_inputs_from ? Broadcast::kChannel
                                                                                              : Broadcast::kNumpy;
      args.push_back(n.inputs[i] == kNoValue ? std::string() : input_expr(n.inputs[i], rule));
    }
    const std::string var = fmt::format("t{}", k);
    const DType dtype = graph_.value(n.outputs.front()).type.dtype;
    const std::string_view type = chain_value_type(dtype);
    std::string expr = def.expr(n, args);
    // A node making int4, uint4, int2 or uint2 (Cast, CastLike) keeps the low bits, rounding a
    // float first.
    if (is_subbyte_integer(dtype))
      expr = fmt::format("{}({}, {}, {})",
                         is_floating(graph_.value(n.inputs[0]).type.dtype) ? "float_to_subbyte" : "wrap_subbyte", expr,
                         subbyte_bits(dtype), subbyte_min(dtype) < 0 ? 1 : 0);
    // A node making a bit-pattern float (Cast, CastLike) rounds the exact value as its saturate
    // and round_mode attributes say.
    if (is_byte_float(dtype)) {
      const CastRounding rounding = read_cast_rounding(n.attributes, n.opset);
      expr = fmt::format("round_byte_float((double)({}), {}, {}, {})", expr, byte_float_code(dtype),
                         rounding.saturate ? 1 : 0, e8m0_mode_code(rounding.e8m0));
    }
    body += fmt::format("    {0} {1} = ({0})({2});  // {3} {4}\n", type, var, expr, n.op_type, n.name);
    // A float16, bfloat16 or 8- or 16-bit integer value inside the chain is rounded or wrapped
    // as the unfused graph would store it.
    if (k + 1 < chain.size() && dtype == DType::kFloat16)
      body += fmt::format("    {0} = round_h({0});\n", var);
    if (k + 1 < chain.size() && dtype == DType::kBFloat16)
      body += fmt::format("    {0} = round_b({0});\n", var);
    if (k + 1 < chain.size() && is_narrow_integer(dtype))
      body += fmt::format("    {0} = ({1}){0};\n", var, chain_storage_type(dtype));
    local[n.outputs.front()] = var;
  }
  const Node& tail = *chain.back();
  const DType out_dtype = graph_.value(tail.outputs.front()).type.dtype;
  const std::string name = builder.unique_name("chain");
  std::vector<std::string> params = {"i64 n", "int rank", "Dims shape"};
  // Each input's offset at output index i: the host merges the dims every input walks alike
  // (coalesce_dims), so a rank of 1 or 0 needs no division, and a higher one splits i once.
  std::vector<std::string> first_offsets, zero_offsets, steps;
  std::string loads;
  std::vector<Broadcast> rules;
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    const DType t = graph_.value(inputs[j].value).type.dtype;
    params.push_back(fmt::format("Dims s{}", j));
    params.push_back(fmt::format("const {}* __restrict__ in{}", chain_storage_type(t), j));
    first_offsets.push_back(fmt::format("o{0} = i * s{0}.d[0]", j));
    zero_offsets.push_back(fmt::format("o{} = 0", j));
    steps.push_back(fmt::format("o{0} += c * s{0}.d[d];", j));
    loads += fmt::format("    {1} x{0} = ld(in{0}, o{0});\n", j, chain_value_type(t));
    rules.push_back(inputs[j].rule);
  }
  std::string offsets;
  if (!inputs.empty())
    offsets = fmt::format(
        "    i64 {};\n"
        "    if (rank > 1) {{\n"
        "      {};\n"
        "      for_each_coordinate(i, rank, shape, [&](int d, i64 c) {{ {} }});\n"
        "    }}\n",
        fmt::join(first_offsets, ", "), fmt::join(zero_offsets, ", "), fmt::join(steps, " "));
  params.push_back(fmt::format("{}* __restrict__ out", chain_storage_type(out_dtype)));
  builder.add_code(fmt::format(
      "extern \"C\" __global__ void {}({}) {{\n"
      "  for (i64 i = global_index(); i < n; i += global_stride()) {{\n{}{}{}    st(out, i, t{});\n  }}\n}}\n",
      name, fmt::join(params, ", "), offsets, loads, body, chain.size() - 1));
  auto step = std::make_unique<ChainStep>(name, std::move(rules), out_dtype);
  step->nodes = chain;
  for (const ChainInput& in : inputs) step->inputs.push_back(in.value);
  step->outputs = {tail.outputs.front()};
  builder.add_step(std::move(step));
  return {};
}

}  // namespace nxrt::cuda
