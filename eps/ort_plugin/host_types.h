// The host's definitions of the opaque ORT handles a plugin receives (statuses, values,
// type info, memory info, devices, graph views, attributes, kernel contexts).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/runtime_value.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ir/graph.h"
#include "nxrt_ort_abi.h"

namespace nxrt::ort_plugin {

// The kinds of opaque handle the host gives plugins. Each handle starts with its kind (and a
// magic number), so a host function handed NULL, or a handle of another kind where it wants
// this one, answers an error status instead of reading one object as another.
enum class HandleKind : uint32_t {
  kStatus,
  kMemoryDevice,
  kMemoryInfo,
  kTensorTypeAndShapeInfo,
  kTypeInfo,
  kValue,
  kKeyValuePairs,
  kHardwareDevice,
  kEpDevice,
  kSessionOptions,
  kLogger,
  kOpAttr,
  kValueInfo,
  kNode,
  kGraph,
  kEpGraphSupportInfo,
  kNodeComputeContext,
  kKernelContext,
  kKernelRegistry,
  kKernelDefBuilder,
  kKernelDef,
  kDataType,
  kKernelInfo,
};
inline constexpr const char* kHandleKindNames[] = {"OrtStatus", "OrtMemoryDevice", "OrtMemoryInfo", "OrtTensorTypeAndShapeInfo", "OrtTypeInfo", "OrtValue", "OrtKeyValuePairs", "OrtHardwareDevice", "OrtEpDevice", "OrtSessionOptions", "OrtLogger", "OrtOpAttr", "OrtValueInfo", "OrtNode", "OrtGraph", "OrtEpGraphSupportInfo", "OrtNodeComputeContext", "OrtKernelContext", "OrtKernelRegistry", "OrtKernelDefBuilder", "OrtKernelDef", "OrtDataType", "OrtKernelInfo"};
inline constexpr uint32_t kHandleMagic = 0x6e787274;  // "nxrt"

template <HandleKind K>
struct Handle {
  static constexpr HandleKind kKind = K;
  uint32_t handle_magic = kHandleMagic;
  HandleKind handle_kind = K;
  // Set on handles a plugin made (Create*, Get*-and-release functions): only those may its
  // Release* functions free; releasing one the host owns is ignored rather than a double free.
  bool plugin_owned = false;
  bool operator==(const Handle&) const { return true; }  // handles compare by their contents
};

}  // namespace nxrt::ort_plugin

struct OrtStatus : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kStatus> {
  OrtErrorCode code = ORT_FAIL;
  std::string message;
};

struct OrtMemoryDevice : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kMemoryDevice> {
  OrtMemoryInfoDeviceType device_type = OrtMemoryInfoDeviceType_CPU;
  OrtDeviceMemoryType memory_type = OrtDeviceMemoryType_DEFAULT;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  bool operator==(const OrtMemoryDevice&) const = default;
};

struct OrtMemoryInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kMemoryInfo> {
  std::string name = "Cpu";
  OrtAllocatorType allocator_type = OrtDeviceAllocator;
  int id = 0;
  OrtMemType mem_type = OrtMemTypeDefault;
  OrtMemoryDevice device;
};

struct OrtTensorTypeAndShapeInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kTensorTypeAndShapeInfo> {
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  bool has_shape = false;
  std::vector<int64_t> dims;         // -1 where unknown or symbolic
  std::vector<std::string> symbols;  // "" where not symbolic
};

struct OrtTypeInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kTypeInfo> {
  ONNXType type = ONNX_TYPE_UNKNOWN;
  OrtTensorTypeAndShapeInfo tensor;
};

struct OrtValue : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kValue> {
  nxrt::Tensor tensor;
  nxrt::DType declared = nxrt::DType::kUndefined;  // an output's element type before it is allocated
};

struct OrtKeyValuePairs : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKeyValuePairs> {
  std::vector<std::string> keys;
  std::vector<std::string> values;
  std::vector<const char*> key_ptrs;    // kept in step with keys/values for GetKeyValuePairs
  std::vector<const char*> value_ptrs;
  void set(const std::string& key, const std::string& value);
  void erase(const std::string& key);
  const std::string* find(const std::string& key) const;
  void refresh();
};

struct OrtHardwareDevice : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kHardwareDevice> {
  OrtHardwareDeviceType type = OrtHardwareDeviceType_CPU;
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
  std::string vendor;
  OrtKeyValuePairs metadata;
};

struct OrtEpDevice : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kEpDevice> {
  OrtEpFactory* factory = nullptr;
  const OrtHardwareDevice* device = nullptr;
  std::string ep_name;
  std::string ep_vendor;
  OrtKeyValuePairs ep_metadata;
  OrtKeyValuePairs ep_options;
  std::unique_ptr<OrtMemoryInfo> device_memory;  // EpDevice_AddAllocatorInfo, DEFAULT
  std::unique_ptr<OrtMemoryInfo> host_memory;    // EpDevice_AddAllocatorInfo, HOST_ACCESSIBLE
};

struct OrtSessionOptions : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kSessionOptions> {
  OrtKeyValuePairs config;
};

// Collects what a plugin logs; the claims report shows it next to the declines.
struct OrtLogger : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kLogger> {
  OrtLoggingLevel level = ORT_LOGGING_LEVEL_WARNING;
  std::vector<std::string> messages;
};

struct OrtOpAttr : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kOpAttr> {
  std::string name;
  OrtOpAttrType type = ORT_OP_ATTR_UNDEFINED;
  int64_t i = 0;
  float f = 0;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  nxrt::Tensor tensor;
};

struct OrtValueInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kValueInfo> {
  const OrtGraph* graph = nullptr;  // null for values named by nodes the plugin created
  nxrt::ValueId id = nxrt::kNoValue;
  std::string name;
  OrtTypeInfo type;
  std::unique_ptr<OrtValue> initializer;  // constant initializers, materialized on demand
};

struct OrtNode : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kNode> {
  const OrtGraph* graph = nullptr;        // null for nodes the plugin created (EPContext)
  const nxrt::Node* node = nullptr;       // null for fused and created nodes
  std::size_t id = 0;
  std::string name;
  std::string op_type;
  std::string domain;
  int since_version = 1;
  std::vector<OrtValueInfo*> inputs;      // null entries for omitted optional inputs
  std::vector<OrtValueInfo*> outputs;
  std::vector<OrtValueInfo*> implicit_inputs;
  std::vector<std::unique_ptr<OrtOpAttr>> attributes;
  std::vector<std::unique_ptr<OrtGraph>> subgraphs;
  std::vector<std::string> subgraph_attributes;
  std::string ep_name;                    // the EP the node is assigned to, if any
  std::vector<std::unique_ptr<OrtValueInfo>> own_values;  // created and fused nodes
};

// A read-only view of an nxrt graph (or of some of its nodes) in ORT's terms.
struct OrtGraph : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kGraph> {
  const nxrt::Graph* graph = nullptr;
  std::string name;
  std::string model_path;
  int64_t ir_version = 0;
  const OrtNode* parent = nullptr;
  std::vector<std::unique_ptr<OrtNode>> nodes;  // in topological order
  std::vector<const OrtValueInfo*> inputs;
  std::vector<const OrtValueInfo*> outputs;
  std::vector<const OrtValueInfo*> initializers;
  std::vector<std::string> opset_domains;
  std::vector<int64_t> opset_versions;
  std::map<nxrt::ValueId, std::unique_ptr<OrtValueInfo>> values;
  std::map<nxrt::NodeId, const OrtNode*> by_node;  // nxrt node -> its OrtNode in this view
};

struct OrtEpGraphSupportInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kEpGraphSupportInfo> {
  const OrtGraph* graph = nullptr;
  std::string ep_name;                          // for EpGraphSupportInfo_LookUpKernel
  const OrtKernelRegistry* registry = nullptr;  // the EP's, if it has one
  struct Group {
    std::vector<const OrtNode*> nodes;
    bool single = false;  // from AddSingleNode
    bool drop_constant_initializers = false;
  };
  std::vector<Group> groups;
};

struct OrtNodeComputeContext : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kNodeComputeContext> {
  std::string node_name;
};

struct OrtKernelContext : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKernelContext> {
  struct Output {
    std::string name;
    bool absent = false;  // an omitted optional output: KernelContext_GetOutput answers NULL
    std::optional<std::vector<int64_t>> shape;  // the graph's shape; -1 where unknown or symbolic
    std::unique_ptr<OrtValue> value;
  };
  std::string node_name;
  std::vector<OrtValue> inputs;  // an omitted optional input holds no tensor: KernelContext_GetInput answers NULL
  std::vector<Output> outputs;
  OrtLogger* logger = nullptr;
  std::vector<std::string> refusals;  // what the host refused the plugin during Compute
};

namespace nxrt::ort_plugin {
// What the KernelDefBuilder_ functions set: the key ORT matches a node against (op, domain,
// version range, EP, type constraints) and hints the host may ignore (memory types, aliases).
struct KernelDefinition {
  std::string op_type;
  std::string domain;  // "" for ai.onnx
  int since_start = 0;  // 0: never set
  int since_end = 0;    // inclusive; INT_MAX: open-ended
  std::string ep_name;
  std::map<std::size_t, OrtMemType> input_mem_types;
  std::map<std::size_t, OrtMemType> output_mem_types;
  std::vector<std::pair<std::string, std::vector<ONNXTensorElementDataType>>> type_constraints;
  std::vector<std::pair<int, int>> aliases;          // (input, output)
  std::vector<std::pair<int, int>> mutable_aliases;
};
}  // namespace nxrt::ort_plugin

struct OrtKernelDefBuilder : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKernelDefBuilder> {
  nxrt::ort_plugin::KernelDefinition def;
};

struct OrtKernelDef : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKernelDef> {
  nxrt::ort_plugin::KernelDefinition def;
};

// A tensor element type as kernel type constraints name it (GetTensorDataType; the host owns them).
struct OrtDataType : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kDataType> {
  ONNXTensorElementDataType element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
};

struct OrtKernelRegistry : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKernelRegistry> {
  struct Kernel {
    OrtKernelDef def;  // the registry's own copy
    OrtKernelCreateFunc create = nullptr;
    void* state = nullptr;
  };
  std::vector<std::unique_ptr<Kernel>> kernels;  // in the order they were added; addresses stay put
};

// What a kernel's create function reads about its node; lives as long as the kernel.
struct OrtKernelInfo : nxrt::ort_plugin::Handle<nxrt::ort_plugin::HandleKind::kKernelInfo> {
  const OrtEp* ep = nullptr;
  const OrtNode* node = nullptr;  // a node of a view the kernel's partition keeps
  const OrtLogger* logger = nullptr;
  const OrtKeyValuePairs* config = nullptr;  // the session's config entries
};

namespace nxrt::ort_plugin {

// A status for the plugin, owned by it (ReleaseStatus frees it).
OrtStatus* make_status(OrtErrorCode code, std::string message);
OrtStatus* invalid_argument(std::string message);
// A plugin's status as text, and frees it ("" for success); a status without text names its code.
std::string take_status(OrtStatus* status);
// A constant initializer: one the graph does not also list as an input.
inline bool is_constant_initializer(const Value& v) { return v.initializer && !v.is_graph_input; }
// Copies `text` and a NUL into a plugin's buffer of *size bytes, ORT style: a NULL buffer gets
// the size needed and success; a short one the size needed and an error naming `function`.
OrtStatus* copy_out(const std::string& text, char* out, size_t* size, std::string_view function);
// The host's CPU allocator (one, never released).
OrtAllocator* default_allocator();
// The host's CPU memory description (one, never released).
const OrtMemoryInfo* cpu_memory_info();
// Type info of an nxrt value type.
OrtTypeInfo type_info_of(const ValueType& type);
// A view of `graph` with every node; subgraphs of If/Loop/Scan nodes as nested views.
std::unique_ptr<OrtGraph> make_graph_view(const Graph& graph, const std::string& model_path, int64_t ir_version);
// A view of some nodes of `graph`: inputs are the values they read from outside, outputs
// those a graph output or another node uses (the shared boundary rule, initializers kept).
std::unique_ptr<OrtGraph> make_subgraph_view(const Graph& graph, std::span<const NodeId> nodes,
                                             const std::string& name, const std::string& model_path);
// The fused node that stands for `view`: its name, inputs and outputs.
std::unique_ptr<OrtNode> make_fused_node(const OrtGraph& view, const std::string& name,
                                         std::span<const ValueId> inputs, std::span<const ValueId> outputs);

// The host's function tables, filled once.
const OrtApiBase* api_base();
const OrtApi* host_api();
const OrtEpApi* host_ep_api();
const OrtModelEditorApi* host_model_editor_api();
// The highest API version a plugin asked GetApi for since the last call (0: none); the
// loader names it, and refuses the plugin when it exceeds NXRT_ORT_API_VERSION.
uint32_t take_requested_api_version();

}  // namespace nxrt::ort_plugin
