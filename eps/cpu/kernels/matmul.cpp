// PLACEHOLDER (being written this session): MatMul Gemm.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> matmul_kernels() { return {}; }
}  // namespace nxrt::cpu
