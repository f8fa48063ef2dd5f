// The CPU EP: claims through its kernel registry, compiles to KernelPartition, and
// saves/restores partitions as EPContext blobs.
#include "cpu_provider.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "common/parallel_pool.h"
#include "context_blob.h"
#include "fusion.h"
#include "layout.h"
#include "kernels/kernels.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/model/partition_model.h"
#include "nxrt/version.h"

namespace nxrt::cpu {

std::string host_isa() {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "x86_64-avx512f";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "x86_64-avx2";
  return "x86_64";
#elif defined(__aarch64__)
  return "aarch64";
#else
  return "unknown";
#endif
}

Expected<std::unique_ptr<ExecutionProvider>> CpuProvider::create(const EpConfig& config) {
  std::unique_ptr<CpuProvider> ep(new CpuProvider());
  if (auto r = ep->registry_.add_all(all_kernels()); !r)
    return forward_error(std::move(r), "registering the cpu EP's kernels");
  ep->pool_ = make_parallel_pool(config.threads);
  ep->buffers_ = config.host_buffers;
  ep->info_ = EpInfo{
      .name = "cpu",
      .version = kVersion,
      .vendor = "nxrt",
      .device = kHostDevice,
      .device_name = host_isa(),
      .available = true,
      .unavailable_reason = {},
      .capabilities = {"epcontext"},
      .context_sources = {std::string(kContextSource)},
      .library = {},
      .ort_api_version = 0,
  };
  return std::unique_ptr<ExecutionProvider>(std::move(ep));
}

KernelMatch CpuProvider::claim(const NodeContext& ctx) const { return registry_.check(ctx, info_.name); }

namespace {

// The steps the cpu EP builds itself for `partition`: its fused chains (fusion.h), then its
// convolutions in another layout (layout.h).
Expected<std::vector<FusedStep>> own_steps(const Partition& partition) {
  auto steps = find_fusions(partition);
  if (!steps) return steps;
  auto channels_last = channels_last_steps(partition, *steps);
  if (!channels_last) return std::unexpected(std::move(channels_last.error()));
  std::ranges::move(*channels_last, std::back_inserter(*steps));
  return steps;
}

}  // namespace

Expected<std::unique_ptr<CompiledPartition>> CpuProvider::compile(const Partition& partition) {
  auto fused = own_steps(partition);
  if (!fused) return std::unexpected(std::move(fused.error()));
  auto kp = KernelPartition::build(partition, registry_, info_.name, pool_, {}, std::move(*fused), buffers_);
  if (!kp) return std::unexpected(kp.error());
  return std::unique_ptr<CompiledPartition>(std::move(*kp));
}

std::vector<OpKey> CpuProvider::registered_ops() const {
  std::vector<OpKey> out;
  for (const KernelDef* d : registry_.entries()) out.push_back(d->key);
  return out;
}

std::string CpuProvider::compatibility_info() const {
  return fmt::format("nxrt={};isa={};blob_format=2", kVersion, host_isa());
}

Expected<EpContext> CpuProvider::save_context(const Partition& partition, const CompiledPartition& compiled) {
  const auto* kp = dynamic_cast<const KernelPartition*>(&compiled);
  if (!kp)
    return fail(ErrorCode::kRuntime, fmt::format("partition '{}' was not compiled by the cpu EP", partition.name));
  auto model_bytes = partition_to_onnx(partition);
  if (!model_bytes) return forward_error(std::move(model_bytes), fmt::format("saving partition '{}'", partition.name));
  CpuBlob blob{kVersion, host_isa(), partition.name, std::move(*model_bytes), {}};
  for (const auto& step : kp->steps())
    if (auto state = step.kernel->save_packed(); !state.empty()) blob.packed[step.node->name] = std::move(state);
  EpContext ctx;
  ctx.source = std::string(kContextSource);
  ctx.partition_name = partition.name;
  ctx.ep_sdk_version = fmt::format("nxrt {}", kVersion);
  ctx.hardware_architecture = host_isa();
  ctx.owned = encode_blob(blob);
  return ctx;
}

namespace {

// A restored partition keeps the model it was decoded from alive.
class RestoredPartition final : public CompiledPartition {
 public:
  RestoredPartition(std::unique_ptr<Model> model, std::unique_ptr<CompiledPartition> inner)
      : model_(std::move(model)), inner_(std::move(inner)) {}
  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) override { return inner_->run(inputs); }
  bool runs_concurrently() const override { return inner_->runs_concurrently(); }
  void set_profiling(bool on) override { inner_->set_profiling(on); }
  std::vector<StepProfile> profile() const override { return inner_->profile(); }

 private:
  std::unique_ptr<Model> model_;
  std::unique_ptr<CompiledPartition> inner_;
};

}  // namespace

Expected<std::unique_ptr<CompiledPartition>> CpuProvider::load_context(const EpContext& context,
                                                                      const Partition& partition) {
  const std::string where = fmt::format("EPContext node '{}'", partition.name);
  auto blob = decode_blob(context.payload(), where);
  if (!blob) return std::unexpected(blob.error());
  if (blob->isa != host_isa() || blob->nxrt_version != kVersion)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("the cpu EPContext blob of {} was compiled for another host", where),
                fmt::format("compiled for nxrt {} on {}, this machine is nxrt {} on {}", blob->nxrt_version,
                            blob->isa, kVersion, host_isa()),
                "recompile with nxrt compile-epcontext on this machine class");
  auto model = partition_from_onnx(std::as_bytes(std::span(blob->model_bytes.data(), blob->model_bytes.size())), where, *this);
  if (!model) return std::unexpected(model.error());
  auto owned = std::make_unique<Model>(std::move(*model));
  Partition inner = whole_graph_partition(*owned, info_.name);
  inner.name = partition.name;
  if (inner.inputs.size() != partition.inputs.size() || inner.outputs.size() != partition.outputs.size())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("the cpu EPContext blob of {} does not match the node", where),
                fmt::format("the blob has {} inputs and {} outputs, the node {} and {}", inner.inputs.size(),
                            inner.outputs.size(), partition.inputs.size(), partition.outputs.size()),
                "recompile the model with nxrt compile-epcontext");
  auto fused = own_steps(inner);
  if (!fused) return forward_error(std::move(fused), fmt::format("restoring {}", where));
  auto kp = KernelPartition::build(inner, registry_, info_.name, pool_, blob->packed, std::move(*fused), buffers_);
  if (!kp) return forward_error(std::move(kp), fmt::format("restoring {}", where));
  return std::unique_ptr<CompiledPartition>(std::make_unique<RestoredPartition>(std::move(owned), std::move(*kp)));
}

}  // namespace nxrt::cpu
