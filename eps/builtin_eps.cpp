// The list of built-in EPs; a new EP adds one line here.
#include "builtin_eps.h"

#include "cpu/cpu_provider.h"
#include "nxrt/ep/registry.h"
#ifdef NXRT_HAVE_ONEDNN
#include "onednn/dnnl_util.h"
#include "onednn/onednn_provider.h"
#endif
#ifdef NXRT_HAVE_CUDA
#include "cuda/cuda_provider.h"
#endif

namespace nxrt {

void register_builtin_eps() {
  register_ep_factory({"cpu", "portable CPU kernels (nxrt)", cpu::CpuProvider::create});
#ifdef NXRT_HAVE_ONEDNN
  register_ep_factory({"onednn", "oneDNN primitives: blocked layouts, fused post-ops", onednn::OnednnProvider::create});
#else
  register_ep_factory({"onednn", "oneDNN primitives (not built)", [](const EpConfig&) -> Expected<std::unique_ptr<ExecutionProvider>> {
                         return fail(ErrorCode::kUsage, "not built: oneDNN was not found when nxrt was configured",
                                     "CMake's find_package(dnnl) failed or NXRT_WITH_ONEDNN was OFF",
                                     "install libdnnl-dev (scripts/install-deps.sh) and reconfigure");
                       }});
#endif
#ifdef NXRT_HAVE_CUDA
  register_ep_factory({"cuda", "NVIDIA GPUs: NVRTC-generated kernels, cuBLASLt, cuDNN",
                       [](const EpConfig& config) { return cuda::CudaProvider::create(config); }});
#else
  register_ep_factory({"cuda", "NVIDIA GPUs (not built)", [](const EpConfig&) -> Expected<std::unique_ptr<ExecutionProvider>> {
                         return fail(ErrorCode::kUsage, "not built: " NXRT_CUDA_MISSING,
                                     "CMake's find_package(CUDAToolkit) or the search for cuDNN failed, or NXRT_WITH_CUDA was OFF",
                                     "install the CUDA Toolkit 12+ with cuDNN 9 and reconfigure");
                       }});
#endif
}

std::vector<std::string> compiled_eps() {
  std::vector<std::string> eps{"cpu"};
#ifdef NXRT_HAVE_ONEDNN
  eps.emplace_back("onednn");
#endif
#ifdef NXRT_HAVE_CUDA
  eps.emplace_back("cuda");
#endif
  return eps;
}

std::vector<BuiltinLibrary> builtin_libraries() {
  return {
#ifdef NXRT_HAVE_ONEDNN
      {"oneDNN", onednn::onednn_version(), ""},
#else
      {"oneDNN", "", "oneDNN was not found when nxrt was configured"},
#endif
#ifdef NXRT_HAVE_CUDA
      {"CUDA", cuda::toolkit_version(), ""},
#else
      {"CUDA", "", NXRT_CUDA_MISSING},
#endif
  };
}

std::vector<std::string> default_eps() {
#ifdef NXRT_HAVE_ONEDNN
  return {"onednn", "cpu"};
#else
  return {"cpu"};
#endif
}

}  // namespace nxrt
