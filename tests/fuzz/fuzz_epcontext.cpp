// libFuzzer target: bytes as the cpu EP's EPContext payload of a compiled model, with a valid
// checksum appended (so mutations reach the decoder, not only the checksum test), then the
// session restored from it runs once.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstdlib>

#include "builtin_eps.h"
#include "fuzz_util.h"
#include "nxrt/ep/registry.h"
#include "nxrt/io/blob_codec.h"
#include "nxrt/session/epcontext_writer.h"
#include "nxrt/session/session.h"

namespace {

// x[2,3] -> Relu -> MatMul(w[3,3]) -> Add(b[3]) -> y: packed weights in the cpu blob.
onnx::ModelProto seed_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_version(17);
  auto& g = *m.mutable_graph();
  auto value = [](onnx::ValueInfoProto* v, const char* name, std::initializer_list<int64_t> dims) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  value(g.add_input(), "x", {2, 3});
  value(g.add_output(), "y", {2, 3});
  auto init = [&](const char* name, std::initializer_list<int64_t> dims, int count) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (int i = 0; i < count; ++i) t->add_float_data(0.5f * static_cast<float>(i));
  };
  init("w", {3, 3}, 9);
  init("b", {3}, 3);
  auto node = [&](const char* op_type, std::initializer_list<const char*> in, const char* out) {
    auto* n = g.add_node();
    n->set_op_type(op_type);
    for (const char* i : in) n->add_input(i);
    n->add_output(out);
  };
  node("Relu", {"x"}, "r");
  node("MatMul", {"r", "w"}, "m");
  node("Add", {"m", "b"}, "y");
  return m;
}

nxrt::SessionOptions cpu_only() {
  nxrt::SessionOptions o;
  o.eps = {"cpu"};
  return o;
}

// Compiles the seed model once; returns the EPContext model's path.
std::filesystem::path context_model() {
  static const std::filesystem::path path = [] {
    const auto dir = nxrt::fuzz::scratch_dir();
    const std::string bytes = seed_model().SerializeAsString();
    nxrt::fuzz::write_bytes(dir / "seed.onnx", reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    auto session = nxrt::Session::create(dir / "seed.onnx", cpu_only());
    nxrt::EpContextWriteOptions o;
    o.output = dir / "ctx.onnx";
    o.force = true;
    if (!session || !nxrt::write_epcontext_model(**session, o)) std::abort();
    return o.output;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (nxrt::ep_factories().empty()) nxrt::register_builtin_eps();
  const auto model = context_model();
  nxrt::BlobWriter blob;
  blob.put_raw(std::as_bytes(std::span(data, size)));
  const std::vector<std::byte> sealed = std::move(blob).finish_with_checksum();
  nxrt::fuzz::write_bytes(model.parent_path() / "ctx_cpu.bin", reinterpret_cast<const uint8_t*>(sealed.data()),
                          sealed.size());
  auto session = nxrt::Session::create(model, cpu_only());
  if (!session) return 0;
  std::map<std::string, nxrt::RuntimeValue> inputs;
  inputs["x"] = nxrt::Tensor::empty(nxrt::DType::kFloat32, {2, 3});
  (void)(*session)->run(inputs);
  return 0;
}
