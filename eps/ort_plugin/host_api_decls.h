// Declarations of every host function behind a slot of the ORT tables, generated from the
// slot lists so that a signature differing from the table's is a compile error.
#pragma once

#include "host_types.h"

namespace nxrt::ort_plugin {

#define NXRT_ORT_SLOT(ret, name, args) ret name args;
#define NXRT_ORT_STUB(name)
#define NXRT_ORT_EMPTY(name)
namespace api {
inline constexpr const char* kTable = "OrtApi";  // for argument errors (host_checks.h)
#include "nxrt_ort_api_slots.h"
}
namespace ep_api {
inline constexpr const char* kTable = "OrtEpApi";
#include "nxrt_ort_ep_api_slots.h"
}
namespace editor_api {
inline constexpr const char* kTable = "OrtModelEditorApi";
#include "nxrt_ort_model_editor_slots.h"
}
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
#undef NXRT_ORT_EMPTY

}  // namespace nxrt::ort_plugin
