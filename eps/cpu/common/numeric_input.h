// Inputs that carry a few numbers (depth, k, bounds) in any numeric dtype, read as int64 or
// double; and the claim check that every given input is a tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// Declines a node whose present inputs include a sequence, optional or map: the kernels
// of the op take tensors only.
KernelMatch require_tensor_inputs(const NodeContext& ctx);

// The elements of a numeric or bool tensor (float16 included) converted like static_cast:
// floating values are truncated toward zero for int64 (NaN and values beyond int64 give 0);
// zeros for other dtypes, which the claims of the callers exclude.
std::vector<int64_t> numeric_as_int64(const Tensor& t);
std::vector<double> numeric_as_double(const Tensor& t);

}  // namespace nxrt::cpu
