// The portable CPU EP: kernels from the family tables, a thread pool, EPContext blobs.
#pragma once

#include <memory>

#include "nxrt/ep/kernel.h"
#include "nxrt/ep/provider.h"

namespace nxrt::cpu {

inline constexpr std::string_view kContextSource = "nxrt.cpu";

class CpuProvider final : public ExecutionProvider, public ContextCapable {
 public:
  static Expected<std::unique_ptr<ExecutionProvider>> create(const EpConfig& config);

  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override;
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition& partition) override;
  std::vector<OpKey> registered_ops() const override;

  Expected<EpContext> save_context(const Partition& partition, const CompiledPartition& compiled) override;
  Expected<std::unique_ptr<CompiledPartition>> load_context(const EpContext& context,
                                                            const Partition& partition) override;
  std::string compatibility_info() const override;

  const OpRegistry& registry() const { return registry_; }

 private:
  CpuProvider() = default;
  EpInfo info_;
  OpRegistry registry_;
  std::shared_ptr<const Parallel> pool_;
  std::shared_ptr<BufferPool> buffers_;  // EpConfig::host_buffers
};

// "x86_64-avx512f", "x86_64-avx2", "x86_64", "aarch64": what compiled plans depend on.
std::string host_isa();

}  // namespace nxrt::cpu
