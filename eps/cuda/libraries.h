// NVRTC, cuBLASLt and cuDNN loaded with dlopen when first needed: linking them would cost
// every nxrt process (even one that never touches a GPU) ~0.3 s and 250 MB to map cuBLASLt,
// and would keep nxrt from starting where the CUDA libraries are not installed.
#pragma once

#include <cublasLt.h>
#include <cudnn.h>
#include <nvrtc.h>

#include <memory>
#include <string>
#include <type_traits>

#include "nxrt/ep/error.h"

namespace nxrt::cuda {

struct NvrtcApi {
  decltype(&::nvrtcVersion) version;
  decltype(&::nvrtcGetNumSupportedArchs) get_num_supported_archs;
  decltype(&::nvrtcGetSupportedArchs) get_supported_archs;
  decltype(&::nvrtcGetErrorString) get_error_string;
  decltype(&::nvrtcCreateProgram) create_program;
  decltype(&::nvrtcDestroyProgram) destroy_program;
  decltype(&::nvrtcCompileProgram) compile_program;
  decltype(&::nvrtcGetProgramLogSize) get_program_log_size;
  decltype(&::nvrtcGetProgramLog) get_program_log;
  decltype(&::nvrtcGetCUBINSize) get_cubin_size;
  decltype(&::nvrtcGetCUBIN) get_cubin;
  decltype(&::nvrtcGetPTXSize) get_ptx_size;
  decltype(&::nvrtcGetPTX) get_ptx;
};

struct BlasApi {
  decltype(&::cublasLtCreate) create;
  decltype(&::cublasLtDestroy) destroy;
  decltype(&::cublasLtGetStatusString) get_status_string;
  decltype(&::cublasLtMatmulDescCreate) matmul_desc_create;
  decltype(&::cublasLtMatmulDescDestroy) matmul_desc_destroy;
  decltype(&::cublasLtMatmulDescSetAttribute) matmul_desc_set_attribute;
  decltype(&::cublasLtMatrixLayoutCreate) matrix_layout_create;
  decltype(&::cublasLtMatrixLayoutDestroy) matrix_layout_destroy;
  decltype(&::cublasLtMatrixLayoutSetAttribute) matrix_layout_set_attribute;
  decltype(&::cublasLtMatmulPreferenceCreate) matmul_preference_create;
  decltype(&::cublasLtMatmulPreferenceDestroy) matmul_preference_destroy;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) matmul_preference_set_attribute;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) matmul_algo_get_heuristic;
  decltype(&::cublasLtMatmul) matmul;
};

struct DnnApi {
  decltype(&::cudnnCreate) create;
  decltype(&::cudnnDestroy) destroy;
  decltype(&::cudnnSetStream) set_stream;
  decltype(&::cudnnGetErrorString) get_error_string;
  decltype(&::cudnnCreateTensorDescriptor) create_tensor_descriptor;
  decltype(&::cudnnDestroyTensorDescriptor) destroy_tensor_descriptor;
  decltype(&::cudnnSetTensorNdDescriptor) set_tensor_nd_descriptor;
  decltype(&::cudnnCreateFilterDescriptor) create_filter_descriptor;
  decltype(&::cudnnDestroyFilterDescriptor) destroy_filter_descriptor;
  decltype(&::cudnnSetFilterNdDescriptor) set_filter_nd_descriptor;
  decltype(&::cudnnCreateConvolutionDescriptor) create_convolution_descriptor;
  decltype(&::cudnnDestroyConvolutionDescriptor) destroy_convolution_descriptor;
  decltype(&::cudnnSetConvolutionNdDescriptor) set_convolution_nd_descriptor;
  decltype(&::cudnnSetConvolutionGroupCount) set_convolution_group_count;
  decltype(&::cudnnSetConvolutionMathType) set_convolution_math_type;
  decltype(&::cudnnGetConvolutionForwardAlgorithm_v7) get_convolution_forward_algorithm_v7;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) get_convolution_forward_workspace_size;
  decltype(&::cudnnConvolutionForward) convolution_forward;
  decltype(&::cudnnGetConvolutionBackwardDataAlgorithm_v7) get_convolution_backward_data_algorithm_v7;
  decltype(&::cudnnGetConvolutionBackwardDataWorkspaceSize) get_convolution_backward_data_workspace_size;
  decltype(&::cudnnConvolutionBackwardData) convolution_backward_data;
  decltype(&::cudnnAddTensor) add_tensor;
};

// A handle of one of these libraries destroyed through the loaded entry point.
template <class T, class Status>
struct ApiDeleter {
  Status (*destroy)(T);
  void operator()(T p) const { destroy(p); }
};
template <class T, class Status>
using ApiHandle = std::unique_ptr<std::remove_pointer_t<T>, ApiDeleter<T, Status>>;

// Each loads its library (by the soname of the version nxrt was built against) and resolves
// every entry point; the error names the library and dlerror's text. Libraries stay loaded.
Expected<std::shared_ptr<const NvrtcApi>> load_nvrtc();
Expected<std::shared_ptr<const BlasApi>> load_cublaslt();
Expected<std::shared_ptr<const DnnApi>> load_cudnn();

// "CUDA 13.0, cuBLASLt 13.1.0, cuDNN 9.19.0": the versions nxrt was built against.
std::string built_against();

}  // namespace nxrt::cuda
