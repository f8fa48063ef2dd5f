// PluginProvider: one EP of an ONNX Runtime plugin library as an nxrt ExecutionProvider:
// GetCapability answers claims, Compile and OrtNodeComputeInfo run partitions, and the
// EPContext nodes the plugin returns become EPContext payloads.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/provider.h"
#include "plugin_library.h"

namespace nxrt::ort_plugin {

// An OrtEp, released through its factory when the last user lets go.
struct EpHandle {
  std::shared_ptr<PluginLibrary> library;  // kept loaded while the EP lives
  OrtEpFactory* factory = nullptr;
  OrtEp* ep = nullptr;
  std::string name;
  OrtLogger logger;
  OrtSessionOptions session_options;            // what CreateEp was given; kernels read its entries
  const OrtKernelRegistry* registry = nullptr;  // OrtEp::GetKernelRegistry's answer; the EP owns it
  EpHandle() = default;
  EpHandle(const EpHandle&) = delete;
  EpHandle& operator=(const EpHandle&) = delete;
  ~EpHandle();
};

// A plugin EP's result, with one line of context naming the library its EP comes from.
template <class T>
Expected<T> from_library(const EpHandle& handle, Expected<T> result) {
  if (result) return result;
  return std::unexpected(std::move(result.error())
                             .add_context(fmt::format("using the {} EP of plugin library '{}'", handle.name, handle.library->path())));
}

class PluginProvider final : public ExecutionProvider, public ContextCapable, public GraphClaimer {
 public:
  static Expected<std::unique_ptr<ExecutionProvider>> create(std::shared_ptr<PluginLibrary> library,
                                                              std::size_t factory_index, const EpConfig& config);

  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override;
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition& partition) override;
  Expected<GraphClaims> claim_graph(const Graph& graph) const override;

  bool saves_context(const Partition& partition, const CompiledPartition& compiled) const override;
  Expected<EpContext> save_context(const Partition& partition, const CompiledPartition& compiled) override;
  Expected<std::unique_ptr<CompiledPartition>> load_context(const EpContext& context, const Partition& partition) override;
  std::string compatibility_info() const override;

 private:
  struct Claims {
    GraphClaims claims;
    std::vector<bool> drop_constants;  // per group: OrtNodeFusionOptions::drop_constant_initializers
    // Per group: the kernel that runs it, for a node claimed with AddSingleNode; NULL for groups to fuse.
    std::vector<const OrtKernelRegistry::Kernel*> kernels;
  };
  Expected<Claims> run_get_capability(const Graph& graph, const OrtGraph& view) const;
  const Claims* cached_claims(const Graph& graph) const;
  // Why a node claimed with EpGraphSupportInfo_AddSingleNode is declined: no kernel runs it.
  std::string single_node_decline(const std::string& why_no_kernel) const;
  // The claims group that starts with `partition`'s first node, if GetCapability made it.
  std::optional<std::size_t> group_of(const Claims& claims, const Partition& partition) const;
  Expected<std::unique_ptr<CompiledPartition>> compile_kernel(const Partition& partition,
                                                              const OrtKernelRegistry::Kernel& kernel);
  Expected<EpContext> read_context_node(const Partition& partition, const CompiledPartition& compiled) const;
  Expected<std::unique_ptr<CompiledPartition>> compile_view(const Partition& partition, const OrtGraph& view,
                                                            bool drop_constants);

  std::shared_ptr<EpHandle> handle_;
  EpInfo info_;
  mutable std::mutex mutex_;
  mutable std::map<const Graph*, Claims> claims_;  // GetCapability runs once per graph
  mutable const Graph* main_graph_ = nullptr;       // the last top-level graph claimed, for compatibility_info
};

}  // namespace nxrt::ort_plugin
