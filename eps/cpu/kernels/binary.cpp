// PLACEHOLDER (being written this session): Add Sub Mul Div Pow (multidirectional broadcasting).
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> binary_kernels() { return {}; }
}  // namespace nxrt::cpu
