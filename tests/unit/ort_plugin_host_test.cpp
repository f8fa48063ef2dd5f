// The host's ORT function tables: no slot is NULL, unimplemented slots name themselves,
// GetApi refuses newer versions, and graph views answer the graph-reading functions.
#include <catch2/catch.hpp>

#include <filesystem>

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

TEST_CASE("the host refuses to create int4 tensors, which plugins expect packed", "[ort_plugin][int4]") {
  const int64_t shape[] = {4};
  OrtValue* value = nullptr;
  OrtStatus* s = host_api()->CreateTensorAsOrtValue(nullptr, shape, 1, ONNX_TENSOR_ELEMENT_DATA_TYPE_INT4, &value);
  REQUIRE(s != nullptr);
  CHECK(take_status(s) == "element type 22 (int4) is not supported by the nxrt host: nxrt holds 4-bit elements one per "
                          "byte, ONNX Runtime plugins expect two per byte");
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
