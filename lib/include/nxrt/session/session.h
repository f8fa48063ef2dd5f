// Session: a model loaded, claimed, partitioned and compiled, ready to run.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/provider.h"
#include "nxrt/model/model.h"
#include "nxrt/session/claims.h"

namespace nxrt {

struct SessionOptions {
  std::vector<std::string> eps = {"cpu"};  // priority order
  EpConfig config;
  LoadOptions load;
  // Every intermediate value of the main graph becomes a graph output (after the optimizer
  // passes), so a run returns them all; fusions across them are off (run --check-each-node).
  bool all_values_as_outputs = false;
  // How claimed nodes are placed (--placement).
  PlacementPolicy placement = kDefaultPlacementPolicy;
  // Optimizer passes (default_passes) left out, by name (--skip-pass). fuse-qdq is also left
  // out when `eps` lists the cuda EP.
  std::vector<std::string> skipped_passes;
};

// Creates the named EPs from the factory list, in order; unknown names are a usage error
// that lists the known ones.
Expected<EpRegistry> create_eps(const std::vector<std::string>& names, const EpConfig& config);

// The EPs, the model and its claims: what explain-claims needs (nothing compiled).
struct Analysis {
  EpRegistry eps;
  EpContextRegistry contexts;
  Model model;
  std::vector<std::string> rewrites;  // what the optimizer passes changed, one line each
  ClaimsReport report;
  std::vector<ValueId> exposed_values;  // intermediates made outputs by all_values_as_outputs
};
Expected<Analysis> analyze(const std::filesystem::path& model_path, const SessionOptions& options);

// What one Session::run measured.
struct RunStats {
  std::vector<double> partition_us;  // per partition, in microseconds
};

// One session serves any number of threads: run() may be called concurrently. Partitions
// whose EP cannot run them concurrently (CompiledPartition::runs_concurrently) are run one
// call at a time; the others keep their intermediate buffers per call.
class Session {
 public:
  // analyze(), then compile every partition (or restore it from its EPContext node).
  static Expected<std::unique_ptr<Session>> create(const std::filesystem::path& model_path,
                                                   const SessionOptions& options);
  ~Session();

  const Model& model() const { return analysis_.model; }
  const ClaimsReport& report() const { return analysis_.report; }
  const EpRegistry& eps() const { return analysis_.eps; }
  const CompiledPartition& compiled(std::size_t partition) const { return *compiled_[partition]; }
  double create_ms() const { return create_ms_; }
  // Intermediate values made graph outputs by SessionOptions::all_values_as_outputs.
  const std::vector<ValueId>& exposed_values() const { return analysis_.exposed_values; }

  // Graph inputs the caller must feed (initializer defaults excluded), in model order.
  std::vector<const Value*> required_inputs() const;
  // Checks one input value against the graph input `name` (kind, element type, shape).
  Expected<void> check_input(const std::string& name, const RuntimeValue& value) const;
  // Runs the model; inputs by graph-input name. Returns the graph outputs by name, and
  // the time of each partition in `stats` when given. Safe to call from several threads.
  Expected<std::map<std::string, RuntimeValue>> run(const std::map<std::string, RuntimeValue>& inputs,
                                                    RunStats* stats = nullptr);

  // Times every step of every partition in the following runs (CompiledPartition::profile);
  // for serial runs only.
  void set_profiling(bool on);

 private:
  Session() = default;
  Expected<void> check_inputs(const std::map<std::string, RuntimeValue>& inputs) const;
  Expected<std::vector<RuntimeValue>> run_partition(const Partition& p, std::span<const RuntimeValue> args);

  Analysis analysis_;
  std::vector<std::unique_ptr<CompiledPartition>> compiled_;
  std::vector<std::vector<std::size_t>> release_after_;  // per partition: boundary values to drop
  // Per partition: held while a partition that cannot run concurrently runs; null for the others.
  std::vector<std::unique_ptr<std::mutex>> serial_;
  double create_ms_ = 0;
};

}  // namespace nxrt
