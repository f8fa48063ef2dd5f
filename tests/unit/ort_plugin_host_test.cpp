// The host's ORT function tables: no slot is NULL, unimplemented slots name themselves,
// GetApi refuses newer versions, graph views answer the graph-reading functions, and every
// implemented slot survives the NULL and wrong-kind arguments of a faulty plugin.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <type_traits>

#include "host_api_decls.h"
#include "host_checks.h"
#include "host_types.h"
#include "nxrt/model/model.h"

namespace {

using nxrt::ort_plugin::api_base;
using nxrt::ort_plugin::host_api;
using nxrt::ort_plugin::take_status;

}  // namespace

TEST_CASE("every OrtApi and OrtEpApi slot up to version 24 is set", "[ort_plugin]") {
  const auto* slots = reinterpret_cast<void* const*>(host_api());
  for (std::size_t i = 0; i < sizeof(OrtApi) / sizeof(void*); ++i) CHECK(slots[i] != nullptr);
  const auto* ep_slots = reinterpret_cast<void* const*>(host_api()->GetEpApi());
  for (std::size_t i = 0; i < sizeof(OrtEpApi) / sizeof(void*); ++i) CHECK(ep_slots[i] != nullptr);
}

TEST_CASE("an unimplemented slot returns a status naming the function", "[ort_plugin]") {
  // Called the way a plugin would, with CreateEnv's real arguments.
  auto create_env = reinterpret_cast<OrtStatus* (*)(int, const char*, void**)>(
      reinterpret_cast<void (*)()>(host_api()->CreateEnv));
  void* env = nullptr;
  OrtStatus* s = create_env(0, "x", &env);
  REQUIRE(s != nullptr);
  CHECK(host_api()->GetErrorCode(s) == ORT_NOT_IMPLEMENTED);
  CHECK(take_status(s) == "OrtApi::CreateEnv is not implemented by the nxrt host");
  CHECK(env == nullptr);
}

TEST_CASE("GetApi serves versions 1 to 24 only", "[ort_plugin]") {
  CHECK(api_base()->GetApi(1) == host_api());
  CHECK(api_base()->GetApi(24) == host_api());
  CHECK(api_base()->GetApi(25) == nullptr);
  CHECK(nxrt::ort_plugin::take_requested_api_version() == 25);
  CHECK(std::string(api_base()->GetVersionString()) == "1.24.0");
}

TEST_CASE("a graph view answers Graph_, Node_ and ValueInfo_ functions", "[ort_plugin]") {
  auto model = nxrt::load_model(std::filesystem::path(NXRT_SOURCE_DIR) / "testdata/mlp/model.onnx");
  REQUIRE(model);
  const nxrt::Graph& graph = *model->graph;
  auto view = nxrt::ort_plugin::make_graph_view(graph, graph.model_path.string(), graph.ir_version);
  const OrtApi* api = host_api();
  const char* path = nullptr;
  REQUIRE(api->Graph_GetModelPath(view.get(), &path) == nullptr);
  CHECK(std::filesystem::path(path).filename() == "model.onnx");
  int64_t ir = 0;
  REQUIRE(api->Graph_GetOnnxIRVersion(view.get(), &ir) == nullptr);
  CHECK(ir == model->ir_version);
  size_t n = 0;
  REQUIRE(api->Graph_GetNumNodes(view.get(), &n) == nullptr);
  REQUIRE(n == graph.nodes.size());
  std::vector<const OrtNode*> nodes(n);
  REQUIRE(api->Graph_GetNodes(view.get(), nodes.data(), n) == nullptr);
  const char* op = nullptr;
  REQUIRE(api->Node_GetOperatorType(nodes[0], &op) == nullptr);
  CHECK(std::string(op) == graph.nodes[0].op_type);
  const OrtValueInfo* out = nullptr;
  REQUIRE(api->Node_GetOutputs(nodes[0], &out, 1) == nullptr);
  size_t consumers = 0;
  REQUIRE(api->ValueInfo_GetValueNumConsumers(out, &consumers) == nullptr);
  CHECK(consumers == graph.value(graph.nodes[0].outputs[0]).consumers.size());
  std::vector<const OrtNode*> too_few(0);
  OrtStatus* s = api->Graph_GetNodes(view.get(), too_few.data(), 0);
  REQUIRE(s != nullptr);
  CHECK(take_status(s).find("too small") != std::string::npos);
}

namespace {

// Every host function called the way a faulty plugin would: with all arguments NULL or zero, and
// with each host handle replaced by a handle of another kind (other pointers get zeroed storage).
// A status-returning function must refuse with a message naming its table, itself and the
// argument; the others must return without crashing or freeing what they were handed.
alignas(64) unsigned char g_zeros[4096];
OrtLogger g_logger_handle;
OrtStatus g_status_handle;

template <class T>
T wrong_kind_or_storage() {
  if constexpr (!std::is_pointer_v<T>) {
    return T{};
  } else {
    using Pointee = std::remove_cv_t<std::remove_pointer_t<T>>;
    if constexpr (nxrt::ort_plugin::HostHandle<Pointee>) {
      if constexpr (std::is_same_v<Pointee, OrtLogger>) return reinterpret_cast<T>(&g_status_handle);
      else return reinterpret_cast<T>(&g_logger_handle);
    } else {
      std::memset(g_zeros, 0, sizeof g_zeros);
      return reinterpret_cast<T>(g_zeros);
    }
  }
}

template <class T>
constexpr bool is_handle_pointer() {
  if constexpr (std::is_pointer_v<T>) return nxrt::ort_plugin::HostHandle<std::remove_cv_t<std::remove_pointer_t<T>>>;
  else return false;
}

template <class R, class... A>
void call_as_a_faulty_plugin(R (*f)(A...), const std::string& table, const std::string& name) {
  INFO(table << "::" << name);
  const std::string prefix = table + "::" + name + ": ";
  if constexpr (std::is_same_v<R, OrtStatus*>) {
    if (name != "CreateStatus") {
      OrtStatus* s = f(A{}...);
      REQUIRE(s != nullptr);
      CHECK(host_api()->GetErrorCode(s) == ORT_INVALID_ARGUMENT);
      CHECK_THAT(take_status(s), Catch::StartsWith(prefix + "argument '") && Catch::EndsWith("' is NULL"));
    }
    if constexpr ((is_handle_pointer<A>() || ...)) {
      OrtStatus* s = f(wrong_kind_or_storage<A>()...);
      REQUIRE(s != nullptr);
      CHECK_THAT(take_status(s), Catch::StartsWith(prefix + "argument '") && Catch::Contains(", not an Ort"));
    }
  } else if constexpr ((is_handle_pointer<A>() || ...) || sizeof...(A) == 0) {
    (void)f(A{}...);
    (void)f(wrong_kind_or_storage<A>()...);
  } else {
    (void)f(A{}...);
  }
  CHECK(g_logger_handle.handle_kind == nxrt::ort_plugin::HandleKind::kLogger);
  CHECK(g_status_handle.handle_kind == nxrt::ort_plugin::HandleKind::kStatus);
}

}  // namespace

TEST_CASE("every host function refuses NULL and wrong-kind arguments without crashing", "[ort_plugin]") {
  namespace host = nxrt::ort_plugin;
#define NXRT_ORT_STUB(name)
#define NXRT_ORT_SLOT(ret, name, args) call_as_a_faulty_plugin(&host::api::name, "OrtApi", #name);
#include "nxrt_ort_api_slots.h"
#undef NXRT_ORT_SLOT
#define NXRT_ORT_SLOT(ret, name, args) call_as_a_faulty_plugin(&host::ep_api::name, "OrtEpApi", #name);
#include "nxrt_ort_ep_api_slots.h"
#undef NXRT_ORT_SLOT
#define NXRT_ORT_SLOT(ret, name, args) call_as_a_faulty_plugin(&host::editor_api::name, "OrtModelEditorApi", #name);
#include "nxrt_ort_model_editor_slots.h"
#undef NXRT_ORT_SLOT
#undef NXRT_ORT_STUB
}
