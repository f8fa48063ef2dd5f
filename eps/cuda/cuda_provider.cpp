// The cuda EP: options, availability, claims, compile, memory and EPContext blobs.
#include "cuda_provider.h"

#include <fmt/format.h>

#include <charconv>

#include "context_blob.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/io/blob_codec.h"
#include "nxrt/model/partition_model.h"
#include "nxrt/version.h"

namespace nxrt::cuda {
namespace {

Expected<int> device_ordinal(const EpConfig& config) {
  auto it = config.options.find(std::string(kDeviceOption));
  if (it == config.options.end()) return 0;
  int ordinal = -1;
  const std::string& text = it->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ordinal);
  if (ec != std::errc{} || end != text.data() + text.size() || ordinal < 0)
    return fail(ErrorCode::kUsage, fmt::format("--device '{}' is not a device number", text), {},
                "give a CUDA device ordinal, e.g. --device 0");
  return ordinal;
}

uint64_t hash_text(const std::string& s) { return fnv1a(std::as_bytes(std::span(s.data(), s.size()))); }

}  // namespace

std::string toolkit_version() { return fmt::format("{}.{}", CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10); }

Expected<std::unique_ptr<ExecutionProvider>> CudaProvider::create(const EpConfig& config, const CudaStack& stack) {
  std::unique_ptr<CudaProvider> ep(new CudaProvider());
  ep->stack_ = stack;
  auto ops = make_op_table();
  if (!ops) return std::unexpected(ops.error());
  ep->ops_ = std::move(*ops);
  auto ordinal = device_ordinal(config);
  if (!ordinal) return std::unexpected(ordinal.error());
  std::optional<GpuArch> target;
  if (auto it = config.options.find(std::string(kTargetArchOption)); it != config.options.end()) {
    auto arch = parse_arch(it->second);
    if (!arch) return forward_error(std::move(arch), "reading --target-arch");
    target = *arch;
  }
  if (target) {  // refuse an architecture NVRTC cannot compile for now, not at the first partition
    auto nvrtc = ep->compiler();
    if (!nvrtc) return forward_error(std::move(nvrtc), "compiling for --target-arch");
    if (auto r = (*nvrtc)->check_supports(*target); !r) return forward_error(std::move(r), "reading --target-arch");
  }
  // Enumeration only: the driver is loaded and asked about the device; the context (memory on
  // the GPU, a second or so) is created when something first runs.
  auto driver = stack.driver();
  Expected<DeviceInfo> device = driver ? probe_device(**driver, *ordinal) : std::unexpected(driver.error());
  ep->device_ = std::make_shared<DeviceSlot>(driver ? *driver : nullptr, device, stack);
  ep->target_ = target ? target : device ? std::optional(device->arch) : std::nullopt;
  ep->local_gpu_ = device && ep->target_ == device->arch;
  EpInfo& info = ep->info_;
  info.name = "cuda";
  info.version = fmt::format("{} ({})", kVersion, built_against());
  info.vendor = "nxrt on NVIDIA CUDA";
  info.device = {DeviceType::kCuda, *ordinal};
  info.available = ep->target_.has_value();
  if (device)
    info.device_name = fmt::format("{} ({}){}", device->name, device->arch.sm(),
                                   target && *target != device->arch ? fmt::format(", compiling for {}", target->sm()) : "");
  else if (target)
    info.device_name = fmt::format("no device; compiling for {} (--target-arch)", target->sm());
  if (!info.available) info.unavailable_reason = device.error().what;
  info.capabilities = {"epcontext", "nvrtc", "fusion"};
  info.context_sources = {std::string(kContextSource)};
  return std::unique_ptr<ExecutionProvider>(std::move(ep));
}

Expected<const NvrtcCompiler*> CudaProvider::compiler() {
  std::lock_guard lock(nvrtc_mutex_);
  if (!nvrtc_) {
    auto loaded = NvrtcCompiler::load(stack_.nvrtc);
    if (!loaded) return std::unexpected(loaded.error());
    nvrtc_ = std::move(*loaded);
  }
  return nvrtc_.get();
}

namespace {

// cuBLASLt multiplies bfloat16 on sm_80 (Ampere) and newer only: the ops whose products it runs
// decline bfloat16 for an older target instead of failing when they run.
constexpr GpuArch kBlasBfloat16{8, 0};
bool runs_on_cublaslt(const std::string& op) {
  return op == "MatMul" || op == "Gemm" || op == "Einsum" || op == "RNN" || op == "GRU" || op == "LSTM";
}
bool runs_on_cudnn(const std::string& op) { return op == "Conv" || op == "ConvTranspose"; }

}  // namespace

KernelMatch CudaProvider::claim(const NodeContext& ctx) const {
  if (!info_.available) return KernelMatch::declined(fmt::format("the cuda EP is unavailable: {}", info_.unavailable_reason));
  KernelMatch match = ops_->registry.check(ctx, info_.name);
  const std::string& op = ctx.node().op_type;
  if (match.is_supported() && target_ && *target_ < kBlasBfloat16 && runs_on_cublaslt(op) &&
      ctx.input_dtype(0) == DType::kBFloat16)
    return KernelMatch::declined(fmt::format("{}: bfloat16 products need {} or newer (cuBLASLt); the target is {}", op,
                                             kBlasBfloat16.sm(), target_->sm()));
  if (match.is_supported() && local_gpu_ && runs_on_cudnn(op))
    if (auto loads = cudnn_loads(); !loads)
      return KernelMatch::declined(fmt::format("{}: the cuda EP runs it on cuDNN, which is not usable here ({}: {}); {}",
                                               op, loads.error().what, loads.error().why, loads.error().how));
  return match;
}

Expected<void> CudaProvider::cudnn_loads() const {
  std::call_once(cudnn_checked_, [this] {
    if (auto api = stack_.dnn(); !api) cudnn_status_ = std::unexpected(api.error());
  });
  return cudnn_status_;
}

std::vector<OpKey> CudaProvider::registered_ops() const {
  std::vector<OpKey> out;
  for (const KernelDef* d : ops_->registry.entries()) out.push_back(d->key);
  return out;
}

Expected<std::unique_ptr<CompiledPartition>> CudaProvider::compile(const Partition& partition) {
  if (!target_)
    return fail(ErrorCode::kRuntime, fmt::format("the cuda EP cannot compile partition '{}'", partition.name),
                info_.unavailable_reason, "give --target-arch to compile for a GPU that is not here");
  auto plan = build_plan(partition, *ops_);
  if (!plan) return std::unexpected(plan.error());
  auto nvrtc = compiler();
  if (!nvrtc) return forward_error(std::move(nvrtc), fmt::format("compiling partition '{}'", partition.name));
  auto image = (*nvrtc)->compile(plan->source, partition.name, *target_);
  if (!image) return std::unexpected(image.error());
  return std::unique_ptr<CompiledPartition>(
      std::make_unique<CudaPartition>(PartitionSetup{partition, nullptr, std::move(*plan), std::move(*image), device_}));
}

Expected<Tensor> CudaProvider::allocate(DType dtype, Shape shape) {
  auto g = gpu();
  if (!g) return forward_error(std::move(g), "allocating memory on the cuda EP");
  auto scope = (*g)->enter();
  if (!scope) return std::unexpected(scope.error());
  return (*g)->allocate(dtype, std::move(shape));
}

Expected<void> CudaProvider::copy(const TensorView& src, const TensorMut& dst) {
  if (src.device.is_host() && dst.device.is_host()) return ExecutionProvider::copy(src, dst);
  auto g = gpu();
  if (!g) return forward_error(std::move(g), "copying a tensor on the cuda EP");
  if (!src.is_contiguous()) {
    const Tensor host = copy_to_contiguous(src);
    return (*g)->copy(host.view(), dst);
  }
  return (*g)->copy(src, dst);
}

Expected<void> CudaProvider::sync() {
  auto g = gpu();
  if (!g) return {};  // nothing can be in flight without a device
  return (*g)->synchronize();
}

std::string CudaProvider::compatibility_info() const {
  return fmt::format("nxrt={};cuda={};arch={};blob_format={}", kVersion, toolkit_version(),
                     target_ ? target_->sm() : "none", kContextBlobFormat);
}

Expected<EpContext> CudaProvider::save_context(const Partition& partition, const CompiledPartition& compiled) {
  const auto* cp = dynamic_cast<const CudaPartition*>(&compiled);
  if (!cp) return fail(ErrorCode::kRuntime, fmt::format("partition '{}' was not compiled by the cuda EP", partition.name));
  CudaBlob blob;
  blob.nxrt_version = kVersion;
  blob.cuda_version = toolkit_version();
  blob.partition_name = partition.name;
  blob.source_hash = hash_text(cp->plan().source);
  for (const auto& step : cp->plan().steps) blob.steps.push_back(step->variant());
  auto model = partition_to_onnx(partition);
  if (!model) return forward_error(std::move(model), fmt::format("saving partition '{}'", partition.name));
  blob.model_bytes = std::move(*model);
  blob.image = cp->image();
  EpContext ctx;
  ctx.source = std::string(kContextSource);
  ctx.partition_name = partition.name;
  ctx.ep_sdk_version = fmt::format("nxrt {}; CUDA {}; NVRTC {}", kVersion, toolkit_version(), cp->image().nvrtc_version);
  ctx.hardware_architecture = cp->image().arch.sm();
  ctx.owned = encode_blob(blob);
  return ctx;
}

Expected<std::unique_ptr<CompiledPartition>> CudaProvider::load_context(const EpContext& context,
                                                                       const Partition& partition) {
  const std::string where = fmt::format("EPContext node '{}'", partition.name);
  auto blob = decode_blob(context.payload(), where);
  if (!blob) return std::unexpected(blob.error());
  if (blob->nxrt_version != kVersion)
    return fail(ErrorCode::kInvalidInput, fmt::format("the cuda EPContext blob of {} was made by another nxrt", where),
                fmt::format("compiled by nxrt {}, this is nxrt {}", blob->nxrt_version, kVersion),
                "recompile with nxrt compile-epcontext --ep cuda");
  // Without a device the blob can be checked but not run; with one, its architecture must fit.
  auto g = gpu();
  if (!g)
    return fail(ErrorCode::kRuntime, fmt::format("{} needs a CUDA device (its kernels are for {})", where, blob->image.arch.sm()),
                g.error().what, "run it on a machine with a GPU of that architecture");
  if (auto m = match_arch(blob->image.arch, !blob->image.ptx.empty(), (*g)->info().arch, (*g)->info().name); !m)
    return forward_error(std::move(m), fmt::format("loading {}", where));
  auto model = partition_from_onnx(std::as_bytes(std::span(blob->model_bytes.data(), blob->model_bytes.size())), where, *this);
  if (!model) return std::unexpected(model.error());
  auto owned = std::make_shared<Model>(std::move(*model));
  Partition inner = whole_graph_partition(*owned, info_.name);
  inner.name = partition.name;
  if (inner.inputs.size() != partition.inputs.size() || inner.outputs.size() != partition.outputs.size())
    return fail(ErrorCode::kInvalidInput, fmt::format("the cuda EPContext blob of {} does not match the node", where),
                fmt::format("the blob has {} inputs and {} outputs, the node {} and {}", inner.inputs.size(),
                            inner.outputs.size(), partition.inputs.size(), partition.outputs.size()),
                "recompile the model with nxrt compile-epcontext --ep cuda");
  auto plan = build_plan(inner, *ops_);
  if (!plan) return forward_error(std::move(plan), fmt::format("restoring {}", where));
  // The stored kernels must be the ones this plan launches: same generated CUDA C.
  if (hash_text(plan->source) != blob->source_hash)
    return fail(ErrorCode::kInvalidInput, fmt::format("the kernels in the cuda EPContext blob of {} do not fit its plan", where),
                "the CUDA C this nxrt generates for the partition differs from what the blob was compiled from",
                "recompile with nxrt compile-epcontext --ep cuda");
  return std::unique_ptr<CompiledPartition>(std::make_unique<CudaPartition>(
      PartitionSetup{std::move(inner), owned, std::move(*plan), std::move(blob->image), device_}));
}

}  // namespace nxrt::cuda
