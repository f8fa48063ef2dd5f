// The host's ORT function tables: no slot is NULL, unimplemented slots name themselves,
// GetApi refuses newer versions, graph views answer the graph-reading functions, and every
// implemented slot survives the NULL and wrong-kind arguments of a faulty plugin.
#include <catch2/catch.hpp>

#include <climits>
#include <cstring>
#include <filesystem>
#include <type_traits>

#include "host_api_decls.h"
#include "host_checks.h"
#include "host_types.h"
#include "kernel_match.h"
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

TEST_CASE("an unimplemented slot that returns no status answers NULL or nothing", "[ort_plugin]") {
  // Where a status would be read as a table pointer, a string or a count: ORT's own answer for
  // a table or object it does not have.
  CHECK(host_api()->GetCompileApi() == nullptr);
  CHECK(host_api()->GetTrainingApi() == nullptr);
  CHECK(host_api()->GetInteropApi() == nullptr);
  auto get_run_config_entry = reinterpret_cast<const char* (*)(const void*, const char*)>(
      reinterpret_cast<void (*)()>(host_api()->GetRunConfigEntry));
  CHECK(get_run_config_entry(nullptr, "key") == nullptr);
  auto release_env = reinterpret_cast<void (*)(void*)>(reinterpret_cast<void (*)()>(host_api()->ReleaseEnv));
  release_env(nullptr);
}

TEST_CASE("the end of version 24 is laid out as in ONNX Runtime 1.24's header", "[ort_plugin]") {
  // Slots 404 and 405 sit between ReleaseDeviceEpIncompatibilityDetails and CreateEnvWithOptions.
  const auto* slots = reinterpret_cast<void* const*>(host_api());
  auto from_model = reinterpret_cast<OrtStatus* (*)()>(slots[404]);
  CHECK(take_status(from_model()) == "OrtApi::GetCompatibilityInfoFromModel is not implemented by the nxrt host");
  auto from_bytes = reinterpret_cast<OrtStatus* (*)()>(slots[405]);
  CHECK(take_status(from_bytes()) == "OrtApi::GetCompatibilityInfoFromModelBytes is not implemented by the nxrt host");

  // The last slot reads a tensor's type and dims without an info object to release.
  const int64_t shape[] = {2, 3};
  OrtAllocator* allocator = nullptr;
  REQUIRE(host_api()->GetAllocatorWithDefaultOptions(&allocator) == nullptr);
  OrtValue* value = nullptr;
  REQUIRE(host_api()->CreateTensorAsOrtValue(allocator, shape, 2, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &value) ==
          nullptr);
  auto read = reinterpret_cast<decltype(host_api()->GetTensorElementTypeAndShapeDataReference)>(slots[414]);
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  const int64_t* dims = nullptr;
  std::size_t rank = 0;
  REQUIRE(read(value, &type, &dims, &rank) == nullptr);
  CHECK(type == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT);
  REQUIRE(rank == 2);
  CHECK(dims[0] == 2);
  CHECK(dims[1] == 3);
  CHECK(take_status(read(value, &type, nullptr, &rank)).find("GetTensorElementTypeAndShapeDataReference") !=
        std::string::npos);
  host_api()->ReleaseValue(value);
}

namespace {

int g_kernel_releases = 0;
void count_release(OrtKernelImpl*) { ++g_kernel_releases; }

}  // namespace

TEST_CASE("OrtEpApi slots that return no status answer with ORT's empty values", "[ort_plugin]") {
  // A stub's status pointer would reach the plugin as a stream implementation or a sync id.
  const OrtEpApi* ep_api = host_api()->GetEpApi();
  alignas(64) unsigned char stream_storage[64] = {};
  const auto* stream = reinterpret_cast<const OrtSyncStream*>(stream_storage);
  CHECK(ep_api->SyncStream_GetImpl(stream) == nullptr);
  CHECK(ep_api->SyncStream_GetSyncId(stream) == 0);
  CHECK(ep_api->GetSyncIdForLastWaitOnSyncStream(stream, stream) == 0);
  ep_api->ReleaseHardwareDevice(nullptr);
  OrtKernelImpl kernel{};
  kernel.Release = &count_release;
  ep_api->ReleaseKernelImpl(&kernel);
  ep_api->ReleaseKernelImpl(nullptr);
  CHECK(g_kernel_releases == 1);
}

TEST_CASE("GetApi serves versions 1 to 24 only", "[ort_plugin]") {
  CHECK(api_base()->GetApi(1) == host_api());
  CHECK(api_base()->GetApi(24) == host_api());
  CHECK(api_base()->GetApi(25) == nullptr);
  CHECK(nxrt::ort_plugin::take_requested_api_version() == 25);
  CHECK(std::string(api_base()->GetVersionString()) == "1.24.0");
}

TEST_CASE("the host refuses to create int4 tensors, which plugins expect packed", "[ort_plugin][int4]") {
  const int64_t shape[] = {4};
  OrtAllocator* allocator = nullptr;
  REQUIRE(host_api()->GetAllocatorWithDefaultOptions(&allocator) == nullptr);
  OrtValue* value = nullptr;
  OrtStatus* s = host_api()->CreateTensorAsOrtValue(allocator, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, &value);
  REQUIRE(s != nullptr);
  CHECK(take_status(s) ==
        "OrtApi::CreateTensorAsOrtValue: element type 22 (int4) is not supported by the nxrt host: "
        "nxrt holds 4-bit elements one per "
        "byte, ONNX Runtime plugins expect 2 per byte");
  CHECK(value == nullptr);
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
#define NXRT_ORT_EMPTY(name)
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
#undef NXRT_ORT_EMPTY
}

namespace {

// A kernel definition built through the OrtEpApi functions a plugin calls.
OrtKernelDef* build_kernel_def(const char* op, int first, int last, const char* ep, ONNXTensorElementDataType type) {
  const OrtEpApi* ep_api = host_api()->GetEpApi();
  OrtKernelDefBuilder* builder = nullptr;
  OrtKernelDef* def = nullptr;
  const OrtDataType* data_type = nullptr;
  REQUIRE(ep_api->CreateKernelDefBuilder(&builder) == nullptr);
  REQUIRE(ep_api->GetTensorDataType(type, &data_type) == nullptr);
  REQUIRE(ep_api->KernelDefBuilder_SetOperatorType(builder, op) == nullptr);
  REQUIRE(ep_api->KernelDefBuilder_SetSinceVersion(builder, first, last) == nullptr);
  REQUIRE(ep_api->KernelDefBuilder_SetExecutionProvider(builder, ep) == nullptr);
  REQUIRE(ep_api->KernelDefBuilder_AddTypeConstraint(builder, "T", &data_type, 1) == nullptr);
  REQUIRE(ep_api->KernelDefBuilder_Build(builder, &def) == nullptr);
  ep_api->ReleaseKernelDefBuilder(builder);
  return def;
}

OrtStatus* create_nothing(void*, const OrtKernelInfo*, OrtKernelImpl** out) {
  *out = nullptr;
  return nullptr;
}

}  // namespace

TEST_CASE("kernel lookup follows ONNX Runtime's version rule, EP name and type constraints", "[ort_plugin]") {
  const OrtEpApi* ep_api = host_api()->GetEpApi();
  nxrt::Node neg;
  neg.op_type = "Neg";
  neg.opset = 17;
  OrtValueInfo x, y;
  x.type.type = y.type.type = ONNX_TYPE_TENSOR;
  x.type.tensor.element_type = y.type.tensor.element_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT;
  OrtNode node;
  node.node = &neg;
  node.name = "neg";
  node.op_type = "Neg";
  node.since_version = 13;
  node.inputs = {&x};
  node.outputs = {&y};

  auto lookup = [&](OrtKernelDef* def) {
    OrtKernelRegistry* registry = nullptr;
    REQUIRE(ep_api->CreateKernelRegistry(&registry) == nullptr);
    REQUIRE(ep_api->KernelRegistry_AddKernel(registry, def, &create_nothing, nullptr) == nullptr);
    ep_api->ReleaseKernelDef(def);
    auto found = nxrt::ort_plugin::find_kernel(registry, node, "ep");
    const bool matched = found.kernel != nullptr;
    ep_api->ReleaseKernelRegistry(registry);
    return std::pair(matched, found.why_none);
  };
  CHECK(lookup(build_kernel_def("Neg", 13, 13, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).first);
  CHECK(lookup(build_kernel_def("Neg", 6, 13, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).first);
  CHECK(lookup(build_kernel_def("Neg", 6, 12, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).second ==
        "no kernel in its kernel registry runs ai.onnx::Neg version 13: ai.onnx::Neg 6-12 on ep [T: float] (version 13 "
        "is outside 6-12)");
  CHECK_THAT(lookup(build_kernel_def("Neg", 6, INT_MAX, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).second,
             Catch::Contains("(version 13 is not its start version 6 (an open-ended range matches its start only))"));
  CHECK_THAT(lookup(build_kernel_def("Neg", 13, 13, "other", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).second,
             Catch::Contains("(it is registered for EP 'other', not 'ep')"));
  CHECK_THAT(lookup(build_kernel_def("Neg", 13, 13, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE)).second,
             Catch::Contains("(its type constraint T does not allow float)"));
  CHECK(lookup(build_kernel_def("Abs", 13, 13, "ep", ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT)).second ==
        "its kernel registry has no kernel for ai.onnx::Neg (it has 1 kernel: ai.onnx::Abs)");

  OrtKernelDefBuilder* builder = nullptr;
  OrtKernelDef* def = nullptr;
  REQUIRE(ep_api->CreateKernelDefBuilder(&builder) == nullptr);
  CHECK(take_status(ep_api->KernelDefBuilder_SetSinceVersion(builder, 13, 6)) ==
        "OrtEpApi::KernelDefBuilder_SetSinceVersion: versions 13 to 6 are not a range (start at least 1, end at least start)");
  CHECK(take_status(ep_api->KernelDefBuilder_Build(builder, &def)) ==
        "OrtEpApi::KernelDefBuilder_Build: the kernel definition lacks an operator type (KernelDefBuilder_SetOperatorType), "
        "a version range (KernelDefBuilder_SetSinceVersion), an execution provider "
        "(KernelDefBuilder_SetExecutionProvider)");
  ep_api->ReleaseKernelDefBuilder(builder);
}

TEST_CASE("KernelInfo functions read the kernel's node, strings ORT style", "[ort_plugin]") {
  OrtNode node;
  node.name = "neg";
  node.op_type = "Neg";
  node.since_version = 13;
  OrtKernelInfo info;
  info.node = &node;
  const OrtApi* api = host_api();
  size_t size = 0;
  REQUIRE(api->KernelInfo_GetNodeName(&info, nullptr, &size) == nullptr);
  CHECK(size == 4);
  char small[2];
  size = sizeof small;
  CHECK(take_status(api->KernelInfo_GetNodeName(&info, small, &size)) ==
        "OrtApi::KernelInfo_GetNodeName: buffer of 2 bytes is too small; 4 needed");
  char name[8];
  size = sizeof name;
  REQUIRE(api->KernelInfo_GetOperatorType(&info, name, &size) == nullptr);
  CHECK(std::string(name) == "Neg");
  int since = 0;
  REQUIRE(api->KernelInfo_GetOperatorSinceVersion(&info, &since) == nullptr);
  CHECK(since == 13);
  float alpha = 0;
  CHECK(take_status(api->KernelInfoGetAttribute_float(&info, "alpha", &alpha)) ==
        "OrtApi::KernelInfoGetAttribute_float: node 'neg' has no attribute 'alpha'");
}
