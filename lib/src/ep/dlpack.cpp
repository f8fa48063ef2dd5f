// DLPack export and import of tensors.
#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include "nxrt/ep/tensor.h"

namespace nxrt {
namespace {

struct DTypeCode {
  DType dtype;
  uint8_t code;
  uint8_t bits;
};

constexpr DTypeCode kCodes[] = {
    {DType::kFloat32, kDLFloat, 32},  {DType::kFloat64, kDLFloat, 64},
    {DType::kFloat16, kDLFloat, 16},  {DType::kBFloat16, kDLBfloat, 16},
    {DType::kInt8, kDLInt, 8},        {DType::kInt16, kDLInt, 16},
    {DType::kInt32, kDLInt, 32},      {DType::kInt64, kDLInt, 64},
    {DType::kUInt8, kDLUInt, 8},      {DType::kUInt16, kDLUInt, 16},
    {DType::kUInt32, kDLUInt, 32},    {DType::kUInt64, kDLUInt, 64},
    {DType::kBool, kDLUInt, 8},  // this dlpack version has no kDLBool: bool travels as uint8
};

// What an exported DLManagedTensor owns besides itself.
struct ExportState {
  Tensor tensor;
  DLManagedTensor managed{};
};

}  // namespace

Expected<DLManagedTensor*> to_dlpack(const Tensor& tensor) {
  const DTypeCode* code = nullptr;
  for (const auto& c : kCodes)
    if (c.dtype == tensor.dtype()) code = &c;
  if (!code)
    return fail(ErrorCode::kRuntime,
                fmt::format("a {} tensor cannot be exported to DLPack", dtype_name(tensor.dtype())),
                "DLPack has no element type for it");
  if (!tensor.device().is_host())
    return fail(ErrorCode::kRuntime, "only host tensors can be exported to DLPack",
                fmt::format("the tensor lives on {}", tensor.device().to_string()));
  auto* state = new ExportState{tensor, {}};
  const TensorView v = state->tensor.view();
  DLTensor& dl = state->managed.dl_tensor;
  dl.data = const_cast<void*>(v.raw());
  dl.device = DLDevice{kDLCPU, 0};
  dl.ndim = static_cast<int32_t>(v.rank());
  dl.dtype = DLDataType{code->code, code->bits, 1};
  // The shape and strides live in the state's tensor, which outlives the DLTensor.
  dl.shape = const_cast<int64_t*>(state->tensor.shape().data());
  dl.strides = nullptr;  // contiguous
  dl.byte_offset = static_cast<uint64_t>(v.byte_offset);
  state->managed.manager_ctx = state;
  state->managed.deleter = [](DLManagedTensor* self) { delete static_cast<ExportState*>(self->manager_ctx); };
  return &state->managed;
}

Expected<Tensor> from_dlpack(DLManagedTensor* managed) {
  if (!managed) return fail(ErrorCode::kRuntime, "null DLPack tensor");
  // A copy of the header: the error paths below describe the tensor after releasing it.
  const DLTensor dl = managed->dl_tensor;
  auto release = [managed] { if (managed->deleter) managed->deleter(managed); };
  if (dl.device.device_type != kDLCPU) {
    release();
    return fail(ErrorCode::kRuntime,
                fmt::format("DLPack tensor on device type {} cannot be imported", static_cast<int>(dl.device.device_type)),
                "nxrt imports host (kDLCPU) tensors only");
  }
  std::optional<DType> dtype;
  for (const auto& c : kCodes) {
    if (c.code == dl.dtype.code && c.bits == dl.dtype.bits && dl.dtype.lanes == 1) {
      dtype = c.dtype;
      break;  // uint8 comes before bool: an imported 8-bit unsigned tensor is uint8
    }
  }
  if (!dtype || dl.ndim < 0) {
    release();
    return fail(ErrorCode::kRuntime,
                fmt::format("DLPack element type (code {}, {} bits, {} lanes) is not supported",
                            dl.dtype.code, dl.dtype.bits, dl.dtype.lanes));
  }
  Shape shape(dl.shape, dl.shape + dl.ndim);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  Shape contiguous = contiguous_strides(shape);
  auto storage = std::make_shared<Storage>(dl.data, 0, kHostDevice, [managed](void*) {
    if (managed->deleter) managed->deleter(managed);
  });
  Tensor t(storage, *dtype, shape, static_cast<int64_t>(dl.byte_offset));
  if (strides != contiguous) {
    // Non-contiguous producers are copied, so every nxrt tensor stays contiguous.
    TensorView v = t.view();
    v.strides = strides;
    return copy_to_contiguous(v);
  }
  return t;
}

}  // namespace nxrt
