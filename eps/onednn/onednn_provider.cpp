// The oneDNN EP: registration, claims, compile (eager when shapes are static) and blobs.
#include "onednn_provider.h"

#include <fmt/format.h>

#include "context_blob.h"
#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/model/partition_model.h"
#include "nxrt/version.h"

namespace nxrt::onednn {
namespace {

// Static dims of the partition's boundary inputs, or nullopt when one is not static.
std::optional<std::vector<Dims>> static_input_dims(const Partition& p) {
  std::vector<Dims> dims;
  for (ValueId v : p.inputs) {
    auto shape = p.graph->value(v).type.static_shape();
    if (!shape) return std::nullopt;
    dims.push_back(to_dims(*shape));
  }
  return dims;
}

}  // namespace

Expected<std::unique_ptr<ExecutionProvider>> OnednnProvider::create(const EpConfig& config) {
  std::unique_ptr<OnednnProvider> ep(new OnednnProvider());
  ep->registry_ = std::make_shared<OpRegistry>();
  ep->lowerings_ = std::make_shared<Lowerings>();
  for (OnednnOpDef& op : all_ops()) {
    const OpKey key = op.def.key;
    if (auto r = ep->registry_->add(std::move(op.def)); !r)
      return forward_error(std::move(r), "registering the onednn EP's ops");
    (*ep->lowerings_)[key] = std::move(op.lower);
  }
  auto engine = dnnl_call("cannot open oneDNN's CPU engine", [] { return dnnl::engine(dnnl::engine::kind::cpu, 0); });
  if (!engine) return std::unexpected(std::move(engine.error()));
  ep->engine_ = std::move(*engine);
  ep->threads_ = config.threads;
  ep->buffers_ = config.host_buffers ? config.host_buffers : std::make_shared<BufferPool>();
  ep->info_ = EpInfo{
      .name = "onednn",
      .version = fmt::format("{} (oneDNN {})", kVersion, onednn_version()),
      .vendor = "nxrt on oneDNN",
      .device = kHostDevice,
      .device_name = fmt::format("x86_64 ({})", effective_isa()),
      .available = true,
      .unavailable_reason = {},
      .capabilities = {"epcontext", "fusion", "blocked-layouts"},
      .context_sources = {std::string(kContextSource)},
      .library = {},
      .ort_api_version = 0,
  };
  return std::unique_ptr<ExecutionProvider>(std::move(ep));
}

KernelMatch OnednnProvider::claim(const NodeContext& ctx) const { return registry_->check(ctx, info_.name); }

std::vector<OpKey> OnednnProvider::registered_ops() const {
  std::vector<OpKey> out;
  for (const KernelDef* d : registry_->entries()) out.push_back(d->key);
  return out;
}

PartitionSetup OnednnProvider::setup_for(const Partition& partition) const {
  PartitionSetup s;
  s.engine = engine_;
  s.registry = registry_;
  s.lowerings = lowerings_;
  s.threads = threads_;
  s.tuning_cache = tuning_cache_;
  s.buffers = buffers_;
  s.partition = partition;
  return s;
}

Expected<std::unique_ptr<CompiledPartition>> OnednnProvider::compile(const Partition& partition) {
  auto compiled = std::make_unique<OnednnPartition>(setup_for(partition));
  if (auto dims = static_input_dims(partition))
    if (auto r = compiled->prepare(*dims); !r) return std::unexpected(std::move(r.error()));
  return std::unique_ptr<CompiledPartition>(std::move(compiled));
}

std::string OnednnProvider::compatibility_info() const {
  return fmt::format("nxrt={};onednn={};isa={};blob_format=2", kVersion, onednn_version(), effective_isa());
}

Expected<EpContext> OnednnProvider::save_context(const Partition& partition, const CompiledPartition& compiled) {
  const auto* op = dynamic_cast<const OnednnPartition*>(&compiled);
  if (!op)
    return fail(ErrorCode::kRuntime, fmt::format("partition '{}' was not compiled by the onednn EP", partition.name));
  // Without static input shapes there is no plan yet: the blob then holds the partition
  // alone, and the plan is built when the restored model first runs.
  const Plan* plan = op->first_plan();
  OnednnBlob blob;
  blob.nxrt_version = kVersion;
  blob.onednn_version = onednn_version();
  blob.isa = effective_isa();
  blob.partition_name = partition.name;
  blob.boundary_inputs = partition.inputs.size();
  if (plan) blob.input_dims = op->first_dims();
  auto model = partition_to_onnx(partition, plan ? op->packed_initializers() : std::set<ValueId>{});
  if (!model) return forward_error(std::move(model), fmt::format("saving partition '{}'", partition.name));
  blob.model_bytes = std::move(*model);
  if (plan) {
    for (const auto& [key, weight] : plan->weights()) blob.weights.emplace(key, weight);
    blob.implementations = plan->implementations();
  }
  EpContext ctx;
  ctx.source = std::string(kContextSource);
  ctx.partition_name = partition.name;
  ctx.ep_sdk_version = fmt::format("nxrt {}; oneDNN {}", kVersion, onednn_version());
  ctx.hardware_architecture = effective_isa();
  ctx.owned = encode_blob(blob);
  return ctx;
}

Expected<std::unique_ptr<CompiledPartition>> OnednnProvider::load_context(const EpContext& context,
                                                                         const Partition& partition) {
  const std::string where = fmt::format("EPContext node '{}'", partition.name);
  auto blob = decode_blob(context.payload(), where);
  if (!blob) return std::unexpected(blob.error());
  if (blob->isa != effective_isa() || blob->onednn_version != onednn_version() || blob->nxrt_version != kVersion)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("the onednn EPContext blob of {} was compiled for another host", where),
                fmt::format("compiled for nxrt {} with oneDNN {} on {}, this machine is nxrt {} with oneDNN {} on {}",
                            blob->nxrt_version, blob->onednn_version, blob->isa, kVersion, onednn_version(),
                            effective_isa()),
                "recompile with nxrt compile-epcontext on this machine class");
  auto model = partition_from_onnx(std::as_bytes(std::span(blob->model_bytes.data(), blob->model_bytes.size())), where, *this,
                                   blob->boundary_inputs);
  if (!model) return std::unexpected(model.error());
  auto owned = std::make_shared<Model>(std::move(*model));
  Partition inner = whole_graph_partition(*owned, info_.name);
  inner.name = partition.name;
  if (inner.inputs.size() != partition.inputs.size() || inner.outputs.size() != partition.outputs.size() ||
      (!blob->input_dims.empty() && blob->input_dims.size() != inner.inputs.size()))
    return fail(ErrorCode::kInvalidInput, fmt::format("the onednn EPContext blob of {} does not match the node", where),
                fmt::format("the blob has {} inputs and {} outputs, the node {} and {}", inner.inputs.size(),
                            inner.outputs.size(), partition.inputs.size(), partition.outputs.size()),
                "recompile the model with nxrt compile-epcontext");
  PartitionSetup setup = setup_for(inner);
  setup.keep_alive = owned;
  setup.restored = std::move(blob->weights);
  setup.restored_implementations = std::move(blob->implementations);
  auto compiled = std::make_unique<OnednnPartition>(std::move(setup));
  if (!blob->input_dims.empty())
    if (auto r = compiled->prepare(blob->input_dims); !r) return forward_error(std::move(r), fmt::format("restoring {}", where));
  return std::unique_ptr<CompiledPartition>(std::move(compiled));
}

}  // namespace nxrt::onednn
