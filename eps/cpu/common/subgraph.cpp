// SubgraphRunner: a subgraph compiled on first use into a KernelPartition of CPU kernels.
#include "common/subgraph.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/kernels.h"
#include "nxrt/ep/claim.h"

namespace nxrt::cpu {

const OpRegistry& cpu_kernel_registry() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    // The same table the EP registers; a duplicate would already have failed there.
    (void)r.add_all(all_kernels());
    return r;
  }();
  return registry;
}

namespace {

constexpr std::string_view kEpName = "cpu";

}  // namespace

KernelMatch check_subgraph(const Graph& body, std::string_view owner) {
  for (const Node& node : body.nodes) {
    KernelMatch m = cpu_kernel_registry().check(NodeContext(body, node), kEpName);
    NXRT_REQUIRE(m, "{}: its node {} is not supported: {}", owner, node.describe(), m.reason());
  }
  return KernelMatch::supported();
}

SubgraphRunner::SubgraphRunner(const NodeContext& owner, const std::string& attribute)
    : body_(owner.attrs().get_graph(attribute)), owner_inputs_(owner.input_count()) {
  const auto& implicit = owner.node().implicit_inputs;
  for (const Value& v : body_->values) {
    if (!v.is_outer_scope) continue;
    const auto it = std::find_if(implicit.begin(), implicit.end(),
                                 [&](ValueId id) { return owner.graph().value(id).name == v.name; });
    // The loader makes every outer-scope read an implicit input of the owning node.
    if (it == implicit.end()) continue;
    outer_values_.push_back(*body_->find_value(v.name));
    outer_index_.push_back(static_cast<std::size_t>(it - implicit.begin()));
  }
}

SubgraphRunner::~SubgraphRunner() = default;

Expected<void> SubgraphRunner::build(const KernelContext& ctx) {
  const Graph& g = *body_;
  partition_.graph = &g;
  partition_.ep = std::string(kEpName);
  partition_.name = g.name.empty() ? "subgraph" : g.name;
  for (const Node& n : g.nodes) partition_.nodes.push_back(n.id);
  partition_.inputs = g.inputs;
  partition_.inputs.insert(partition_.inputs.end(), outer_values_.begin(), outer_values_.end());
  using Kind = OutputSource::Kind;
  for (ValueId v : g.outputs) {
    const Value& val = g.value(v);
    const auto in = std::find(partition_.inputs.begin(), partition_.inputs.end(), v);
    if (val.producer >= 0) {
      output_sources_.push_back({Kind::kNode, partition_.outputs.size()});
      partition_.outputs.push_back(v);
    } else if (in != partition_.inputs.end()) {
      output_sources_.push_back({Kind::kInput, static_cast<std::size_t>(in - partition_.inputs.begin())});
    } else if (val.initializer) {
      auto t = val.initializer->materialize();
      if (!t) return std::unexpected(t.error());
      output_sources_.push_back({Kind::kConstant, constants_.size()});
      constants_.push_back(std::move(*t));
    } else {
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("subgraph '{}' output '{}' is neither computed, an input nor a constant",
                              partition_.name, val.name));
    }
  }
  auto kp = KernelPartition::build(partition_, cpu_kernel_registry(), std::string(kEpName), ctx.shared_parallel());
  if (!kp) return forward_error(std::move(kp), fmt::format("compiling subgraph '{}'", partition_.name));
  compiled_ = std::move(*kp);
  return {};
}

Expected<std::vector<RuntimeValue>> SubgraphRunner::run(std::vector<RuntimeValue> formal, const KernelContext& ctx) {
  const Graph& g = *body_;
  if (formal.size() != g.inputs.size())
    return fail(ErrorCode::kRuntime, fmt::format("subgraph '{}' takes {} inputs, got {}", g.name, g.inputs.size(),
                                                 formal.size()));
  {
    std::lock_guard lock(build_mutex_);  // the session's runs may reach here together
    if (!compiled_)
      if (auto r = build(ctx); !r) return std::unexpected(r.error());
  }
  std::vector<RuntimeValue> inputs = std::move(formal);
  for (std::size_t k : outer_index_) inputs.push_back(ctx.value(owner_inputs_ + k));
  auto outputs = compiled_->run(inputs);
  if (!outputs) return std::unexpected(outputs.error());
  std::vector<RuntimeValue> result;
  result.reserve(output_sources_.size());
  for (const OutputSource& source : output_sources_) {
    switch (source.kind) {
      case OutputSource::Kind::kNode: result.push_back((*outputs)[source.index]); break;
      case OutputSource::Kind::kInput: result.push_back(inputs[source.index]); break;
      case OutputSource::Kind::kConstant: result.push_back(constants_[source.index]); break;
    }
  }
  return result;
}

}  // namespace nxrt::cpu
