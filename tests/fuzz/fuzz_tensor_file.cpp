// libFuzzer target: bytes as a .npy file and as TensorProto, SequenceProto and OptionalProto
// .pb files (the first byte picks which), read as a run/bench input is read.
#include <cstdint>

#include "fuzz_util.h"
#include "nxrt/io/npy.h"
#include "nxrt/io/tensor_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 4;
  ++data;
  --size;
  if (mode == 0) {
    auto t = nxrt::parse_npy(std::as_bytes(std::span(data, size)), "fuzz input");
    if (t) (void)nxrt::encode_npy(*t);  // what was read can be written back
    return 0;
  }
  const auto path = nxrt::fuzz::scratch_dir() / "input.pb";
  nxrt::fuzz::write_bytes(path, data, size);
  nxrt::ValueType type;
  type.dtype = nxrt::DType::kFloat32;
  type.kind = mode == 1 ? nxrt::ValueType::Kind::kTensor
              : mode == 2 ? nxrt::ValueType::Kind::kSequence
                          : nxrt::ValueType::Kind::kOptional;
  if (mode == 3) type.optional_of = nxrt::ValueType::Kind::kTensor;
  auto value = nxrt::read_value_file(path, type);
  if (value && value->is_tensor()) (void)nxrt::encode_npy(value->tensor());
  return 0;
}
