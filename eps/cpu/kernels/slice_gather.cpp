// PLACEHOLDER (being written this session): Slice Gather.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> slice_gather_kernels() { return {}; }
}  // namespace nxrt::cpu
