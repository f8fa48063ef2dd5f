// The matrices of a numpy matmul (1-D operands promoted, batch dims broadcast): shared by
// the cpu EP's MatMul and the onednn EP's native MatMul step, which both run its products on
// the packed GEMM.
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::cpu {

// Its products: m x k times k x n, at these offsets of A and B, written one after another.
struct MatMulPlan {
  int64_t m = 1, k = 1, n = 1;
  Shape out;
  std::vector<int64_t> a_offsets;  // per output matrix: element offset of its A matrix
  std::vector<int64_t> b_offsets;  // ... and of its B matrix
  bool b_shared = false;           // every product uses the same B matrix
};

// The plan for A of shape `a` times B of shape `b`; an error when the inner or batch dims
// do not match.
Expected<MatMulPlan> plan_matmul(const Shape& a, const Shape& b);

}  // namespace nxrt::cpu
