// .npy / .pb tensor files and random inputs for run and bench.
#include "nxrt/io/tensor_file.h"

#include <fmt/format.h>
#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <random>

#include "nxrt/ep/float8.h"
#include "nxrt/ep/mx_float.h"
#include "nxrt/ep/subbyte.h"
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

namespace {

// Parses a whole .pb file into `proto`; `what` names the message for the error.
Expected<void> parse_pb_file(const std::filesystem::path& path, google::protobuf::MessageLite& proto,
                             std::string_view what) {
  auto file = MappedFile::open(path);
  if (!file) return std::unexpected(file.error());
  if ((*file)->size() > static_cast<std::size_t>(INT32_MAX) ||
      !proto.ParseFromArray((*file)->data(), static_cast<int>((*file)->size())))
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is not a valid {} file", path.string(), what),
                "the protobuf could not be parsed", fmt::format("write the file as a serialized onnx.{}", what));
  return {};
}

// The same bits read as bfloat16 when the file says uint16 and the model bfloat16, and as
// a sub-byte integer when the file says int8 (uint8) and the model int4 or int2 (uint4 or
// uint2): NumPy has none of them.
Tensor as_declared(Tensor t, const ValueType& type) {
  const bool bits16 = t.dtype() == DType::kUInt16 && type.dtype == DType::kBFloat16;
  const bool signed_narrow = type.dtype == DType::kInt4 || type.dtype == DType::kInt2;
  const bool narrow = is_subbyte_integer(type.dtype) && t.dtype() == (signed_narrow ? DType::kInt8 : DType::kUInt8);
  if (!bits16 && !narrow) return t;
  return Tensor(t.storage(), type.dtype, t.shape(), t.view().byte_offset);
}

// A sub-byte integer tensor read from 8-bit elements must hold values of its range.
Expected<void> check_subbyte_range(const Tensor& t, const std::string& where) {
  if (!is_subbyte_integer(t.dtype())) return {};
  const std::vector<int64_t> values = t.to_int64_vector();
  for (std::size_t i = 0; i < values.size(); ++i)
    if (values[i] < subbyte_min(t.dtype()) || values[i] > subbyte_max(t.dtype()))
      return fail(
          ErrorCode::kInvalidInput,
          fmt::format("{}: element {} is {}, outside the range of {} [{}, {}]", where, i, values[i],
                      dtype_name(t.dtype()), subbyte_min(t.dtype()), subbyte_max(t.dtype())),
          fmt::format("the model declares a {}-bit input; nxrt reads it from 8-bit elements", subbyte_bits(t.dtype())),
          "clip the values to the range");
  return {};
}

Expected<Tensor> tensor_for(const onnx::TensorProto& proto, const ValueType& type, const std::string& where) {
  auto t = tensor_from_proto(proto, where);
  if (!t) return t;
  return as_declared(std::move(*t), type);
}

Expected<RuntimeValue> sequence_from_proto(const onnx::SequenceProto& proto, const ValueType& type,
                                           const std::string& where) {
  if (proto.elem_type() != onnx::SequenceProto::TENSOR && proto.elem_type() != onnx::SequenceProto::UNDEFINED)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("{} holds a sequence of {}; nxrt reads sequences of tensors", where,
                            onnx::SequenceProto::DataType_Name(
                                static_cast<onnx::SequenceProto::DataType>(proto.elem_type()))));
  std::vector<Tensor> items;
  for (int i = 0; i < proto.tensor_values_size(); ++i) {
    auto t = tensor_for(proto.tensor_values(i), type, fmt::format("{} item {}", where, i));
    if (!t) return std::unexpected(t.error());
    items.push_back(std::move(*t));
  }
  const DType element = items.empty() ? type.dtype : items.front().dtype();
  return RuntimeValue::sequence(element, std::move(items));
}

}  // namespace

Expected<RuntimeValue> read_value_file(const std::filesystem::path& path, const ValueType& type, std::string* name) {
  using K = ValueType::Kind;
  const std::string where = fmt::format("file '{}'", path.string());
  const K kind = type.kind == K::kOptional ? type.optional_of : type.kind;
  if (path.extension() == ".pb" && type.kind == K::kOptional) {
    onnx::OptionalProto proto;
    if (auto r = parse_pb_file(path, proto, "OptionalProto"); !r) return std::unexpected(r.error());
    if (name) *name = proto.name();
    if (proto.has_tensor_value()) {
      auto t = tensor_for(proto.tensor_value(), type, where);
      if (!t) return std::unexpected(t.error());
      return RuntimeValue(std::move(*t));
    }
    if (proto.has_sequence_value()) return sequence_from_proto(proto.sequence_value(), type, where);
    return RuntimeValue::none();
  }
  if (path.extension() == ".pb" && kind == K::kSequence) {
    onnx::SequenceProto proto;
    if (auto r = parse_pb_file(path, proto, "SequenceProto"); !r) return std::unexpected(r.error());
    if (name) *name = proto.name();
    return sequence_from_proto(proto, type, where);
  }
  if (path.extension() == ".npy" && is_byte_float(type.dtype))
    return fail(ErrorCode::kInvalidInput,
                fmt::format("{} cannot hold the {} the model expects", where, dtype_name(type.dtype)),
                fmt::format("NumPy has no {} type, so .npy files cannot hold {} tensors", dtype_name(type.dtype),
                            dtype_name(type.dtype)),
                "give the input as an ONNX TensorProto (.pb) file, or feed float and Cast it inside the model");
  auto t = read_tensor_file(path, name);
  if (!t) return std::unexpected(t.error());
  Tensor declared = as_declared(std::move(*t), type);
  if (auto in_range = check_subbyte_range(declared, where); !in_range) return std::unexpected(in_range.error());
  return RuntimeValue(std::move(declared));
}

Expected<void> write_value_file(const std::filesystem::path& path, const RuntimeValue& value, const std::string& name) {
  if (value.is_tensor()) return write_tensor_file(path, value.tensor(), name);
  if (path.extension() != ".pb")
    return fail(ErrorCode::kUsage,
                fmt::format("cannot write '{}': a {} is written as a .pb file", path.string(), value.describe()));
  std::string bytes;
  if (value.is_sequence()) {
    onnx::SequenceProto proto;
    proto.set_name(name);
    proto.set_elem_type(onnx::SequenceProto::TENSOR);
    for (const Tensor& item : value.items()) tensor_to_proto(item, *proto.add_tensor_values());
    bytes = proto.SerializeAsString();
  } else {
    onnx::OptionalProto proto;
    proto.set_name(name);
    bytes = proto.SerializeAsString();
  }
  return write_file_atomically(path, std::as_bytes(std::span(bytes.data(), bytes.size())));
}

Expected<Tensor> random_tensor(DType dtype, const Shape& shape, uint64_t seed) {
  const int64_t n = shape_numel(shape);
  if (n < 0)
    return fail(ErrorCode::kUsage, fmt::format("cannot make random data of shape {}", shape_to_string(shape)));
  // A declared shape may ask for terabytes: refuse what this machine could never hold.
  const double bytes = static_cast<double>(n) * static_cast<double>(dtype_size(dtype));
  const double memory = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  if (bytes > memory)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("random data of shape {} of {} needs {:.1f} GiB, more than this machine's {:.1f} GiB",
                            shape_to_string(shape), dtype_name(dtype), bytes / (1 << 30), memory / (1 << 30)),
                "the model declares an input larger than memory", "give the input from a file with --input NAME=FILE");
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
    case DType::kInt4: fill(t.mut_as<int8_t>(), [&] { return static_cast<int8_t>(small(rng) - 5); }); break;
    case DType::kUInt4: fill(t.mut_as<uint8_t>(), [&] { return static_cast<uint8_t>(small(rng)); }); break;
    case DType::kInt2:
      fill(t.mut_as<int8_t>(), [&] { return static_cast<int8_t>(small(rng) % 4 - 2); });
      break;
    case DType::kUInt2:
      fill(t.mut_as<uint8_t>(), [&] { return static_cast<uint8_t>(small(rng) % 4); });
      break;
    case DType::kFloat4E2M1:
      fill(t.mut_as<uint8_t>(), [&] { return float_to_float4e2m1(real(rng)); });
      break;
    case DType::kFloat8E8M0:
      fill(t.mut_as<uint8_t>(), [&] { return float_to_float8e8m0(std::abs(real(rng)), true, E8M0Rounding::kUp); });
      break;
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
      fill(t.mut_as<uint8_t>(), [&] { return float_to_float8(dtype, real(rng), true); });
      break;
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
