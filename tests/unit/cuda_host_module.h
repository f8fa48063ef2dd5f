// Runs a cuda EP plan without a GPU: its module (the CUDA C that NVRTC compiles on the real
// path) is compiled by the host compiler after cuda_on_host.h, and its steps run on host
// tensors, launching the generated kernels from the host build. The kernels' indexing, the
// arguments the steps pass them and the plan's fusion are all checked this way; the steps
// that call cuBLASLt or cuDNN run on their host stand-ins (cuda_host_libraries.h).
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

// The most blocks a launch runs on the host: enough for every kernel's grid-stride and row
// loops to take more than one turn (as when the grid is capped on a GPU), few enough to stay
// quick. The host module and the host driver share it.
inline constexpr unsigned kMaxHostBlocks = 3;

// One plan's module, compiled for the host.
class HostModule {
 public:
  // Compiles the modules (each a plan's CUDA C) into one shared library, which one compiler
  // run makes much faster than one each, and loads it; the error holds the compiler's output.
  static Expected<std::vector<std::unique_ptr<HostModule>>> compile_all(const std::vector<std::string>& sources);
  static Expected<std::unique_ptr<HostModule>> compile(const std::string& source);

  // Runs the module's extern "C" kernel `name` on `blocks` blocks of `threads` threads.
  Expected<void> launch(std::string_view name, unsigned blocks, unsigned threads, void** args) const;

 private:
  struct Library;  // the shared library: its folder, handle and launcher
  HostModule(std::shared_ptr<const Library> library, std::string prefix)
      : library_(std::move(library)), prefix_(std::move(prefix)) {}
  std::shared_ptr<const Library> library_;
  std::string prefix_;  // of the module's entry points in the library: "m3__"
};

// While one lives, launches run each block's threads on host threads at once instead of as
// fibers (cuda_on_host.h): for kernels whose threads contend through atomics, where a
// read-modify-write that is not atomic loses updates only then. Those kernels must not wait
// at a barrier.
class LaunchOnThreads {
 public:
  LaunchOnThreads();
  ~LaunchOnThreads();
  LaunchOnThreads(const LaunchOnThreads&) = delete;
  LaunchOnThreads& operator=(const LaunchOnThreads&) = delete;
};

// `t` as an upload to the device leaves it: contiguous, in a block aligned to 256 bytes as
// cuMemAlloc's are (cuBLASLt's algorithms may assume it; the host cuBLASLt checks). `t` itself
// when it already is.
Tensor device_copy(const Tensor& t);

// Runs the plan's steps in order on host tensors, as CudaPartition::run does on the device:
// `inputs` (each through device_copy) are the partition's inputs, initializers are read from the graph; returns the
// partition's outputs.
Expected<std::vector<Tensor>> run_plan_on_host(const cuda::Plan& plan, const HostModule& module,
                                               const Partition& partition, const std::vector<Tensor>& inputs);

// The cuda EP as it claims for an sm_90 target, with no GPU needed.
const ExecutionProvider& cuda_for_sm90();

// Claims every node of `partition` with cuda_for_sm90() and plans it; a decline comes back as
// the error.
Expected<cuda::Plan> plan_for_host(const Partition& partition);

// Claims every node of `partition` with cuda_for_sm90(), plans it, compiles its module for
// the host and runs it: a decline, a compile error and a run-time error each come back as the
// error.
Expected<std::vector<Tensor>> run_partition_on_host(const Partition& partition, const std::vector<Tensor>& inputs);

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
