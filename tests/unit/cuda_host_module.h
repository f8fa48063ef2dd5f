// Runs a cuda EP plan without a GPU: its module (the CUDA C that NVRTC compiles on the real
// path) is compiled by the host compiler after cuda_on_host.h, and its steps run on host
// tensors, launching the generated kernels from the host build. The kernels' indexing, the
// arguments the steps pass them and the plan's fusion are all checked this way; steps that
// call cuBLASLt or cuDNN cannot run here.
#pragma once

#ifdef NXRT_HAVE_CUDA
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cuda/plan.h"
#include "lib_test_util.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::test {

class HostModule {
 public:
  // Compiles `cuda_source` into a shared library and loads it; the error holds the
  // compiler's output.
  static Expected<std::unique_ptr<HostModule>> compile(const std::string& cuda_source);
  ~HostModule();
  HostModule(const HostModule&) = delete;
  HostModule& operator=(const HostModule&) = delete;

  // Runs extern "C" kernel `name` on `blocks` blocks of `threads` threads.
  Expected<void> launch(std::string_view name, unsigned blocks, unsigned threads, void** args) const;

 private:
  HostModule() = default;
  TempDir dir_;
  void* library_ = nullptr;
  void (*launch_)(void (*)(void**), unsigned, unsigned, void**) = nullptr;
};

// Whether every step of `plan` can run on the host (no cuBLASLt or cuDNN call); the reason
// otherwise ("MatMul 'mm' calls cublasLt").
std::optional<std::string> host_unrunnable(const cuda::Plan& plan);

// Runs the plan's steps in order on host tensors, as CudaPartition::run does on the device:
// `inputs` are the partition's inputs, initializers are read from the graph; returns the
// partition's outputs.
Expected<std::vector<Tensor>> run_plan_on_host(const cuda::Plan& plan, const HostModule& module,
                                               const Partition& partition, const std::vector<Tensor>& inputs);

// The cuda EP as it claims for an sm_90 target, with no GPU needed.
const ExecutionProvider& cuda_for_sm90();

// Claims every node of `partition` with cuda_for_sm90(), plans it, compiles its module for
// the host and runs it: a decline, a plan that needs cuBLASLt or cuDNN, a compile error and a
// run-time error each come back as the error.
Expected<std::vector<Tensor>> run_partition_on_host(const Partition& partition, const std::vector<Tensor>& inputs);

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
