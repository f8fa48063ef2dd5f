// The libonnx version, for nxrt --version.
#include <onnx/common/version.h>

#include "nxrt/version.h"

namespace nxrt {
const char* onnx_library_version() { return onnx::LAST_RELEASE_VERSION; }
}  // namespace nxrt
