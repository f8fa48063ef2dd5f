// The OrtApiBase, OrtApi, OrtEpApi and OrtModelEditorApi tables the host hands to plugins:
// implemented slots point at the host's functions, every other slot at a function that
// returns ORT_NOT_IMPLEMENTED naming the slot (never a null pointer).
#include <fmt/format.h>

#include <atomic>
#include <cstddef>

#include "host_api_decls.h"
#include "nxrt_ort_abi_check.h"

namespace nxrt::ort_plugin {
namespace {

#define NXRT_ORT_SLOT(ret, name, args) #name,
#define NXRT_ORT_STUB(name) #name,
#define NXRT_ORT_EMPTY(name) #name,
// Plain arrays: std::array's deduction guide is a fold over every element, past clang's
// default nesting limit for the 400-odd OrtApi slots.
constexpr const char* kApiNames[] = {
#include "nxrt_ort_api_slots.h"
};
constexpr const char* kEpApiNames[] = {
#include "nxrt_ort_ep_api_slots.h"
};
constexpr const char* kEditorApiNames[] = {
#include "nxrt_ort_model_editor_slots.h"
};
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
#undef NXRT_ORT_EMPTY

enum class Table { kApi, kEpApi, kEditorApi };

template <Table T, std::size_t Slot>
OrtStatus* unimplemented() {
  if constexpr (T == Table::kApi)
    return make_status(ORT_NOT_IMPLEMENTED, fmt::format("OrtApi::{} is not implemented by the nxrt host", kApiNames[Slot]));
  else if constexpr (T == Table::kEpApi)
    return make_status(ORT_NOT_IMPLEMENTED, fmt::format("OrtEpApi::{} is not implemented by the nxrt host", kEpApiNames[Slot]));
  else
    return make_status(ORT_NOT_IMPLEMENTED,
                       fmt::format("OrtModelEditorApi::{} is not implemented by the nxrt host", kEditorApiNames[Slot]));
}

// ORT's answer where it has no such object or table: NULL, 0 or nothing (see NxrtOrtEmpty).
void* empty_answer() { return nullptr; }

#define NXRT_SLOT_INDEX(table, name) (offsetof(table, name) / sizeof(void*))

OrtApi build_api() {
  OrtApi t{};
#define NXRT_ORT_SLOT(ret, name, args) t.name = &api::name;
#define NXRT_ORT_STUB(name) t.name = &unimplemented<Table::kApi, NXRT_SLOT_INDEX(OrtApi, name)>;
#define NXRT_ORT_EMPTY(name) t.name = &empty_answer;
#include "nxrt_ort_api_slots.h"
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
#undef NXRT_ORT_EMPTY
  return t;
}

OrtEpApi build_ep_api() {
  OrtEpApi t{};
#define NXRT_ORT_SLOT(ret, name, args) t.name = &ep_api::name;
#define NXRT_ORT_STUB(name) t.name = &unimplemented<Table::kEpApi, NXRT_SLOT_INDEX(OrtEpApi, name)>;
#include "nxrt_ort_ep_api_slots.h"
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
  return t;
}

OrtModelEditorApi build_editor_api() {
  OrtModelEditorApi t{};
#define NXRT_ORT_SLOT(ret, name, args) t.name = &editor_api::name;
#define NXRT_ORT_STUB(name) t.name = &unimplemented<Table::kEditorApi, NXRT_SLOT_INDEX(OrtModelEditorApi, name)>;
#include "nxrt_ort_model_editor_slots.h"
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
  return t;
}

const OrtApi kApi = build_api();
const OrtEpApi kEpApi = build_ep_api();
const OrtModelEditorApi kEditorApi = build_editor_api();

std::atomic<uint32_t> g_requested_version{0};

const OrtApi* get_api(uint32_t version) {
  uint32_t seen = g_requested_version.load();
  while (version > seen && !g_requested_version.compare_exchange_weak(seen, version)) {
  }
  return version >= 1 && version <= NXRT_ORT_API_VERSION ? &kApi : nullptr;
}

// The ONNX Runtime release whose API version (24) this host serves; plugins may log it.
const char* version_string() { return "1.24.0"; }

const OrtApiBase kApiBase{&get_api, &version_string};

}  // namespace

const OrtApiBase* api_base() { return &kApiBase; }
const OrtApi* host_api() { return &kApi; }
const OrtEpApi* host_ep_api() { return &kEpApi; }
const OrtModelEditorApi* host_model_editor_api() { return &kEditorApi; }
uint32_t take_requested_api_version() { return g_requested_version.exchange(0); }

}  // namespace nxrt::ort_plugin
