// KernelPartition: builds a kernel per node and runs them with lifetime-based release.
#include "nxrt/ep/kernel_partition.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "nxrt/ep/buffer_pool.h"


namespace nxrt {

struct KernelPartition::State {
  std::string ep_name;
  std::shared_ptr<const Parallel> parallel;
  std::vector<Step> steps;
  std::size_t slot_count = 0;
  std::vector<int> input_slots;                    // per boundary input
  std::vector<int> output_slots;                   // per boundary output
  std::vector<std::pair<int, Tensor>> constants;   // initializers, materialized once
  std::shared_ptr<BufferPool> pool;  // outputs and intermediates
  bool profiling = false;
  std::atomic<bool> hold_threads{true};  // whether runs hold the pool's threads (see run)
  std::vector<double> step_us;     // per step, of the last profiled run
  std::vector<double> step_start;  // per step, µs on the steady clock, of the last profiled run
};

namespace {

// The KernelContext of one step: reads and writes slots of the value table.
class StepContext final : public KernelContext {
 public:
  // `written` is scratch reused across steps (no allocation per step in the run loop).
  StepContext(const KernelPartition::Step& step, std::vector<RuntimeValue>& slots,
              BufferPool& pool, const std::shared_ptr<const Parallel>& parallel,
              std::vector<uint8_t>& written)
      : step_(step), slots_(slots), pool_(pool), parallel_(parallel), written_(written) {
    written_.assign(step.outputs.size(), 0);
  }

  std::size_t input_count() const override { return step_.inputs.size(); }
  bool has_input(std::size_t i) const override {
    return i < step_.inputs.size() && step_.inputs[i] >= 0;
  }
  const RuntimeValue& value(std::size_t i) const override {
    static const RuntimeValue kOmitted;
    return has_input(i) ? slots_[static_cast<std::size_t>(step_.inputs[i])] : kOmitted;
  }
  std::size_t output_count() const override { return step_.outputs.size(); }
  bool wants_output(std::size_t i) const override {
    return i < step_.outputs.size() && step_.outputs[i] >= 0;
  }
  Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) override {
    const int64_t numel = shape_numel(shape);
    if (numel < 0)
      return fail(ErrorCode::kRuntime,
                  fmt::format("output {} of {} has an invalid shape {}", i, step_.node->describe(),
                              shape_to_string(shape)));
    Tensor t = dtype == DType::kString ? Tensor::empty(dtype, std::move(shape))
                                       : pool_.allocate(dtype, std::move(shape));
    set_output(i, t);
    return t;
  }
  void set_output_value(std::size_t i, RuntimeValue value) override {
    if (!wants_output(i)) return;
    slots_[static_cast<std::size_t>(step_.outputs[i])] = std::move(value);
    written_[i] = 1;
  }
  const Parallel& parallel() const override { return *parallel_; }
  std::shared_ptr<const Parallel> shared_parallel() const override { return parallel_; }
  bool written(std::size_t i) const { return written_[i] != 0; }

 private:
  const KernelPartition::Step& step_;
  std::vector<RuntimeValue>& slots_;
  BufferPool& pool_;
  const std::shared_ptr<const Parallel>& parallel_;
  std::vector<uint8_t>& written_;
};

}  // namespace

KernelPartition::KernelPartition() : state_(std::make_unique<State>()) {}
KernelPartition::~KernelPartition() = default;

const std::vector<KernelPartition::Step>& KernelPartition::steps() const { return state_->steps; }

namespace {

// An error unless every value a fused step keeps to itself (a member's output that is not the
// step's) is read by nobody else: no other step, no fused step, no partition output.
Expected<void> check_fused_values(const Partition& partition, const std::vector<FusedStep>& fused,
                                  const std::unordered_map<NodeId, std::size_t>& fused_of) {
  const Graph& graph = *partition.graph;
  std::unordered_set<ValueId> internal;
  for (const FusedStep& f : fused)
    for (NodeId id : f.nodes)
      for (ValueId v : graph.node(id).outputs)
        if (v != kNoValue && std::find(f.outputs.begin(), f.outputs.end(), v) == f.outputs.end()) internal.insert(v);
  auto leaked = [&](ValueId v, const std::string& reader) -> Expected<void> {
    if (!internal.contains(v)) return {};
    return fail(ErrorCode::kRuntime,
                fmt::format("partition '{}': '{}' is kept inside a fused step but {} reads it", partition.name,
                            graph.value(v).name, reader),
                "the EP's fusion step grouped nodes whose intermediate value is used elsewhere",
                "report this as a bug in the EP; run with another EP meanwhile");
  };
  for (NodeId id : partition.nodes) {
    if (fused_of.contains(id)) continue;
    const Node& node = graph.node(id);
    for (ValueId v : node.inputs)
      if (auto r = leaked(v, node.describe()); !r) return r;
    for (ValueId v : node.implicit_inputs)
      if (auto r = leaked(v, node.describe()); !r) return r;
  }
  for (const FusedStep& f : fused)
    for (ValueId v : f.inputs)
      if (auto r = leaked(v, fmt::format("the fused step of {}", graph.node(f.nodes.front()).describe())); !r) return r;
  for (ValueId v : partition.outputs)
    if (auto r = leaked(v, "a reader outside the partition"); !r) return r;
  return {};
}

// The node a step runs, and the members fused into it.
std::string describe_step(const KernelPartition::Step& step) {
  if (step.fused.size() < 2) return step.node->describe();
  std::vector<std::string> others;
  for (std::size_t i = 1; i < step.fused.size(); ++i) others.push_back(fmt::format("'{}'", step.fused[i]->name));
  return fmt::format("{} (fused with {})", step.node->describe(), fmt::join(others, ", "));
}

}  // namespace

Expected<std::unique_ptr<KernelPartition>> KernelPartition::build(const Partition& partition,
                                                                  const OpRegistry& registry, std::string ep_name,
                                                                  std::shared_ptr<const Parallel> parallel,
                                                                  const PackedStates& packed,
                                                                  std::vector<FusedStep> fused,
                                                                  std::shared_ptr<BufferPool> buffers) {
  const Graph& graph = *partition.graph;
  std::unique_ptr<KernelPartition> kp(new KernelPartition());
  State& st = *kp->state_;
  st.ep_name = std::move(ep_name);
  st.parallel = std::move(parallel);
  st.pool = buffers ? std::move(buffers) : std::make_shared<BufferPool>();

  std::unordered_map<ValueId, int> slot_of;
  auto slot = [&](ValueId v) {
    auto [it, inserted] = slot_of.emplace(v, static_cast<int>(slot_of.size()));
    return it->second;
  };
  for (ValueId v : partition.inputs) st.input_slots.push_back(slot(v));
  // A step's input: its slot, with initializers materialized once.
  auto read = [&](ValueId v, Step& step) -> Expected<void> {
    if (v == kNoValue) {
      step.inputs.push_back(-1);
      return {};
    }
    const bool known = slot_of.contains(v);
    const int s = slot(v);
    step.inputs.push_back(s);
    const Value& val = graph.value(v);
    if (!known && val.initializer && !val.is_graph_input) {
      auto t = val.initializer->materialize();
      if (!t) return forward_error(std::move(t), fmt::format("reading initializer '{}'", val.name));
      st.constants.emplace_back(s, std::move(*t));
    }
    return {};
  };

  // Fused steps by member; each is built where its last member stands.
  std::unordered_map<NodeId, std::size_t> fused_of;
  for (std::size_t f = 0; f < fused.size(); ++f)
    for (NodeId id : fused[f].nodes) fused_of.emplace(id, f);
  if (auto r = check_fused_values(partition, fused, fused_of); !r) return std::unexpected(std::move(r.error()));
  std::vector<std::size_t> members_left(fused.size());
  for (std::size_t f = 0; f < fused.size(); ++f) members_left[f] = fused[f].nodes.size();

  for (NodeId id : partition.nodes) {
    const Node& node = graph.node(id);
    if (auto f = fused_of.find(id); f != fused_of.end()) {
      if (--members_left[f->second] > 0) continue;
      FusedStep& fs = fused[f->second];
      Step step{&graph.node(fs.nodes.front()), {}, std::move(fs.kernel), {}, {}, {}};
      for (NodeId member : fs.nodes) step.fused.push_back(&graph.node(member));
      for (ValueId v : fs.inputs)
        if (auto r = read(v, step); !r) return std::unexpected(std::move(r.error()));
      for (ValueId v : fs.outputs) step.outputs.push_back(v == kNoValue ? -1 : slot(v));
      st.steps.push_back(std::move(step));
      continue;
    }
    Step step{&node, {}, nullptr, {}, {}, {}};
    for (ValueId v : node.inputs)
      if (auto r = read(v, step); !r) return std::unexpected(std::move(r.error()));
    for (ValueId v : node.implicit_inputs)
      if (auto r = read(v, step); !r) return std::unexpected(std::move(r.error()));
    for (ValueId v : node.outputs) step.outputs.push_back(v == kNoValue ? -1 : slot(v));
    NodeContext ctx(graph, node);
    if (auto p = packed.find(node.name); p != packed.end()) ctx.set_packed_state(p->second);
    auto kernel = registry.create(ctx, st.ep_name);
    if (!kernel) return std::unexpected(std::move(kernel.error()));
    step.kernel = std::move(*kernel);
    st.steps.push_back(std::move(step));
  }
  for (ValueId v : partition.outputs) {
    if (!slot_of.contains(v))
      return fail(ErrorCode::kRuntime,
                  fmt::format("partition '{}' lists output '{}' that none of its nodes produces",
                              partition.name, graph.value(v).name));
    st.output_slots.push_back(slot_of.at(v));
  }
  st.slot_count = slot_of.size();

  // Release each intermediate slot after its last reader; boundary outputs and constants stay.
  std::vector<int> last_use(st.slot_count, -1);
  for (std::size_t i = 0; i < st.steps.size(); ++i)
    for (int s : st.steps[i].inputs)
      if (s >= 0) last_use[static_cast<std::size_t>(s)] = static_cast<int>(i);
  std::vector<bool> keep(st.slot_count, false);
  for (int s : st.output_slots) keep[static_cast<std::size_t>(s)] = true;
  for (const auto& [s, t] : st.constants) keep[static_cast<std::size_t>(s)] = true;
  for (std::size_t s = 0; s < st.slot_count; ++s)
    if (!keep[s] && last_use[s] >= 0)
      st.steps[static_cast<std::size_t>(last_use[s])].release.push_back(static_cast<int>(s));
  return kp;
}

Expected<std::vector<RuntimeValue>> KernelPartition::run(std::span<const RuntimeValue> inputs) {
  State& st = *state_;
  if (inputs.size() != st.input_slots.size())
    return fail(ErrorCode::kRuntime, fmt::format("partition expects {} inputs, got {}",
                                                 st.input_slots.size(), inputs.size()));
  std::vector<RuntimeValue> slots(st.slot_count);
  for (std::size_t i = 0; i < inputs.size(); ++i) slots[static_cast<std::size_t>(st.input_slots[i])] = inputs[i];
  for (const auto& [s, t] : st.constants) slots[static_cast<std::size_t>(s)] = t;

  std::vector<uint8_t> written;
  if (st.profiling) {
    st.step_us.assign(st.steps.size(), 0.0);
    st.step_start.assign(st.steps.size(), 0.0);
  }
  auto run_steps = [&]() -> Expected<void> {
    for (std::size_t i = 0; i < st.steps.size(); ++i) {
      const Step& step = st.steps[i];
      StepContext ctx(step, slots, *st.pool, st.parallel, written);
      const auto start = st.profiling ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
      auto r = step.kernel->compute(ctx);
      if (st.profiling) {
        st.step_us[i] = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
        st.step_start[i] = std::chrono::duration<double, std::micro>(start.time_since_epoch()).count();
      }
      if (!r)
        return forward_error(std::move(r), fmt::format("running {} on the {} EP", describe_step(step), st.ep_name));
      for (std::size_t o = 0; o < step.outputs.size(); ++o) {
        const int s = step.outputs[o];
        if (s >= 0 && !ctx.written(o))
          return fail(ErrorCode::kRuntime,
                      fmt::format("{} produced no value for its output {}", step.node->describe(), o),
                      fmt::format("the {} kernel '{}' did not set it", st.ep_name, step.kernel->variant()),
                      "report this as a bug in the kernel");
      }
      for (int s : step.release) slots[static_cast<std::size_t>(s)] = RuntimeValue();
    }
    return {};
  };
  // The steps run with the pool's threads held, so that each step's parallel loops find them
  // ready, where the last run had two parallel loops or more: holding costs about what starting
  // the threads for one loop does (a partition of small steps ran slower held).
  Expected<void> ran;
  const int64_t loops_before = st.parallel->parallel_loops();
  if (st.hold_threads.load(std::memory_order_relaxed)) {
    st.parallel->hold_threads([&] { ran = run_steps(); });
  } else {
    ran = run_steps();
  }
  st.hold_threads.store(st.parallel->parallel_loops() - loops_before >= 2, std::memory_order_relaxed);
  if (!ran) return std::unexpected(ran.error());
  std::vector<RuntimeValue> outputs;
  outputs.reserve(st.output_slots.size());
  for (int s : st.output_slots) outputs.push_back(slots[static_cast<std::size_t>(s)]);
  return outputs;
}

void KernelPartition::set_profiling(bool on) { state_->profiling = on; }

std::vector<StepProfile> KernelPartition::profile() const {
  const State& st = *state_;
  std::vector<StepProfile> out;
  for (std::size_t i = 0; i < st.steps.size(); ++i) {
    const Step& s = st.steps[i];
    std::vector<std::string> names;
    for (const Node* n : s.fused) names.push_back(n->name);
    if (names.empty()) names.push_back(s.node->name);
    out.push_back({std::move(names), s.node->op_type, std::string(s.kernel->variant()),
                   i < st.step_us.size() ? st.step_us[i] : 0.0, i < st.step_start.size() ? st.step_start[i] : 0.0});
  }
  return out;
}

}  // namespace nxrt
