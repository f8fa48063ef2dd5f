// OrtEpApi functions whose ORT signature returns no status, for objects the host never makes
// (sync streams, hardware devices, control-flow kernels): they answer with ORT's empty values,
// where a stub's status pointer would be read as a stream, an id or nothing at all.
#include "host_api_decls.h"

namespace nxrt::ort_plugin::ep_api {

// The host runs no streams, so no OrtSyncStream reaches a plugin: nothing to look up.
const OrtSyncStreamImpl* SyncStream_GetImpl(const OrtSyncStream*) { return nullptr; }

uint64_t SyncStream_GetSyncId(const OrtSyncStream*) { return 0; }

// 0 is ORT's answer for two streams that never synchronized.
uint64_t GetSyncIdForLastWaitOnSyncStream(const OrtSyncStream*, const OrtSyncStream*) { return 0; }

// CreateHardwareDevice is unimplemented, so the only devices a plugin holds are the host's own,
// which it must not free.
void ReleaseHardwareDevice(OrtHardwareDevice*) {}

// Releases a kernel through its own Release, as ONNX Runtime does.
void ReleaseKernelImpl(OrtKernelImpl* input) {
  if (input && input->Release) input->Release(input);
}

}  // namespace nxrt::ort_plugin::ep_api
