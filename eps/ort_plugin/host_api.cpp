// OrtApi host functions for statuses, tensors and their type info, memory info and the
// default allocator, kernel contexts, loggers, session options and key-value pairs.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "host_api_decls.h"

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

OrtStatus* make_status(OrtErrorCode code, std::string message) { return new OrtStatus{code, std::move(message)}; }

OrtStatus* invalid_argument(std::string message) { return make_status(ORT_INVALID_ARGUMENT, std::move(message)); }

std::string take_status(OrtStatus* status) {
  if (!status) return {};
  std::string text = status->message.empty() ? fmt::format("error code {}", static_cast<int>(status->code)) : status->message;
  delete status;
  return text;
}

const OrtMemoryInfo* cpu_memory_info() {
  static const OrtMemoryInfo info;
  return &info;
}

namespace {

// Copies `text` (and a terminating NUL) into a caller's buffer of *size bytes, ORT style:
// a null or short buffer gets the needed size and an error.
OrtStatus* copy_out(const std::string& text, char* out, size_t* size) {
  const size_t needed = text.size() + 1;
  if (out == nullptr || *size < needed) {
    const size_t given = *size;
    *size = needed;
    return out == nullptr ? nullptr : invalid_argument(fmt::format("buffer of {} bytes is too small; {} needed", given, needed));
  }
  std::memcpy(out, text.c_str(), needed);
  *size = needed;
  return nullptr;
}

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

OrtAllocator* default_allocator() {
  // Version 23: the struct has no Shrink member (added in 24), so plugins must not look for it.
  static OrtAllocator allocator{23, &host_alloc, &host_free, &host_info, nullptr, nullptr, nullptr};
  return &allocator;
}

Expected<DType> dtype_of_element(ONNXTensorElementDataType type) {
  auto d = dtype_from_onnx(static_cast<int32_t>(type));
  if (!d || *d == DType::kString || *d == DType::kUndefined)
    return fail(ErrorCode::kRuntime, fmt::format("element type {} is not supported by the nxrt host", static_cast<int>(type)));
  // ONNX Runtime packs them two per byte; nxrt holds one per byte, so a plugin would misread them.
  if (is_4bit(*d))
    return fail(ErrorCode::kRuntime,
                fmt::format("element type {} ({}) is not supported by the nxrt host: nxrt holds 4-bit elements one per "
                            "byte, ONNX Runtime plugins expect two per byte", static_cast<int>(type), dtype_name(*d)));
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

// Statuses
OrtStatus* CreateStatus(OrtErrorCode code, const char* msg) { return make_status(code, msg ? msg : ""); }
OrtErrorCode GetErrorCode(const OrtStatus* status) { return status ? status->code : ORT_OK; }
const char* GetErrorMessage(const OrtStatus* status) { return status ? status->message.c_str() : ""; }
void ReleaseStatus(OrtStatus* input) { delete input; }

// Values
OrtStatus* CreateTensorAsOrtValue(OrtAllocator*, const int64_t* shape, size_t shape_len,
                                  ONNXTensorElementDataType type, OrtValue** out) {
  auto dtype = dtype_of_element(type);
  if (!dtype) return invalid_argument(dtype.error().what);
  *out = new OrtValue{Tensor::empty(*dtype, Shape(shape, shape + shape_len))};
  return nullptr;
}

OrtStatus* CreateTensorWithDataAsOrtValue(const OrtMemoryInfo*, void* p_data, size_t p_data_len, const int64_t* shape,
                                          size_t shape_len, ONNXTensorElementDataType type, OrtValue** out) {
  auto dtype = dtype_of_element(type);
  if (!dtype) return invalid_argument(dtype.error().what);
  Shape dims(shape, shape + shape_len);
  const int64_t numel = shape_numel(dims);
  if (numel < 0) return invalid_argument(fmt::format("shape {} is invalid", shape_to_string(dims)));
  const size_t needed = static_cast<size_t>(numel) * dtype_size(*dtype);
  if (needed > p_data_len) return invalid_argument(fmt::format("not enough space: expected {}, got {}", needed, p_data_len));
  auto storage = std::make_shared<Storage>(p_data, p_data_len, kHostDevice, [](void*) {});
  *out = new OrtValue{Tensor(std::move(storage), *dtype, std::move(dims))};
  return nullptr;
}

OrtStatus* IsTensor(const OrtValue* value, int* out) {
  *out = value->tensor.defined() ? 1 : 0;
  return nullptr;
}

OrtStatus* HasValue(const OrtValue* value, int* out) {
  *out = value->tensor.defined() ? 1 : 0;
  return nullptr;
}

OrtStatus* GetTensorMutableData(OrtValue* value, void** out) {
  if (!value->tensor.defined()) return invalid_argument("the value holds no tensor");
  *out = value->tensor.mut().data();
  return nullptr;
}

OrtStatus* GetTensorData(const OrtValue* value, const void** out) {
  if (!value->tensor.defined()) return invalid_argument("the value holds no tensor");
  *out = value->tensor.view().data();
  return nullptr;
}

OrtStatus* GetTensorSizeInBytes(const OrtValue* value, size_t* size) {
  if (!value->tensor.defined()) return invalid_argument("the value holds no tensor");
  *size = value->tensor.nbytes();
  return nullptr;
}

OrtStatus* GetTensorMemoryInfo(const OrtValue*, const OrtMemoryInfo** mem_info) {
  *mem_info = cpu_memory_info();
  return nullptr;
}

OrtStatus* GetTensorTypeAndShape(const OrtValue* value, OrtTensorTypeAndShapeInfo** out) {
  if (!value->tensor.defined()) return invalid_argument("the value holds no tensor");
  *out = new OrtTensorTypeAndShapeInfo(shape_info_of(value->tensor));
  return nullptr;
}

OrtStatus* GetValueType(const OrtValue* value, ONNXType* out) {
  *out = value->tensor.defined() ? ONNX_TYPE_TENSOR : ONNX_TYPE_UNKNOWN;
  return nullptr;
}

void ReleaseValue(OrtValue* input) { delete input; }

// Type and shape info
OrtStatus* CastTypeInfoToTensorInfo(const OrtTypeInfo* type_info, const OrtTensorTypeAndShapeInfo** out) {
  *out = type_info->type == ONNX_TYPE_TENSOR ? &type_info->tensor : nullptr;
  return nullptr;
}

OrtStatus* GetOnnxTypeFromTypeInfo(const OrtTypeInfo* type_info, ONNXType* out) {
  *out = type_info->type;
  return nullptr;
}

OrtStatus* CreateTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo** out) {
  *out = new OrtTensorTypeAndShapeInfo();
  return nullptr;
}

OrtStatus* SetTensorElementType(OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType type) {
  info->element_type = type;
  return nullptr;
}

OrtStatus* SetDimensions(OrtTensorTypeAndShapeInfo* info, const int64_t* dim_values, size_t dim_count) {
  info->has_shape = true;
  info->dims.assign(dim_values, dim_values + dim_count);
  info->symbols.assign(dim_count, "");
  return nullptr;
}

OrtStatus* GetTensorElementType(const OrtTensorTypeAndShapeInfo* info, ONNXTensorElementDataType* out) {
  *out = info->element_type;
  return nullptr;
}

OrtStatus* GetDimensionsCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) {
  *out = info->dims.size();
  return nullptr;
}

OrtStatus* GetDimensions(const OrtTensorTypeAndShapeInfo* info, int64_t* dim_values, size_t dim_values_length) {
  for (size_t i = 0; i < dim_values_length && i < info->dims.size(); ++i) dim_values[i] = info->dims[i];
  return nullptr;
}

OrtStatus* GetSymbolicDimensions(const OrtTensorTypeAndShapeInfo* info, const char* dim_params[],
                                 size_t dim_params_length) {
  for (size_t i = 0; i < dim_params_length && i < info->symbols.size(); ++i) dim_params[i] = info->symbols[i].c_str();
  return nullptr;
}

bool TensorTypeAndShape_HasShape(const OrtTensorTypeAndShapeInfo* info) { return info->has_shape; }

OrtStatus* GetTensorShapeElementCount(const OrtTensorTypeAndShapeInfo* info, size_t* out) {
  const int64_t n = shape_numel(info->dims);
  if (n < 0) return invalid_argument("the shape has unknown dimensions");
  *out = static_cast<size_t>(n);
  return nullptr;
}

void ReleaseTypeInfo(OrtTypeInfo* input) { delete input; }
void ReleaseTensorTypeAndShapeInfo(OrtTensorTypeAndShapeInfo* input) { delete input; }

// Memory info and the default allocator
OrtStatus* CreateMemoryInfo(const char* name, OrtAllocatorType type, int id, OrtMemType mem_type, OrtMemoryInfo** out) {
  auto* info = new OrtMemoryInfo();
  info->name = name ? name : "";
  info->allocator_type = type;
  info->id = id;
  info->mem_type = mem_type;
  info->device.device_id = static_cast<uint32_t>(id);
  if (info->name != "Cpu") info->device.device_type = OrtMemoryInfoDeviceType_GPU;
  *out = info;
  return nullptr;
}

OrtStatus* CreateCpuMemoryInfo(OrtAllocatorType type, OrtMemType mem_type, OrtMemoryInfo** out) {
  *out = new OrtMemoryInfo{"Cpu", type, 0, mem_type, {}};
  return nullptr;
}

OrtStatus* CreateMemoryInfo_V2(const char* name, OrtMemoryInfoDeviceType device_type, uint32_t vendor_id,
                               int32_t device_id, OrtDeviceMemoryType mem_type, size_t, OrtAllocatorType allocator_type,
                               OrtMemoryInfo** out) {
  *out = new OrtMemoryInfo{name ? name : "", allocator_type, device_id, OrtMemTypeDefault,
                           {device_type, mem_type, vendor_id, static_cast<uint32_t>(device_id)}};
  return nullptr;
}

OrtStatus* CompareMemoryInfo(const OrtMemoryInfo* info1, const OrtMemoryInfo* info2, int* out) {
  const bool same = info1->name == info2->name && info1->id == info2->id && info1->mem_type == info2->mem_type &&
                    info1->allocator_type == info2->allocator_type && info1->device == info2->device;
  *out = same ? 0 : -1;
  return nullptr;
}

OrtStatus* MemoryInfoGetName(const OrtMemoryInfo* ptr, const char** out) {
  *out = ptr->name.c_str();
  return nullptr;
}

OrtStatus* MemoryInfoGetId(const OrtMemoryInfo* ptr, int* out) {
  *out = ptr->id;
  return nullptr;
}

OrtStatus* MemoryInfoGetMemType(const OrtMemoryInfo* ptr, OrtMemType* out) {
  *out = ptr->mem_type;
  return nullptr;
}

OrtStatus* MemoryInfoGetType(const OrtMemoryInfo* ptr, OrtAllocatorType* out) {
  *out = ptr->allocator_type;
  return nullptr;
}

void MemoryInfoGetDeviceType(const OrtMemoryInfo* ptr, OrtMemoryInfoDeviceType* out) { *out = ptr->device.device_type; }
OrtDeviceMemoryType MemoryInfoGetDeviceMemType(const OrtMemoryInfo* ptr) { return ptr->device.memory_type; }
uint32_t MemoryInfoGetVendorId(const OrtMemoryInfo* ptr) { return ptr->device.vendor_id; }

void ReleaseMemoryInfo(OrtMemoryInfo* input) {
  if (input != cpu_memory_info()) delete input;
}

OrtStatus* AllocatorAlloc(OrtAllocator* ptr, size_t size, void** out) {
  *out = ptr->Alloc(ptr, size);
  return *out || size == 0 ? nullptr : make_status(ORT_FAIL, fmt::format("allocating {} bytes failed", size));
}

OrtStatus* AllocatorFree(OrtAllocator* ptr, void* p) {
  ptr->Free(ptr, p);
  return nullptr;
}

OrtStatus* AllocatorGetInfo(const OrtAllocator* ptr, const OrtMemoryInfo** out) {
  *out = ptr->Info(ptr);
  return nullptr;
}

OrtStatus* GetAllocatorWithDefaultOptions(OrtAllocator** out) {
  *out = default_allocator();
  return nullptr;
}

// Kernel contexts
OrtStatus* KernelContext_GetInputCount(const OrtKernelContext* context, size_t* out) {
  *out = context->inputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetOutputCount(const OrtKernelContext* context, size_t* out) {
  *out = context->outputs.size();
  return nullptr;
}

OrtStatus* KernelContext_GetInput(const OrtKernelContext* context, size_t index, const OrtValue** out) {
  if (index >= context->inputs.size())
    return invalid_argument(fmt::format("input index {} is out of range: the node has {} inputs", index, context->inputs.size()));
  *out = &context->inputs[index];
  return nullptr;
}

OrtStatus* KernelContext_GetOutput(OrtKernelContext* context, size_t index, const int64_t* dim_values, size_t dim_count,
                                   OrtValue** out) {
  if (index >= context->outputs.size())
    return invalid_argument(fmt::format("output index {} is out of range: the node has {} outputs", index, context->outputs.size()));
  OrtValue& value = *context->outputs[index];
  Shape dims(dim_values, dim_values + dim_count);
  if (shape_numel(dims) < 0) return invalid_argument(fmt::format("output shape {} is invalid", shape_to_string(dims)));
  const DType dtype = value.tensor.defined() ? value.tensor.dtype() : value.declared;
  if (dtype == DType::kUndefined) return invalid_argument(fmt::format("output {} has no known element type", index));
  if (!value.tensor.defined() || value.tensor.shape() != dims) value.tensor = Tensor::empty(dtype, dims);
  *out = &value;
  return nullptr;
}

OrtStatus* KernelContext_GetAllocator(const OrtKernelContext*, const OrtMemoryInfo*, OrtAllocator** out) {
  *out = default_allocator();
  return nullptr;
}

OrtStatus* KernelContext_GetLogger(const OrtKernelContext* context, const OrtLogger** logger) {
  *logger = context->logger;
  return nullptr;
}

// Loggers
OrtStatus* Logger_LogMessage(const OrtLogger* logger, OrtLoggingLevel log_severity_level, const char* message,
                             const char*, int, const char*) {
  if (logger == nullptr) return invalid_argument("logger is null");
  if (log_severity_level >= logger->level || log_severity_level == ORT_LOGGING_LEVEL_VERBOSE)
    const_cast<OrtLogger*>(logger)->messages.emplace_back(message ? message : "");
  return nullptr;
}

OrtStatus* Logger_GetLoggingSeverityLevel(const OrtLogger* logger, OrtLoggingLevel* out) {
  *out = logger->level;
  return nullptr;
}

const char* GetBuildInfoString() { return "nxrt host for ONNX Runtime plugin EPs (ORT API 24)"; }

// Session options
OrtStatus* HasSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, int* out) {
  *out = options->config.find(config_key) ? 1 : 0;
  return nullptr;
}

OrtStatus* GetSessionConfigEntry(const OrtSessionOptions* options, const char* config_key, char* config_value,
                                 size_t* size) {
  const std::string* value = options->config.find(config_key);
  if (!value) return make_status(ORT_INVALID_ARGUMENT, fmt::format("session config entry '{}' is not set", config_key));
  return copy_out(*value, config_value, size);
}

OrtStatus* GetSessionOptionsConfigEntries(const OrtSessionOptions* options, OrtKeyValuePairs** out) {
  *out = new OrtKeyValuePairs(options->config);
  (*out)->refresh();
  return nullptr;
}

// Key-value pairs
void CreateKeyValuePairs(OrtKeyValuePairs** out) { *out = new OrtKeyValuePairs(); }

void AddKeyValuePair(OrtKeyValuePairs* kvps, const char* key, const char* value) {
  if (key && value && *key) kvps->set(key, value);
}

const char* GetKeyValue(const OrtKeyValuePairs* kvps, const char* key) {
  const std::string* v = key ? kvps->find(key) : nullptr;
  return v ? v->c_str() : nullptr;
}

void GetKeyValuePairs(const OrtKeyValuePairs* kvps, const char* const** keys, const char* const** values,
                      size_t* num_entries) {
  *keys = kvps->key_ptrs.data();
  *values = kvps->value_ptrs.data();
  *num_entries = kvps->keys.size();
}

void RemoveKeyValuePair(OrtKeyValuePairs* kvps, const char* key) {
  if (key) kvps->erase(key);
}

void ReleaseKeyValuePairs(OrtKeyValuePairs* input) { delete input; }

// Hardware and EP devices
OrtHardwareDeviceType HardwareDevice_Type(const OrtHardwareDevice* device) { return device->type; }
uint32_t HardwareDevice_VendorId(const OrtHardwareDevice* device) { return device->vendor_id; }
const char* HardwareDevice_Vendor(const OrtHardwareDevice* device) { return device->vendor.c_str(); }
uint32_t HardwareDevice_DeviceId(const OrtHardwareDevice* device) { return device->device_id; }
const OrtKeyValuePairs* HardwareDevice_Metadata(const OrtHardwareDevice* device) { return &device->metadata; }
const char* EpDevice_EpName(const OrtEpDevice* ep_device) { return ep_device->ep_name.c_str(); }
const char* EpDevice_EpVendor(const OrtEpDevice* ep_device) { return ep_device->ep_vendor.c_str(); }
const OrtKeyValuePairs* EpDevice_EpMetadata(const OrtEpDevice* ep_device) { return &ep_device->ep_metadata; }
const OrtKeyValuePairs* EpDevice_EpOptions(const OrtEpDevice* ep_device) { return &ep_device->ep_options; }
const OrtHardwareDevice* EpDevice_Device(const OrtEpDevice* ep_device) { return ep_device->device; }

const OrtMemoryInfo* EpDevice_MemoryInfo(const OrtEpDevice* ep_device, OrtDeviceMemoryType memory_type) {
  const auto& info = memory_type == OrtDeviceMemoryType_HOST_ACCESSIBLE ? ep_device->host_memory : ep_device->device_memory;
  return info ? info.get() : nullptr;
}

const OrtEpApi* GetEpApi() { return host_ep_api(); }
const OrtModelEditorApi* GetModelEditorApi() { return host_model_editor_api(); }

}  // namespace api
}  // namespace nxrt::ort_plugin
