// OrtApi host functions for statuses, tensors and their type info, memory info and the
// default allocator, kernel contexts, loggers, session options and key-value pairs.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "host_api_decls.h"
#include "host_checks.h"

void OrtKeyValuePairs::refresh() {
  key_ptrs.clear();
  value_ptrs.clear();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    key_ptrs.push_back(keys[i].c_str());
    value_ptrs.push_back(values[i].c_str());
  }
}

void OrtKeyValuePairs::set(const std::string& key, const std::string& value) {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) {
      values[i] = value;
      refresh();
      return;
    }
  keys.push_back(key);
  values.push_back(value);
  refresh();
}

void OrtKeyValuePairs::erase(const std::string& key) {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) {
      keys.erase(keys.begin() + static_cast<std::ptrdiff_t>(i));
      values.erase(values.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  refresh();
}

const std::string* OrtKeyValuePairs::find(const std::string& key) const {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] == key) return &values[i];
  return nullptr;
}

namespace nxrt::ort_plugin {

OrtStatus* make_status(OrtErrorCode code, std::string message) { return new OrtStatus{{}, code, std::move(message)}; }

OrtStatus* invalid_argument(std::string message) { return make_status(ORT_INVALID_ARGUMENT, std::move(message)); }

std::string take_status(OrtStatus* status) {
  if (!status) return {};
  std::string text = status->message.empty() ? fmt::format("error code {}", static_cast<int>(status->code)) : status->message;
  delete status;
  return text;
}

OrtStatus* bad_argument(std::string_view table, std::string_view function, std::string_view names, std::size_t index,
                        const void* given, const char* wanted) {
  std::string_view name = names;
  for (std::size_t i = 0; i < index && name.find(',') != std::string_view::npos; ++i) name.remove_prefix(name.find(',') + 1);
  name = name.substr(0, name.find(','));
  name.remove_prefix(std::min(name.find_first_not_of(' '), name.size()));
  const std::string where = fmt::format("{}::{}: argument '{}'", table, function, name);
  if (!given) return invalid_argument(fmt::format("{} is NULL", where));
  uint32_t header[2];
  std::memcpy(header, given, sizeof header);
  const bool is_handle = header[0] == kHandleMagic && header[1] < std::size(kHandleKindNames);
  if (is_handle) return invalid_argument(fmt::format("{} is an {}, not an {}", where, kHandleKindNames[header[1]], wanted));
  return invalid_argument(fmt::format("{} is not an {} the host gave out", where, wanted));
}

const OrtMemoryInfo* cpu_memory_info() {
  static const OrtMemoryInfo info;
  return &info;
}

OrtStatus* copy_out(const std::string& text, char* out, size_t* size, std::string_view function) {
  const size_t needed = text.size() + 1;
  if (out == nullptr || *size < needed) {
    const size_t given = *size;
    *size = needed;
    return out == nullptr ? nullptr
                          : invalid_argument(fmt::format("OrtApi::{}: buffer of {} bytes is too small; {} needed",
                                                         function, given, needed));
  }
  std::memcpy(out, text.c_str(), needed);
  *size = needed;
  return nullptr;
}

namespace {

OrtTensorTypeAndShapeInfo shape_info_of(const Tensor& t) {
  OrtTensorTypeAndShapeInfo info;
  info.element_type = static_cast<ONNXTensorElementDataType>(t.dtype());
  info.has_shape = true;
  info.dims = t.shape();
  info.symbols.assign(t.shape().size(), "");
  return info;
}

void* host_alloc(OrtAllocator*, size_t size) { return std::aligned_alloc(64, (size + 63) / 64 * 64); }
void host_free(OrtAllocator*, void* p) { std::free(p); }
const OrtMemoryInfo* host_info(const OrtAllocator*) { return cpu_memory_info(); }


}  // namespace

OrtAllocator* default_allocator() {
  // Version 24, whose struct ends at AllocOnStream: a plugin built against a newer header must
  // not look for Shrink (added after 24) in it.
  static OrtAllocator allocator{24, &host_alloc, &host_free, &host_info, nullptr, nullptr, nullptr};
  return &allocator;
}

namespace {

Expected<DType> dtype_of_element(ONNXTensorElementDataType type) {
  auto d = dtype_from_onnx(static_cast<int32_t>(type));
  if (!d || *d == DType::kString || *d == DType::kUndefined)
    return fail(ErrorCode::kRuntime, fmt::format("element type {} is not supported by the nxrt host", static_cast<int>(type)));
  // ONNX Runtime packs them two or four per byte; nxrt holds one per byte, so a plugin would misread them.
  if (is_subbyte(*d))
    return fail(ErrorCode::kRuntime,
                fmt::format("element type {} ({}) is not supported by the nxrt host: nxrt holds {}-bit elements one "
                            "per byte, ONNX Runtime plugins expect {} per byte",
                            static_cast<int>(type), dtype_name(*d), subbyte_bits(*d), 8 / subbyte_bits(*d)));
  return *d;
}

}  // namespace

OrtTypeInfo type_info_of(const ValueType& type) {
  OrtTypeInfo info;
  switch (type.kind) {
    case ValueType::Kind::kTensor: info.type = ONNX_TYPE_TENSOR; break;
    case ValueType::Kind::kSequence: info.type = ONNX_TYPE_SEQUENCE; break;
    case ValueType::Kind::kOptional: info.type = ONNX_TYPE_OPTIONAL; break;
    case ValueType::Kind::kMap: info.type = ONNX_TYPE_MAP; break;
    case ValueType::Kind::kUnknown: info.type = ONNX_TYPE_UNKNOWN; break;
  }
  info.tensor.element_type = static_cast<ONNXTensorElementDataType>(type.dtype);
  if (type.shape) {
    info.tensor.has_shape = true;
    for (const Dim& d : *type.shape) {
      info.tensor.dims.push_back(d.known() ? d.size : -1);
      info.tensor.symbols.push_back(d.symbol);
    }
  }
  return info;
}

namespace api {
namespace {

// A new tensor in `into`, or a status when the shape is invalid or memory runs out (an
// exception must not unwind through the plugin's C frames).
OrtStatus* allocate_tensor(DType dtype, const Shape& dims, const char* function, Tensor& into) {
  if (shape_numel(dims) < 0)
    return invalid_argument(fmt::format("OrtApi::{}: shape {} is invalid", function, shape_to_string(dims)));
  try {
    into = Tensor::empty(dtype, dims);
  } catch (const std::bad_alloc&) {
    return make_status(ORT_FAIL, fmt::format("OrtApi::{}: out of memory for a {} tensor of shape {}", function,
                                             dtype_name(dtype), shape_to_string(dims)));
  }
  return nullptr;
}

OrtStatus* no_tensor(const char* function) {
  return invalid_argument(fmt::format("OrtApi::{}: the value holds no tensor", function));
}

// Whether the dims a plugin asks for agree with the graph's shape (-1: any size).
bool agrees(const std::vector<int64_t>& graph_shape, const Shape& dims) {
  if (graph_shape.size() != dims.size()) return false;
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (graph_shape[i] >= 0 && graph_shape[i] != dims[i]) return false;
  return true;
}

std::string shape_text(const std::vector<int64_t>& dims) {
  std::string out = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i) out += ',';
    out += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return out + "]";
}

}  // namespace

// Statuses
OrtStatus* CreateStatus(OrtErrorCode code, const char* msg) { return make_status(code, msg ? msg : ""); }

OrtErrorCode GetErrorCode(const OrtStatus* status) {
  if (!status) return ORT_OK;  // NULL is ORT's success
  return usable(status) ? status->code : ORT_INVALID_ARGUMENT;
}

const char* GetErrorMessage(const OrtStatus* status) {
  if (!status) return "";
  return usable(status) ? status->message.c_str() : "OrtApi::GetErrorMessage: argument 'status' is not an OrtStatus";
}

void ReleaseStatus(OrtStatus* input) {
  NXRT_CHECK_ARGS_OR(, input);
  delete input;
}

// Values
OrtStatus* CreateTensorAsOrtValue(OrtAllocator* allocator, const int64_t* shape, size_t shape_len,
                                  ONNXTensorElementDataType type, OrtValue** out) {
  NXRT_CHECK_ARGS(allocator, out);
  if (shape_len > 0) NXRT_CHECK_ARGS(shape);
  auto dtype = dtype_of_element(type);
  if (!dtype) return invalid_argument(fmt::format("OrtApi::CreateTensorAsOrtValue: {}", dtype.error().what));
  Tensor t;
  if (OrtStatus* s = allocate_tensor(*dtype, Shape(shape, shape + shape_len), __func__, t)) return s;
  *out = new OrtValue{{}, std::move(t), *dtype};
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* CreateTensorWithDataAsOrtValue(const OrtMemoryInfo* info, void* p_data, size_t p_data_len, const int64_t* shape,
                                          size_t shape_len, ONNXTensorElementDataType type, OrtValue** out) {
  NXRT_CHECK_ARGS(info, out);
  if (shape_len > 0) NXRT_CHECK_ARGS(shape);
  auto dtype = dtype_of_element(type);
  if (!dtype) return invalid_argument(fmt::format("OrtApi::CreateTensorWithDataAsOrtValue: {}", dtype.error().what));
  Shape dims(shape, shape + shape_len);
  const int64_t numel = shape_numel(dims);
  if (numel < 0)
    return invalid_argument(fmt::format("OrtApi::CreateTensorWithDataAsOrtValue: shape {} is invalid", shape_to_string(dims)));
  if (static_cast<uint64_t>(numel) > SIZE_MAX / dtype_size(*dtype))
    return invalid_argument(fmt::format("OrtApi::CreateTensorWithDataAsOrtValue: shape {} is too large", shape_to_string(dims)));
  const size_t needed = static_cast<size_t>(numel) * dtype_size(*dtype);
  if (needed > p_data_len)
    return invalid_argument(fmt::format("OrtApi::CreateTensorWithDataAsOrtValue: not enough space: expected {}, got {}",
                                        needed, p_data_len));
  if (needed > 0) NXRT_CHECK_ARGS(p_data);
  auto storage = std::make_shared<Storage>(p_data, p_data_len, kHostDevice, [](void*) {});
  *out = new OrtValue{{}, Tensor(std::move(storage), *dtype, std::move(dims)), *dtype};
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* IsTensor(const OrtValue* value, int* out) {
  NXRT_CHECK_ARGS(value, out);
  *out = value->tensor.defined() ? 1 : 0;
  return nullptr;
}

OrtStatus* HasValue(const OrtValue* value, int* out) {
  NXRT_CHECK_ARGS(value, out);
  *out = value->tensor.defined() ? 1 : 0;
  return nullptr;
}

OrtStatus* GetTensorMutableData(OrtValue* value, void** out) {
  NXRT_CHECK_ARGS(value, out);
  if (!value->tensor.defined()) return no_tensor(__func__);
  *out = value->tensor.mut().data();
  return nullptr;
}

OrtStatus* GetTensorData(const OrtValue* value, const void** out) {
  NXRT_CHECK_ARGS(value, out);
  if (!value->tensor.defined()) return no_tensor(__func__);
  *out = value->tensor.view().data();
  return nullptr;
}

OrtStatus* GetTensorSizeInBytes(const OrtValue* value, size_t* size) {
  NXRT_CHECK_ARGS(value, size);
  if (!value->tensor.defined()) return no_tensor(__func__);
  *size = value->tensor.nbytes();
  return nullptr;
}

OrtStatus* GetTensorMemoryInfo(const OrtValue* value, const OrtMemoryInfo** mem_info) {
  NXRT_CHECK_ARGS(value, mem_info);
  *mem_info = cpu_memory_info();
  return nullptr;
}

OrtStatus* GetTensorTypeAndShape(const OrtValue* value, OrtTensorTypeAndShapeInfo** out) {
  NXRT_CHECK_ARGS(value, out);
  if (!value->tensor.defined()) return no_tensor(__func__);
  *out = new OrtTensorTypeAndShapeInfo(shape_info_of(value->tensor));
  (*out)->plugin_owned = true;
  return nullptr;
}

// The element type and the value's own dims, with no info object to release: the pointer
// stays valid while the value lives and keeps its shape.
OrtStatus* GetTensorElementTypeAndShapeDataReference(const OrtValue* value, ONNXTensorElementDataType* elem_type,
                                                     const int64_t** shape_data, size_t* shape_data_count) {
  NXRT_CHECK_ARGS(value, elem_type, shape_data, shape_data_count);
  if (!value->tensor.defined()) return no_tensor(__func__);
  *elem_type = static_cast<ONNXTensorElementDataType>(value->tensor.dtype());
  *shape_data = value->tensor.shape().empty() ? nullptr : value->tensor.shape().data();
  *shape_data_count = value->tensor.shape().size();
  return nullptr;
}

OrtStatus* GetValueType(const OrtValue* value, ONNXType* out) {
  NXRT_CHECK_ARGS(value, out);
  *out = value->tensor.defined() ? ONNX_TYPE_TENSOR : ONNX_TYPE_UNKNOWN;
  return nullptr;
}

void ReleaseValue(OrtValue* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// Type and shape info
OrtStatus* CastTypeInfoToTensorInfo(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out) {
  NXRT_CHECK_ARGS(type_info, out);
  *out = type_info->type == ONNX_TYPE_TENSOR ? &type_info->tensor : nullptr;
  return nullptr;
}

OrtStatus* GetOnnxTypeFromTypeInfo(const OrtTypeInfo* type_info, ONNXType* out) {
  NXRT_CHECK_ARGS(type_info, out);
  *out = type_info->type;
  return nullptr;
}

OrtStatus* CreateTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo** out) {
  NXRT_CHECK_ARGS(out);
  *out = new OrtTensorTypeAndShapeInfo();
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* SetTensorElementType(OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType type) {
  NXRT_CHECK_ARGS(info);
  info->element_type = type;
  return nullptr;
}

OrtStatus* SetDimensions(OrtTensorTypeAndShapeInfo* info, const int64_t* dim_values, size_t dim_count) {
  NXRT_CHECK_ARGS(info);
  if (dim_count > 0) NXRT_CHECK_ARGS(dim_values);
  info->has_shape = true;
  info->dims.assign(dim_values, dim_values + dim_count);
  info->symbols.assign(dim_count, "");
  return nullptr;
}

OrtStatus* GetTensorElementType(const OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType* out) {
  NXRT_CHECK_ARGS(info, out);
  *out = info->element_type;
  return nullptr;
}

OrtStatus* GetDimensionsCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) {
  NXRT_CHECK_ARGS(info, out);
  *out = info->dims.size();
  return nullptr;
}

OrtStatus* GetDimensions(const OrtTensorTypeAndShapeInfo* info, int64_t* dim_values, size_t dim_values_length) {
  NXRT_CHECK_ARGS(info);
  if (dim_values_length > 0) NXRT_CHECK_ARGS(dim_values);
  for (size_t i = 0; i < dim_values_length && i < info->dims.size(); ++i) dim_values[i] = info->dims[i];
  return nullptr;
}

OrtStatus* GetSymbolicDimensions(const OrtTensorTypeAndShapeInfo* info, const char* dim_params[],
                                 size_t dim_params_length) {
  NXRT_CHECK_ARGS(info);
  if (dim_params_length > 0) NXRT_CHECK_ARGS(dim_params);
  for (size_t i = 0; i < dim_params_length && i < info->symbols.size(); ++i) dim_params[i] = info->symbols[i].c_str();
  return nullptr;
}

bool TensorTypeAndShape_HasShape(const OrtTensorTypeAndShapeInfo* info) {
  NXRT_CHECK_ARGS_OR(false, info);
  return info->has_shape;
}

OrtStatus* GetTensorShapeElementCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) {
  NXRT_CHECK_ARGS(info, out);
  const int64_t n = shape_numel(info->dims);
  if (n < 0) return invalid_argument("OrtApi::GetTensorShapeElementCount: the shape has unknown dimensions");
  *out = static_cast<size_t>(n);
  return nullptr;
}

void ReleaseTypeInfo(OrtTypeInfo* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

void ReleaseTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// Memory info and the default allocator
OrtStatus* CreateMemoryInfo(const char* name, OrtAllocatorType type, int id, OrtMemType mem_type, OrtMemoryInfo** out) {
  NXRT_CHECK_ARGS(name, out);
  auto* info = new OrtMemoryInfo();
  info->plugin_owned = true;
  info->name = name;
  info->allocator_type = type;
  info->id = id;
  info->mem_type = mem_type;
  info->device.device_id = static_cast<uint32_t>(id);
  if (info->name != "Cpu") info->device.device_type = OrtMemoryInfoDeviceType_GPU;
  *out = info;
  return nullptr;
}

OrtStatus* CreateCpuMemoryInfo(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo** out) {
  NXRT_CHECK_ARGS(out);
  *out = new OrtMemoryInfo{{}, "Cpu", type, 0, mem_type, {}};
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* CreateMemoryInfo_V2(const char* name, OrtMemoryInfoDeviceType device_type, uint32_t vendor_id,
                               int32_t device_id, OrtDeviceMemoryType mem_type, size_t, OrtAllocatorType allocator_type,
                               OrtMemoryInfo** out) {
  NXRT_CHECK_ARGS(name, out);
  OrtMemoryDevice device;
  device.device_type = device_type;
  device.memory_type = mem_type;
  device.vendor_id = vendor_id;
  device.device_id = static_cast<uint32_t>(device_id);
  *out = new OrtMemoryInfo{{}, name, allocator_type, device_id, OrtMemTypeDefault, device};
  (*out)->plugin_owned = true;
  return nullptr;
}

OrtStatus* CompareMemoryInfo(const OrtMemoryInfo* info1, const OrtMemoryInfo* info2, int* out) {
  NXRT_CHECK_ARGS(info1, info2, out);
  const bool same = info1->name == info2->name && info1->id == info2->id && info1->mem_type == info2->mem_type &&
                    info1->allocator_type == info2->allocator_type && info1->device == info2->device;
  *out = same ? 0 : -1;
  return nullptr;
}

OrtStatus* MemoryInfoGetName(const OrtMemoryInfo* ptr, const char** out) {
  NXRT_CHECK_ARGS(ptr, out);
  *out = ptr->name.c_str();
  return nullptr;
}

OrtStatus* MemoryInfoGetId(const OrtMemoryInfo* ptr, int* out) {
  NXRT_CHECK_ARGS(ptr, out);
  *out = ptr->id;
  return nullptr;
}

OrtStatus* MemoryInfoGetMemType(const OrtMemoryInfo* ptr, OrtMemType* out) {
  NXRT_CHECK_ARGS(ptr, out);
  *out = ptr->mem_type;
  return nullptr;
}

OrtStatus* MemoryInfoGetType(const OrtMemoryInfo* ptr, OrtAllocatorType* out) {
  NXRT_CHECK_ARGS(ptr, out);
  *out = ptr->allocator_type;
  return nullptr;
}

void MemoryInfoGetDeviceType(const OrtMemoryInfo* ptr, OrtMemoryInfoDeviceType* out) {
  NXRT_CHECK_ARGS_OR(, ptr, out);
  *out = ptr->device.device_type;
}

OrtDeviceMemoryType MemoryInfoGetDeviceMemType(const OrtMemoryInfo* ptr) {
  NXRT_CHECK_ARGS_OR(OrtDeviceMemoryType_DEFAULT, ptr);
  return ptr->device.memory_type;
}

uint32_t MemoryInfoGetVendorId(const OrtMemoryInfo* ptr) {
  NXRT_CHECK_ARGS_OR(0, ptr);
  return ptr->device.vendor_id;
}

void ReleaseMemoryInfo(OrtMemoryInfo* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// OrtAllocator is a struct a plugin may fill in itself, so only its function pointers are checked.
OrtStatus* AllocatorAlloc(OrtAllocator* ptr, size_t size, void** out) {
  NXRT_CHECK_ARGS(ptr, out);
  if (!ptr->Alloc) return invalid_argument("OrtApi::AllocatorAlloc: the allocator's Alloc is NULL");
  *out = ptr->Alloc(ptr, size);
  return *out || size == 0 ? nullptr : make_status(ORT_FAIL, fmt::format("OrtApi::AllocatorAlloc: allocating {} bytes failed", size));
}

OrtStatus* AllocatorFree(OrtAllocator* ptr, void* p) {
  NXRT_CHECK_ARGS(ptr);
  if (!ptr->Free) return invalid_argument("OrtApi::AllocatorFree: the allocator's Free is NULL");
  ptr->Free(ptr, p);
  return nullptr;
}

OrtStatus* AllocatorGetInfo(const OrtAllocator* ptr, const OrtMemoryInfo** out) {
  NXRT_CHECK_ARGS(ptr, out);
  if (!ptr->Info) return invalid_argument("OrtApi::AllocatorGetInfo: the allocator's Info is NULL");
  *out = ptr->Info(ptr);
  return nullptr;
}

OrtStatus* GetAllocatorWithDefaultOptions(OrtAllocator** out) {
  NXRT_CHECK_ARGS(out);
  *out = default_allocator();
  return nullptr;
}

// Kernel contexts
OrtStatus* KernelContext_GetInputCount(const OrtKernelContext* context, size_t* out) {
  NXRT_CHECK_ARGS(context, out);
  *out = context->inputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetOutputCount(const OrtKernelContext* context, size_t* out) {
  NXRT_CHECK_ARGS(context, out);
  *out = context->outputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetInput(const OrtKernelContext* context, size_t index, const OrtValue** out) {
  NXRT_CHECK_ARGS(context, out);
  if (index >= context->inputs.size())
    return invalid_argument(fmt::format("OrtApi::KernelContext_GetInput: input index {} is out of range: '{}' has {} inputs",
                                        index, context->node_name, context->inputs.size()));
  *out = context->inputs[index].tensor.defined() ? &context->inputs[index] : nullptr;
  return nullptr;
}

OrtStatus* KernelContext_GetOutput(OrtKernelContext* context, size_t index, const int64_t* dim_values, size_t dim_count,
                                   OrtValue** out) {
  NXRT_CHECK_ARGS(context, out);
  if (dim_count > 0) NXRT_CHECK_ARGS(dim_values);
  // Each refusal is also kept for the error the host reports if Compute goes on regardless.
  auto refuse = [&](std::string message) {
    context->refusals.push_back(message);
    return invalid_argument(std::move(message));
  };
  if (index >= context->outputs.size())
    return refuse(fmt::format("OrtApi::KernelContext_GetOutput: output index {} is out of range: '{}' has {} outputs", index,
                              context->node_name, context->outputs.size()));
  OrtKernelContext::Output& output = context->outputs[index];
  if (output.absent) {
    *out = nullptr;
    return nullptr;
  }
  Shape dims(dim_values, dim_values + dim_count);
  if (shape_numel(dims) < 0)
    return refuse(fmt::format("OrtApi::KernelContext_GetOutput: shape {} for output '{}' is invalid", shape_to_string(dims),
                              output.name));
  if (output.shape && !agrees(*output.shape, dims))
    return refuse(fmt::format("OrtApi::KernelContext_GetOutput: shape {} for output '{}' disagrees with the graph's {}",
                              shape_to_string(dims), output.name, shape_text(*output.shape)));
  OrtValue& value = *output.value;
  if (!value.tensor.defined() || value.tensor.shape() != dims)
    if (OrtStatus* s = allocate_tensor(value.declared, dims, __func__, value.tensor)) {
      context->refusals.push_back(s->message);
      return s;
    }
  *out = &value;
  return nullptr;
}

OrtStatus* KernelContext_GetAllocator(const OrtKernelContext* context, const OrtMemoryInfo* mem_info, OrtAllocator** out) {
  NXRT_CHECK_ARGS(context, mem_info, out);
  *out = default_allocator();
  return nullptr;
}

OrtStatus* KernelContext_GetLogger(const OrtKernelContext* context, const OrtLogger** logger) {
  NXRT_CHECK_ARGS(context, logger);
  *logger = context->logger;
  return nullptr;
}

// Loggers
OrtStatus* Logger_LogMessage(const OrtLogger* logger, OrtLoggingLevel log_severity_level, const char* message,
                             const char*, int, const char*) {
  NXRT_CHECK_ARGS(logger);
  if (log_severity_level >= logger->level || log_severity_level == ORT_LOGGING_LEVEL_VERBOSE)
    const_cast<OrtLogger*>(logger)->messages.emplace_back(message ? message : "");
  return nullptr;
}

OrtStatus* Logger_GetLoggingSeverityLevel(const OrtLogger* logger, OrtLoggingLevel* out) {
  NXRT_CHECK_ARGS(logger, out);
  *out = logger->level;
  return nullptr;
}

const char* GetBuildInfoString() { return "nxrt host for ONNX Runtime plugin EPs (ORT API 24)"; }

// Session options
OrtStatus* HasSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, int* out) {
  NXRT_CHECK_ARGS(options, config_key, out);
  *out = options->config.find(config_key) ? 1 : 0;
  return nullptr;
}

OrtStatus* GetSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, char* config_value,
                                 size_t* size) {
  NXRT_CHECK_ARGS(options, config_key, size);
  const std::string* value = options->config.find(config_key);
  if (!value)
    return make_status(ORT_INVALID_ARGUMENT,
                       fmt::format("OrtApi::GetSessionConfigEntry: session config entry '{}' is not set", config_key));
  return copy_out(*value, config_value, size, __func__);
}

OrtStatus* GetSessionOptionsConfigEntries(const OrtSessionOptions* options, OrtKeyValuePairs** out) {
  NXRT_CHECK_ARGS(options, out);
  *out = new OrtKeyValuePairs(options->config);
  (*out)->plugin_owned = true;
  (*out)->refresh();
  return nullptr;
}

// Key-value pairs
void CreateKeyValuePairs(OrtKeyValuePairs** out) {
  NXRT_CHECK_ARGS_OR(, out);
  *out = new OrtKeyValuePairs();
  (*out)->plugin_owned = true;
}

void AddKeyValuePair(OrtKeyValuePairs* kvps, const char* key, const char* value) {
  NXRT_CHECK_ARGS_OR(, kvps, key, value);
  if (*key) kvps->set(key, value);
}

const char* GetKeyValue(const OrtKeyValuePairs* kvps, const char* key) {
  NXRT_CHECK_ARGS_OR(nullptr, kvps, key);
  const std::string* v = kvps->find(key);
  return v ? v->c_str() : nullptr;
}

void GetKeyValuePairs(const OrtKeyValuePairs* kvps, const char* const** keys, const char* const** values,
                      size_t* num_entries) {
  NXRT_CHECK_ARGS_OR(, keys, values, num_entries);
  *keys = nullptr;
  *values = nullptr;
  *num_entries = 0;
  NXRT_CHECK_ARGS_OR(, kvps);
  *keys = kvps->key_ptrs.data();
  *values = kvps->value_ptrs.data();
  *num_entries = kvps->keys.size();
}

void RemoveKeyValuePair(OrtKeyValuePairs* kvps, const char* key) {
  NXRT_CHECK_ARGS_OR(, kvps, key);
  kvps->erase(key);
}

void ReleaseKeyValuePairs(OrtKeyValuePairs* input) {
  NXRT_CHECK_ARGS_OR(, input);
  if (input->plugin_owned) delete input;
}

// Hardware and EP devices
OrtHardwareDeviceType HardwareDevice_Type(const OrtHardwareDevice* device) {
  NXRT_CHECK_ARGS_OR(OrtHardwareDeviceType_CPU, device);
  return device->type;
}

uint32_t HardwareDevice_VendorId(const OrtHardwareDevice* device) {
  NXRT_CHECK_ARGS_OR(0, device);
  return device->vendor_id;
}

const char* HardwareDevice_Vendor(const OrtHardwareDevice* device) {
  NXRT_CHECK_ARGS_OR(nullptr, device);
  return device->vendor.c_str();
}

uint32_t HardwareDevice_DeviceId(const OrtHardwareDevice* device) {
  NXRT_CHECK_ARGS_OR(0, device);
  return device->device_id;
}

const OrtKeyValuePairs* HardwareDevice_Metadata(const OrtHardwareDevice* device) {
  NXRT_CHECK_ARGS_OR(nullptr, device);
  return &device->metadata;
}

const char* EpDevice_EpName(const OrtEpDevice* ep_device) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  return ep_device->ep_name.c_str();
}

const char* EpDevice_EpVendor(const OrtEpDevice* ep_device) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  return ep_device->ep_vendor.c_str();
}

const OrtKeyValuePairs* EpDevice_EpMetadata(const OrtEpDevice* ep_device) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  return &ep_device->ep_metadata;
}

const OrtKeyValuePairs* EpDevice_EpOptions(const OrtEpDevice* ep_device) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  return &ep_device->ep_options;
}

const OrtHardwareDevice* EpDevice_Device(const OrtEpDevice* ep_device) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  return ep_device->device;
}

const OrtMemoryInfo* EpDevice_MemoryInfo(const OrtEpDevice* ep_device, OrtDeviceMemoryType memory_type) {
  NXRT_CHECK_ARGS_OR(nullptr, ep_device);
  const auto& info = memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE ? ep_device->host_memory : ep_device->device_memory;
  return info ? info.get() : nullptr;
}

const OrtEpApi* GetEpApi() { return host_ep_api(); }
const OrtModelEditorApi* GetModelEditorApi() { return host_model_editor_api(); }

}  // namespace api
}  // namespace nxrt::ort_plugin
