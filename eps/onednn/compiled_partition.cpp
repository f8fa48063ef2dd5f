// OnednnPartition: fuse, lower every fused step through its op's lowering, run the plan.
#include "compiled_partition.h"

#include <fmt/format.h>
#include <omp.h>

namespace nxrt::onednn {
namespace {

// Sets OpenMP's thread count for oneDNN calls made from this thread (Debian's oneDNN uses OpenMP).
void use_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

std::string dims_text(const std::vector<Dims>& dims) {
  std::vector<std::string> parts;
  for (const Dims& d : dims) parts.push_back(shape_to_string(d));
  return fmt::format("{}", fmt::join(parts, " "));
}

}  // namespace

OnednnPartition::OnednnPartition(PartitionSetup setup) : setup_(std::move(setup)) {}

bool OnednnPartition::is_constant(ValueId v) const {
  const Value& val = setup_.partition.graph->value(v);
  return val.initializer && !val.is_graph_input;
}

Expected<void> OnednnPartition::prepare(const std::vector<Dims>& input_dims) {
  auto plan = plan_for(input_dims);
  if (!plan) return std::unexpected(std::move(plan.error()));
  return {};
}

Expected<Plan*> OnednnPartition::plan_for(const std::vector<Dims>& input_dims) {
  std::lock_guard lock(plans_mutex_);
  for (auto& [dims, plan] : plans_)
    if (dims == input_dims) return last_ = plan.get();
  const Partition& p = setup_.partition;
  const Graph& g = *p.graph;
  const auto where = fmt::format("compiling partition '{}' on the onednn EP for inputs {}", p.name, dims_text(input_dims));
  use_threads(setup_.threads);
  auto constant = [this](ValueId v) { return is_constant(v); };
  PlanBuilder builder(setup_.engine, p, input_dims, setup_.restored.empty() ? nullptr : &setup_.restored,
                      setup_.restored_implementations.empty() ? nullptr : &setup_.restored_implementations,
                      setup_.tuning_cache, constant);
  const std::vector<FusedOp> fused = fuse_partition(p, constant);
  for (const FusedOp& f : fused) {
    const Node& anchor = g.node(f.anchor);
    const KernelDef* def = setup_.registry->find(anchor.domain, anchor.op_type, anchor.opset);
    auto lower = def ? setup_.lowerings->find(def->key) : setup_.lowerings->end();
    if (lower == setup_.lowerings->end()) {
      Error e{ErrorCode::kRuntime, fmt::format("the onednn EP has no lowering for {}", anchor.describe()),
              "the node was placed on onednn without a claim", "report this as a bug in the onednn EP", {}};
      return fail(std::move(e.add_context(where)));
    }
    builder.begin(f);
    if (auto r = lower->second(builder, f); !r) return forward_error(std::move(r), where);
  }
  auto plan = builder.finish(setup_.buffers);
  if (!plan) return forward_error(std::move(plan), where);
  if (plans_.empty()) packed_ = builder.packed_initializers();
  plans_.emplace_back(input_dims, std::move(*plan));
  return last_ = plans_.back().second.get();
}

Expected<std::vector<RuntimeValue>> OnednnPartition::run(std::span<const RuntimeValue> inputs) {
  const Partition& p = setup_.partition;
  if (inputs.size() != p.inputs.size())
    return fail(ErrorCode::kRuntime, fmt::format("partition '{}' expects {} inputs, got {}", p.name, p.inputs.size(),
                                                 inputs.size()));
  std::vector<Dims> dims;
  dims.reserve(inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const RuntimeValue& v = inputs[i];
    if (!v.is_tensor() || v.tensor().dtype() != DType::kFloat32)
      return fail(ErrorCode::kRuntime,
                  fmt::format("input '{}' of partition '{}' is {}; the onednn EP takes float tensors",
                              p.graph->value(p.inputs[i]).name, p.name, v.describe()));
    dims.push_back(to_dims(v.tensor().shape()));
  }
  auto plan = plan_for(dims);
  if (!plan) return std::unexpected(std::move(plan.error()));
  use_threads(setup_.threads);
  return (*plan)->run(inputs, profiling_);
}

std::vector<StepProfile> OnednnPartition::profile() const {
  std::lock_guard lock(plans_mutex_);
  const Plan* plan = last_ ? last_ : (plans_.empty() ? nullptr : plans_.front().second.get());
  std::vector<StepProfile> out;
  if (!plan) return out;
  for (const Step& s : plan->steps()) out.push_back(s.profile);
  return out;
}

}  // namespace nxrt::onednn
