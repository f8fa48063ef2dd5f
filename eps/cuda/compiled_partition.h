// CudaPartition: a planned partition with its compiled module; runs when a device is there
// (a partition compiled for --target-arch on a machine without a GPU can only be saved).
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "gpu.h"
#include "nvrtc_compiler.h"
#include "plan.h"

namespace nxrt::cuda {

// The EP's device, opened on first use (a context costs memory and time; claims and
// list-eps never need one). Holds why there is none when there is none.
class DeviceSlot {
 public:
  DeviceSlot(std::shared_ptr<const Driver> driver, Expected<DeviceInfo> info, const CudaStack& stack)
      : driver_(std::move(driver)), info_(std::move(info)), stack_(stack) {}
  const Expected<DeviceInfo>& info() const { return info_; }
  Expected<Gpu*> get();

 private:
  std::shared_ptr<const Driver> driver_;
  Expected<DeviceInfo> info_;
  CudaStack stack_;
  std::mutex mutex_;
  std::unique_ptr<Gpu> gpu_;
  std::optional<Error> open_error_;
};

struct PartitionSetup {
  Partition partition;  // its graph outlives this partition (or `keep_alive` holds it)
  std::shared_ptr<const void> keep_alive;
  Plan plan;
  ModuleImage image;
  std::shared_ptr<DeviceSlot> device;
};

// A value while the partition runs: its device tensor and, when the host knows it, a host copy
// (computed there, like Shape's output, or read back once) that steps reading it on the host
// use instead of waiting for the stream.
struct RunValue {
  Tensor on_device;
  Tensor on_host;
};
struct RunState;

class CudaPartition final : public CompiledPartition {
 public:
  explicit CudaPartition(PartitionSetup setup);
  ~CudaPartition() override;

  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;
  // Host inputs are uploaded on the stream, and kept as their values' host copies.
  bool takes_host_inputs() const override { return true; }
  // Those outputs are downloaded on the stream, before the run's one final wait.
  void set_host_outputs(std::vector<bool> on_host) override { host_outputs_ = std::move(on_host); }
  void set_profiling(bool on) override { profiling_ = on; }
  std::vector<StepProfile> profile() const override { return profile_; }

  const Partition& partition() const { return setup_.partition; }
  const Plan& plan() const { return setup_.plan; }
  const ModuleImage& image() const { return setup_.image; }

 private:
  // Loads the module and uploads the constant initializers, once.
  Expected<void> prepare(Gpu& gpu);
  Expected<void> run_steps(Gpu& gpu, RunState& run);
  // The partition's outputs after its steps, those in host_outputs_ enqueued for download.
  Expected<void> collect_outputs(Gpu& gpu, const RunState& run, std::vector<RuntimeValue>& out) const;

  PartitionSetup setup_;
  std::unique_ptr<Module> module_;
  // Initializers on the device, with a host copy when small (up to kHostCopyBytes).
  static constexpr std::size_t kHostCopyBytes = 64 * 1024;
  std::map<ValueId, RunValue> constants_;
  std::vector<std::vector<ValueId>> release_;  // per step: values whose last reader it is
  std::vector<bool> host_outputs_;  // per partition output: return it in host memory
  bool profiling_ = false;
  std::vector<StepProfile> profile_;
};

}  // namespace nxrt::cuda
