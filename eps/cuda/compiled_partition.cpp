// Running a plan: values in slots by lifetime, steps on the device's stream, boundary copies,
// host copies of the small values steps read on the host.
#include "compiled_partition.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "runtime.h"

namespace nxrt::cuda {

// What one run owns: its values by ValueId, and the host sources of the uploads it enqueued,
// which must outlive the copies (until the run's final synchronization).
struct RunState {
  std::vector<RunValue> values;
  std::vector<Tensor> uploaded;
};

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;  // kernels loop over the rest (grid-stride)

class RunContext final : public StepContext {
 public:
  RunContext(Gpu& gpu, Module& module, const Step& step, RunState& run, const std::map<ValueId, RunValue>& constants)
      : gpu_(gpu), module_(module), step_(step), run_(run), constants_(constants) {}

  bool has_input(std::size_t i) const override { return i < step_.inputs.size() && step_.inputs[i] != kNoValue; }
  const Tensor& input(std::size_t i) const override { return value(step_.inputs[i]).on_device; }
  Expected<Tensor> input_on_host(std::size_t i) override {
    const RunValue& v = value(step_.inputs[i]);
    if (v.on_device.device().is_host()) return v.on_device;
    if (v.on_host.defined()) return v.on_host;
    Tensor host = Tensor::empty(v.on_device.dtype(), v.on_device.shape());
    if (auto r = gpu_.copy(v.on_device.view(), host.mut()); !r) return forward_error(std::move(r), where());
    if (!constants_.contains(step_.inputs[i])) run_.values[static_cast<std::size_t>(step_.inputs[i])].on_host = host;
    return host;
  }
  bool wants_output(std::size_t i) const override { return i < step_.outputs.size() && step_.outputs[i] != kNoValue; }
  Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) override {
    auto t = gpu_.allocate(dtype, std::move(shape));
    if (!t) return forward_error(std::move(t), where());
    set_output(i, *t);
    return t;
  }
  void set_output(std::size_t i, Tensor t) override {
    if (!wants_output(i)) return;
    RunValue& out = run_.values[static_cast<std::size_t>(step_.outputs[i])];
    out.on_host = host_copy_of_view(t);
    out.on_device = std::move(t);
  }
  Expected<void> set_output_from_host(std::size_t i, const Tensor& host) override {
    auto t = upload(host);
    if (!t) return std::unexpected(t.error());
    set_output(i, std::move(*t));
    if (wants_output(i)) run_.values[static_cast<std::size_t>(step_.outputs[i])].on_host = host;
    return {};
  }
  Expected<Tensor> upload(const Tensor& host) override {
    auto t = gpu_.allocate(host.dtype(), host.shape());
    if (!t) return forward_error(std::move(t), where());
    const Tensor source = host.view().is_contiguous() ? host : copy_to_contiguous(host.view());
    if (auto r = gpu_.enqueue_copy(source.view(), t->mut()); !r) return forward_error(std::move(r), where());
    run_.uploaded.push_back(source);
    return t;
  }
  Expected<Tensor> scratch(std::size_t bytes) override {
    auto s = gpu_.allocate_bytes(std::max<std::size_t>(bytes, 1));
    if (!s) return forward_error(std::move(s), where());
    return Tensor(std::move(*s), DType::kUInt8, {static_cast<int64_t>(bytes)});
  }
  Expected<void> launch(std::string_view kernel, int64_t work, KernelArgs& args) override {
    const int64_t blocks = std::clamp<int64_t>((work + kThreads - 1) / kThreads, 1, kMaxBlocks);
    return launch_grid(kernel, blocks, kThreads, args);
  }
  Expected<void> launch_rows(std::string_view kernel, int64_t rows, int threads, KernelArgs& args) override {
    return launch_grid(kernel, std::clamp<int64_t>(rows, 1, kMaxBlocks), threads, args);
  }
  Expected<void> zero(void* data, std::size_t bytes) override {
    const Driver& driver = gpu_.driver();
    return driver.check(driver.api().memset_d8_async(reinterpret_cast<CUdeviceptr>(data), 0, bytes, gpu_.stream()),
                        "cuMemsetD8Async", fmt::format("{}: cannot zero the output", where()));
  }
  Expected<void> copy_on_device(void* to, const void* from, std::size_t bytes) override {
    const Driver& driver = gpu_.driver();
    return driver.check(driver.api().memcpy_dtod_async(reinterpret_cast<CUdeviceptr>(to),
                                                       reinterpret_cast<CUdeviceptr>(from), bytes, gpu_.stream()),
                        "cuMemcpyDtoDAsync", fmt::format("{}: cannot copy {} bytes on the device", where(), bytes));
  }
  Expected<BlasLibrary> blas() override {
    return BlasLibrary{gpu_.blas_api(), gpu_.blas(), reinterpret_cast<cudaStream_t>(gpu_.stream()), gpu_.matmul_plans()};
  }
  Expected<DnnLibrary> dnn() override {
    if (auto r = gpu_.open_dnn(); !r) return forward_error(std::move(r), where());
    return DnnLibrary{gpu_.dnn_api(), gpu_.dnn()};
  }
  std::string where() const override { return step_.nodes.front()->describe() + " on the cuda EP"; }

 private:
  Expected<void> launch_grid(std::string_view kernel, int64_t blocks, int threads, KernelArgs& args) {
    auto f = module_.function(std::string(kernel));
    if (!f) return forward_error(std::move(f), where());
    return gpu_.driver().check(gpu_.driver().api().launch_kernel(*f, static_cast<unsigned>(blocks), 1, 1,
                                                                 static_cast<unsigned>(threads), 1, 1, 0, gpu_.stream(),
                                                                 args.pointers(), nullptr),
                               "cuLaunchKernel", fmt::format("{}: cannot launch {}", where(), kernel));
  }

  const RunValue& value(ValueId v) const {
    if (auto it = constants_.find(v); it != constants_.end()) return it->second;
    return run_.values[static_cast<std::size_t>(v)];
  }
  // A view step's output (Reshape, Squeeze, Identity...) shares its input's bytes, and so its
  // host copy, when the input has one.
  Tensor host_copy_of_view(const Tensor& t) const {
    for (ValueId v : step_.inputs) {
      if (v == kNoValue) continue;
      const RunValue& in = value(v);
      if (in.on_host.defined() && in.on_host.view().is_contiguous() && in.on_device.storage() == t.storage() &&
          in.on_device.view().data() == t.view().data() && in.on_device.nbytes() == t.nbytes() &&
          in.on_device.dtype() == t.dtype() && t.view().is_contiguous())
        return in.on_host.reshaped(t.shape());
    }
    return {};
  }

  Gpu& gpu_;
  Module& module_;
  const Step& step_;
  RunState& run_;
  const std::map<ValueId, RunValue>& constants_;
};

}  // namespace

Expected<Gpu*> DeviceSlot::get() {
  if (!info_) return std::unexpected(info_.error());
  std::lock_guard lock(mutex_);
  if (gpu_) return gpu_.get();
  if (open_error_) return std::unexpected(*open_error_);
  auto gpu = Gpu::open(driver_, *info_, stack_);
  if (!gpu) {
    open_error_ = gpu.error();
    return std::unexpected(gpu.error());
  }
  gpu_ = std::move(*gpu);
  return gpu_.get();
}

CudaPartition::CudaPartition(PartitionSetup setup) : setup_(std::move(setup)) {
  // Each value is dropped after the last step that reads it (boundary outputs are kept).
  const std::set<ValueId> kept(setup_.partition.outputs.begin(), setup_.partition.outputs.end());
  std::map<ValueId, std::size_t> last;
  for (std::size_t s = 0; s < setup_.plan.steps.size(); ++s)
    for (ValueId v : setup_.plan.steps[s]->inputs)
      if (v != kNoValue) last[v] = s;
  release_.resize(setup_.plan.steps.size());
  for (const auto& [v, s] : last)
    if (!kept.contains(v)) release_[s].push_back(v);
}

CudaPartition::~CudaPartition() {
  // The kernels belong to the context: unload them inside it.
  if (!module_) return;
  if (auto gpu = setup_.device->get()) {
    auto scope = (*gpu)->enter();
    module_.reset();
  }
}

Expected<void> CudaPartition::prepare(Gpu& gpu) {
  if (module_) return {};
  const Graph& graph = *setup_.partition.graph;
  auto module = Module::load(gpu.driver(), setup_.image, gpu.info().arch, gpu.info().name);
  if (!module) return forward_error(std::move(module), fmt::format("loading the kernels of partition '{}'", setup_.partition.name));
  for (const auto& step : setup_.plan.steps)
    for (ValueId v : step->inputs) {
      if (v == kNoValue || constants_.contains(v) || !graph.value(v).initializer) continue;
      auto host = graph.value(v).initializer->materialize();
      if (!host) return forward_error(std::move(host), fmt::format("reading initializer '{}'", graph.value(v).name));
      auto on_device = gpu.allocate(host->dtype(), host->shape());
      if (!on_device) return std::unexpected(on_device.error());
      const Tensor contiguous = host->view().is_contiguous() ? *host : copy_to_contiguous(host->view());
      if (auto r = gpu.copy(contiguous.view(), on_device->mut()); !r)
        return forward_error(std::move(r), fmt::format("uploading initializer '{}'", graph.value(v).name));
      // Small constants (shapes, axes, Slice bounds, Resize scales) keep a host copy, so that
      // steps reading them on the host need not wait for the stream.
      constants_.emplace(v, RunValue{std::move(*on_device), contiguous.nbytes() <= kHostCopyBytes ? contiguous : Tensor()});
    }
  module_ = std::move(*module);
  return {};
}

Expected<void> CudaPartition::run_steps(Gpu& gpu, RunState& state) {
  using Clock = std::chrono::steady_clock;
  profile_.clear();
  for (std::size_t s = 0; s < setup_.plan.steps.size(); ++s) {
    const Step& step = *setup_.plan.steps[s];
    const auto t0 = Clock::now();
    RunContext ctx(gpu, *module_, step, state, constants_);
    if (auto r = step.run(ctx); !r) return forward_error(std::move(r), "running " + ctx.where());
    StepProfile prof;
    for (const Node* n : step.nodes) prof.nodes.push_back(n->name);
    prof.op_type = step.nodes.front()->op_type;
    prof.variant = step.variant();
    if (profiling_) {  // a step's time is only known once the stream has done its work
      if (auto r = gpu.synchronize(); !r) return forward_error(std::move(r), ctx.where());
      prof.us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
    profile_.push_back(std::move(prof));
    for (ValueId v : release_[s]) state.values[static_cast<std::size_t>(v)] = RunValue();
  }
  return {};
}

Expected<std::vector<RuntimeValue>> CudaPartition::run(std::span<const RuntimeValue> inputs) {
  const Partition& p = setup_.partition;
  auto gpu = setup_.device->get();
  if (!gpu)
    return fail(ErrorCode::kRuntime, fmt::format("partition '{}' cannot run: the cuda EP has no device", p.name),
                gpu.error().what,
                fmt::format("it was compiled for {} only; save it with nxrt compile-epcontext and run it on such a GPU",
                            setup_.image.arch.sm()));
  std::lock_guard run_lock((*gpu)->run_mutex());  // concurrent session runs share the device's handles
  auto scope = (*gpu)->enter();
  if (!scope) return std::unexpected(scope.error());
  if (auto r = prepare(**gpu); !r) return std::unexpected(r.error());
  RunState state;
  state.values.resize(p.graph->values.size());
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const RuntimeValue& in = inputs[i];
    if (!in.is_tensor())
      return fail(ErrorCode::kRuntime, fmt::format("partition '{}': input '{}' is not a tensor", p.name, p.graph->value(p.inputs[i]).name));
    RunValue& value = state.values[static_cast<std::size_t>(p.inputs[i])];
    const Tensor& t = in.tensor();
    if (t.device() == (*gpu)->device()) {
      value.on_device = t;
      continue;
    }
    if (!t.device().is_host())
      return fail(ErrorCode::kRuntime, fmt::format("partition '{}': input '{}' is on {}; it takes host or {} tensors", p.name,
                                                   p.graph->value(p.inputs[i]).name, t.device().to_string(),
                                                   (*gpu)->device().to_string()));
    // A host input (takes_host_inputs): uploaded in stream order, and its host copy kept, so a
    // shape or axes computed by a cpu partition is read without a wait.
    auto moved = (*gpu)->allocate(t.dtype(), t.shape());
    if (!moved) return std::unexpected(moved.error());
    const Tensor host = t.view().is_contiguous() ? t : copy_to_contiguous(t.view());
    if (auto r = (*gpu)->enqueue_copy(host.view(), moved->mut()); !r) return std::unexpected(r.error());
    state.uploaded.push_back(host);
    value.on_device = std::move(*moved);
    value.on_host = host;
  }
  std::vector<RuntimeValue> out;
  auto ran = run_steps(**gpu, state);
  if (ran) ran = collect_outputs(**gpu, state, out);
  // The stream is drained even when a step failed: the run's uploads read host buffers that go
  // with `state`, and its pooled blocks may be handed out again. Kernel faults surface here too.
  auto drained = (*gpu)->synchronize();
  if (!ran) return std::unexpected(ran.error());
  if (!drained) return forward_error(std::move(drained), fmt::format("running partition '{}'", p.name));
  return out;
}

Expected<void> CudaPartition::collect_outputs(Gpu& gpu, const RunState& state, std::vector<RuntimeValue>& out) const {
  const Partition& p = setup_.partition;
  for (std::size_t i = 0; i < p.outputs.size(); ++i) {
    const ValueId v = p.outputs[i];
    Tensor t = state.values[static_cast<std::size_t>(v)].on_device;
    if (!t.defined() && p.graph->value(v).initializer) t = constants_.at(v).on_device;
    // An output the session reads on the host is downloaded on the stream: the run's final
    // wait covers it.
    if (i < host_outputs_.size() && host_outputs_[i] && t.defined() && !t.device().is_host() && t.view().is_contiguous()) {
      Tensor host = Tensor::empty(t.dtype(), t.shape());
      if (auto r = gpu.enqueue_copy(t.view(), host.mut()); !r)
        return forward_error(std::move(r), fmt::format("downloading output '{}' of partition '{}'", p.graph->value(v).name, p.name));
      t = std::move(host);
    }
    out.emplace_back(std::move(t));
  }
  return {};
}

}  // namespace nxrt::cuda
