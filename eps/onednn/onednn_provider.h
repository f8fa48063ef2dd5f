// The oneDNN EP: claims through its op families' checks, compiles partitions into fused
// oneDNN plans in blocked layouts, and saves them as EPContext blobs.
#pragma once

#include <memory>

#include "compiled_partition.h"
#include "nxrt/ep/provider.h"

namespace nxrt::onednn {

inline constexpr std::string_view kContextSource = "nxrt.onednn";

class OnednnProvider final : public ExecutionProvider, public ContextCapable {
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

 private:
  OnednnProvider() = default;
  PartitionSetup setup_for(const Partition& partition) const;

  EpInfo info_;
  std::shared_ptr<OpRegistry> registry_;
  std::shared_ptr<Lowerings> lowerings_;
  dnnl::engine engine_;
  int threads_ = 0;
  std::shared_ptr<BufferPool> buffers_;  // EpConfig::host_buffers, or the EP's own
  std::shared_ptr<TuningCache> tuning_cache_ = std::make_shared<TuningCache>();
};

}  // namespace nxrt::onednn
