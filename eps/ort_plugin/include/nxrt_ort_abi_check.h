/* Compile-time checks (C++) that nxrt's declarations have ORT's layout: the index of the last
 * OrtApi slot of each API version, as ORT itself asserts them, then the other tables, the
 * structs a plugin fills in and the enum values. */
#ifndef NXRT_ORT_ABI_CHECK_H
#define NXRT_ORT_ABI_CHECK_H

#include "nxrt_ort_abi.h"

#define NXRT_ORT_SLOT_INDEX(table, name) (offsetof(table, name) / sizeof(void*))
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseCustomOpDomain) == 101, "OrtApi version 1");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseModelMetadata) == 118, "OrtApi version 2");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, AddFreeDimensionOverrideByName) == 124, "OrtApi version 3");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseAvailableProviders) == 126, "OrtApi version 4");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, SetGlobalSpinControl) == 149, "OrtApi version 5");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseArenaCfg) == 157, "OrtApi version 6");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetCurrentGpuDeviceId) == 161, "OrtApi version 7");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, CreateSessionFromArrayWithPrepackedWeightsContainer) == 169, "OrtApi version 8");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetSparseTensorIndices) == 191, "OrtApi version 9");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, SynchronizeBoundOutputs) == 203, "OrtApi version 10");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, SessionOptionsAppendExecutionProvider_MIGraphX) == 209, "OrtApi version 11");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseKernelInfo) == 218, "OrtApi version 12");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, ReleaseCANNProviderOptions) == 224, "OrtApi version 13");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetSessionConfigEntry) == 238, "OrtApi version 14");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetBuildInfoString) == 254, "OrtApi version 15");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, KernelContext_GetResource) == 265, "OrtApi version 16");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, SessionOptionsAppendExecutionProvider_OpenVINO_V2) == 275, "OrtApi version 17");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, AddExternalInitializersFromFilesInMemory) == 279, "OrtApi version 18");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, SetEpDynamicOptions) == 284, "OrtApi version 20");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetEpApi) == 317, "OrtApi version 22");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, CreateExternalInitializerInfo) == 389, "OrtApi version 23");
/* Version 24 as ONNX Runtime 1.24.3's header lays it out (its size is 415 pointers): two
 * compatibility-info slots come before CreateEnvWithOptions, and the table ends with
 * GetTensorElementTypeAndShapeDataReference. */
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetInteropApi) == 395, "OrtApi GetInteropApi");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetCompatibilityInfoFromModel) == 404, "OrtApi GetCompatibilityInfoFromModel");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, CreateEnvWithOptions) == 406, "OrtApi CreateEnvWithOptions");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, Session_GetEpGraphAssignmentInfo) == 407, "OrtApi Session_GetEpGraphAssignmentInfo");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, RunOptionsSetSyncStream) == 413, "OrtApi RunOptionsSetSyncStream");
static_assert(NXRT_ORT_SLOT_INDEX(OrtApi, GetTensorElementTypeAndShapeDataReference) == 414, "OrtApi version 24");
static_assert(sizeof(OrtApi) == 415 * sizeof(void*), "OrtApi ends with version 24");
static_assert(sizeof(OrtApiBase) == 2 * sizeof(void*), "OrtApiBase never changes");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, GetSyncIdForLastWaitOnSyncStream) == 15, "OrtEpApi version 23");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, GetEnvConfigEntries) == 49, "OrtEpApi version 24");
static_assert(sizeof(OrtEpApi) == 50 * sizeof(void*), "OrtEpApi ends with version 24");
static_assert(NXRT_ORT_SLOT_INDEX(OrtModelEditorApi, CreateNode) == 6, "OrtModelEditorApi CreateNode");
static_assert(offsetof(OrtEp, Compile) == 3 * sizeof(void*), "OrtEp::Compile");
static_assert(offsetof(OrtEpFactory, ReleaseEp) == 5 * sizeof(void*), "OrtEpFactory::ReleaseEp");
/* The structs a plugin fills in end with the members of NXRT_ORT_API_VERSION (24). */
static_assert(offsetof(OrtEp, GetKernelRegistry) == 13 * sizeof(void*), "OrtEp version 24");
static_assert(sizeof(OrtEp) == 15 * sizeof(void*), "OrtEp ends with version 24");
static_assert(offsetof(OrtEpFactory, CreateDataTransfer) == 11 * sizeof(void*), "OrtEpFactory::CreateDataTransfer");
static_assert(offsetof(OrtEpFactory, GetHardwareDeviceIncompatibilityDetails) == 14 * sizeof(void*),
              "OrtEpFactory version 24");
static_assert(sizeof(OrtEpFactory) == 18 * sizeof(void*), "OrtEpFactory ends with version 24");
/* OrtKernelImpl (version 24): two uint32 members, then function pointers; the kernel-registry
 * slots of OrtEpApi where ORT 1.24 put them. */
static_assert(offsetof(OrtKernelImpl, Compute) == 8, "OrtKernelImpl::Compute");
static_assert(offsetof(OrtKernelImpl, SetSharedPrePackedWeight) == 8 + 3 * sizeof(void*), "OrtKernelImpl version 24");
static_assert(sizeof(OrtKernelImpl) == 8 + 4 * sizeof(void*), "OrtKernelImpl ends with version 24");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, CreateKernelRegistry) == 18, "OrtEpApi::CreateKernelRegistry");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, EpGraphSupportInfo_LookUpKernel) == 41, "OrtEpApi::EpGraphSupportInfo_LookUpKernel");
/* The other tables and structs, member by member where a plugin reads or fills them, at the
 * positions of ORT 1.24's onnxruntime_c_api.h and onnxruntime_ep_c_api.h (ORT_API_VERSION 24). */
#define NXRT_ORT_MEMBER_INDEX(type, name) ((offsetof(type, name) - sizeof(void*)) / sizeof(void*))
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, ReleaseEpDevice) == 1, "OrtEpApi version 22");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, EpGraphSupportInfo_AddNodesToFuse) == 2, "OrtEpApi::EpGraphSupportInfo_AddNodesToFuse");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, MemoryInfo_GetMemoryDevice) == 6, "OrtEpApi::MemoryInfo_GetMemoryDevice");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, MemoryDevice_GetDeviceId) == 12, "OrtEpApi::MemoryDevice_GetDeviceId");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, SyncStream_GetImpl) == 13, "OrtEpApi::SyncStream_GetImpl");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, CreateHardwareDevice) == 16, "OrtEpApi::CreateHardwareDevice");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, KernelDefBuilder_Build) == 32, "OrtEpApi::KernelDefBuilder_Build");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, GetTensorDataType) == 40, "OrtEpApi::GetTensorDataType");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, KernelInfo_GetEp) == 43, "OrtEpApi::KernelInfo_GetEp");
static_assert(NXRT_ORT_SLOT_INDEX(OrtEpApi, ReleaseKernelImpl) == 48, "OrtEpApi::ReleaseKernelImpl");
static_assert(NXRT_ORT_SLOT_INDEX(OrtModelEditorApi, FinalizeModelEditorSession) == 19, "OrtModelEditorApi version 22");
static_assert(sizeof(OrtModelEditorApi) == 20 * sizeof(void*), "OrtModelEditorApi is unchanged through version 24");
/* OrtEp and OrtEpFactory: ort_version_supported, then function pointers (index 0 is GetName). */
static_assert(NXRT_ORT_MEMBER_INDEX(OrtEp, GetName) == 0 && NXRT_ORT_MEMBER_INDEX(OrtEp, GetCapability) == 1 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, ReleaseNodeComputeInfos) == 3 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, GetPreferredDataLayout) == 4 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, ShouldConvertDataLayoutForOp) == 5 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, SetDynamicOptions) == 6 && NXRT_ORT_MEMBER_INDEX(OrtEp, OnRunStart) == 7 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, OnRunEnd) == 8 && NXRT_ORT_MEMBER_INDEX(OrtEp, CreateAllocator) == 9 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, CreateSyncStreamForDevice) == 10 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, GetCompiledModelCompatibilityInfo) == 11 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEp, IsConcurrentRunSupported) == 13,
              "OrtEp members in ORT's order");
static_assert(NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetVendor) == 1 && NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetSupportedDevices) == 2 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, CreateEp) == 3 && NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetVendorId) == 5 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetVersion) == 6 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, ValidateCompiledModelCompatibilityInfo) == 7 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, CreateAllocator) == 8 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, ReleaseAllocator) == 9 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, IsStreamAware) == 11 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, CreateSyncStreamForDevice) == 12 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, CreateExternalResourceImporterForDevice) == 14 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetNumCustomOpDomains) == 15 &&
                  NXRT_ORT_MEMBER_INDEX(OrtEpFactory, GetCustomOpDomains) == 16,
              "OrtEpFactory members in ORT's order");
static_assert(NXRT_ORT_MEMBER_INDEX(OrtNodeComputeInfo, CreateState) == 0 && NXRT_ORT_MEMBER_INDEX(OrtNodeComputeInfo, Compute) == 1 &&
                  NXRT_ORT_MEMBER_INDEX(OrtNodeComputeInfo, ReleaseState) == 2 && sizeof(OrtNodeComputeInfo) == 4 * sizeof(void*),
              "OrtNodeComputeInfo (version 23, unchanged in 24)");
static_assert(offsetof(OrtNodeFusionOptions, drop_constant_initializers) == 4 && sizeof(OrtNodeFusionOptions) == 8,
              "OrtNodeFusionOptions (version 23, unchanged in 24)");
static_assert(offsetof(OrtKernelImpl, flags) == 4 && offsetof(OrtKernelImpl, Release) == 8 + sizeof(void*) &&
                  offsetof(OrtKernelImpl, PrePackWeight) == 8 + 2 * sizeof(void*),
              "OrtKernelImpl members in ORT's order");
static_assert(NXRT_ORT_MEMBER_INDEX(OrtAllocator, Alloc) == 0 && NXRT_ORT_MEMBER_INDEX(OrtAllocator, Free) == 1 &&
                  NXRT_ORT_MEMBER_INDEX(OrtAllocator, Info) == 2 && NXRT_ORT_MEMBER_INDEX(OrtAllocator, Reserve) == 3 &&
                  NXRT_ORT_MEMBER_INDEX(OrtAllocator, GetStats) == 4 && NXRT_ORT_MEMBER_INDEX(OrtAllocator, AllocOnStream) == 5,
              "OrtAllocator members in ORT's order");
static_assert(sizeof(OrtAllocator) == 7 * sizeof(void*), "OrtAllocator ends with AllocOnStream in version 24");
#undef NXRT_ORT_MEMBER_INDEX
/* Enum values a plugin and the host exchange (ORT 1.24). */
static_assert(ORT_EP_FAIL == 11 && ORT_MODEL_REQUIRES_COMPILATION == 13 && ORT_NOT_FOUND == 14, "OrtErrorCode");
static_assert(ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16 == 16 && ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4 == 22 &&
                  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT4E2M1 == 23 && ONNX_TENSOR_ELEMENT_DATA_TYPE_INT2 == 25,
              "ONNXTensorElementDataType");
static_assert(ONNX_TYPE_SPARSETENSOR == 5 && ONNX_TYPE_OPTIONAL == 6, "ONNXType");
static_assert(ORT_LOGGING_LEVEL_VERBOSE == 0 && ORT_LOGGING_LEVEL_FATAL == 4, "OrtLoggingLevel");
static_assert(OrtInvalidAllocator == -1 && OrtReadOnlyAllocator == 2, "OrtAllocatorType");
static_assert(OrtMemTypeCPUInput == -2 && OrtMemTypeCPU == -1 && OrtMemTypeDefault == 0, "OrtMemType");
static_assert(OrtMemoryInfoDeviceType_NPU == 3, "OrtMemoryInfoDeviceType");
static_assert(OrtDeviceMemoryType_HOST_ACCESSIBLE == 5, "OrtDeviceMemoryType");
static_assert(OrtHardwareDeviceType_CPU == 0 && OrtHardwareDeviceType_NPU == 2, "OrtHardwareDeviceType");
static_assert(ORT_OP_ATTR_INT == 1 && ORT_OP_ATTR_TENSOR == 8, "OrtOpAttrType");
static_assert(OrtEpDataLayout_NHWC == 1 && OrtEpDataLayout_Default == OrtEpDataLayout_NCHW, "OrtEpDataLayout");
static_assert(OrtCompiledModelCompatibility_EP_UNSUPPORTED == 3, "OrtCompiledModelCompatibility");
#undef NXRT_ORT_SLOT_INDEX

#endif /* NXRT_ORT_ABI_CHECK_H */
