// PluginPartition: a partition a plugin compiled; runs its OrtNodeComputeInfo.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nxrt/ep/provider.h"
#include "plugin_provider.h"

namespace nxrt::ort_plugin {

// One input of the fused node: a boundary input of the partition, or a constant.
struct FusedInput {
  int boundary = -1;  // index into the partition's inputs; -1 for a constant
  Tensor constant;
};

class PluginPartition final : public CompiledPartition {
 public:
  struct Parts {
    std::shared_ptr<EpHandle> handle;
    OrtNodeComputeInfo* info = nullptr;
    std::string name;                    // the fused node's name
    std::vector<FusedInput> inputs;
    std::vector<DType> output_types;
    std::vector<std::string> output_names;
    std::vector<std::optional<std::vector<int64_t>>> output_shapes;  // the graph's; -1 where unknown
    std::unique_ptr<OrtNode> context_node;  // what Compile returned for an EPContext model
  };
  // CreateState; the compute info is released with the partition in either case.
  static Expected<std::unique_ptr<PluginPartition>> create(Parts parts);
  ~PluginPartition() override;

  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override;
  const OrtNode* context_node() const { return parts_.context_node.get(); }

 private:
  explicit PluginPartition(Parts parts) : parts_(std::move(parts)) {}
  Expected<std::vector<RuntimeValue>> compute(std::span<const RuntimeValue> inputs);
  Parts parts_;
  void* state_ = nullptr;
  bool has_state_ = false;
};

}  // namespace nxrt::ort_plugin
