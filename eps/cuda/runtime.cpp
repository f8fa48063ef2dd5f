// Kernel argument helpers shared by the steps.
#include "runtime.h"

namespace nxrt::cuda {

static_assert(kMaxRank == 8, "struct Dims in kernel_library.cpp holds 8 values");

KernelDims to_kernel_dims(std::span<const int64_t> values) {
  KernelDims d;
  for (std::size_t i = 0; i < values.size() && i < static_cast<std::size_t>(kMaxRank); ++i) d.d[i] = values[i];
  return d;
}

}  // namespace nxrt::cuda
