// The layers the cuda EP runs on: the CUDA driver, NVRTC, cuBLASLt and cuDNN, each loaded
// when first needed. The EP loads the installed ones (dlopen); the unit tests put host
// stand-ins in their place, which run the EP's whole device path without a GPU.
#pragma once

#include <memory>

#include "driver.h"
#include "libraries.h"

namespace nxrt::cuda {

struct CudaStack {
  Expected<std::shared_ptr<const Driver>> (*driver)() = Driver::load;
  Expected<std::shared_ptr<const NvrtcApi>> (*nvrtc)() = load_nvrtc;
  Expected<std::shared_ptr<const BlasApi>> (*blas)() = load_cublaslt;
  Expected<std::shared_ptr<const DnnApi>> (*dnn)() = load_cudnn;
};

}  // namespace nxrt::cuda
