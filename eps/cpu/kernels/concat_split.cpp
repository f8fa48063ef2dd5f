// PLACEHOLDER (being written this session): Concat Split.
#include "kernels/kernels.h"

namespace nxrt::cpu {
std::vector<KernelDef> concat_split_kernels() { return {}; }
}  // namespace nxrt::cpu
