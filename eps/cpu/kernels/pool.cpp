// PLACEHOLDER (being written this session): MaxPool AveragePool GlobalAveragePool GlobalMaxPool.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> pool_kernels() { return {}; }
}  // namespace nxrt::cpu
