// Default memory operations of a host EP.
#include "nxrt/ep/provider.h"

#include <fmt/format.h>

#include <cstring>

namespace nxrt {

Expected<Tensor> ExecutionProvider::allocate(DType dtype, Shape shape) {
  return Tensor::empty(dtype, std::move(shape));
}

Expected<void> ExecutionProvider::copy(const TensorView& src, const TensorMut& dst) {
  if (!src.device.is_host() || !dst.device.is_host())
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP cannot copy from {} to {}", info().name, src.device.to_string(),
                            dst.device.to_string()),
                "it only has host memory");
  if (src.shape != dst.shape || src.dtype != dst.dtype)
    return fail(ErrorCode::kRuntime,
                fmt::format("copy between {} {} and {} {}", dtype_name(src.dtype), shape_to_string(src.shape),
                            dtype_name(dst.dtype), shape_to_string(dst.shape)));
  Tensor tmp = copy_to_contiguous(src);
  if (src.dtype == DType::kString) {
    const auto* in = tmp.data_as<std::string>();
    auto* out = dst.data_as<std::string>();
    for (int64_t i = 0; i < tmp.numel(); ++i) out[i] = in[i];
    return {};
  }
  std::memcpy(dst.data(), tmp.view().data(), tmp.nbytes());
  return {};
}

}  // namespace nxrt
