// OnednnPartition: a partition on the oneDNN EP, with one plan per set of input shapes
// (built when the shapes are first seen, or at compile time when they are static).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "ops/ops.h"
#include "plan_builder.h"
#include "plan.h"

namespace nxrt::onednn {

// op key -> lowering, shared by every partition of one EP.
using Lowerings = std::map<OpKey, LowerFn>;

struct PartitionSetup {
  dnnl::engine engine;
  std::shared_ptr<const OpRegistry> registry;
  std::shared_ptr<const Lowerings> lowerings;
  int threads = 0;                    // 0: oneDNN's default (every core)
  std::shared_ptr<TuningCache> tuning_cache;  // shared by the EP's partitions
  std::shared_ptr<BufferPool> buffers;        // the runs' output tensors (EpConfig::host_buffers)
  Partition partition;                // its graph outlives this partition (or `keep_alive` holds it)
  std::shared_ptr<const void> keep_alive;
  PreparedWeights restored;           // restored blobs: the prepared weights
  Implementations restored_implementations;  // restored blobs: the implementations chosen
};

class OnednnPartition final : public CompiledPartition {
 public:
  explicit OnednnPartition(PartitionSetup setup);

  // Builds the plan for these input dims now (compile time, when they are static).
  Expected<void> prepare(const std::vector<Dims>& input_dims);
  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;
  // Plans are built under a lock and run with an arena per run in flight.
  bool runs_concurrently() const override { return true; }
  void set_profiling(bool on) override { profiling_ = on; }
  std::vector<StepProfile> profile() const override;

  const Partition& partition() const { return setup_.partition; }
  // The first plan built (what an EPContext blob stores), and the initializers it packed.
  const Plan* first_plan() const { return plans_.empty() ? nullptr : plans_.front().second.get(); }
  const std::vector<Dims>& first_dims() const { return plans_.front().first; }
  const std::set<ValueId>& packed_initializers() const { return packed_; }

 private:
  // The plan for these dims, built on first sight; also records it as the last one run.
  Expected<Plan*> plan_for(const std::vector<Dims>& input_dims);
  bool is_constant(ValueId v) const;

  PartitionSetup setup_;
  mutable std::mutex plans_mutex_;  // guards plans_, packed_ and last_ (not the plans' runs)
  std::vector<std::pair<std::vector<Dims>, std::unique_ptr<Plan>>> plans_;
  std::set<ValueId> packed_;
  Plan* last_ = nullptr;
  bool profiling_ = false;
};

}  // namespace nxrt::onednn
