// Running plugin partitions: a kernel context over the boundary values, then the plugin's
// OrtNodeComputeInfo::Compute (compiled partitions) or OrtKernelImpl::Compute (kernels).
#include "plugin_partition.h"

#include <fmt/format.h>

#include <utility>

#include "kernel_match.h"

namespace nxrt::ort_plugin {
namespace {

// What the host refused the plugin during Compute, for the error that follows; "" if nothing,
// or if the plugin's own message already says it.
std::string refusals_of(const OrtKernelContext& ctx, const std::string& plugin_message) {
  std::string out;
  for (const auto& r : ctx.refusals)
    if (plugin_message.find(r) == std::string::npos) out += fmt::format("; the host refused: {}", r);
  return out;
}

// Builds the kernel context of `plan` over `inputs`, lets `compute` run the plugin, and returns
// every output (an empty value for absent ones). `what` names the plugin function in errors.
Expected<std::vector<RuntimeValue>> run_in_context(EpHandle& handle, const ContextPlan& plan,
                                                   std::span<const RuntimeValue> inputs, std::string_view what,
                                                   const std::function<OrtStatus*(OrtKernelContext*)>& compute) {
  OrtKernelContext ctx;
  ctx.node_name = plan.name;
  ctx.logger = &handle.logger;
  ctx.inputs.reserve(plan.inputs.size());
  for (const FusedInput& in : plan.inputs) {
    if (in.boundary == FusedInput::kOmitted) {
      ctx.inputs.push_back(OrtValue{});
      continue;
    }
    if (in.boundary == FusedInput::kConstant) {
      ctx.inputs.push_back(OrtValue{{}, in.constant, in.constant.dtype()});
      continue;
    }
    const RuntimeValue& v = inputs[static_cast<std::size_t>(in.boundary)];
    if (!v.is_tensor())
      return fail(ErrorCode::kRuntime, fmt::format("'{}' on the {} EP: input {} is a {}, plugins take tensors only",
                                                   plan.name, handle.name, in.boundary, v.describe()));
    ctx.inputs.push_back(OrtValue{{}, v.tensor(), v.tensor().dtype()});
  }
  for (const ContextPlan::Output& o : plan.outputs)
    ctx.outputs.push_back({o.name, o.absent, o.shape, std::make_unique<OrtValue>(OrtValue{{}, {}, o.type})});
  if (OrtStatus* s = compute(&ctx)) {
    const std::string message = take_status(s);
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's {} failed for '{}'", handle.name, what, plan.name),
                message + refusals_of(ctx, message), "see the plugin's documentation, or run these nodes on another EP with --ep");
  }
  std::vector<RuntimeValue> out;
  for (auto& output : ctx.outputs) {
    if (output.absent) {
      out.emplace_back();
      continue;
    }
    if (!output.value->tensor.defined())
      return fail(ErrorCode::kRuntime,
                  fmt::format("the {} EP's {} for '{}' produced no value for output '{}'", handle.name, what, plan.name,
                              output.name),
                  "Compute returned success without a successful KernelContext_GetOutput for it" + refusals_of(ctx, ""),
                  "fix the plugin: allocate every output with KernelContext_GetOutput, with the graph's shape, and "
                  "check the status it returns");
    out.emplace_back(std::move(output.value->tensor));
  }
  return out;
}

}  // namespace

void ContextPlan::add_output(const Graph& graph, ValueId v) {
  if (v == kNoValue) {
    outputs.push_back({"", DType::kUndefined, std::nullopt, true});
    return;
  }
  const ValueType& type = graph.value(v).type;
  const OrtTensorTypeAndShapeInfo tensor = type_info_of(type).tensor;
  outputs.push_back({graph.value(v).name, type.dtype, tensor.has_shape ? std::optional(tensor.dims) : std::nullopt, false});
}

Expected<std::unique_ptr<PluginPartition>> PluginPartition::create(Parts parts) {
  std::unique_ptr<PluginPartition> p(new PluginPartition(std::move(parts)));
  OrtNodeComputeInfo* info = p->parts_.info;
  if (!info->Compute || !info->CreateState || !info->ReleaseState)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's OrtNodeComputeInfo for '{}' leaves CreateState, Compute or ReleaseState NULL",
                            p->parts_.handle->name, p->parts_.plan.name),
                "the host calls all three to run a compiled node", "fix the plugin: set every OrtNodeComputeInfo function");
  OrtNodeComputeContext context;
  context.node_name = p->parts_.plan.name;
  if (OrtStatus* s = info->CreateState(info, &context, &p->state_))
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's CreateState failed for '{}'", p->parts_.handle->name, p->parts_.plan.name),
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
  OrtNodeComputeInfo* info = parts_.info;
  return from_library(*parts_.handle, run_in_context(*parts_.handle, parts_.plan, inputs, "Compute",
                                                     [&](OrtKernelContext* ctx) { return info->Compute(info, state_, ctx); }));
}

Expected<std::unique_ptr<PluginKernelPartition>> PluginKernelPartition::create(Parts parts) {
  std::unique_ptr<PluginKernelPartition> p(new PluginKernelPartition(std::move(parts)));
  const EpHandle& handle = *p->parts_.handle;
  const OrtKernelRegistry::Kernel& kernel = *p->parts_.kernel;
  const std::string& node = p->parts_.plan.name;
  p->info_.ep = handle.ep;
  p->info_.node = p->parts_.node;
  p->info_.logger = &handle.logger;
  p->info_.config = &handle.session_options.config;
  const std::string key = describe_kernel(kernel.def.def);
  if (OrtStatus* s = kernel.create(kernel.state, &p->info_, &p->kernel_))
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's kernel create function (OrtKernelCreateFunc) failed for '{}'", handle.name, node),
                fmt::format("{} (kernel {})", take_status(s), key), "see the plugin's documentation, or run this node on another EP with --ep");
  if (!p->kernel_)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's kernel create function (OrtKernelCreateFunc) made no kernel for '{}'", handle.name,
                            node),
                fmt::format("it returned success and left kernel_out NULL (kernel {})", key),
                "fix the plugin: set *kernel_out to an OrtKernelImpl, or return an error status");
  if (!p->kernel_->Compute || !p->kernel_->Release) {
    OrtKernelImpl* made = std::exchange(p->kernel_, nullptr);
    if (made->Release) made->Release(made);
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's OrtKernelImpl for '{}' leaves Compute or Release NULL", handle.name, node),
                fmt::format("the host calls Compute for each run and Release when the session ends (kernel {})", key),
                "fix the plugin: set both OrtKernelImpl functions");
  }
  return p;
}

PluginKernelPartition::~PluginKernelPartition() {
  if (kernel_) kernel_->Release(kernel_);
}

Expected<std::vector<RuntimeValue>> PluginKernelPartition::run(std::span<const RuntimeValue> inputs) {
  auto all = run_in_context(*parts_.handle, parts_.plan, inputs, "kernel Compute (OrtKernelImpl)",
                            [&](OrtKernelContext* ctx) { return kernel_->Compute(kernel_, ctx); });
  if (!all) return from_library(*parts_.handle, Expected<std::vector<RuntimeValue>>(std::unexpected(all.error())));
  std::vector<RuntimeValue> out;
  for (std::size_t i : parts_.returned) out.push_back(std::move((*all)[i]));
  return out;
}

}  // namespace nxrt::ort_plugin
