// NVRTC programs as RAII handles, and the two compilations of a module.
#include "nvrtc_compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvrtc.h>

#include <algorithm>
#include <future>
#include <memory>

namespace nxrt::cuda {
namespace {

struct ProgramDeleter {
  void operator()(nvrtcProgram p) const { nvrtcDestroyProgram(&p); }
};
using Program = std::unique_ptr<std::remove_pointer_t<nvrtcProgram>, ProgramDeleter>;

std::unexpected<Error> nvrtc_error(nvrtcResult r, std::string_view call, const std::string& name) {
  return fail(ErrorCode::kRuntime, fmt::format("NVRTC failed on the kernels of {}", name),
              fmt::format("{} returned {} ({})", call, static_cast<int>(r), nvrtcGetErrorString(r)));
}

std::string program_log(nvrtcProgram p) {
  std::size_t size = 0;
  if (nvrtcGetProgramLogSize(p, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (nvrtcGetProgramLog(p, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

// One compilation for `target` ("sm_90" or "compute_90"); returns the program.
Expected<Program> compile_for(const std::string& source, const std::string& name, const std::string& target) {
  nvrtcProgram raw = nullptr;
  if (nvrtcResult r = nvrtcCreateProgram(&raw, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return nvrtc_error(r, "nvrtcCreateProgram", name);
  Program program(raw);
  const std::string arch = "-arch=" + target;
  const char* options[] = {arch.c_str(), "-std=c++17"};
  if (nvrtcResult r = nvrtcCompileProgram(program.get(), 2, options); r != NVRTC_SUCCESS)
    return fail(ErrorCode::kRuntime, fmt::format("NVRTC could not compile the kernels of {} for {}", name, target),
                fmt::format("{}\n{}", nvrtcGetErrorString(r), program_log(program.get())),
                "this is a bug in nxrt's cuda code generator; use another EP for this model (--ep cpu)");
  return program;
}

}  // namespace

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::vector<GpuArch> nvrtc_architectures() {
  int count = 0;
  if (nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> numbers(static_cast<std::size_t>(count));
  if (nvrtcGetSupportedArchs(numbers.data()) != NVRTC_SUCCESS) return {};
  std::vector<GpuArch> out;
  for (int n : numbers) out.push_back({n / 10, n % 10});
  std::sort(out.begin(), out.end());
  return out;
}

Expected<void> check_nvrtc_supports(GpuArch arch) {
  const auto supported = nvrtc_architectures();
  if (std::find(supported.begin(), supported.end(), arch) != supported.end()) return {};
  std::vector<std::string> names;
  for (const GpuArch& a : supported) names.push_back(a.sm());
  return fail(ErrorCode::kUsage, fmt::format("NVRTC {} cannot compile for {}", nvrtc_version(), arch.sm()),
              fmt::format("it supports {}", fmt::join(names, ", ")), "pick one of those with --target-arch");
}

Expected<ModuleImage> compile_module(const std::string& source, const std::string& name, GpuArch arch) {
  ModuleImage image{arch, {}, {}};
  // The two compilations are independent: the PTX one runs on a second thread.
  auto ptx_job = std::async(std::launch::async, [&] { return compile_for(source, name, arch.compute()); });
  auto sass = compile_for(source, name, arch.sm());
  auto virt = ptx_job.get();
  if (!sass) return std::unexpected(sass.error());
  std::size_t size = 0;
  if (nvrtcResult r = nvrtcGetCUBINSize(sass->get(), &size); r != NVRTC_SUCCESS)
    return nvrtc_error(r, "nvrtcGetCUBINSize", name);
  image.cubin.resize(size);
  if (nvrtcResult r = nvrtcGetCUBIN(sass->get(), reinterpret_cast<char*>(image.cubin.data())); r != NVRTC_SUCCESS)
    return nvrtc_error(r, "nvrtcGetCUBIN", name);
  if (!virt) return std::unexpected(virt.error());
  if (nvrtcResult r = nvrtcGetPTXSize(virt->get(), &size); r != NVRTC_SUCCESS)
    return nvrtc_error(r, "nvrtcGetPTXSize", name);
  image.ptx.resize(size);
  if (nvrtcResult r = nvrtcGetPTX(virt->get(), image.ptx.data()); r != NVRTC_SUCCESS)
    return nvrtc_error(r, "nvrtcGetPTX", name);
  if (!image.ptx.empty() && image.ptx.back() == '\0') image.ptx.pop_back();
  return image;
}

}  // namespace nxrt::cuda
