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
  OrtNodeComputeContext context;
  context.node_name = p->parts_.name;
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

namespace {

// What the host refused the plugin during Compute, for the error that follows; "" if nothing,
// or if the plugin's own message already says it.
std::string refusals_of(const OrtKernelContext& ctx, const std::string& plugin_message) {
  std::string out;
  for (const auto& r : ctx.refusals)
    if (plugin_message.find(r) == std::string::npos) out += fmt::format("; the host refused: {}", r);
  return out;
}

}  // namespace

Expected<std::vector<RuntimeValue>> PluginPartition::run(std::span<const RuntimeValue> inputs) {
  return from_library(*parts_.handle, compute(inputs));
}

Expected<std::vector<RuntimeValue>> PluginPartition::compute(std::span<const RuntimeValue> inputs) {
  OrtKernelContext ctx;
  ctx.node_name = parts_.name;
  ctx.logger = &parts_.handle->logger;
  ctx.inputs.reserve(parts_.inputs.size());
  for (const FusedInput& in : parts_.inputs) {
    if (in.boundary < 0) {
      ctx.inputs.push_back(OrtValue{{}, in.constant, in.constant.dtype()});
      continue;
    }
    const RuntimeValue& v = inputs[static_cast<std::size_t>(in.boundary)];
    if (!v.is_tensor())
      return fail(ErrorCode::kRuntime, fmt::format("'{}' on the {} EP: input {} is a {}, plugins take tensors only",
                                                   parts_.name, parts_.handle->name, in.boundary, v.describe()));
    ctx.inputs.push_back(OrtValue{{}, v.tensor(), v.tensor().dtype()});
  }
  for (std::size_t i = 0; i < parts_.output_types.size(); ++i)
    ctx.outputs.push_back({parts_.output_names[i], parts_.output_shapes[i],
                           std::make_unique<OrtValue>(OrtValue{{}, {}, parts_.output_types[i]})});
  if (OrtStatus* s = parts_.info->Compute(parts_.info, state_, &ctx)) {
    const std::string message = take_status(s);
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's Compute failed for '{}'", parts_.handle->name, parts_.name),
                message + refusals_of(ctx, message), "see the plugin's documentation, or run these nodes on another EP with --ep");
  }
  std::vector<RuntimeValue> out;
  for (auto& output : ctx.outputs) {
    if (!output.value->tensor.defined())
      return fail(ErrorCode::kRuntime,
                  fmt::format("the {} EP's Compute for '{}' produced no value for output '{}'", parts_.handle->name,
                              parts_.name, output.name),
                  "Compute returned success without a successful KernelContext_GetOutput for it" + refusals_of(ctx, ""),
                  "fix the plugin: allocate every output with KernelContext_GetOutput, with the graph's shape, and "
                  "check the status it returns");
    out.emplace_back(std::move(output.value->tensor));
  }
  return out;
}

}  // namespace nxrt::ort_plugin
