// Running a plan: values in slots by lifetime, steps on the device's stream, boundary copies.
#include "compiled_partition.h"

#include <fmt/format.h>

#include <chrono>
#include <set>

#include "runtime.h"

namespace nxrt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 65535;  // kernels loop over the rest (grid-stride)

class RunContext final : public StepContext {
 public:
  RunContext(Gpu& gpu, Module& module, const Step& step, std::vector<Tensor>& slots,
             const std::map<ValueId, Tensor>& constants)
      : gpu_(gpu), module_(module), step_(step), slots_(slots), constants_(constants) {}

  bool has_input(std::size_t i) const override { return i < step_.inputs.size() && step_.inputs[i] != kNoValue; }
  const Tensor& input(std::size_t i) const override {
    const ValueId v = step_.inputs[i];
    if (auto it = constants_.find(v); it != constants_.end()) return it->second;
    return slots_[static_cast<std::size_t>(v)];
  }
  Expected<Tensor> input_on_host(std::size_t i) override {
    const Tensor& t = input(i);
    if (t.device().is_host()) return t;
    Tensor host = Tensor::empty(t.dtype(), t.shape());
    if (auto r = gpu_.copy(t.view(), host.mut()); !r) return forward_error(std::move(r), where());
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
    if (wants_output(i)) slots_[static_cast<std::size_t>(step_.outputs[i])] = std::move(t);
  }
  Expected<Tensor> upload(const Tensor& host) override {
    auto t = gpu_.allocate(host.dtype(), host.shape());
    if (!t) return forward_error(std::move(t), where());
    if (auto r = gpu_.copy(host.view(), t->mut()); !r) return forward_error(std::move(r), where());
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
  Expected<BlasLibrary> blas() override {
    return BlasLibrary{gpu_.blas_api(), gpu_.blas(), reinterpret_cast<cudaStream_t>(gpu_.stream())};
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

  Gpu& gpu_;
  Module& module_;
  const Step& step_;
  std::vector<Tensor>& slots_;
  const std::map<ValueId, Tensor>& constants_;
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
  // Kernels and constants belong to the context: bind it before they go.
  if (module_ || !constants_.empty())
    if (auto gpu = setup_.device->get()) (void)(*gpu)->make_current();
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
      constants_.emplace(v, std::move(*on_device));
    }
  module_ = std::move(*module);
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
  if (auto r = (*gpu)->make_current(); !r) return std::unexpected(r.error());
  if (auto r = prepare(**gpu); !r) return std::unexpected(r.error());
  std::vector<Tensor> slots(p.graph->values.size());
  for (std::size_t i = 0; i < p.inputs.size(); ++i) {
    const RuntimeValue& in = inputs[i];
    if (!in.is_tensor())
      return fail(ErrorCode::kRuntime, fmt::format("partition '{}': input '{}' is not a tensor", p.name, p.graph->value(p.inputs[i]).name));
    Tensor t = in.tensor();
    if (t.device() != (*gpu)->device()) {  // callers other than the session may pass host tensors
      auto moved = (*gpu)->allocate(t.dtype(), t.shape());
      if (!moved) return std::unexpected(moved.error());
      const Tensor host = t.view().is_contiguous() ? t : copy_to_contiguous(t.view());
      if (auto r = (*gpu)->copy(host.view(), moved->mut()); !r) return std::unexpected(r.error());
      t = std::move(*moved);
    }
    slots[static_cast<std::size_t>(p.inputs[i])] = std::move(t);
  }
  using Clock = std::chrono::steady_clock;
  profile_.clear();
  for (std::size_t s = 0; s < setup_.plan.steps.size(); ++s) {
    const Step& step = *setup_.plan.steps[s];
    const auto t0 = Clock::now();
    RunContext ctx(**gpu, *module_, step, slots, constants_);
    if (auto r = step.run(ctx); !r) return std::unexpected(r.error());
    StepProfile prof;
    for (const Node* n : step.nodes) prof.nodes.push_back(n->name);
    prof.op_type = step.nodes.front()->op_type;
    prof.variant = step.variant();
    if (profiling_) {  // a step's time is only known once the stream has done its work
      if (auto r = (*gpu)->synchronize(); !r) return forward_error(std::move(r), ctx.where());
      prof.us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    }
    profile_.push_back(std::move(prof));
    for (ValueId v : release_[s]) slots[static_cast<std::size_t>(v)] = Tensor();
  }
  // Kernel faults surface at the next synchronization: report them against this partition.
  if (auto r = (*gpu)->synchronize(); !r) return forward_error(std::move(r), fmt::format("running partition '{}'", p.name));
  std::vector<RuntimeValue> out;
  for (ValueId v : p.outputs) {
    Tensor t = slots[static_cast<std::size_t>(v)];
    if (!t.defined() && p.graph->value(v).initializer) t = constants_.at(v);
    out.emplace_back(std::move(t));
  }
  return out;
}

}  // namespace nxrt::cuda
