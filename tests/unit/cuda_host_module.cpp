// Compiling a cuda plan's module for the host, and running the plan's steps on host tensors.
#ifdef NXRT_HAVE_CUDA
#include "cuda_host_module.h"
#include "cuda_host_libraries.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <regex>

#include "cuda/blas.h"
#include "cuda/cuda_provider.h"
#include "cuda/kernel_library.h"
#include "cuda/ops/ops.h"
#include "cuda/runtime.h"

namespace nxrt::test {
namespace {

namespace fs = std::filesystem;

// Host threads per block for grid-stride kernels (kMaxHostBlocks: cuda_host_module.h).
constexpr unsigned kGridStrideThreads = 32;

std::string trim(std::string s) {
  const auto first = s.find_first_not_of(" \n");
  const auto last = s.find_last_not_of(" \n");
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

// For each `extern "C" __global__ void name(params)` of module `ns`, an entry point
// `ns__name__args(void** a)` that calls it with the arguments cuLaunchKernel would pass from
// the same array.
std::string argument_array_entry_points(const std::string& source, const std::string& ns) {
  static const std::regex kernel(R"re(extern "C" __global__ void (\w+)\(([^)]*)\))re");
  std::string out;
  for (auto it = std::sregex_iterator(source.begin(), source.end(), kernel); it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1];
    std::vector<std::string> args;
    std::string params = (*it)[2];
    std::size_t start = 0;
    while (start <= params.size()) {
      const std::size_t comma = std::min(params.find(',', start), params.size());
      std::string param = std::regex_replace(trim(params.substr(start, comma - start)), std::regex("__restrict__"), "");
      const std::size_t name_at = param.find_last_of(" *") + 1;  // the type is what precedes the name
      args.push_back(fmt::format("*static_cast<{} *>(a[{}])", trim(param.substr(0, name_at)), args.size()));
      start = comma + 1;
    }
    out += fmt::format("extern \"C\" void {0}__{1}__args(void** a) {{ {0}::{1}({2}); }}\n", ns, name, fmt::join(args, ", "));
  }
  return out;
}

// A host tensor aligned as cuMemAlloc's blocks are (256 bytes), which cuBLASLt's algorithms
// may assume of their operands (the host cuBLASLt checks it).
Tensor device_like(DType dtype, Shape shape) {
  const std::size_t bytes = std::max<std::size_t>(1, static_cast<std::size_t>(shape_numel(shape)) * dtype_size(dtype));
  void* block = std::aligned_alloc(256, (bytes + 255) / 256 * 256);
  if (!block) throw std::bad_alloc();
  return Tensor(std::make_shared<Storage>(block, bytes, kHostDevice, [](void* p) { std::free(p); }), dtype,
                std::move(shape));
}
}  // namespace

Tensor device_copy(const Tensor& t) {
  const bool aligned = reinterpret_cast<uintptr_t>(t.view().data()) % 256 == 0;
  if (t.dtype() == DType::kString || (aligned && t.view().is_contiguous())) return t;
  const Tensor contiguous = t.view().is_contiguous() ? t : copy_to_contiguous(t.view());
  Tensor out = device_like(t.dtype(), t.shape());
  std::memcpy(out.mut().data(), contiguous.view().data(), contiguous.nbytes());
  return out;
}

namespace {

// Runs one step on host tensors held in `slots` (indexed by value id).
class HostStepContext final : public cuda::StepContext {
 public:
  HostStepContext(const HostModule& module, const cuda::Step& step, std::vector<Tensor>& slots,
                  cuda::MatmulPlans& matmul_plans)
      : module_(module), step_(step), slots_(slots), matmul_plans_(matmul_plans) {}

  bool has_input(std::size_t i) const override { return i < step_.inputs.size() && step_.inputs[i] != kNoValue; }
  const Tensor& input(std::size_t i) const override { return slots_[static_cast<std::size_t>(step_.inputs[i])]; }
  Expected<Tensor> input_on_host(std::size_t i) override { return input(i); }
  bool wants_output(std::size_t i) const override { return i < step_.outputs.size() && step_.outputs[i] != kNoValue; }
  Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) override {
    Tensor t = device_like(dtype, std::move(shape));
    set_output(i, t);
    return t;
  }
  void set_output(std::size_t i, Tensor t) override {
    if (wants_output(i)) slots_[static_cast<std::size_t>(step_.outputs[i])] = std::move(t);
  }
  Expected<void> set_output_from_host(std::size_t i, const Tensor& host) override {
    set_output(i, host);
    return {};
  }
  Expected<Tensor> upload(const Tensor& host) override { return device_copy(host); }
  Expected<Tensor> scratch(std::size_t bytes) override {
    return device_like(DType::kUInt8, {static_cast<int64_t>(std::max<std::size_t>(bytes, 1))});
  }
  Expected<void> launch(std::string_view kernel, int64_t work, cuda::KernelArgs& args) override {
    const int64_t blocks = std::clamp<int64_t>((work + kGridStrideThreads - 1) / kGridStrideThreads, 1, kMaxHostBlocks);
    return module_.launch(kernel, static_cast<unsigned>(blocks), kGridStrideThreads, args.pointers());
  }
  Expected<void> launch_rows(std::string_view kernel, int64_t rows, int threads, cuda::KernelArgs& args) override {
    const int64_t blocks = std::clamp<int64_t>(rows, 1, kMaxHostBlocks);
    return module_.launch(kernel, static_cast<unsigned>(blocks), static_cast<unsigned>(threads), args.pointers());
  }
  Expected<void> zero(void* data, std::size_t bytes) override {
    std::memset(data, 0, bytes);
    return {};
  }
  Expected<void> copy_on_device(void* to, const void* from, std::size_t bytes) override {
    std::memmove(to, from, bytes);
    return {};
  }
  Expected<cuda::BlasLibrary> blas() override {
    return cuda::BlasLibrary{host_blas_api(), host_blas_handle(), nullptr, matmul_plans_};
  }
  Expected<cuda::DnnLibrary> dnn() override { return cuda::DnnLibrary{host_dnn_api(), host_dnn_handle()}; }
  std::string where() const override { return step_.nodes.front()->describe() + " on the host"; }

 private:
  const HostModule& module_;
  const cuda::Step& step_;
  std::vector<Tensor>& slots_;
  cuda::MatmulPlans& matmul_plans_;
};

// Runs `command` (output to `log`); the error holds what the compiler printed.
Expected<void> run_compiler(const std::string& command, const fs::path& log, std::string_view what) {
  if (std::system(fmt::format("{} >'{}' 2>&1", command, log.string()).c_str()) == 0) return {};
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return fail(ErrorCode::kRuntime, std::string(what), output.substr(0, 4000));
}

// No _FORTIFY_SOURCE (some compilers define it): its longjmp refuses the jumps between fiber
// stacks that cuda_on_host.h makes.
constexpr const char* kCompile = NXRT_HOST_CXX " -std=c++20 -O0 -U_FORTIFY_SOURCE -fPIC -pthread -w";

// cuda_on_host.h and the kernel library (the start of every module), precompiled once per
// process: a module then compiles in a third of the time.
Expected<const fs::path*> precompiled_prelude() {
  static const TempDir dir;
  static const Expected<void> built = [&]() -> Expected<void> {
    std::ofstream(dir / "prelude.h") << "#include \"" << NXRT_CUDA_ON_HOST_PRELUDE << "\"\n"
                                     << cuda::kernel_library_source();
    return run_compiler(fmt::format("{} -x c++-header '{}' -o '{}'", kCompile, (dir / "prelude.h").string(),
                                    (dir / "prelude.h.gch").string()),
                        dir / "prelude.log", "the kernel library does not compile for the host");
  }();
  if (!built) return std::unexpected(built.error());
  return &dir.path();
}

bool launches_on_threads = false;  // while a LaunchOnThreads lives

}  // namespace

LaunchOnThreads::LaunchOnThreads() { launches_on_threads = true; }
LaunchOnThreads::~LaunchOnThreads() { launches_on_threads = false; }

struct HostModule::Library {
  TempDir dir;
  void* handle = nullptr;
  using Launcher = void (*)(void (*)(void**), unsigned, unsigned, void**);
  Launcher on_fibers = nullptr, on_threads = nullptr;  // cuda_on_host.h's two launches
  ~Library() {
    if (handle) ::dlclose(handle);
  }
};

Expected<std::vector<std::unique_ptr<HostModule>>> HostModule::compile_all(const std::vector<std::string>& sources) {
  const std::string_view library = cuda::kernel_library_source();
  auto prelude = precompiled_prelude();
  if (!prelude) return std::unexpected(prelude.error());
  auto lib = std::make_shared<Library>();
  // Each module in a namespace of its own: its kernels keep their names, with C++ linkage.
  std::ofstream file(lib->dir / "modules.cpp");
  file << "#include \"prelude.h\"\n";
  for (std::size_t i = 0; i < sources.size(); ++i) {
    if (!sources[i].starts_with(library))
      return fail(ErrorCode::kRuntime, "a module does not start with the kernel library", "plan.h: PlanBuilder::source");
    const std::string generated = sources[i].substr(library.size());
    const std::string ns = fmt::format("m{}", i);
    file << "namespace " << ns << " {\n"
         << std::regex_replace(generated, std::regex(R"(extern "C" __global__)"), "__global__") << "}\n"
         << argument_array_entry_points(generated, ns);
  }
  file.close();
  const fs::path library_path = lib->dir / "modules.so";
  if (auto r = run_compiler(fmt::format("{} -shared -Winvalid-pch -I'{}' -o '{}' '{}'", kCompile, (*prelude)->string(),
                                        library_path.string(), (lib->dir / "modules.cpp").string()),
                            lib->dir / "compiler.log", "the modules do not compile for the host");
      !r)
    return std::unexpected(r.error());
  lib->handle = ::dlopen(library_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) return fail(ErrorCode::kRuntime, "cannot load the host modules", ::dlerror());
  lib->on_fibers = reinterpret_cast<Library::Launcher>(::dlsym(lib->handle, "nxrt_on_host_launch"));
  lib->on_threads = reinterpret_cast<Library::Launcher>(::dlsym(lib->handle, "nxrt_on_host_launch_on_threads"));
  if (!lib->on_fibers || !lib->on_threads) return fail(ErrorCode::kRuntime, "the host modules have no launchers");
  std::vector<std::unique_ptr<HostModule>> modules;
  for (std::size_t i = 0; i < sources.size(); ++i)
    modules.push_back(std::unique_ptr<HostModule>(new HostModule(lib, fmt::format("m{}__", i))));
  return modules;
}

Expected<std::unique_ptr<HostModule>> HostModule::compile(const std::string& source) {
  auto modules = compile_all({source});
  if (!modules) return std::unexpected(modules.error());
  return std::move(modules->front());
}

Expected<void> HostModule::launch(std::string_view name, unsigned blocks, unsigned threads, void** args) const {
  const std::string symbol = fmt::format("{}{}__args", prefix_, name);
  auto* kernel = reinterpret_cast<void (*)(void**)>(::dlsym(library_->handle, symbol.c_str()));
  if (!kernel) return fail(ErrorCode::kRuntime, fmt::format("the module has no kernel '{}'", name));
  (launches_on_threads ? library_->on_threads : library_->on_fibers)(kernel, blocks, threads, args);
  return {};
}

Expected<std::vector<Tensor>> run_plan_on_host(const cuda::Plan& plan, const HostModule& module,
                                               const Partition& partition, const std::vector<Tensor>& inputs) {
  const Graph& graph = *partition.graph;
  std::vector<Tensor> slots(graph.values.size());
  for (std::size_t i = 0; i < partition.inputs.size(); ++i)
    slots[static_cast<std::size_t>(partition.inputs[i])] = device_copy(inputs.at(i));
  for (std::size_t v = 0; v < graph.values.size(); ++v)
    if (const auto& weight = graph.values[v].initializer) {
      auto t = weight->materialize();
      if (!t) return std::unexpected(t.error());
      slots[v] = device_copy(*t);
    }
  cuda::MatmulPlans matmul_plans;
  for (const auto& step : plan.steps) {
    HostStepContext ctx(module, *step, slots, matmul_plans);
    if (auto r = step->run(ctx); !r) return std::unexpected(r.error());
  }
  std::vector<Tensor> outputs;
  for (ValueId v : partition.outputs) outputs.push_back(slots[static_cast<std::size_t>(v)]);
  return outputs;
}

const ExecutionProvider& cuda_for_sm90() {
  static const std::unique_ptr<ExecutionProvider> ep = [] {
    EpConfig config;
    config.options[std::string(cuda::kTargetArchOption)] = "sm_90";
    auto made = cuda::CudaProvider::create(config);
    if (!made) throw std::runtime_error(made.error().render());
    return std::move(*made);
  }();
  return *ep;
}

Expected<cuda::Plan> plan_for_host(const Partition& p) {
  for (NodeId n : p.nodes)
    if (KernelMatch m = cuda_for_sm90().claim(NodeContext(*p.graph, p.graph->node(n))); !m)
      return fail(ErrorCode::kUnclaimed, fmt::format("the cuda EP declines {}", p.graph->node(n).describe()), m.reason());
  static const auto table = cuda::make_op_table();
  if (!table) return std::unexpected(table.error());
  return cuda::build_plan(p, **table);
}

Expected<std::vector<Tensor>> run_partition_on_host(const Partition& p, const std::vector<Tensor>& inputs) {
  auto plan = plan_for_host(p);
  if (!plan) return std::unexpected(plan.error());
  auto module = HostModule::compile(plan->source);
  if (!module) return std::unexpected(module.error());
  return run_plan_on_host(*plan, **module, p, inputs);
}

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
