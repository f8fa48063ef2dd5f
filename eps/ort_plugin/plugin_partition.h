// PluginPartition: a partition a plugin compiled, run through its OrtNodeComputeInfo; and
// PluginKernelPartition: one node a plugin claimed alone, run with a kernel from its
// kernel registry (OrtKernelImpl). Both hand the plugin an OrtKernelContext.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/ep/provider.h"
#include "plugin_provider.h"

namespace nxrt::ort_plugin {

// One input of a kernel context: a boundary input of the partition, a constant, or nothing.
struct FusedInput {
  static constexpr int kConstant = -1;
  static constexpr int kOmitted = -2;  // an omitted optional input: KernelContext_GetInput answers NULL
  int boundary = kConstant;  // index into the partition's inputs, or kConstant / kOmitted
  Tensor constant;
};

// What a kernel context holds, in the order the plugin sees them.
struct ContextPlan {
  std::string name;  // the fused node's, or the node's
  std::vector<FusedInput> inputs;
  struct Output {
    std::string name;
    DType type = DType::kUndefined;
    std::optional<std::vector<int64_t>> shape;  // the graph's; -1 where unknown
    bool absent = false;                        // an omitted optional output
  };
  std::vector<Output> outputs;
  // Adds an output for value `v` of `graph` (kNoValue: an omitted one).
  void add_output(const Graph& graph, ValueId v);
};

class PluginPartition final : public CompiledPartition {
 public:
  struct Parts {
    std::shared_ptr<EpHandle> handle;
    OrtNodeComputeInfo* info = nullptr;
    ContextPlan plan;
    std::unique_ptr<OrtNode> context_node;  // what Compile returned for an EPContext model
  };
  // CreateState; the compute info is released with the partition in either case.
  static Expected<std::unique_ptr<PluginPartition>> create(Parts parts);
  ~PluginPartition() override;

  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;
  const OrtNode* context_node() const { return parts_.context_node.get(); }

 private:
  explicit PluginPartition(Parts parts) : parts_(std::move(parts)) {}
  Parts parts_;
  void* state_ = nullptr;
  bool has_state_ = false;
};

class PluginKernelPartition final : public CompiledPartition {
 public:
  struct Parts {
    std::shared_ptr<EpHandle> handle;
    const OrtKernelRegistry::Kernel* kernel = nullptr;
    std::unique_ptr<OrtGraph> view;  // holds the node the kernel's OrtKernelInfo describes
    const OrtNode* node = nullptr;
    ContextPlan plan;                // the node's inputs and outputs, all of them
    std::vector<std::size_t> returned;  // the outputs the partition returns, as indices into plan.outputs
  };
  // Creates the kernel (the registry's OrtKernelCreateFunc) for the node.
  static Expected<std::unique_ptr<PluginKernelPartition>> create(Parts parts);
  ~PluginKernelPartition() override;

  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;

 private:
  explicit PluginKernelPartition(Parts parts) : parts_(std::move(parts)) {}
  Parts parts_;
  OrtKernelInfo info_;
  OrtKernelImpl* kernel_ = nullptr;
};

}  // namespace nxrt::ort_plugin
