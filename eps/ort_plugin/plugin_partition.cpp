// Running a plugin-compiled partition: a kernel context over the boundary values, then the
// plugin's Compute.
#include "plugin_partition.h"

#include <fmt/format.h>

namespace nxrt::ort_plugin {
Expected<std::unique_ptr<PluginPartition>> PluginPartition::create(Parts parts) {
  std::unique_ptr<PluginPartition> p(new PluginPartition(std::move(parts)));
  OrtNodeComputeInfo* info = p->parts_.info;
  if (!info->Compute || !info->CreateState || !info->ReleaseState)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's OrtNodeComputeInfo for '{}' leaves CreateState, Compute or ReleaseState NULL",
                            p->parts_.handle->name, p->parts_.name),
                "the host calls all three to run a compiled node", "fix the plugin: set every OrtNodeComputeInfo function");
  OrtNodeComputeContext context{p->parts_.name};
  if (OrtStatus* s = info->CreateState(info, &context, &p->state_))
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's CreateState failed for '{}'", p->parts_.handle->name, p->parts_.name),
                take_status(s), "see the plugin's documentation");
  p->has_state_ = true;
  return p;
}

PluginPartition::~PluginPartition() {
  OrtNodeComputeInfo* info = parts_.info;
  if (has_state_ && info->ReleaseState) info->ReleaseState(info, state_);
  OrtEp* ep = parts_.handle->ep;
  if (ep->ReleaseNodeComputeInfos) ep->ReleaseNodeComputeInfos(ep, &info, 1);
}

Expected<std::vector<RuntimeValue>> PluginPartition::run(std::span<const RuntimeValue> inputs) {
  OrtKernelContext ctx;
  ctx.logger = &parts_.handle->logger;
  ctx.inputs.reserve(parts_.inputs.size());
  for (const FusedInput& in : parts_.inputs) {
    if (in.boundary < 0) {
      ctx.inputs.push_back(OrtValue{in.constant, in.constant.dtype()});
      continue;
    }
    const RuntimeValue& v = inputs[static_cast<std::size_t>(in.boundary)];
    if (!v.is_tensor())
      return fail(ErrorCode::kRuntime, fmt::format("'{}' on the {} EP: input {} is a {}, plugins take tensors only",
                                                   parts_.name, parts_.handle->name, in.boundary, v.describe()));
    ctx.inputs.push_back(OrtValue{v.tensor(), v.tensor().dtype()});
  }
  for (DType t : parts_.output_types) ctx.outputs.push_back(std::make_unique<OrtValue>(OrtValue{{}, t}));
  if (OrtStatus* s = parts_.info->Compute(parts_.info, state_, &ctx))
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's Compute failed for '{}'", parts_.handle->name, parts_.name),
                take_status(s), "see the plugin's documentation, or run these nodes on another EP with --ep");
  std::vector<RuntimeValue> out;
  for (std::size_t i = 0; i < ctx.outputs.size(); ++i) {
    if (!ctx.outputs[i]->tensor.defined())
      return fail(ErrorCode::kRuntime,
                  fmt::format("the {} EP's Compute for '{}' produced no value for output '{}'", parts_.handle->name,
                              parts_.name, parts_.output_names[i]),
                  "Compute returned success without calling KernelContext_GetOutput for it", "fix the plugin");
    out.emplace_back(std::move(ctx.outputs[i]->tensor));
  }
  return out;
}

}  // namespace nxrt::ort_plugin
