// PLACEHOLDER (being written this session): Transpose.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> transpose_kernels() { return {}; }
}  // namespace nxrt::cpu
