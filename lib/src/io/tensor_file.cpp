// .npy / .pb tensor files and random inputs for run and bench.
#include "nxrt/io/tensor_file.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <random>

#include "nxrt/ep/weight.h"
#include "nxrt/io/atomic_file.h"
#include "nxrt/io/npy.h"
#include "nxrt/model/tensor_proto.h"

namespace nxrt {

Expected<Tensor> read_tensor_file(const std::filesystem::path& path, std::string* name) {
  const std::string ext = path.extension().string();
  if (ext == ".npy") return read_npy(path);
  if (ext != ".pb")
    return fail(ErrorCode::kUsage, fmt::format("'{}' is neither .npy nor .pb", path.string()), {},
                "give inputs as NumPy .npy files or ONNX TensorProto .pb files");
  auto file = MappedFile::open(path);
  if (!file) return std::unexpected(file.error());
  onnx::TensorProto proto;
  if ((*file)->size() > static_cast<std::size_t>(INT32_MAX) ||
      !proto.ParseFromArray((*file)->data(), static_cast<int>((*file)->size())))
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is not a valid TensorProto file", path.string()),
                "the protobuf could not be parsed", "write the file with onnx.numpy_helper.from_array(...).SerializeToString()");
  if (name) *name = proto.name();
  return tensor_from_proto(proto, fmt::format("tensor file '{}'", path.string()));
}

Expected<void> write_tensor_file(const std::filesystem::path& path, const Tensor& tensor, const std::string& name) {
  const std::string ext = path.extension().string();
  if (ext == ".npy") {
    if (!npy_supports(tensor.dtype()))
      return fail(ErrorCode::kUsage,
                  fmt::format("cannot write '{}': NumPy files cannot hold {} tensors", path.string(),
                              dtype_name(tensor.dtype())),
                  {}, "write it as a .pb (ONNX TensorProto) file instead");
    return write_npy(path, tensor);
  }
  if (ext != ".pb")
    return fail(ErrorCode::kUsage, fmt::format("cannot write '{}': use a .npy or .pb name", path.string()));
  onnx::TensorProto proto;
  tensor_to_proto(tensor, proto);
  proto.set_name(name);
  const std::string bytes = proto.SerializeAsString();
  return write_file_atomically(path, std::as_bytes(std::span(bytes.data(), bytes.size())));
}

Expected<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  const int64_t n = shape_numel(shape);
  if (n < 0)
    return fail(ErrorCode::kUsage, fmt::format("cannot make random data of shape {}", shape_to_string(shape)));
  Tensor t = Tensor::empty(dtype, shape);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  auto fill = [&](auto* p, auto gen) {
    for (int64_t i = 0; i < n; ++i) p[i] = gen();
  };
  switch (dtype) {
    case DType::kFloat32: fill(t.mut_as<float>(), [&] { return static_cast<float>(real(rng)); }); break;
    case DType::kFloat64: fill(t.mut_as<double>(), [&] { return real(rng); }); break;
    case DType::kInt64: fill(t.mut_as<int64_t>(), [&] { return int64_t{small(rng)}; }); break;
    case DType::kInt32: fill(t.mut_as<int32_t>(), [&] { return small(rng); }); break;
    case DType::kInt16: fill(t.mut_as<int16_t>(), [&] { return static_cast<int16_t>(small(rng)); }); break;
    case DType::kInt8: fill(t.mut_as<int8_t>(), [&] { return static_cast<int8_t>(small(rng)); }); break;
    case DType::kUInt8: fill(t.mut_as<uint8_t>(), [&] { return static_cast<uint8_t>(small(rng)); }); break;
    case DType::kUInt16: fill(t.mut_as<uint16_t>(), [&] { return static_cast<uint16_t>(small(rng)); }); break;
    case DType::kUInt32: fill(t.mut_as<uint32_t>(), [&] { return static_cast<uint32_t>(small(rng)); }); break;
    case DType::kUInt64: fill(t.mut_as<uint64_t>(), [&] { return static_cast<uint64_t>(small(rng)); }); break;
    case DType::kBool: fill(t.mut_as<bool>(), [&] { return small(rng) < 5; }); break;
    case DType::kString: {
      auto* s = t.mut_as<std::string>();
      for (int64_t i = 0; i < n; ++i) s[i] = fmt::format("s{}", i);
      break;
    }
    default:
      return fail(ErrorCode::kUsage, fmt::format("cannot make random data of type {}", dtype_name(dtype)), {},
                  "pass this input from a file with --input NAME=FILE");
  }
  return t;
}

Shape concrete_shape(const ValueType& type, bool* defaulted) {
  Shape s;
  if (!type.shape) {
    if (defaulted) *defaulted = true;
    return s;
  }
  for (const Dim& d : *type.shape) {
    if (!d.known() && defaulted) *defaulted = true;
    s.push_back(d.known() ? d.size : 1);
  }
  return s;
}

}  // namespace nxrt
