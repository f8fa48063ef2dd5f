// PLACEHOLDER (being written this session): Conv.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> conv_kernels() { return {}; }
}  // namespace nxrt::cpu
