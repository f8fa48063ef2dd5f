// The default compile step: one kernel per node from an OpRegistry, run in topological
// order with buffers released (and reused) as soon as their last consumer has run.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "nxrt/ep/provider.h"

namespace nxrt {

// Node name -> the state its kernel saved with save_packed().
using PackedStates = std::map<std::string, std::vector<std::byte>>;

// One kernel that the EP builds itself for member nodes of a partition: several (an EP's
// fusion), or one whose kernel reads or writes values in the EP's own layout. Values that a
// member produces and another member reads are its own: nothing outside reads them.
struct FusedStep {
  std::vector<NodeId> nodes;     // the members; the step takes the first's name
  std::vector<ValueId> inputs;   // what the kernel reads, in its input order (kNoValue: omitted)
  std::vector<ValueId> outputs;  // what it writes, in its output order
  std::unique_ptr<Kernel> kernel;
};

// A kernel per member node, in the partition's order; `parallel` must outlive the result.
// `packed` optionally supplies each node's pre-packed state (by node name), e.g. from an
// EPContext blob; kernels that support it skip their packing step. `fused` steps replace
// their members: each runs where its last member would. Outputs and intermediates come from
// `buffers` (EpConfig::host_buffers), or from a pool of the partition's own where it is null.
class KernelPartition final : public CompiledPartition {
 public:
  static Expected<std::unique_ptr<KernelPartition>> build(const Partition& partition, const OpRegistry& registry,
                                                          std::string ep_name, std::shared_ptr<const Parallel> parallel,
                                                          const PackedStates& packed = {},
                                                          std::vector<FusedStep> fused = {},
                                                          std::shared_ptr<BufferPool> buffers = nullptr);
  ~KernelPartition() override;

  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;
  // Each run has its own value slots; kernels keep no per-run state in themselves.
  bool runs_concurrently() const override { return true; }
  void set_profiling(bool on) override;
  std::vector<StepProfile> profile() const override;
  // Each node's kernel, in partition order (for saving packed state).
  struct Step;
  const std::vector<Step>& steps() const;

 private:
  KernelPartition();
  struct State;
  std::unique_ptr<State> state_;
};

struct KernelPartition::Step {
  const Node* node;                // the node it runs; a fused step's first member
  std::vector<const Node*> fused;  // a fused step's members (node first); empty otherwise
  std::unique_ptr<Kernel> kernel;
  std::vector<int> inputs;   // slots; -1 for omitted inputs
  std::vector<int> outputs;  // slots; -1 for omitted outputs
  std::vector<int> release;  // slots whose last use is this step
};

}  // namespace nxrt
