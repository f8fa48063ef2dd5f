// TensorProto <-> Tensor, with every size checked before anything is allocated.
#include "nxrt/model/tensor_proto.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <charconv>
#include <cstring>
#include <limits>

#include "nxrt/ep/subbyte.h"
#include "nxrt/model/model.h"

namespace nxrt {
namespace {

std::unexpected<Error> bad_tensor(const std::string& context, std::string what, std::string how = {}) {
  return fail(ErrorCode::kInvalidInput, fmt::format("{}: {}", context, what), {},
              how.empty() ? "re-export the model; the file is malformed" : std::move(how));
}

struct Header {
  DType dtype;
  Shape shape;
  int64_t numel;
  std::size_t bytes;  // in raw_data or external data (int4: packed), known to fit
};

Expected<Header> read_header(const onnx::TensorProto& proto, const std::string& context) {
  auto dtype = dtype_from_onnx(proto.data_type());
  if (!dtype)
    return bad_tensor(context, fmt::format("element type {} is not supported by nxrt",
                                           describe_onnx_type(proto.data_type())),
                      "convert the tensor to a standard numeric, bool or string type");
  Shape shape(proto.dims().begin(), proto.dims().end());
  const int64_t numel = shape_numel(shape);
  if (numel < 0)
    return bad_tensor(context, fmt::format("shape {} has a negative dimension or more than 2^63 elements",
                                           shape_to_string(shape)));
  const std::size_t esize = dtype_size(*dtype);
  if (esize != 0 && static_cast<std::uint64_t>(numel) > std::numeric_limits<std::int64_t>::max() / esize)
    return bad_tensor(context, fmt::format("shape {} of {} needs more than 2^63 bytes", shape_to_string(shape),
                                           dtype_name(*dtype)));
  if (proto.has_segment()) return bad_tensor(context, "segmented tensors are not supported");
  return Header{*dtype, std::move(shape), numel, dtype_packed_bytes(*dtype, static_cast<std::size_t>(numel))};
}

// A tensor of `h` from its sub-byte elements packed two or four per byte.
Tensor unpack_tensor(const Header& h, std::span<const uint8_t> packed) {
  Tensor t = Tensor::empty(h.dtype, h.shape);
  unpack_subbyte(h.dtype, packed.data(), static_cast<std::size_t>(h.numel), t.mut_as<uint8_t>());
  return t;
}

// Sub-byte elements in int32_data: one packed byte (two or four elements) per value.
Expected<Tensor> from_packed_field(const Header& h, const google::protobuf::RepeatedField<int32_t>& field,
                                   const std::string& context) {
  if (static_cast<std::size_t>(field.size()) != h.bytes)
    return bad_tensor(context, fmt::format("holds {} int32_data values for shape {} of {}; {} elements packed {} "
                                           "per value need {}",
                                           field.size(), shape_to_string(h.shape), dtype_name(h.dtype), h.numel,
                                           8 / subbyte_bits(h.dtype), h.bytes));
  std::vector<uint8_t> packed(field.begin(), field.end());
  return unpack_tensor(h, packed);
}

// Copies typed-field values (float_data, int32_data...) into a new tensor of `h`.
template <class Field, class Store>
Expected<Tensor> from_field(const Header& h, const Field& field, const std::string& context, Store store) {
  if (static_cast<int64_t>(field.size()) != h.numel)
    return bad_tensor(context, fmt::format("holds {} values for shape {} ({} elements)", field.size(),
                                           shape_to_string(h.shape), h.numel));
  Tensor t = Tensor::empty(h.dtype, h.shape);
  for (int64_t i = 0; i < h.numel; ++i) store(t, i, field.Get(static_cast<int>(i)));
  return t;
}

template <class T>
auto store_as() {
  return [](Tensor& t, int64_t i, auto v) { t.mut_as<T>()[i] = static_cast<T>(v); };
}

}  // namespace

Expected<Tensor> tensor_from_proto(const onnx::TensorProto& proto, const std::string& context) {
  auto h = read_header(proto, context);
  if (!h) return std::unexpected(h.error());
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return bad_tensor(context, "stores its data externally, which is not allowed here",
                      "embed the data in the tensor");
  if (h->dtype == DType::kString)
    return from_field(*h, proto.string_data(), context,
                      [](Tensor& t, int64_t i, const std::string& v) { t.mut_as<std::string>()[i] = v; });
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != h->bytes)
      return bad_tensor(context, fmt::format("raw_data has {} bytes; shape {} of {} needs {}", raw.size(),
                                             shape_to_string(h->shape), dtype_name(h->dtype), h->bytes));
    if (is_subbyte(h->dtype))
      return unpack_tensor(*h, std::span(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
    return Tensor::from_bytes(h->dtype, h->shape, std::as_bytes(std::span(raw.data(), raw.size())));
  }
  switch (h->dtype) {
    case DType::kFloat32: return from_field(*h, proto.float_data(), context, store_as<float>());
    case DType::kFloat64: return from_field(*h, proto.double_data(), context, store_as<double>());
    case DType::kInt64: return from_field(*h, proto.int64_data(), context, store_as<int64_t>());
    case DType::kUInt64: return from_field(*h, proto.uint64_data(), context, store_as<uint64_t>());
    case DType::kUInt32: return from_field(*h, proto.uint64_data(), context, store_as<uint32_t>());
    case DType::kInt32: return from_field(*h, proto.int32_data(), context, store_as<int32_t>());
    case DType::kInt16: return from_field(*h, proto.int32_data(), context, store_as<int16_t>());
    case DType::kInt8: return from_field(*h, proto.int32_data(), context, store_as<int8_t>());
    case DType::kUInt16: return from_field(*h, proto.int32_data(), context, store_as<uint16_t>());
    case DType::kUInt8: return from_field(*h, proto.int32_data(), context, store_as<uint8_t>());
    case DType::kBool: return from_field(*h, proto.int32_data(), context, store_as<bool>());
    // float16 and bfloat16 travel as their 16-bit patterns in int32_data.
    case DType::kFloat16:
    case DType::kBFloat16: return from_field(*h, proto.int32_data(), context, store_as<uint16_t>());
    // float8 and float8e8m0 travel as their 8-bit patterns in int32_data.
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat8E8M0:
      return from_field(*h, proto.int32_data(), context, store_as<uint8_t>());
    case DType::kInt4:
    case DType::kUInt4:
    case DType::kFloat4E2M1:
    case DType::kInt2:
    case DType::kUInt2:
      return from_packed_field(*h, proto.int32_data(), context);
    default: break;
  }
  return bad_tensor(context, fmt::format("has no data for element type {}", dtype_name(h->dtype)));
}

Expected<WeightHandle> weight_from_proto(const onnx::TensorProto& proto, const std::filesystem::path& model_dir,
                                         const std::string& context, MappedFileCache& files) {
  if (proto.data_location() != onnx::TensorProto::EXTERNAL) {
    auto t = tensor_from_proto(proto, context);
    if (!t) return std::unexpected(t.error());
    return WeightHandle::resident(std::move(*t));
  }
  auto h = read_header(proto, context);
  if (!h) return std::unexpected(h.error());
  if (h->dtype == DType::kString) return bad_tensor(context, "string tensors cannot be stored externally");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
      continue;
    }
    int64_t* target = entry.key() == "offset" ? &offset : entry.key() == "length" ? &length : nullptr;
    if (!target) continue;
    const std::string& text = entry.value();
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *target);
    if (ec != std::errc() || end != text.data() + text.size() || *target < 0)
      return bad_tensor(context, fmt::format("external_data '{}' is not a number of bytes: '{}'", entry.key(), text));
  }
  if (location.empty()) return bad_tensor(context, "external data has no 'location'");
  auto path = guard_relative_path(model_dir, location, "external data");
  if (!path) return forward_error(std::move(path), fmt::format("reading {}", context));
  auto& file = files[*path];
  if (!file) {
    auto mapped = MappedFile::open(*path);
    if (!mapped) return forward_error(std::move(mapped), fmt::format("reading {}", context));
    file = *mapped;
  }
  const std::size_t needed = h->bytes;
  if (length < 0) length = static_cast<int64_t>(needed);
  if (static_cast<std::size_t>(length) != needed)
    return bad_tensor(context, fmt::format("external data offset {} length {} does not fit shape {} of {} ({} bytes)",
                                           offset, length, shape_to_string(h->shape), dtype_name(h->dtype), needed));
  if (static_cast<std::size_t>(offset) > file->size() || file->size() - static_cast<std::size_t>(offset) < needed)
    return bad_tensor(context,
                      fmt::format("external data '{}' has {} bytes; the tensor asks for {} bytes from offset {}",
                                  location, file->size(), needed, offset),
                      "the weights file does not belong to this model or is truncated; re-export it");
  // Sub-byte types are held one element per byte, so their packed bytes are unpacked instead of mapped.
  if (is_subbyte(h->dtype))
    return WeightHandle::resident(unpack_tensor(
        *h, std::span(reinterpret_cast<const uint8_t*>(file->data()) + offset, needed)));
  return WeightHandle::mapped(file, static_cast<std::size_t>(offset), needed, h->dtype, h->shape);
}

void tensor_to_proto(const Tensor& tensor, onnx::TensorProto& proto) {
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto.clear_dims();
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  const Tensor t = copy_to_contiguous(tensor.view());
  if (t.dtype() == DType::kString) {
    for (int64_t i = 0; i < t.numel(); ++i) proto.add_string_data(t.data_as<std::string>()[i]);
    return;
  }
  if (is_subbyte(t.dtype())) {
    std::string packed(dtype_packed_bytes(t.dtype(), static_cast<std::size_t>(t.numel())), '\0');
    pack_subbyte(t.dtype(), t.data_as<uint8_t>(), static_cast<std::size_t>(t.numel()),
                 reinterpret_cast<uint8_t*>(packed.data()));
    proto.set_raw_data(std::move(packed));
    return;
  }
  proto.set_raw_data(std::string(static_cast<const char*>(t.view().data()), t.nbytes()));
}

}  // namespace nxrt
