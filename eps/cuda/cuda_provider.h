// The CUDA EP: claims through its op families' checks (for the device, or for a target
// architecture when there is none), plans partitions with NVRTC-generated kernels, cuBLASLt
// and cuDNN, and saves them as EPContext blobs holding cubin and PTX.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "compiled_partition.h"
#include "nxrt/ep/provider.h"
#include "ops/ops.h"

namespace nxrt::cuda {

inline constexpr std::string_view kContextSource = "nxrt.cuda";

// EpConfig options the cuda EP reads.
inline constexpr std::string_view kDeviceOption = "device";            // ordinal, default 0
inline constexpr std::string_view kTargetArchOption = "target_arch";  // "sm_90": compile for it, with or without a GPU

class CudaProvider final : public ExecutionProvider, public ContextCapable {
 public:
  // The EP on `stack`: the installed driver and libraries by default.
  static Expected<std::unique_ptr<ExecutionProvider>> create(const EpConfig& config, const CudaStack& stack = {});

  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override;
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition& partition) override;
  std::vector<OpKey> registered_ops() const override;

  Expected<Tensor> allocate(DType dtype, Shape shape) override;
  Expected<void> copy(const TensorView& src, const TensorMut& dst) override;
  Expected<void> sync() override;

  Expected<EpContext> save_context(const Partition& partition, const CompiledPartition& compiled) override;
  Expected<std::unique_ptr<CompiledPartition>> load_context(const EpContext& context,
                                                            const Partition& partition) override;
  std::string compatibility_info() const override;

 private:
  CudaProvider() = default;
  Expected<Gpu*> gpu() const { return device_->get(); }
  // NVRTC, loaded on first use (it is large; claims and list-eps never need it).
  Expected<const NvrtcCompiler*> compiler();
  // Whether cuDNN loads here, found out once, when a node that runs on it is first claimed for
  // this machine's GPU: without it those nodes decline and run on the next EP, instead of
  // failing the run. Not asked when compiling for another --target-arch or with no GPU.
  Expected<void> cudnn_loads() const;

  EpInfo info_;
  std::shared_ptr<const OpTable> ops_;
  CudaStack stack_;
  std::shared_ptr<DeviceSlot> device_;
  std::optional<GpuArch> target_;  // what compile() generates code for; none when unavailable
  bool local_gpu_ = false;          // the target is this machine's GPU
  mutable std::once_flag cudnn_checked_;
  mutable Expected<void> cudnn_status_;
  std::mutex nvrtc_mutex_;
  std::shared_ptr<const NvrtcCompiler> nvrtc_;
};

// "13.0": the CUDA Toolkit nxrt was built with.
std::string toolkit_version();

}  // namespace nxrt::cuda
