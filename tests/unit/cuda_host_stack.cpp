// The host driver and NVRTC: device memory is malloc'd, copies and frees are checked against
// the live allocations, a module is the CUDA C its image carries, compiled for the host once
// per distinct text, and a launch runs the kernel's blocks as cuda_on_host.h does.
#ifdef NXRT_HAVE_CUDA
#include "cuda_host_stack.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_host_libraries.h"
#include "cuda_host_module.h"

namespace nxrt::test {
namespace {

struct Function {
  const HostModule* module;
  std::string name;
};
struct LoadedModule {
  std::shared_ptr<const HostModule> code;
  std::map<std::string, std::unique_ptr<Function>> functions;
};

// An upload the stream may not have read yet: a real driver reads a pinned source only when
// the stream gets to the copy, so the source must stay unchanged until the stream is
// synchronized. The host driver copies at once and checks the source at the next sync.
struct PendingUpload {
  const void* source;
  std::vector<unsigned char> bytes;
};

struct DriverState {
  std::mutex mutex;
  std::vector<PendingUpload> pending_uploads;
  int device_count = 1;
  cuda::GpuArch arch{9, 0};
  std::map<uintptr_t, std::size_t> live;  // device allocations: address -> bytes
  std::map<std::string, std::shared_ptr<const HostModule>> compiled;  // by CUDA C text
  HostDriverCounts counts;
};
DriverState& state() {
  static DriverState s;
  return s;
}

// Whether [p, p + bytes) lies inside one live allocation.
bool is_device_range(const DriverState& s, CUdeviceptr p, std::size_t bytes) {
  auto it = s.live.upper_bound(static_cast<uintptr_t>(p));
  if (it == s.live.begin()) return false;
  --it;
  return static_cast<uintptr_t>(p) + bytes <= it->first + it->second;
}

// The contexts current on each thread, as the driver keeps them: a stack per thread. The host
// devices' contexts are 0x1000 + ordinal (ctx_retain); any other is one of the program that
// embeds nxrt (push_foreign_context).
thread_local std::vector<CUcontext> context_stack;
constexpr uintptr_t kFirstDeviceContext = 0x1000;

// Whether a host device's context is current on the calling thread, as every call that acts
// on a context needs (the EP's ContextScope).
bool in_device_context() {
  if (context_stack.empty()) return false;
  const auto c = reinterpret_cast<uintptr_t>(context_stack.back());
  return c >= kFirstDeviceContext && c < kFirstDeviceContext + static_cast<uintptr_t>(state().device_count);
}

CUresult init(unsigned) { return CUDA_SUCCESS; }
CUresult error_name(CUresult r, const char** s) {
  switch (r) {
    case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; break;
    case CUDA_ERROR_INVALID_IMAGE: *s = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; break;
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}
CUresult error_string(CUresult r, const char** s) {
  const char* name = nullptr;
  if (error_name(r, &name) != CUDA_SUCCESS) return CUDA_ERROR_INVALID_VALUE;
  *s = "reported by the host driver";
  return CUDA_SUCCESS;
}
CUresult driver_version(int* v) {
  *v = CUDA_VERSION;
  return CUDA_SUCCESS;
}
CUresult device_count(int* n) {
  *n = state().device_count;
  return CUDA_SUCCESS;
}
CUresult device_get(CUdevice* d, int ordinal) {
  if (ordinal < 0 || ordinal >= state().device_count) return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
CUresult device_name(char* name, int size, CUdevice) {
  std::snprintf(name, static_cast<std::size_t>(size), "nxrt host stand-in");
  return CUDA_SUCCESS;
}
CUresult device_attribute(int* v, CUdevice_attribute attr, CUdevice) {
  if (attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR) *v = state().arch.major;
  else if (attr == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR) *v = state().arch.minor;
  else return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}
CUresult ctx_retain(CUcontext* c, CUdevice d) {
  std::lock_guard lock(state().mutex);
  ++state().counts.context_retains;
  *c = reinterpret_cast<CUcontext>(kFirstDeviceContext + static_cast<uintptr_t>(d));
  return CUDA_SUCCESS;
}
CUresult ctx_release(CUdevice) {
  std::lock_guard lock(state().mutex);
  return --state().counts.context_retains < 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}
CUresult ctx_push(CUcontext c) {
  if (!c) return CUDA_ERROR_INVALID_VALUE;
  context_stack.push_back(c);
  return CUDA_SUCCESS;
}
CUresult ctx_pop(CUcontext* c) {
  if (context_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (c) *c = context_stack.back();
  context_stack.pop_back();
  return CUDA_SUCCESS;
}
CUresult stream_create(CUstream* s, unsigned) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  *s = reinterpret_cast<CUstream>(new char);
  return CUDA_SUCCESS;
}
CUresult stream_destroy(CUstream s) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  delete reinterpret_cast<char*>(s);
  return CUDA_SUCCESS;
}
// Every call has finished already; what is left to check is that no upload's source changed
// (or was freed) before this point.
CUresult stream_synchronize(CUstream) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  ++state().counts.synchronizations;
  std::vector<PendingUpload> pending = std::move(state().pending_uploads);
  state().pending_uploads.clear();
  for (const PendingUpload& u : pending)
    if (std::memcmp(u.source, u.bytes.data(), u.bytes.size()) != 0) return CUDA_ERROR_ILLEGAL_ADDRESS;
  return CUDA_SUCCESS;
}

CUresult mem_alloc(CUdeviceptr* p, std::size_t bytes) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  // cuMemAlloc's blocks are aligned to at least 256 bytes; libraries rely on it.
  void* block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  std::lock_guard lock(state().mutex);
  state().live.emplace(reinterpret_cast<uintptr_t>(block), bytes);
  ++state().counts.allocations;
  *p = reinterpret_cast<CUdeviceptr>(block);
  return CUDA_SUCCESS;
}
CUresult mem_free(CUdeviceptr p) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  if (state().live.erase(static_cast<uintptr_t>(p)) == 0) return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void*>(p));
  return CUDA_SUCCESS;
}
CUresult copy_in(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  if (!is_device_range(state(), dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  const auto* first = static_cast<const unsigned char*>(src);
  state().pending_uploads.push_back(PendingUpload{src, std::vector<unsigned char>(first, first + bytes)});
  ++state().counts.uploads;
  return CUDA_SUCCESS;
}
CUresult copy_out(void* dst, CUdeviceptr src, std::size_t bytes, CUstream) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  if (!is_device_range(state(), src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  ++state().counts.downloads;
  return CUDA_SUCCESS;
}
CUresult copy_within(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  if (!is_device_range(state(), dst, bytes) || !is_device_range(state(), src, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), bytes);
  ++state().counts.device_copies;
  return CUDA_SUCCESS;
}
CUresult memset8(CUdeviceptr dst, unsigned char value, std::size_t bytes, CUstream) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  std::lock_guard lock(state().mutex);
  if (!is_device_range(state(), dst, bytes)) return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void*>(dst), value, bytes);
  return CUDA_SUCCESS;
}

// The image is the CUDA C the host NVRTC passed through (NUL-terminated, cubin or PTX alike).
CUresult module_load(CUmodule* m, const void* image) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  const std::string source(static_cast<const char*>(image));
  std::shared_ptr<const HostModule> code;
  {
    std::lock_guard lock(state().mutex);
    ++state().counts.modules_loaded;
    if (auto it = state().compiled.find(source); it != state().compiled.end()) code = it->second;
  }
  if (!code) {
    auto built = HostModule::compile(source);
    if (!built) return CUDA_ERROR_INVALID_IMAGE;
    code = std::move(*built);
    std::lock_guard lock(state().mutex);
    state().compiled.emplace(source, code);
  }
  *m = reinterpret_cast<CUmodule>(new LoadedModule{std::move(code), {}});
  return CUDA_SUCCESS;
}
CUresult module_unload(CUmodule m) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  delete reinterpret_cast<LoadedModule*>(m);
  return CUDA_SUCCESS;
}
CUresult module_function(CUfunction* f, CUmodule m, const char* name) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  auto* module = reinterpret_cast<LoadedModule*>(m);
  auto& slot = module->functions[name];
  if (!slot) slot = std::make_unique<Function>(Function{module->code.get(), name});
  *f = reinterpret_cast<CUfunction>(slot.get());
  return CUDA_SUCCESS;
}
CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shared,
                CUstream, void** params, void** extra) {
  if (!in_device_context()) return CUDA_ERROR_INVALID_CONTEXT;
  // The EP launches 1-D grids of 1-D blocks, static shared memory only, arguments by array.
  if (gx == 0 || gy != 1 || gz != 1 || bx == 0 || bx > 1024 || by != 1 || bz != 1 || shared != 0 || !params || extra)
    return CUDA_ERROR_INVALID_VALUE;
  const auto* fn = reinterpret_cast<const Function*>(f);
  {
    std::lock_guard lock(state().mutex);
    ++state().counts.launches;
  }
  return fn->module->launch(fn->name, std::min(gx, kMaxHostBlocks), bx, params) ? CUDA_SUCCESS : CUDA_ERROR_NOT_FOUND;
}

// ---- NVRTC: the source is the output ------------------------------------------------------

constexpr int kArchs[] = {75, 80, 86, 89, 90, 100, 120};

struct Program {
  std::string source;
  bool compiled = false;
};
Program* of(nvrtcProgram p) { return reinterpret_cast<Program*>(p); }

nvrtcResult nvrtc_version(int* major, int* minor) {
  *major = CUDA_VERSION / 1000;
  *minor = CUDA_VERSION % 1000 / 10;
  return NVRTC_SUCCESS;
}
nvrtcResult arch_count(int* n) {
  *n = static_cast<int>(std::size(kArchs));
  return NVRTC_SUCCESS;
}
nvrtcResult archs(int* out) {
  std::copy(std::begin(kArchs), std::end(kArchs), out);
  return NVRTC_SUCCESS;
}
const char* nvrtc_error(nvrtcResult) { return "reported by the host NVRTC"; }
nvrtcResult create_program(nvrtcProgram* p, const char* source, const char*, int, const char* const*, const char* const*) {
  *p = reinterpret_cast<nvrtcProgram>(new Program{source});
  return NVRTC_SUCCESS;
}
nvrtcResult destroy_program(nvrtcProgram* p) {
  delete of(*p);
  *p = nullptr;
  return NVRTC_SUCCESS;
}
nvrtcResult compile_program(nvrtcProgram p, int count, const char* const* options) {
  // An -arch option is required, as the EP always gives one.
  if (std::none_of(options, options + count, [](const char* o) { return std::strncmp(o, "-arch=", 6) == 0; }))
    return NVRTC_ERROR_INVALID_OPTION;
  of(p)->compiled = true;
  return NVRTC_SUCCESS;
}
nvrtcResult log_size(nvrtcProgram, std::size_t* size) {
  *size = 1;
  return NVRTC_SUCCESS;
}
nvrtcResult log_text(nvrtcProgram, char* log) {
  *log = '\0';
  return NVRTC_SUCCESS;
}
nvrtcResult output_size(nvrtcProgram p, std::size_t* size) {
  if (!of(p)->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  *size = of(p)->source.size() + 1;
  return NVRTC_SUCCESS;
}
nvrtcResult output(nvrtcProgram p, char* out) {
  if (!of(p)->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
  std::memcpy(out, of(p)->source.c_str(), of(p)->source.size() + 1);
  return NVRTC_SUCCESS;
}

Expected<std::shared_ptr<const cuda::Driver>> host_driver() {
  cuda::DriverApi api{};
  api.init = init;
  api.get_error_name = error_name;
  api.get_error_string = error_string;
  api.driver_get_version = driver_version;
  api.device_get_count = device_count;
  api.device_get = device_get;
  api.device_get_name = device_name;
  api.device_get_attribute = device_attribute;
  api.primary_ctx_retain = ctx_retain;
  api.primary_ctx_release = ctx_release;
  api.ctx_push_current = ctx_push;
  api.ctx_pop_current = ctx_pop;
  api.stream_create = stream_create;
  api.stream_destroy = stream_destroy;
  api.stream_synchronize = stream_synchronize;
  api.mem_alloc = mem_alloc;
  api.mem_free = mem_free;
  api.memcpy_htod_async = copy_in;
  api.memcpy_dtoh_async = copy_out;
  api.memcpy_dtod_async = copy_within;
  api.memset_d8_async = memset8;
  api.module_load_data = module_load;
  api.module_unload = module_unload;
  api.module_get_function = module_function;
  api.launch_kernel = launch;
  return cuda::Driver::start(api);
}

Expected<std::shared_ptr<const cuda::NvrtcApi>> host_nvrtc() {
  auto api = std::make_shared<cuda::NvrtcApi>();
  api->version = nvrtc_version;
  api->get_num_supported_archs = arch_count;
  api->get_supported_archs = archs;
  api->get_error_string = nvrtc_error;
  api->create_program = create_program;
  api->destroy_program = destroy_program;
  api->compile_program = compile_program;
  api->get_program_log_size = log_size;
  api->get_program_log = log_text;
  api->get_cubin_size = output_size;
  api->get_cubin = output;
  api->get_ptx_size = output_size;
  api->get_ptx = output;
  return std::shared_ptr<const cuda::NvrtcApi>(std::move(api));
}

Expected<std::shared_ptr<const cuda::BlasApi>> host_blas() {
  return std::shared_ptr<const cuda::BlasApi>(&host_blas_api(), [](const cuda::BlasApi*) {});
}
Expected<std::shared_ptr<const cuda::DnnApi>> host_dnn() {
  return std::shared_ptr<const cuda::DnnApi>(&host_dnn_api(), [](const cuda::DnnApi*) {});
}

}  // namespace

cuda::CudaStack host_stack() { return cuda::CudaStack{host_driver, host_nvrtc, host_blas, host_dnn}; }

void set_host_devices(int count, cuda::GpuArch arch) {
  std::lock_guard lock(state().mutex);
  state().device_count = count;
  state().arch = arch;
}

HostDriverCounts host_driver_counts() {
  std::lock_guard lock(state().mutex);
  HostDriverCounts c = state().counts;
  c.live_allocations = state().live.size();
  return c;
}

void push_foreign_context() { context_stack.push_back(reinterpret_cast<CUcontext>(uintptr_t{0xf00d})); }
void pop_context() {
  if (!context_stack.empty()) context_stack.pop_back();
}
uintptr_t current_context() { return context_stack.empty() ? 0 : reinterpret_cast<uintptr_t>(context_stack.back()); }

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
