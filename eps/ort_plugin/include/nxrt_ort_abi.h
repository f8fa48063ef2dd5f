/* nxrt's own declarations of the ONNX Runtime plugin-EP C ABI (ORT API version 24): the
 * types, the OrtApi / OrtEpApi / OrtModelEditorApi tables and the structs a plugin library
 * fills in. Written from the facts of ORT's public headers (onnxruntime_c_api.h and
 * onnxruntime_ep_c_api.h); the slot order is ORT's, checked by nxrt_ort_abi_check.h. */
#ifndef NXRT_ORT_ABI_H
#define NXRT_ORT_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The newest OrtApi version this host declares and serves. */
#define NXRT_ORT_API_VERSION 24

typedef enum OrtErrorCode {
  ORT_OK,
  ORT_FAIL,
  ORT_INVALID_ARGUMENT,
  ORT_NO_SUCHFILE,
  ORT_NO_MODEL,
  ORT_ENGINE_ERROR,
  ORT_RUNTIME_EXCEPTION,
  ORT_INVALID_PROTOBUF,
  ORT_MODEL_LOADED,
  ORT_NOT_IMPLEMENTED,
  ORT_INVALID_GRAPH,
  ORT_EP_FAIL,
  ORT_MODEL_LOAD_CANCELED,
  ORT_MODEL_REQUIRES_COMPILATION,
  ORT_NOT_FOUND,
} OrtErrorCode;

/* Element types: the codes of ONNX's TensorProto.DataType. */
typedef enum ONNXTensorElementDataType {
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED = 0,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT = 1,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8 = 2,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8 = 3,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16 = 4,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16 = 5,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32 = 6,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64 = 7,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_STRING = 8,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL = 9,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16 = 10,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE = 11,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32 = 12,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64 = 13,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64 = 14,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128 = 15,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 = 16,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN = 17,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FNUZ = 18,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2 = 19,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2FNUZ = 20,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT4 = 21,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 = 22,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 = 23,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT2 = 24,
  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 = 25,
} ONNXTensorElementDataType;

typedef enum ONNXType {
  ONNX_TYPE_UNKNOWN,
  ONNX_TYPE_TENSOR,
  ONNX_TYPE_SEQUENCE,
  ONNX_TYPE_MAP,
  ONNX_TYPE_OPAQUE,
  ONNX_TYPE_SPARSETENSOR,
  ONNX_TYPE_OPTIONAL,
} ONNXType;

typedef enum OrtLoggingLevel {
  ORT_LOGGING_LEVEL_VERBOSE,
  ORT_LOGGING_LEVEL_INFO,
  ORT_LOGGING_LEVEL_WARNING,
  ORT_LOGGING_LEVEL_ERROR,
  ORT_LOGGING_LEVEL_FATAL,
} OrtLoggingLevel;

typedef enum OrtAllocatorType {
  OrtInvalidAllocator = -1,
  OrtDeviceAllocator = 0,
  OrtArenaAllocator = 1,
  OrtReadOnlyAllocator = 2,
} OrtAllocatorType;

typedef enum OrtMemType {
  OrtMemTypeCPUInput = -2,
  OrtMemTypeCPUOutput = -1,
  OrtMemTypeCPU = OrtMemTypeCPUOutput,
  OrtMemTypeDefault = 0,
} OrtMemType;

typedef enum OrtMemoryInfoDeviceType {
  OrtMemoryInfoDeviceType_CPU = 0,
  OrtMemoryInfoDeviceType_GPU = 1,
  OrtMemoryInfoDeviceType_FPGA = 2,
  OrtMemoryInfoDeviceType_NPU = 3,
} OrtMemoryInfoDeviceType;

typedef enum OrtDeviceMemoryType {
  OrtDeviceMemoryType_DEFAULT = 0,
  OrtDeviceMemoryType_HOST_ACCESSIBLE = 5,
} OrtDeviceMemoryType;

typedef enum OrtHardwareDeviceType {
  OrtHardwareDeviceType_CPU,
  OrtHardwareDeviceType_GPU,
  OrtHardwareDeviceType_NPU,
} OrtHardwareDeviceType;

typedef enum OrtOpAttrType {
  ORT_OP_ATTR_UNDEFINED = 0,
  ORT_OP_ATTR_INT,
  ORT_OP_ATTR_INTS,
  ORT_OP_ATTR_FLOAT,
  ORT_OP_ATTR_FLOATS,
  ORT_OP_ATTR_STRING,
  ORT_OP_ATTR_STRINGS,
  ORT_OP_ATTR_GRAPH,
  ORT_OP_ATTR_TENSOR,
} OrtOpAttrType;

typedef enum OrtEpDataLayout {
  OrtEpDataLayout_NCHW = 0,
  OrtEpDataLayout_NHWC,
  OrtEpDataLayout_Default = OrtEpDataLayout_NCHW,
} OrtEpDataLayout;

typedef enum OrtCompiledModelCompatibility {
  OrtCompiledModelCompatibility_EP_NOT_APPLICABLE = 0,
  OrtCompiledModelCompatibility_EP_SUPPORTED_OPTIMAL,
  OrtCompiledModelCompatibility_EP_SUPPORTED_PREFER_RECOMPILATION,
  OrtCompiledModelCompatibility_EP_UNSUPPORTED,
} OrtCompiledModelCompatibility;

/* Opaque handles: the host defines them, a plugin only passes pointers around. */
#define NXRT_ORT_HANDLE(X) \
  struct Ort##X;           \
  typedef struct Ort##X Ort##X
NXRT_ORT_HANDLE(Status);
NXRT_ORT_HANDLE(MemoryInfo);
NXRT_ORT_HANDLE(Value);
NXRT_ORT_HANDLE(TypeInfo);
NXRT_ORT_HANDLE(TensorTypeAndShapeInfo);
NXRT_ORT_HANDLE(KernelContext);
NXRT_ORT_HANDLE(Logger);
NXRT_ORT_HANDLE(KeyValuePairs);
NXRT_ORT_HANDLE(HardwareDevice);
NXRT_ORT_HANDLE(EpDevice);
NXRT_ORT_HANDLE(Graph);
NXRT_ORT_HANDLE(Node);
NXRT_ORT_HANDLE(ValueInfo);
NXRT_ORT_HANDLE(OpAttr);
NXRT_ORT_HANDLE(SessionOptions);
NXRT_ORT_HANDLE(RunOptions);
NXRT_ORT_HANDLE(ExternalInitializerInfo);
NXRT_ORT_HANDLE(EpGraphSupportInfo);
NXRT_ORT_HANDLE(NodeComputeContext);
NXRT_ORT_HANDLE(MemoryDevice);
NXRT_ORT_HANDLE(SyncStream);
NXRT_ORT_HANDLE(SyncStreamImpl);
NXRT_ORT_HANDLE(DataTransferImpl);
NXRT_ORT_HANDLE(KernelRegistry);
NXRT_ORT_HANDLE(KernelDefBuilder);
NXRT_ORT_HANDLE(KernelDef);
NXRT_ORT_HANDLE(KernelInfo);
NXRT_ORT_HANDLE(DataType);
NXRT_ORT_HANDLE(SharedPrePackedWeightCache);
NXRT_ORT_HANDLE(DeviceEpIncompatibilityDetails);
NXRT_ORT_HANDLE(ExternalResourceImporterImpl);
NXRT_ORT_HANDLE(CustomOpDomain);
#undef NXRT_ORT_HANDLE

typedef struct OrtEp OrtEp;
typedef struct OrtEpFactory OrtEpFactory;
typedef struct OrtApi OrtApi;
typedef struct OrtEpApi OrtEpApi;
typedef struct OrtModelEditorApi OrtModelEditorApi;

/* An allocator as of version 24: the first four members since version 1, Reserve since 18,
 * GetStats and AllocOnStream since 23; version 24 added none (Shrink came after 24, so the
 * host's allocators, which end here, say version 24). */
typedef struct OrtAllocator {
  uint32_t version;
  void* (*Alloc)(struct OrtAllocator* this_, size_t size);
  void (*Free)(struct OrtAllocator* this_, void* p);
  const OrtMemoryInfo* (*Info)(const struct OrtAllocator* this_);
  void* (*Reserve)(struct OrtAllocator* this_, size_t size);
  OrtStatus* (*GetStats)(const struct OrtAllocator* this_, OrtKeyValuePairs** out);
  void* (*AllocOnStream)(struct OrtAllocator* this_, size_t size, OrtSyncStream* stream);
} OrtAllocator;

/* Never changes shape: two pointers. */
typedef struct OrtApiBase {
  const OrtApi* (*GetApi)(uint32_t version);
  const char* (*GetVersionString)(void);
} OrtApiBase;

/* The type of a slot the host leaves unimplemented: called with whatever arguments the
 * real function takes, it ignores them and returns an ORT_NOT_IMPLEMENTED status. */
typedef OrtStatus* (*NxrtOrtUnimplemented)(void);
/* The type of an unimplemented slot whose real function returns no status: it ignores its
 * arguments and returns 0, read by the caller as NULL, 0 or nothing (x86-64 and AArch64 return
 * all three in the same register). */
typedef void* (*NxrtOrtEmpty)(void);

#define NXRT_ORT_SLOT(ret, name, args) ret(*name) args;
#define NXRT_ORT_STUB(name) NxrtOrtUnimplemented name;
#define NXRT_ORT_EMPTY(name) NxrtOrtEmpty name;

/* A kernel an EP registers (version 24): ORT creates one per node it runs with the kernel,
 * calls Compute for each run and Release when the session ends. flags is ORT's: 0. The two
 * pre-packing members are optional (NULL). */
typedef struct OrtKernelImpl {
  uint32_t ort_version_supported;
  uint32_t flags;
  OrtStatus* (*Compute)(struct OrtKernelImpl* this_ptr, OrtKernelContext* context);
  void (*Release)(struct OrtKernelImpl* this_ptr);
  OrtStatus* (*PrePackWeight)(struct OrtKernelImpl* this_ptr, const OrtValue* tensor, int input_index,
                              OrtAllocator* allocator, OrtSharedPrePackedWeightCache* prepacked_weight_cache,
                              bool* is_packed);
  OrtStatus* (*SetSharedPrePackedWeight)(struct OrtKernelImpl* this_ptr, const void* const* buffer_data_ptrs,
                                         const size_t* buffer_data_sizes, size_t num_buffers, int input_index);
} OrtKernelImpl;

/* What KernelRegistry_AddKernel stores with a kernel definition: makes the kernel for one node. */
typedef OrtStatus* (*OrtKernelCreateFunc)(void* kernel_create_func_state, const OrtKernelInfo* info,
                                          OrtKernelImpl** kernel_out);

typedef struct OrtNodeFusionOptions {
  uint32_t ort_version_supported;
  bool drop_constant_initializers;
} OrtNodeFusionOptions;

struct OrtApi {
#include "nxrt_ort_api_slots.h"
};

struct OrtEpApi {
#include "nxrt_ort_ep_api_slots.h"
};

struct OrtModelEditorApi {
#include "nxrt_ort_model_editor_slots.h"
};

#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
#undef NXRT_ORT_EMPTY

/* What a plugin returns from Compile for each fused graph. */
typedef struct OrtNodeComputeInfo {
  uint32_t ort_version_supported;
  OrtStatus* (*CreateState)(struct OrtNodeComputeInfo* this_ptr, OrtNodeComputeContext* compute_context,
                            void** compute_state);
  OrtStatus* (*Compute)(struct OrtNodeComputeInfo* this_ptr, void* compute_state, OrtKernelContext* kernel_context);
  void (*ReleaseState)(struct OrtNodeComputeInfo* this_ptr, void* compute_state);
} OrtNodeComputeInfo;

/* An execution provider instance (members after Compile/ReleaseNodeComputeInfos are
 * optional and may be NULL). A host reads a member only when the plugin's
 * ort_version_supported is at least the version that added it, so the struct must hold
 * every member up to NXRT_ORT_API_VERSION: a plugin that says 24 and ends at 23's members
 * has ORT call whatever the plugin stored after the struct. */
struct OrtEp {
  uint32_t ort_version_supported;
  const char* (*GetName)(const OrtEp* this_ptr);
  OrtStatus* (*GetCapability)(OrtEp* this_ptr, const OrtGraph* graph, OrtEpGraphSupportInfo* graph_support_info);
  OrtStatus* (*Compile)(OrtEp* this_ptr, const OrtGraph** graphs, const OrtNode** fused_nodes, size_t count,
                        OrtNodeComputeInfo** node_compute_infos, OrtNode** ep_context_nodes);
  void (*ReleaseNodeComputeInfos)(OrtEp* this_ptr, OrtNodeComputeInfo** node_compute_infos,
                                  size_t num_node_compute_infos);
  OrtStatus* (*GetPreferredDataLayout)(OrtEp* this_ptr, OrtEpDataLayout* preferred_data_layout);
  OrtStatus* (*ShouldConvertDataLayoutForOp)(OrtEp* this_ptr, const char* domain, const char* op_type,
                                             OrtEpDataLayout target_data_layout, int* should_convert);
  OrtStatus* (*SetDynamicOptions)(OrtEp* this_ptr, const char* const* option_keys,
                                  const char* const* option_values, size_t num_options);
  OrtStatus* (*OnRunStart)(OrtEp* this_ptr, const OrtRunOptions* run_options);
  OrtStatus* (*OnRunEnd)(OrtEp* this_ptr, const OrtRunOptions* run_options, bool sync_stream);
  OrtStatus* (*CreateAllocator)(OrtEp* this_ptr, const OrtMemoryInfo* memory_info, OrtAllocator** allocator);
  OrtStatus* (*CreateSyncStreamForDevice)(OrtEp* this_ptr, const OrtMemoryDevice* memory_device,
                                          OrtSyncStreamImpl** stream);
  const char* (*GetCompiledModelCompatibilityInfo)(OrtEp* this_ptr, const OrtGraph* graph);
  /* version 24 */
  OrtStatus* (*GetKernelRegistry)(OrtEp* this_ptr, const OrtKernelRegistry** kernel_registry);
  OrtStatus* (*IsConcurrentRunSupported)(OrtEp* this_ptr, bool* is_supported);
};

/* A factory of EPs; the members after ReleaseEp exist when ort_version_supported >= 23,
 * those after CreateSyncStreamForDevice when it is >= 24. ONNX Runtime calls
 * CreateDataTransfer of every factory that says 23 or newer. */
struct OrtEpFactory {
  uint32_t ort_version_supported;
  const char* (*GetName)(const OrtEpFactory* this_ptr);
  const char* (*GetVendor)(const OrtEpFactory* this_ptr);
  OrtStatus* (*GetSupportedDevices)(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* devices,
                                    size_t num_devices, OrtEpDevice** ep_devices, size_t max_ep_devices,
                                    size_t* num_ep_devices);
  OrtStatus* (*CreateEp)(OrtEpFactory* this_ptr, const OrtHardwareDevice* const* devices,
                         const OrtKeyValuePairs* const* ep_metadata_pairs, size_t num_devices,
                         const OrtSessionOptions* session_options, const OrtLogger* logger, OrtEp** ep);
  void (*ReleaseEp)(OrtEpFactory* this_ptr, OrtEp* ep);
  uint32_t (*GetVendorId)(const OrtEpFactory* this_ptr);
  const char* (*GetVersion)(const OrtEpFactory* this_ptr);
  OrtStatus* (*ValidateCompiledModelCompatibilityInfo)(OrtEpFactory* this_ptr,
                                                       const OrtHardwareDevice* const* devices, size_t num_devices,
                                                       const char* compatibility_info,
                                                       OrtCompiledModelCompatibility* model_compatibility);
  OrtStatus* (*CreateAllocator)(OrtEpFactory* this_ptr, const OrtMemoryInfo* memory_info,
                                const OrtKeyValuePairs* allocator_options, OrtAllocator** allocator);
  void (*ReleaseAllocator)(OrtEpFactory* this_ptr, OrtAllocator* allocator);
  OrtStatus* (*CreateDataTransfer)(OrtEpFactory* this_ptr, OrtDataTransferImpl** data_transfer);
  bool (*IsStreamAware)(const OrtEpFactory* this_ptr);
  OrtStatus* (*CreateSyncStreamForDevice)(OrtEpFactory* this_ptr, const OrtMemoryDevice* memory_device,
                                          const OrtKeyValuePairs* stream_options, OrtSyncStreamImpl** stream);
  /* version 24 */
  OrtStatus* (*GetHardwareDeviceIncompatibilityDetails)(OrtEpFactory* this_ptr, const OrtHardwareDevice* hw,
                                                        OrtDeviceEpIncompatibilityDetails* details);
  OrtStatus* (*CreateExternalResourceImporterForDevice)(OrtEpFactory* this_ptr, const OrtEpDevice* ep_device,
                                                        OrtExternalResourceImporterImpl** out_importer);
  OrtStatus* (*GetNumCustomOpDomains)(OrtEpFactory* this_ptr, size_t* num_domains);
  OrtStatus* (*GetCustomOpDomains)(OrtEpFactory* this_ptr, OrtCustomOpDomain** domains, size_t num_domains);
};

/* The two functions a plugin library exports. ORT offers 4 factory slots. */
typedef OrtStatus* (*NxrtCreateEpFactoriesFn)(const char* registration_name, const OrtApiBase* ort_api_base,
                                              const OrtLogger* default_logger, OrtEpFactory** factories,
                                              size_t max_factories, size_t* num_factories);
typedef OrtStatus* (*NxrtReleaseEpFactoryFn)(OrtEpFactory* factory);

/* The session option a host sets when it wants EPContext nodes back from Compile. */
#define NXRT_ORT_EP_CONTEXT_ENABLE_KEY "ep.context_enable"

#ifdef __cplusplus
}
#endif

#endif /* NXRT_ORT_ABI_H */
