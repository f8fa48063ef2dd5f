// NVRTC programs as RAII handles, and the two compilations of a module.
#include "nvrtc_compiler.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <future>
#include <vector>

namespace nxrt::cuda {
namespace {

// An nvrtcProgram destroyed with the API it came from.
class Program {
 public:
  Program(const NvrtcApi& api, nvrtcProgram p) : api_(&api), p_(p) {}
  Program(Program&& o) noexcept : api_(o.api_), p_(std::exchange(o.p_, nullptr)) {}
  Program& operator=(Program&& o) noexcept {
    std::swap(api_, o.api_);
    std::swap(p_, o.p_);
    return *this;
  }
  ~Program() {
    if (p_) api_->destroy_program(&p_);
  }
  nvrtcProgram get() const { return p_; }

 private:
  const NvrtcApi* api_;
  nvrtcProgram p_;
};

std::unexpected<Error> nvrtc_error(const NvrtcApi& api, nvrtcResult r, std::string_view call, const std::string& name) {
  return fail(ErrorCode::kRuntime, fmt::format("NVRTC failed on the kernels of {}", name),
              fmt::format("{} returned {} ({})", call, static_cast<int>(r), api.get_error_string(r)));
}

std::string program_log(const NvrtcApi& api, nvrtcProgram p) {
  std::size_t size = 0;
  if (api.get_program_log_size(p, &size) != NVRTC_SUCCESS || size <= 1) return {};
  std::string log(size, '\0');
  if (api.get_program_log(p, log.data()) != NVRTC_SUCCESS) return {};
  log.resize(size - 1);
  return log;
}

struct Compilation {
  Program program;  // holds the log
  nvrtcResult result;
};

// One NVRTC run of `source` with `options`.
Expected<Compilation> run_nvrtc(const NvrtcApi& api, const std::string& source, const std::string& name,
                                const std::vector<const char*>& options) {
  nvrtcProgram raw = nullptr;
  if (nvrtcResult r = api.create_program(&raw, source.c_str(), (name + ".cu").c_str(), 0, nullptr, nullptr);
      r != NVRTC_SUCCESS)
    return nvrtc_error(api, r, "nvrtcCreateProgram", name);
  Program program(api, raw);
  const nvrtcResult r = api.compile_program(program.get(), static_cast<int>(options.size()), options.data());
  return Compilation{std::move(program), r};
}

// One compilation for `target` ("sm_90" or "compute_90"). The optimizer and ptxas work on the
// module's kernels in parallel, on every core (--split-compile=0; the output is the same from
// run to run); an NVRTC that lacks the option compiles on one.
Expected<Program> compile_for(const NvrtcApi& api, const std::string& source, const std::string& name,
                              const std::string& target) {
  const std::string arch = "-arch=" + target;
  auto run = run_nvrtc(api, source, name, {arch.c_str(), "-std=c++17", "--split-compile=0"});
  if (run && run->result == NVRTC_ERROR_INVALID_OPTION) run = run_nvrtc(api, source, name, {arch.c_str(), "-std=c++17"});
  if (!run) return std::unexpected(run.error());
  if (run->result != NVRTC_SUCCESS)
    return fail(ErrorCode::kRuntime, fmt::format("NVRTC could not compile the kernels of {} for {}", name, target),
                fmt::format("{}\n{}", api.get_error_string(run->result), program_log(api, run->program.get())),
                "this is a bug in nxrt's cuda code generator; use another EP for this model (--ep cpu)");
  return std::move(run->program);
}

}  // namespace

Expected<std::shared_ptr<const NvrtcCompiler>> NvrtcCompiler::load(
    Expected<std::shared_ptr<const NvrtcApi>> (*load_api)()) {
  auto api = load_api();
  if (!api) return std::unexpected(api.error());
  return std::shared_ptr<const NvrtcCompiler>(new NvrtcCompiler(std::move(*api)));
}

std::string NvrtcCompiler::version() const {
  int major = 0, minor = 0;
  if (api_->version(&major, &minor) != NVRTC_SUCCESS) return "unknown";
  return fmt::format("{}.{}", major, minor);
}

std::vector<GpuArch> NvrtcCompiler::architectures() const {
  int count = 0;
  if (api_->get_num_supported_archs(&count) != NVRTC_SUCCESS || count <= 0) return {};
  std::vector<int> numbers(static_cast<std::size_t>(count));
  if (api_->get_supported_archs(numbers.data()) != NVRTC_SUCCESS) return {};
  std::vector<GpuArch> out;
  for (int n : numbers) out.push_back({n / 10, n % 10});
  std::sort(out.begin(), out.end());
  return out;
}

Expected<void> NvrtcCompiler::check_supports(GpuArch arch) const {
  const auto supported = architectures();
  if (std::find(supported.begin(), supported.end(), arch) != supported.end()) return {};
  std::vector<std::string> names;
  for (const GpuArch& a : supported) names.push_back(a.sm());
  return fail(ErrorCode::kUsage, fmt::format("NVRTC {} cannot compile for {}", version(), arch.sm()),
              fmt::format("it supports {}", fmt::join(names, ", ")), "pick one of those with --target-arch");
}

Expected<ModuleImage> NvrtcCompiler::compile(const std::string& source, const std::string& name, GpuArch arch) const {
  const NvrtcApi& api = *api_;
  ModuleImage image{arch, {}, {}, version()};
  // The two compilations are independent: the PTX one runs on a second thread.
  auto ptx_job = std::async(std::launch::async, [&] { return compile_for(api, source, name, arch.compute()); });
  auto sass = compile_for(api, source, name, arch.sm());
  auto virt = ptx_job.get();
  if (!sass) return std::unexpected(sass.error());
  if (!virt) return std::unexpected(virt.error());
  std::size_t size = 0;
  if (nvrtcResult r = api.get_cubin_size(sass->get(), &size); r != NVRTC_SUCCESS)
    return nvrtc_error(api, r, "nvrtcGetCUBINSize", name);
  image.cubin.resize(size);
  if (nvrtcResult r = api.get_cubin(sass->get(), reinterpret_cast<char*>(image.cubin.data())); r != NVRTC_SUCCESS)
    return nvrtc_error(api, r, "nvrtcGetCUBIN", name);
  if (nvrtcResult r = api.get_ptx_size(virt->get(), &size); r != NVRTC_SUCCESS)
    return nvrtc_error(api, r, "nvrtcGetPTXSize", name);
  image.ptx.resize(size);
  if (nvrtcResult r = api.get_ptx(virt->get(), image.ptx.data()); r != NVRTC_SUCCESS)
    return nvrtc_error(api, r, "nvrtcGetPTX", name);
  if (!image.ptx.empty() && image.ptx.back() == '\0') image.ptx.pop_back();
  return image;
}

}  // namespace nxrt::cuda
