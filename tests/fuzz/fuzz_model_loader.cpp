// libFuzzer target: bytes as an .onnx file through loading (protobuf, schema checks, shape
// inference, IR) and the optimizer passes, with an external-data file beside it.
#include <cstdint>

#include "fuzz_util.h"
#include "nxrt/ir/passes.h"
#include "nxrt/model/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  const auto dir = nxrt::fuzz::scratch_dir();
  // A weights file for models that name external data "w.bin".
  static const bool weights = [&] {
    const uint8_t zeros[256] = {};
    nxrt::fuzz::write_bytes(dir / "w.bin", zeros, sizeof zeros);
    return true;
  }();
  (void)weights;
  const auto path = dir / "model.onnx";
  nxrt::fuzz::write_bytes(path, data, size);
  auto model = nxrt::load_model(path);
  if (!model) {
    if (model.error().what.empty()) __builtin_trap();  // every error says what is wrong
    return 0;
  }
  for (const auto& pass : nxrt::default_passes()) (void)pass->run(*model->graph);
  return 0;
}
