/* Compile-time checks (C++) that nxrt's OrtApi table has ORT's slot positions: the index of the
 * last slot of each API version, as ORT itself asserts them. */
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
#undef NXRT_ORT_SLOT_INDEX

#endif /* NXRT_ORT_ABI_CHECK_H */
