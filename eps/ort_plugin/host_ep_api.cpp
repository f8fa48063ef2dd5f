// OrtEpApi host functions: EP devices, graph support info (what GetCapability answers),
// node compute contexts and memory devices.
#include <fmt/format.h>

#include "host_api_decls.h"
#include "host_checks.h"

namespace nxrt::ort_plugin::ep_api {
namespace {

// Whether `node` is one the host gave out for the graph being asked about.
bool in_graph(const OrtEpGraphSupportInfo* info, const OrtNode* node) {
  return usable(node) && node->graph == info->graph && node->node && info->graph->by_node.contains(node->node->id);
}

// A name a plugin's function returned, or "" for NULL.
std::string text_or_empty(const char* text) { return text ? text : ""; }

}  // namespace

OrtStatus* CreateEpDevice(OrtEpFactory* ep_factory, const OrtHardwareDevice* hardware_device,
                          const OrtKeyValuePairs* ep_metadata, const OrtKeyValuePairs* ep_options, OrtEpDevice** ep_device) {
  NXRT_CHECK_ARGS(ep_factory, hardware_device, ep_device);
  NXRT_CHECK_OPTIONAL_ARGS(ep_metadata, ep_options);
  auto d = std::make_unique<OrtEpDevice>();
  d->plugin_owned = true;  // until the host takes it from GetSupportedDevices
  d->factory = ep_factory;
  d->device = hardware_device;
  d->ep_name = ep_factory->GetName ? text_or_empty(ep_factory->GetName(ep_factory)) : "";
  d->ep_vendor = ep_factory->GetVendor ? text_or_empty(ep_factory->GetVendor(ep_factory)) : "";
  if (ep_metadata) d->ep_metadata = *ep_metadata;
  if (ep_options) d->ep_options = *ep_options;
  d->ep_metadata.plugin_owned = d->ep_options.plugin_owned = false;
  d->ep_metadata.refresh();
  d->ep_options.refresh();
  *ep_device = d.release();
  return nullptr;
}

void ReleaseEpDevice(OrtEpDevice* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

OrtStatus* EpGraphSupportInfo_AddNodesToFuse(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* const* nodes,
                                             size_t num_nodes, const OrtNodeFusionOptions* node_fusion_options) {
  NXRT_CHECK_ARGS(graph_support_info, nodes);
  if (num_nodes == 0) return invalid_argument("OrtEpApi::EpGraphSupportInfo_AddNodesToFuse: num_nodes is 0 (an empty group)");
  OrtEpGraphSupportInfo::Group group;
  for (size_t i = 0; i < num_nodes; ++i) {
    if (!in_graph(graph_support_info, nodes[i]))
      return invalid_argument(fmt::format("OrtEpApi::EpGraphSupportInfo_AddNodesToFuse: nodes[{}] is not a node of graph '{}'",
                                          i, graph_support_info->graph->name));
    group.nodes.push_back(nodes[i]);
  }
  group.drop_constant_initializers = node_fusion_options && node_fusion_options->drop_constant_initializers;
  graph_support_info->groups.push_back(std::move(group));
  return nullptr;
}

OrtStatus* EpGraphSupportInfo_AddSingleNode(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* node) {
  NXRT_CHECK_ARGS(graph_support_info, node);
  if (!in_graph(graph_support_info, node))
    return invalid_argument(fmt::format("OrtEpApi::EpGraphSupportInfo_AddSingleNode: the node is not a node of graph '{}'",
                                        graph_support_info->graph->name));
  graph_support_info->groups.push_back({{node}, true, false});
  return nullptr;
}

const char* NodeComputeContext_NodeName(const OrtNodeComputeContext* context) {
  NXRT_CHECK_ARGS_OR(nullptr, context);
  return context->node_name.c_str();
}

OrtStatus* EpDevice_AddAllocatorInfo(OrtEpDevice* ep_device, const OrtMemoryInfo* allocator_memory_info) {
  NXRT_CHECK_ARGS(ep_device, allocator_memory_info);
  auto& slot = allocator_memory_info->device.memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE ? ep_device->host_memory
                                                                                                 : ep_device->device_memory;
  slot = std::make_unique<OrtMemoryInfo>(*allocator_memory_info);
  slot->plugin_owned = false;
  return nullptr;
}

const OrtMemoryDevice* MemoryInfo_GetMemoryDevice(const OrtMemoryInfo* memory_info) {
  NXRT_CHECK_ARGS_OR(nullptr, memory_info);
  return &memory_info->device;
}

const OrtMemoryDevice* Value_GetMemoryDevice(const OrtValue* value) {
  NXRT_CHECK_ARGS_OR(nullptr, value);
  return value->tensor.defined() ? &cpu_memory_info()->device : nullptr;
}

bool MemoryDevice_AreEqual(const OrtMemoryDevice* a, const OrtMemoryDevice* b) {
  NXRT_CHECK_ARGS_OR(false, a, b);
  return *a == *b;
}

OrtMemoryInfoDeviceType MemoryDevice_GetDeviceType(const OrtMemoryDevice* memory_device) {
  NXRT_CHECK_ARGS_OR(OrtMemoryInfoDeviceType_CPU, memory_device);
  return memory_device->device_type;
}

OrtDeviceMemoryType MemoryDevice_GetMemoryType(const OrtMemoryDevice* memory_device) {
  NXRT_CHECK_ARGS_OR(OrtDeviceMemoryType_DEFAULT, memory_device);
  return memory_device->memory_type;
}

uint32_t MemoryDevice_GetVendorId(const OrtMemoryDevice* memory_device) {
  NXRT_CHECK_ARGS_OR(0, memory_device);
  return memory_device->vendor_id;
}

uint32_t MemoryDevice_GetDeviceId(const OrtMemoryDevice* memory_device) {
  NXRT_CHECK_ARGS_OR(0, memory_device);
  return memory_device->device_id;
}

}  // namespace nxrt::ort_plugin::ep_api
