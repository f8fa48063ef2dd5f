// OrtEpApi host functions: EP devices, graph support info (what GetCapability answers),
// node compute contexts and memory devices.
#include <fmt/format.h>

#include "host_api_decls.h"

namespace nxrt::ort_plugin::ep_api {
namespace {

// Whether `node` is one the host gave out for the graph being asked about.
bool in_graph(const OrtEpGraphSupportInfo* info, const OrtNode* node) {
  return node && node->graph == info->graph && node->node && info->graph->by_node.contains(node->node->id);
}

}  // namespace

OrtStatus* CreateEpDevice(OrtEpFactory* ep_factory, const OrtHardwareDevice* hardware_device,
                          const OrtKeyValuePairs* ep_metadata, const OrtKeyValuePairs* ep_options, OrtEpDevice** ep_device) {
  if (!ep_factory || !hardware_device) return invalid_argument("CreateEpDevice: the factory and the hardware device are required");
  auto d = std::make_unique<OrtEpDevice>();
  d->factory = ep_factory;
  d->device = hardware_device;
  d->ep_name = ep_factory->GetName ? ep_factory->GetName(ep_factory) : "";
  d->ep_vendor = ep_factory->GetVendor ? ep_factory->GetVendor(ep_factory) : "";
  if (ep_metadata) d->ep_metadata = *ep_metadata;
  if (ep_options) d->ep_options = *ep_options;
  d->ep_metadata.refresh();
  d->ep_options.refresh();
  *ep_device = d.release();
  return nullptr;
}

void ReleaseEpDevice(OrtEpDevice* input) { delete input; }

OrtStatus* EpGraphSupportInfo_AddNodesToFuse(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* const* nodes,
                                             size_t num_nodes, const OrtNodeFusionOptions* node_fusion_options) {
  if (!graph_support_info) return invalid_argument("EpGraphSupportInfo_AddNodesToFuse: the support info is NULL");
  if (num_nodes == 0 || !nodes) return invalid_argument("EpGraphSupportInfo_AddNodesToFuse: no nodes given");
  OrtEpGraphSupportInfo::Group group;
  for (size_t i = 0; i < num_nodes; ++i) {
    if (!in_graph(graph_support_info, nodes[i]))
      return invalid_argument(fmt::format("EpGraphSupportInfo_AddNodesToFuse: node {} is not a node of graph '{}'", i,
                                 graph_support_info->graph->name));
    group.nodes.push_back(nodes[i]);
  }
  group.drop_constant_initializers = node_fusion_options && node_fusion_options->drop_constant_initializers;
  graph_support_info->groups.push_back(std::move(group));
  return nullptr;
}

OrtStatus* EpGraphSupportInfo_AddSingleNode(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* node) {
  if (!graph_support_info) return invalid_argument("EpGraphSupportInfo_AddSingleNode: the support info is NULL");
  if (!in_graph(graph_support_info, node))
    return invalid_argument(fmt::format("EpGraphSupportInfo_AddSingleNode: the node is not a node of graph '{}'",
                               graph_support_info->graph->name));
  graph_support_info->groups.push_back({{node}, true, false});
  return nullptr;
}

const char* NodeComputeContext_NodeName(const OrtNodeComputeContext* context) { return context->node_name.c_str(); }

OrtStatus* EpDevice_AddAllocatorInfo(OrtEpDevice* ep_device, const OrtMemoryInfo* allocator_memory_info) {
  if (!allocator_memory_info) return invalid_argument("EpDevice_AddAllocatorInfo: memory info is null");
  auto& slot = allocator_memory_info->device.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE ? ep_device->host_memory
                                                                                                 : ep_device->device_memory;
  slot = std::make_unique<OrtMemoryInfo>(*allocator_memory_info);
  return nullptr;
}

const OrtMemoryDevice* MemoryInfo_GetMemoryDevice(const OrtMemoryInfo* memory_info) { return &memory_info->device; }
const OrtMemoryDevice* Value_GetMemoryDevice(const OrtValue* value) {
  return value->tensor.defined() ? &cpu_memory_info()->device : nullptr;
}
bool MemoryDevice_AreEqual(const OrtMemoryDevice* a, const OrtMemoryDevice* b) { return *a == *b; }
OrtMemoryInfoDeviceType MemoryDevice_GetDeviceType(const OrtMemoryDevice* memory_device) { return memory_device->device_type; }
OrtDeviceMemoryType MemoryDevice_GetMemoryType(const OrtMemoryDevice* memory_device) { return memory_device->memory_type; }
uint32_t MemoryDevice_GetVendorId(const OrtMemoryDevice* memory_device) { return memory_device->vendor_id; }
uint32_t MemoryDevice_GetDeviceId(const OrtMemoryDevice* memory_device) { return memory_device->device_id; }

}  // namespace nxrt::ort_plugin::ep_api
