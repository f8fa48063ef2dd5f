// Row-major (batched) matrix products through cuBLASLt, with RAII over its descriptors.
#pragma once

#include <cstdint>

#include "nxrt/ep/error.h"
#include "nxrt/ep/dtype.h"
#include "runtime.h"

namespace nxrt::cuda {

// D[b] = alpha * op(A[b]) · op(B[b]) + beta * D[b], row-major, D contiguous [M, N] per batch.
// A batch stride of 0 reuses one matrix for every batch (broadcast).
struct MatmulProblem {
  DType dtype = DType::kFloat32;  // of A, B and D; accumulation is always float
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t stride_a = 0, stride_b = 0;  // elements between batches
  float alpha = 1, beta = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
};

Expected<void> run_matmul(StepContext& ctx, const MatmulProblem& p);

// ONNX MatMul of a and b (numpy rules: 1-D operands promoted, batch dims broadcast) as one
// batched product: m, n, k, batch and the batch strides of `problem`, and the output shape.
// The product needs one side's batch dims to be the broadcast ones and the other's to be all
// 1 (or the same); [2,1,M,K]·[1,3,K,N] would need a gather of matrices and is refused.
struct MatmulShape {
  MatmulProblem problem;
  Shape output;
};
Expected<MatmulShape> matmul_shape(const Shape& a, const Shape& b);

}  // namespace nxrt::cuda
