// The host stand-in of a CUDA block (cuda_on_host.h) itself: a kernel whose threads wait at
// different barriers ends the process with a message naming the block, instead of hanging.
#ifdef NXRT_HAVE_CUDA
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <csignal>
#include <string>

#include "cuda/kernel_library.h"
#include "cuda_host_module.h"

using namespace nxrt;

TEST_CASE("cuda_on_host: a block whose threads wait at different barriers aborts, naming the block", "[cuda]") {
  // Thread 0 waits at __syncthreads while the rest of its warp waits for it in a shuffle.
  const std::string source = std::string(cuda::kernel_library_source()) +
                             "extern \"C\" __global__ void split_waits(float* out) {\n"
                             "  if (threadIdx.x == 0) __syncthreads();\n"
                             "  else out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1.f, 1);\n}\n";
  auto module = test::HostModule::compile(source);
  INFO((module ? std::string() : module.error().render()));
  REQUIRE(module);
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the launch, in a process of its own: it must not return
    std::signal(SIGABRT, SIG_DFL);  // not Catch's handler, which would report a failure from here
    ::dup2(pipe_ends[1], STDERR_FILENO);
    float out[64] = {};
    float* data = out;
    void* args[] = {&data};
    (void)(*module)->launch("split_waits", 1, 64, args);
    ::_exit(0);
  }
  ::close(pipe_ends[1]);
  std::string err;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;)
    err.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
  CHECK(err == "cuda_on_host: block 0's threads wait at different barriers for ever\n");
}
#endif  // NXRT_HAVE_CUDA
