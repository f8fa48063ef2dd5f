// MatMul of two computed operands on the cpu EP's packed GEMM (eps/cpu/common/gemm.h).
// oneDNN 2.6 runs such products on its own GEMM, which generates its kernels on the first
// product of each process: about 16 ms (130M instructions) that every start of an EPContext
// model would pay. The cpu EP's GEMM needs no generation and runs at 75-100% of that GEMM's
// speed (64-90 against 84-94 GFLOP/s on one AVX2 core, 64x64x64 to 512x512x512).
#pragma once

#include <memory>

#include "native/native_kernel.h"

namespace nxrt::onednn {

// C[batch..., M, N] = A[batch..., M, K] x B[batch..., K, N], all plain row-major, A and B of
// dims `a` and `b` (numpy matmul shapes: a batch dim of 1 broadcasts). Reads DNNL_ARG_SRC (A)
// and DNNL_ARG_WEIGHTS (B), writes DNNL_ARG_DST (C). An error when the dims do not multiply.
Expected<std::shared_ptr<const NativeKernel>> make_native_matmul(const Dims& a, const Dims& b);

}  // namespace nxrt::onednn
