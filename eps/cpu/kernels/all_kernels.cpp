// The CPU EP's kernel list: the concatenation of every family's table.
#include "kernels/kernels.h"

#include <iterator>

namespace nxrt::cpu {

std::vector<KernelDef> all_kernels() {
  std::vector<KernelDef> all;
  for (auto family : {unary_kernels, binary_kernels, compare_kernels, cast_kernels, softmax_kernels, normalization_kernels, reduce_kernels, matmul_kernels, conv_kernels, pool_kernels, shape_ops_kernels, transpose_kernels, concat_split_kernels, slice_gather_kernels, constant_kernels,
                      sequence_kernels, optional_kernels, control_flow_kernels}) {
    auto defs = family();
    std::move(defs.begin(), defs.end(), std::back_inserter(all));
  }
  return all;
}

}  // namespace nxrt::cpu
