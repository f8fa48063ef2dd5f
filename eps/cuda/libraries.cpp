// dlopen of NVRTC, cuBLASLt and cuDNN with their entry points resolved by name.
#include "libraries.h"

#include <cuda.h>
#include <dlfcn.h>
#include <fmt/format.h>

namespace nxrt::cuda {
namespace {

// Opens `soname` or says why not; the handle is never closed (code from it may still run).
Expected<void*> open_library(const std::string& soname, std::string_view what) {
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib)
    return fail(ErrorCode::kRuntime, fmt::format("cannot load {} ({})", soname, what), dlerror(),
                fmt::format("install the {} runtime library nxrt was built against, or put it on LD_LIBRARY_PATH", what));
  return lib;
}

// Resolves `name` into `out`; remembers the first missing symbol in `missing`.
template <class Fn>
void resolve(void* lib, const char* name, Fn& out, const char*& missing) {
  out = reinterpret_cast<Fn>(dlsym(lib, name));
  if (!out && !missing) missing = name;
}

template <class Api>
Expected<std::shared_ptr<const Api>> finish(std::shared_ptr<Api> api, const char* missing, const std::string& soname) {
  if (missing)
    return fail(ErrorCode::kRuntime, fmt::format("{} lacks {}", soname, missing),
                "the installed library is older than the one nxrt was built against", "update the CUDA libraries");
  return std::shared_ptr<const Api>(std::move(api));
}

#define NXRT_RESOLVE(field, fn) resolve(lib, #fn, api->field, missing)

}  // namespace

Expected<std::shared_ptr<const NvrtcApi>> load_nvrtc() {
  const std::string soname = fmt::format("libnvrtc.so.{}", CUDA_VERSION / 1000);
  auto opened = open_library(soname, "NVRTC");
  if (!opened) return std::unexpected(opened.error());
  void* lib = *opened;
  auto api = std::make_shared<NvrtcApi>();
  const char* missing = nullptr;
  NXRT_RESOLVE(version, nvrtcVersion);
  NXRT_RESOLVE(get_num_supported_archs, nvrtcGetNumSupportedArchs);
  NXRT_RESOLVE(get_supported_archs, nvrtcGetSupportedArchs);
  NXRT_RESOLVE(get_error_string, nvrtcGetErrorString);
  NXRT_RESOLVE(create_program, nvrtcCreateProgram);
  NXRT_RESOLVE(destroy_program, nvrtcDestroyProgram);
  NXRT_RESOLVE(compile_program, nvrtcCompileProgram);
  NXRT_RESOLVE(get_program_log_size, nvrtcGetProgramLogSize);
  NXRT_RESOLVE(get_program_log, nvrtcGetProgramLog);
  NXRT_RESOLVE(get_cubin_size, nvrtcGetCUBINSize);
  NXRT_RESOLVE(get_cubin, nvrtcGetCUBIN);
  NXRT_RESOLVE(get_ptx_size, nvrtcGetPTXSize);
  NXRT_RESOLVE(get_ptx, nvrtcGetPTX);
  return finish(std::move(api), missing, soname);
}

Expected<std::shared_ptr<const BlasApi>> load_cublaslt() {
  const std::string soname = fmt::format("libcublasLt.so.{}", CUBLAS_VER_MAJOR);
  auto opened = open_library(soname, "cuBLASLt");
  if (!opened) return std::unexpected(opened.error());
  void* lib = *opened;
  auto api = std::make_shared<BlasApi>();
  const char* missing = nullptr;
  NXRT_RESOLVE(create, cublasLtCreate);
  NXRT_RESOLVE(destroy, cublasLtDestroy);
  NXRT_RESOLVE(get_status_string, cublasLtGetStatusString);
  NXRT_RESOLVE(matmul_desc_create, cublasLtMatmulDescCreate);
  NXRT_RESOLVE(matmul_desc_destroy, cublasLtMatmulDescDestroy);
  NXRT_RESOLVE(matmul_desc_set_attribute, cublasLtMatmulDescSetAttribute);
  NXRT_RESOLVE(matrix_layout_create, cublasLtMatrixLayoutCreate);
  NXRT_RESOLVE(matrix_layout_destroy, cublasLtMatrixLayoutDestroy);
  NXRT_RESOLVE(matrix_layout_set_attribute, cublasLtMatrixLayoutSetAttribute);
  NXRT_RESOLVE(matmul_preference_create, cublasLtMatmulPreferenceCreate);
  NXRT_RESOLVE(matmul_preference_destroy, cublasLtMatmulPreferenceDestroy);
  NXRT_RESOLVE(matmul_preference_set_attribute, cublasLtMatmulPreferenceSetAttribute);
  NXRT_RESOLVE(matmul_algo_get_heuristic, cublasLtMatmulAlgoGetHeuristic);
  NXRT_RESOLVE(matmul, cublasLtMatmul);
  return finish(std::move(api), missing, soname);
}

Expected<std::shared_ptr<const DnnApi>> load_cudnn() {
  const std::string soname = fmt::format("libcudnn.so.{}", CUDNN_MAJOR);
  auto opened = open_library(soname, "cuDNN");
  if (!opened) return std::unexpected(opened.error());
  void* lib = *opened;
  auto api = std::make_shared<DnnApi>();
  const char* missing = nullptr;
  NXRT_RESOLVE(create, cudnnCreate);
  NXRT_RESOLVE(destroy, cudnnDestroy);
  NXRT_RESOLVE(set_stream, cudnnSetStream);
  NXRT_RESOLVE(get_error_string, cudnnGetErrorString);
  NXRT_RESOLVE(create_tensor_descriptor, cudnnCreateTensorDescriptor);
  NXRT_RESOLVE(destroy_tensor_descriptor, cudnnDestroyTensorDescriptor);
  NXRT_RESOLVE(set_tensor_nd_descriptor, cudnnSetTensorNdDescriptor);
  NXRT_RESOLVE(create_filter_descriptor, cudnnCreateFilterDescriptor);
  NXRT_RESOLVE(destroy_filter_descriptor, cudnnDestroyFilterDescriptor);
  NXRT_RESOLVE(set_filter_nd_descriptor, cudnnSetFilterNdDescriptor);
  NXRT_RESOLVE(create_convolution_descriptor, cudnnCreateConvolutionDescriptor);
  NXRT_RESOLVE(destroy_convolution_descriptor, cudnnDestroyConvolutionDescriptor);
  NXRT_RESOLVE(set_convolution_nd_descriptor, cudnnSetConvolutionNdDescriptor);
  NXRT_RESOLVE(set_convolution_group_count, cudnnSetConvolutionGroupCount);
  NXRT_RESOLVE(set_convolution_math_type, cudnnSetConvolutionMathType);
  NXRT_RESOLVE(get_convolution_forward_algorithm_v7, cudnnGetConvolutionForwardAlgorithm_v7);
  NXRT_RESOLVE(get_convolution_forward_workspace_size, cudnnGetConvolutionForwardWorkspaceSize);
  NXRT_RESOLVE(convolution_forward, cudnnConvolutionForward);
  NXRT_RESOLVE(get_convolution_backward_data_algorithm_v7, cudnnGetConvolutionBackwardDataAlgorithm_v7);
  NXRT_RESOLVE(get_convolution_backward_data_workspace_size, cudnnGetConvolutionBackwardDataWorkspaceSize);
  NXRT_RESOLVE(convolution_backward_data, cudnnConvolutionBackwardData);
  NXRT_RESOLVE(add_tensor, cudnnAddTensor);
  return finish(std::move(api), missing, soname);
}

std::string built_against() {
  return fmt::format("CUDA {}.{}, cuBLASLt {}.{}.{}, cuDNN {}.{}.{}", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10,
                     CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH, CUDNN_MAJOR, CUDNN_MINOR, CUDNN_PATCHLEVEL);
}

}  // namespace nxrt::cuda
