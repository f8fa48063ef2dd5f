// cuBLASLt and cuDNN on host memory, for the host tests of the cuda EP: the entry points its
// steps call, computing what NVIDIA's documentation says they compute (a column-major batched
// matmul; an N-d cross-correlation with pads, strides, dilations and groups; a broadcast tensor
// add) and refusing, with the library's own status, the arguments the documentation rules out
// (layouts that do not multiply, an output descriptor of the wrong shape, a workspace smaller
// than the chosen algorithm needs). The MatMul, Gemm and Conv steps then run in the host tests
// with every argument they pass checked; only the libraries' own kernels are not exercised.
#pragma once

#ifdef NXRT_HAVE_CUDA
#include <cstddef>
#include <cstdint>

#include "cuda/libraries.h"

namespace nxrt::test {

const cuda::BlasApi& host_blas_api();
const cuda::DnnApi& host_dnn_api();

// A handle of each that the entry points above accept (they keep no state in it).
cublasLtHandle_t host_blas_handle();
cudnnHandle_t host_dnn_handle();

// What the host cuBLASLt has been asked since the process started.
struct HostBlasCounts {
  std::size_t heuristic_queries = 0;  // cublasLtMatmulAlgoGetHeuristic calls
  std::size_t matmuls = 0;            // cublasLtMatmul calls
  std::size_t live_descriptors = 0;   // matmul descriptors, layouts and preferences not destroyed
};
HostBlasCounts host_blas_counts();

// From now on the host cuBLASLt's heuristic finds no algorithm when the caller says an operand
// is aligned to fewer than `bytes` bytes, as cuBLASLt may for narrow types (0, the start: it
// always finds one).
void set_host_blas_min_alignment(uint32_t bytes);

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
