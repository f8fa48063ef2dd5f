// Kernel registries (ORT API 24): the OrtEpApi functions that build kernel definitions and
// registries and look kernels up, and the OrtApi KernelInfo functions a kernel's create
// function reads its node through.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <climits>
#include <cstring>

#include "host_api_decls.h"
#include "host_checks.h"
#include "kernel_match.h"

namespace nxrt::ort_plugin {
namespace ep_api {
namespace {

OrtStatus* add_aliases(std::vector<std::pair<int, int>>& into, int const* inputs, int const* outputs, size_t n,
                       const char* function) {
  if (n > 0 && (!inputs || !outputs))
    return invalid_argument(fmt::format("OrtEpApi::{}: input_indices or output_indices is NULL for {} pairs", function, n));
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i] < 0 || outputs[i] < 0)
      return invalid_argument(fmt::format("OrtEpApi::{}: pair {} ({}, {}) has a negative index", function, i, inputs[i],
                                          outputs[i]));
    into.emplace_back(inputs[i], outputs[i]);
  }
  return nullptr;
}

OrtStatus* mem_type_of(const std::map<std::size_t, OrtMemType>& types, size_t index, OrtMemType* out) {
  auto it = types.find(index);
  *out = it == types.end() ? OrtMemTypeDefault : it->second;
  return nullptr;
}

}  // namespace

OrtStatus* CreateKernelRegistry(OrtKernelRegistry** kernel_registry) {
  NXRT_CHECK_ARGS(kernel_registry);
  *kernel_registry = new OrtKernelRegistry();
  (*kernel_registry)->plugin_owned = true;
  return nullptr;
}

void ReleaseKernelRegistry(OrtKernelRegistry* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

OrtStatus* KernelRegistry_AddKernel(OrtKernelRegistry* kernel_registry, const OrtKernelDef* kernel_def,
                                    OrtKernelCreateFunc kernel_create_func, void* kernel_create_func_state) {
  NXRT_CHECK_ARGS(kernel_registry, kernel_def);
  if (!kernel_create_func)
    return invalid_argument(fmt::format("OrtEpApi::KernelRegistry_AddKernel: kernel_create_func is NULL for kernel {}",
                                        describe_kernel(kernel_def->def)));
  auto kernel = std::make_unique<OrtKernelRegistry::Kernel>();
  kernel->def.def = kernel_def->def;
  kernel->create = kernel_create_func;
  kernel->state = kernel_create_func_state;
  kernel_registry->kernels.push_back(std::move(kernel));
  return nullptr;
}

OrtStatus* CreateKernelDefBuilder(OrtKernelDefBuilder** kernel_def_builder_out) {
  NXRT_CHECK_ARGS(kernel_def_builder_out);
  *kernel_def_builder_out = new OrtKernelDefBuilder();
  (*kernel_def_builder_out)->plugin_owned = true;
  return nullptr;
}

void ReleaseKernelDefBuilder(OrtKernelDefBuilder* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

OrtStatus* KernelDefBuilder_SetOperatorType(OrtKernelDefBuilder* kernel_def_builder, const char* op_type) {
  NXRT_CHECK_ARGS(kernel_def_builder, op_type);
  kernel_def_builder->def.op_type = op_type;
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetDomain(OrtKernelDefBuilder* kernel_def_builder, const char* domain) {
  NXRT_CHECK_ARGS(kernel_def_builder, domain);
  kernel_def_builder->def.domain = normalize_domain(domain);
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetSinceVersion(OrtKernelDefBuilder* kernel_def_builder, int since_version_start,
                                            int since_version_end) {
  NXRT_CHECK_ARGS(kernel_def_builder);
  if (since_version_start < 1 || since_version_end < since_version_start)
    return invalid_argument(fmt::format("OrtEpApi::KernelDefBuilder_SetSinceVersion: versions {} to {} are not a range "
                                        "(start at least 1, end at least start)",
                                        since_version_start, since_version_end));
  kernel_def_builder->def.since_start = since_version_start;
  kernel_def_builder->def.since_end = since_version_end;
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetExecutionProvider(OrtKernelDefBuilder* kernel_def_builder, const char* ep_name) {
  NXRT_CHECK_ARGS(kernel_def_builder, ep_name);
  kernel_def_builder->def.ep_name = ep_name;
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetInputMemType(OrtKernelDefBuilder* kernel_def_builder, size_t input_index, OrtMemType mem_type) {
  NXRT_CHECK_ARGS(kernel_def_builder);
  kernel_def_builder->def.input_mem_types[input_index] = mem_type;  // every memory type is host memory here
  return nullptr;
}

OrtStatus* KernelDefBuilder_SetOutputMemType(OrtKernelDefBuilder* kernel_def_builder, size_t output_index,
                                             OrtMemType mem_type) {
  NXRT_CHECK_ARGS(kernel_def_builder);
  kernel_def_builder->def.output_mem_types[output_index] = mem_type;
  return nullptr;
}

OrtStatus* KernelDefBuilder_AddTypeConstraint(OrtKernelDefBuilder* kernel_def_builder, const char* arg_name,
                                              const OrtDataType* const* types, size_t num_types) {
  NXRT_CHECK_ARGS(kernel_def_builder, arg_name);
  if (num_types > 0) NXRT_CHECK_ARGS(types);
  std::vector<ONNXTensorElementDataType> allowed;
  for (size_t i = 0; i < num_types; ++i) {
    if (!usable(types[i]))
      return invalid_argument(fmt::format("OrtEpApi::KernelDefBuilder_AddTypeConstraint: types[{}] of constraint {} is "
                                          "not an OrtDataType from GetTensorDataType",
                                          i, arg_name));
    allowed.push_back(types[i]->element_type);
  }
  kernel_def_builder->def.type_constraints.emplace_back(arg_name, std::move(allowed));
  return nullptr;
}

OrtStatus* KernelDefBuilder_AddInputOutputAliases(OrtKernelDefBuilder* kernel_def_builder, int const* input_indices,
                                                  int const* output_indices, size_t num_io_indices) {
  NXRT_CHECK_ARGS(kernel_def_builder);
  return add_aliases(kernel_def_builder->def.aliases, input_indices, output_indices, num_io_indices, __func__);
}

OrtStatus* KernelDefBuilder_AddInputOutputMutableAliases(OrtKernelDefBuilder* kernel_def_builder, int const* input_indices,
                                                         int const* output_indices, size_t num_io_indices) {
  NXRT_CHECK_ARGS(kernel_def_builder);
  return add_aliases(kernel_def_builder->def.mutable_aliases, input_indices, output_indices, num_io_indices, __func__);
}

OrtStatus* KernelDefBuilder_Build(OrtKernelDefBuilder* kernel_def_builder, OrtKernelDef** kernel_def_out) {
  NXRT_CHECK_ARGS(kernel_def_builder, kernel_def_out);
  const KernelDefinition& def = kernel_def_builder->def;
  std::vector<std::string> missing;
  if (def.op_type.empty()) missing.push_back("an operator type (KernelDefBuilder_SetOperatorType)");
  if (def.since_start == 0) missing.push_back("a version range (KernelDefBuilder_SetSinceVersion)");
  if (def.ep_name.empty()) missing.push_back("an execution provider (KernelDefBuilder_SetExecutionProvider)");
  if (!missing.empty())
    return invalid_argument(
        fmt::format("OrtEpApi::KernelDefBuilder_Build: the kernel definition lacks {}", fmt::join(missing, ", ")));
  *kernel_def_out = new OrtKernelDef();
  (*kernel_def_out)->def = def;
  (*kernel_def_out)->plugin_owned = true;
  return nullptr;
}

void ReleaseKernelDef(OrtKernelDef* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

const char* KernelDef_GetOperatorType(const OrtKernelDef* kernel_def) {
  NXRT_CHECK_ARGS_OR(nullptr, kernel_def);
  return kernel_def->def.op_type.c_str();
}

const char* KernelDef_GetDomain(const OrtKernelDef* kernel_def) {
  NXRT_CHECK_ARGS_OR(nullptr, kernel_def);
  return kernel_def->def.domain.c_str();
}

OrtStatus* KernelDef_GetSinceVersion(const OrtKernelDef* kernel_def, int* start_version, int* end_version) {
  NXRT_CHECK_ARGS(kernel_def, start_version, end_version);
  *start_version = kernel_def->def.since_start;
  *end_version = kernel_def->def.since_end;
  return nullptr;
}

const char* KernelDef_GetExecutionProvider(const OrtKernelDef* kernel_def) {
  NXRT_CHECK_ARGS_OR(nullptr, kernel_def);
  return kernel_def->def.ep_name.c_str();
}

OrtStatus* KernelDef_GetInputMemType(const OrtKernelDef* kernel_def, size_t input_index, OrtMemType* mem_type) {
  NXRT_CHECK_ARGS(kernel_def, mem_type);
  return mem_type_of(kernel_def->def.input_mem_types, input_index, mem_type);
}

OrtStatus* KernelDef_GetOutputMemType(const OrtKernelDef* kernel_def, size_t output_index, OrtMemType* mem_type) {
  NXRT_CHECK_ARGS(kernel_def, mem_type);
  return mem_type_of(kernel_def->def.output_mem_types, output_index, mem_type);
}

OrtStatus* GetTensorDataType(ONNXTensorElementDataType elem_type, const OrtDataType** out) {
  NXRT_CHECK_ARGS(out);
  static const auto kTypes = [] {
    std::array<OrtDataType, ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 + 1> all{};
    for (std::size_t i = 0; i < all.size(); ++i) all[i].element_type = static_cast<ONNXTensorElementDataType>(i);
    return all;
  }();
  const auto index = static_cast<std::size_t>(elem_type);
  if (elem_type <= ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED || index >= kTypes.size())
    return invalid_argument(fmt::format("OrtEpApi::GetTensorDataType: element type {} is not one the nxrt host knows (1 to {})",
                                        static_cast<int>(elem_type), kTypes.size() - 1));
  *out = &kTypes[index];
  return nullptr;
}

OrtStatus* EpGraphSupportInfo_LookUpKernel(OrtEpGraphSupportInfo* graph_support_info, const OrtNode* node,
                                           const OrtKernelDef** out_kernel_def) {
  NXRT_CHECK_ARGS(graph_support_info, node, out_kernel_def);
  const KernelLookup found = find_kernel(graph_support_info->registry, *node, graph_support_info->ep_name);
  *out_kernel_def = found.kernel ? &found.kernel->def : nullptr;
  return nullptr;
}

OrtStatus* KernelInfo_GetEp(const OrtKernelInfo* info, const OrtEp** ep) {
  NXRT_CHECK_ARGS(info, ep);
  *ep = info->ep;
  return nullptr;
}

}  // namespace ep_api

namespace api {
namespace {

const OrtOpAttr* attribute_of(const OrtKernelInfo* info, const char* name) {
  for (const auto& a : info->node->attributes)
    if (a->name == name) return a.get();
  return nullptr;
}

// The attribute `name` of the kernel's node if it has type `type`; otherwise a status.
OrtStatus* find_attribute(const OrtKernelInfo* info, const char* name, OrtOpAttrType type, const char* function,
                          const OrtOpAttr** out) {
  *out = attribute_of(info, name);
  if (!*out)
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: node '{}' has no attribute '{}'", function, info->node->name, name));
  if ((*out)->type != type)
    return invalid_argument(fmt::format("OrtApi::{}: attribute '{}' of node '{}' has another type ({})", function, name,
                                        info->node->name, static_cast<int>((*out)->type)));
  return nullptr;
}

// Copies an array attribute ORT style: a NULL buffer gets the element count; a short one, the
// count and an error.
template <class T>
OrtStatus* copy_array_out(const std::vector<T>& values, T* out, size_t* size, const char* function) {
  const size_t given = *size;
  *size = values.size();
  if (out == nullptr) return nullptr;
  if (given < values.size())
    return invalid_argument(fmt::format("OrtApi::{}: room for {} values, the attribute has {}", function, given, values.size()));
  std::copy(values.begin(), values.end(), out);
  return nullptr;
}

OrtStatus* value_at(const std::vector<OrtValueInfo*>& values, size_t index, const OrtKernelInfo* info, const char* kind,
                    const char* function, const OrtValueInfo** out) {
  if (index >= values.size())
    return invalid_argument(fmt::format("OrtApi::{}: {} index {} is out of range: '{}' has {} {}s", function, kind, index,
                                        info->node->name, values.size(), kind));
  *out = values[index];
  return nullptr;
}

OrtStatus* type_info_at(const std::vector<OrtValueInfo*>& values, size_t index, const OrtKernelInfo* info, const char* kind,
                        const char* function, OrtTypeInfo** type_info) {
  const OrtValueInfo* v = nullptr;
  if (OrtStatus* s = value_at(values, index, info, kind, function, &v)) return s;
  if (!v)
    return invalid_argument(fmt::format("OrtApi::{}: {} {} of '{}' is omitted", function, kind, index, info->node->name));
  *type_info = new OrtTypeInfo(v->type);
  (*type_info)->plugin_owned = true;
  return nullptr;
}

OrtStatus* name_at(const std::vector<OrtValueInfo*>& values, size_t index, const OrtKernelInfo* info, const char* kind,
                   const char* function, char* out, size_t* size) {
  const OrtValueInfo* v = nullptr;
  if (OrtStatus* s = value_at(values, index, info, kind, function, &v)) return s;
  return copy_out(v ? v->name : std::string(), out, size, function);
}

}  // namespace

OrtStatus* KernelInfoGetAttribute_float(const OrtKernelInfo* info, const char* name, float* out) {
  NXRT_CHECK_ARGS(info, name, out);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_FLOAT, __func__, &a)) return s;
  *out = a->f;
  return nullptr;
}

OrtStatus* KernelInfoGetAttribute_int64(const OrtKernelInfo* info, const char* name, int64_t* out) {
  NXRT_CHECK_ARGS(info, name, out);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_INT, __func__, &a)) return s;
  *out = a->i;
  return nullptr;
}

OrtStatus* KernelInfoGetAttribute_string(const OrtKernelInfo* info, const char* name, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, name, size);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_STRING, __func__, &a)) return s;
  return copy_out(a->s, out, size, __func__);
}

OrtStatus* KernelInfoGetAttributeArray_float(const OrtKernelInfo* info, const char* name, float* out, size_t* size) {
  NXRT_CHECK_ARGS(info, name, size);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_FLOATS, __func__, &a)) return s;
  return copy_array_out(a->floats, out, size, __func__);
}

OrtStatus* KernelInfoGetAttributeArray_int64(const OrtKernelInfo* info, const char* name, int64_t* out, size_t* size) {
  NXRT_CHECK_ARGS(info, name, size);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_INTS, __func__, &a)) return s;
  return copy_array_out(a->ints, out, size, __func__);
}

OrtStatus* KernelInfoGetAttribute_tensor(const OrtKernelInfo* info, const char* name, OrtAllocator* allocator, OrtValue** out) {
  NXRT_CHECK_ARGS(info, name, allocator, out);
  const OrtOpAttr* a = nullptr;
  if (OrtStatus* s = find_attribute(info, name, ORT_OP_ATTR_TENSOR, __func__, &a)) return s;
  *out = new OrtValue{{}, a->tensor, a->tensor.dtype()};  // shares the node's data: host memory either way
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* KernelInfo_GetInputCount(const OrtKernelInfo* info, size_t* out) {
  NXRT_CHECK_ARGS(info, out);
  *out = info->node->inputs.size();
  return nullptr;
}

OrtStatus* KernelInfo_GetOutputCount(const OrtKernelInfo* info, size_t* out) {
  NXRT_CHECK_ARGS(info, out);
  *out = info->node->outputs.size();
  return nullptr;
}

OrtStatus* KernelInfo_GetInputName(const OrtKernelInfo* info, size_t index, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, size);
  return name_at(info->node->inputs, index, info, "input", __func__, out, size);
}

OrtStatus* KernelInfo_GetOutputName(const OrtKernelInfo* info, size_t index, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, size);
  return name_at(info->node->outputs, index, info, "output", __func__, out, size);
}

OrtStatus* KernelInfo_GetInputTypeInfo(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info) {
  NXRT_CHECK_ARGS(info, type_info);
  return type_info_at(info->node->inputs, index, info, "input", __func__, type_info);
}

OrtStatus* KernelInfo_GetOutputTypeInfo(const OrtKernelInfo* info, size_t index, OrtTypeInfo** type_info) {
  NXRT_CHECK_ARGS(info, type_info);
  return type_info_at(info->node->outputs, index, info, "output", __func__, type_info);
}

OrtStatus* KernelInfo_GetNodeName(const OrtKernelInfo* info, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, size);
  return copy_out(info->node->name, out, size, __func__);
}

OrtStatus* KernelInfo_GetLogger(const OrtKernelInfo* info, const OrtLogger** logger) {
  NXRT_CHECK_ARGS(info, logger);
  *logger = info->logger;
  return nullptr;
}

OrtStatus* KernelInfoGetConstantInput_tensor(const OrtKernelInfo* info, size_t index, int* is_constant, const OrtValue** out) {
  NXRT_CHECK_ARGS(info, is_constant, out);
  const OrtValueInfo* v = nullptr;
  if (OrtStatus* s = value_at(info->node->inputs, index, info, "input", __func__, &v)) return s;
  *is_constant = 0;
  *out = nullptr;
  bool constant = false;
  if (!v) return nullptr;
  if (OrtStatus* s = ValueInfo_IsConstantInitializer(v, &constant)) return s;
  if (!constant) return nullptr;
  if (OrtStatus* s = ValueInfo_GetInitializerValue(v, out)) return s;
  *is_constant = 1;
  return nullptr;
}

OrtStatus* KernelInfoGetAllocator(const OrtKernelInfo* info, OrtMemType mem_type, OrtAllocator** out) {
  NXRT_CHECK_ARGS(info, out);
  (void)mem_type;  // every memory type is host memory here
  *out = default_allocator();
  return nullptr;
}

void ReleaseAllocator(OrtAllocator* input) {
  (void)input;  // the host's allocators live as long as the process; a plugin's own are its to free
}

OrtStatus* KernelInfo_GetConfigEntries(const OrtKernelInfo* info, OrtKeyValuePairs** out) {
  NXRT_CHECK_ARGS(info, out);
  *out = new OrtKeyValuePairs(info->config ? *info->config : OrtKeyValuePairs{});
  (*out)->plugin_owned = true;
  (*out)->refresh();
  return nullptr;
}

OrtStatus* KernelInfo_GetOperatorDomain(const OrtKernelInfo* info, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, size);
  return copy_out(info->node->domain, out, size, __func__);
}

OrtStatus* KernelInfo_GetOperatorType(const OrtKernelInfo* info, char* out, size_t* size) {
  NXRT_CHECK_ARGS(info, size);
  return copy_out(info->node->op_type, out, size, __func__);
}

OrtStatus* KernelInfo_GetOperatorSinceVersion(const OrtKernelInfo* info, int* since_version) {
  NXRT_CHECK_ARGS(info, since_version);
  *since_version = info->node->since_version;
  return nullptr;
}

}  // namespace api
}  // namespace nxrt::ort_plugin
