// The plugin EP as an nxrt EP: CreateEp, GetCapability -> claims, Compile -> partitions,
// EPContext nodes <-> EpContext payloads.
#include "plugin_provider.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

#include "host_api_decls.h"
#include "host_checks.h"
#include "kernel_match.h"
#include "plugin_partition.h"

namespace nxrt::ort_plugin {
namespace {

// What the plugin logged that mentions `node`, for its decline reason.
std::string logged_about(const std::vector<std::string>& messages, const std::string& node) {
  std::vector<std::string> hits;
  for (const auto& m : messages)
    if (m.find(node) != std::string::npos) hits.push_back(m);
  return hits.empty() ? "" : fmt::format(" (the plugin logged: {})", fmt::join(hits, "; "));
}

const OrtOpAttr* find_attr(const OrtNode& node, const std::string& name) {
  for (const auto& a : node.attributes)
    if (a->name == name) return a.get();
  return nullptr;
}

std::string_view attr_type_name(OrtOpAttrType type) {
  static constexpr std::string_view kNames[] = {"undefined", "int", "ints", "float", "floats", "string", "strings", "graph", "tensor"};
  const auto i = static_cast<std::size_t>(type);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

// What is wrong with the attributes of an EPContext node a plugin returned; "" if nothing.
std::string context_node_problem(const OrtNode& node) {
  struct Attr {
    const char* name;
    OrtOpAttrType type;
    const char* type_name;
  };
  static constexpr Attr kSchema[] = {
      {"ep_cache_context", ORT_OP_ATTR_STRING, "a string"}, {"embed_mode", ORT_OP_ATTR_INT, "an int"},
      {"main_context", ORT_OP_ATTR_INT, "an int"},          {"source", ORT_OP_ATTR_STRING, "a string"},
      {"ep_sdk_version", ORT_OP_ATTR_STRING, "a string"},   {"hardware_architecture", ORT_OP_ATTR_STRING, "a string"},
      {"partition_name", ORT_OP_ATTR_STRING, "a string"},   {"notes", ORT_OP_ATTR_STRING, "a string"},
      {"max_size", ORT_OP_ATTR_INT, "an int"},
  };
  if (!find_attr(node, "ep_cache_context")) return "has no ep_cache_context attribute";
  for (const auto& e : kSchema)
    if (const OrtOpAttr* a = find_attr(node, e.name); a && a->type != e.type)
      return fmt::format("has attribute {} of type {}; the EPContext schema says {}", e.name, attr_type_name(a->type),
                         e.type_name);
  return "";
}

}  // namespace

EpHandle::~EpHandle() {
  if (ep) factory->ReleaseEp(factory, ep);
}

Expected<std::unique_ptr<ExecutionProvider>> PluginProvider::create(std::shared_ptr<PluginLibrary> library,
                                                                     std::size_t factory_index, const EpConfig& config) {
  PluginFactory& f = library->factories()[factory_index];
  auto handle = std::make_shared<EpHandle>();
  handle->library = library;
  handle->factory = f.factory;
  handle->name = f.name;
  OrtSessionOptions& options = handle->session_options;
  for (const auto& [k, v] : config.options) options.config.set(k, v);
  std::vector<const OrtHardwareDevice*> devices;
  std::vector<const OrtKeyValuePairs*> metadata;
  std::vector<std::string> device_names;
  for (const auto& d : f.devices) {
    devices.push_back(d->device);
    metadata.push_back(&d->ep_metadata);
    device_names.push_back(fmt::format("{} ({})", d->device->type == OrtHardwareDeviceType_CPU ? "cpu" : "device",
                                       d->device->vendor));
  }
  OrtEp* ep = nullptr;
  if (OrtStatus* s = f.factory->CreateEp(f.factory, devices.data(), metadata.data(), devices.size(), &options,
                                          &handle->logger, &ep))
    return fail(ErrorCode::kRuntime, fmt::format("CreateEp of the {} EP ('{}') failed", f.name, library->path()),
                take_status(s), "see the plugin's documentation for its requirements and options");
  if (!ep)
    return fail(ErrorCode::kRuntime, fmt::format("CreateEp of the {} EP ('{}') returned no EP", f.name, library->path()),
                "it reported success but left the OrtEp pointer NULL", "fix the plugin");
  handle->ep = ep;
  // ORT asks an EP of API 24 or newer for its kernel registry once, when the session starts.
  if (ep->ort_version_supported >= 24 && ep->GetKernelRegistry)
    if (OrtStatus* s = ep->GetKernelRegistry(ep, &handle->registry))
      return fail(ErrorCode::kRuntime, fmt::format("the {} EP's GetKernelRegistry failed ('{}')", f.name, library->path()),
                  take_status(s), "see the plugin's documentation, or leave the EP out of --ep");
  if (handle->registry && !usable(handle->registry))
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's GetKernelRegistry returned something that is not a kernel registry ('{}')", f.name,
                            library->path()),
                "a kernel registry comes from OrtEpApi::CreateKernelRegistry",
                "fix the plugin: build its registry with CreateKernelRegistry and KernelRegistry_AddKernel");
  std::vector<std::string> missing;
  if (!ep->GetName) missing.push_back("GetName");
  if (ep->ort_version_supported < 23) missing.push_back(fmt::format("GetCapability and Compile (it declares API {})", ep->ort_version_supported));
  else {
    if (!ep->GetCapability) missing.push_back("GetCapability");
    // Since API 24 an EP that runs nodes with kernels from its registry may leave these two NULL.
    if (!handle->registry && !ep->Compile) missing.push_back("Compile");
    if (!handle->registry && !ep->ReleaseNodeComputeInfos) missing.push_back("ReleaseNodeComputeInfos");
  }
  if (!missing.empty())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("the {} EP ('{}') leaves OrtEp::{} NULL", f.name, library->path(), fmt::join(missing, ", ")),
                "nxrt claims nodes through GetCapability and runs them through Compile, or with kernels from the EP's "
                "kernel registry (OrtEp::GetKernelRegistry, ORT API 24), which this EP does not have",
                "fix the plugin: set every required OrtEp function pointer");

  auto p = std::unique_ptr<PluginProvider>(new PluginProvider());
  p->handle_ = std::move(handle);
  EpInfo& info = p->info_;
  info.name = f.name;
  info.version = f.version.empty() ? "unknown" : f.version;
  info.vendor = f.vendor;
  info.device = kHostDevice;
  info.device_name = fmt::format("{}", fmt::join(device_names, ", "));
  info.capabilities = {"epcontext", "ort-plugin"};
  info.context_sources = {f.name};
  info.library = library->path();
  info.ort_api_version = f.api_version;
  return std::unique_ptr<ExecutionProvider>(std::move(p));
}

Expected<PluginProvider::Claims> PluginProvider::run_get_capability(const Graph& graph, const OrtGraph& view) const {
  OrtEpGraphSupportInfo support;
  support.graph = &view;
  support.ep_name = info_.name;
  support.registry = handle_->registry;
  handle_->logger.messages.clear();
  if (OrtStatus* s = handle_->ep->GetCapability(handle_->ep, &view, &support))
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's GetCapability failed on graph '{}'", info_.name, graph.name),
                take_status(s), "see the plugin's documentation, or leave the EP out of --ep");
  Claims out;
  std::vector<bool> claimed(graph.nodes.size(), false);
  std::vector<bool> single(graph.nodes.size(), false);  // claimed with AddSingleNode
  std::vector<std::string> no_kernel(graph.nodes.size());  // why no kernel runs a single-node claim
  std::vector<std::size_t> group_of(graph.nodes.size(), 0);  // 1-based, in the order they came; 0: in none
  auto claimed_twice = [&](std::size_t id, std::string how, const char* why) {
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's GetCapability returned node '{}' {} on graph '{}'", info_.name,
                            graph.node(static_cast<NodeId>(id)).name, how, graph.name),
                why, "fix the plugin: claim each node at most once; or leave the EP out of --ep");
  };
  for (std::size_t i = 0; i < support.groups.size(); ++i) {
    const auto& group = support.groups[i];
    const std::size_t g = i + 1;
    // ORT runs an AddSingleNode claim with a kernel from the EP's kernel registry, never through
    // Compile: a node no registered kernel matches is declined, with the reason.
    if (group.single) {
      const std::size_t id = group.nodes.front()->id;
      if (claimed[id] && !single[id])
        return claimed_twice(id, fmt::format("in group {} and as a single node", group_of[id]),
                             "each node runs in exactly one place, so it may be claimed once");
      if (single[id]) return claimed_twice(id, "twice as a single node", "each node runs in exactly one place, so it may be claimed once");
      single[id] = true;
      const KernelLookup found = find_kernel(handle_->registry, *group.nodes.front(), info_.name);
      if (!found.kernel) {
        no_kernel[id] = handle_->registry ? found.why_none
                                          : "this EP has no kernel registry (OrtEp::GetKernelRegistry is NULL), so no "
                                            "kernel runs it";
        continue;
      }
      claimed[id] = true;
      group_of[id] = g;
      out.claims.groups.push_back({static_cast<NodeId>(id)});
      out.drop_constants.push_back(false);
      out.kernels.push_back(found.kernel);
      continue;
    }
    if (!handle_->ep->Compile)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("the {} EP's GetCapability returned a group of nodes to fuse on graph '{}', and the EP "
                              "leaves OrtEp::Compile NULL",
                              info_.name, graph.name),
                  "fused groups run through Compile; this EP only has kernels (OrtEp::GetKernelRegistry)",
                  "fix the plugin: claim nodes with EpGraphSupportInfo_AddSingleNode, or implement Compile");
    std::vector<NodeId> ids;
    for (const OrtNode* n : group.nodes) {
      if (single[n->id])
        return claimed_twice(n->id, fmt::format("as a single node and in group {}", g),
                             "each node runs in exactly one place, so it may be claimed once");
      if (claimed[n->id])
        return claimed_twice(n->id,
                             group_of[n->id] == g ? fmt::format("twice in group {}", g)
                                                  : fmt::format("in two groups ({} and {})", group_of[n->id], g),
                             "each node is compiled into exactly one fused node, so it may be in one group only");
      ids.push_back(static_cast<NodeId>(n->id));
      claimed[n->id] = true;
      group_of[n->id] = g;
    }
    out.claims.groups.push_back(std::move(ids));
    out.drop_constants.push_back(group.drop_constant_initializers);
    out.kernels.push_back(nullptr);
  }
  for (const Node& n : graph.nodes) {
    const auto id = static_cast<std::size_t>(n.id);
    if (claimed[id])
      out.claims.verdicts.push_back(KernelMatch::supported());
    else if (single[id])
      out.claims.verdicts.push_back(KernelMatch::declined(single_node_decline(no_kernel[id])));
    else
      out.claims.verdicts.push_back(KernelMatch::declined(fmt::format(
          "not returned by {}'s GetCapability{}", info_.name, logged_about(handle_->logger.messages, n.name))));
  }
  return out;
}

std::string PluginProvider::single_node_decline(const std::string& why_no_kernel) const {
  return fmt::format(
      "{} claimed it with EpGraphSupportInfo_AddSingleNode, which runs the node with a kernel from the EP's kernel "
      "registry, but {}; ONNX Runtime fails such a session with 'Failed to find kernel'",
      info_.name, why_no_kernel);
}

Expected<GraphClaims> PluginProvider::claim_graph(const Graph& graph) const {
  std::lock_guard lock(mutex_);
  if (auto it = claims_.find(&graph); it != claims_.end()) return it->second.claims;
  auto view = make_graph_view(graph, graph.model_path.string(), graph.ir_version);
  auto claims = from_library(*handle_, run_get_capability(graph, *view));
  if (!claims) return std::unexpected(claims.error());
  if (!graph.parent) main_graph_ = &graph;
  return claims_.emplace(&graph, std::move(*claims)).first->second.claims;
}

const PluginProvider::Claims* PluginProvider::cached_claims(const Graph& graph) const {
  std::lock_guard lock(mutex_);
  auto it = claims_.find(&graph);
  return it == claims_.end() ? nullptr : &it->second;
}

KernelMatch PluginProvider::claim(const NodeContext& ctx) const {
  auto claims = claim_graph(ctx.graph());
  if (!claims) return KernelMatch::declined(fmt::format("{}: {}", claims.error().what, claims.error().why));
  return claims->verdicts[static_cast<std::size_t>(ctx.node().id)];
}

std::optional<std::size_t> PluginProvider::group_of(const Claims& claims, const Partition& partition) const {
  for (std::size_t g = 0; g < claims.claims.groups.size(); ++g)
    if (!claims.claims.groups[g].empty() && claims.claims.groups[g].front() == partition.nodes.front()) return g;
  return std::nullopt;
}

Expected<std::unique_ptr<CompiledPartition>> PluginProvider::compile(const Partition& partition) {
  const Graph& graph = *partition.graph;
  bool drop = false;
  if (const Claims* c = cached_claims(graph))
    if (auto g = group_of(*c, partition)) {
      if (const OrtKernelRegistry::Kernel* kernel = c->kernels[*g]) return from_library(*handle_, compile_kernel(partition, *kernel));
      drop = c->drop_constants[*g];
    }
  auto view = make_subgraph_view(graph, partition.nodes, partition.name, graph.model_path.string());
  return from_library(*handle_, compile_view(partition, *view, drop));
}

Expected<std::unique_ptr<CompiledPartition>> PluginProvider::compile_kernel(const Partition& partition,
                                                                            const OrtKernelRegistry::Kernel& kernel) {
  const Graph& graph = *partition.graph;
  const Node& node = graph.node(partition.nodes.front());
  PluginKernelPartition::Parts parts;
  parts.handle = handle_;
  parts.kernel = &kernel;
  parts.view = make_subgraph_view(graph, partition.nodes, partition.name, graph.model_path.string());
  parts.node = parts.view->nodes.front().get();
  parts.plan.name = node.name;
  std::vector<ValueId> reads = node.inputs;
  reads.insert(reads.end(), node.implicit_inputs.begin(), node.implicit_inputs.end());
  for (ValueId v : reads) {
    if (v == kNoValue) {
      parts.plan.inputs.push_back({FusedInput::kOmitted, {}});
      continue;
    }
    const Value& val = graph.value(v);
    if (is_constant_initializer(val)) {
      auto t = val.initializer->materialize();
      if (!t) return std::unexpected(t.error());
      parts.plan.inputs.push_back({FusedInput::kConstant, *t});
      continue;
    }
    const auto at = std::find(partition.inputs.begin(), partition.inputs.end(), v);
    if (at == partition.inputs.end())
      return fail(ErrorCode::kRuntime, fmt::format("'{}' is read by partition '{}' but is not among its inputs", val.name,
                                                   partition.name));
    parts.plan.inputs.push_back({static_cast<int>(at - partition.inputs.begin()), {}});
  }
  for (ValueId v : node.outputs) parts.plan.add_output(graph, v);
  for (ValueId v : partition.outputs)
    parts.returned.push_back(static_cast<std::size_t>(std::find(node.outputs.begin(), node.outputs.end(), v) -
                                                      node.outputs.begin()));
  auto compiled = PluginKernelPartition::create(std::move(parts));
  if (!compiled) return std::unexpected(compiled.error());
  return std::unique_ptr<CompiledPartition>(std::move(*compiled));
}

Expected<std::unique_ptr<CompiledPartition>> PluginProvider::compile_view(const Partition& partition, const OrtGraph& view,
                                                                          bool drop_constants) {
  const Graph& graph = *partition.graph;
  // The fused node reads what its members read from outside, in first-use order, constant
  // initializers included unless the plugin asked to keep its own copies (as in ORT).
  std::vector<ValueId> fused_inputs;
  std::vector<FusedInput> sources;
  const std::set<NodeId> members(partition.nodes.begin(), partition.nodes.end());
  std::set<ValueId> seen;
  for (NodeId id : partition.nodes) {
    std::vector<ValueId> reads = graph.node(id).inputs;
    reads.insert(reads.end(), graph.node(id).implicit_inputs.begin(), graph.node(id).implicit_inputs.end());
    for (ValueId v : reads) {
      if (v == kNoValue || !seen.insert(v).second) continue;
      const Value& val = graph.value(v);
      if (val.producer >= 0 && members.contains(val.producer)) continue;
      if (is_constant_initializer(val)) {
        if (drop_constants) continue;
        auto t = val.initializer->materialize();
        if (!t) return std::unexpected(t.error());
        sources.push_back({-1, *t});
      } else {
        const auto at = std::find(partition.inputs.begin(), partition.inputs.end(), v);
        if (at == partition.inputs.end())
          return fail(ErrorCode::kRuntime, fmt::format("'{}' is read by partition '{}' but is not among its inputs",
                                                       val.name, partition.name));
        sources.push_back({static_cast<int>(at - partition.inputs.begin()), {}});
      }
      fused_inputs.push_back(v);
    }
  }
  auto fused = make_fused_node(view, partition.name, fused_inputs, partition.outputs);

  const OrtGraph* graphs[] = {&view};
  const OrtNode* fused_nodes[] = {fused.get()};
  OrtNodeComputeInfo* infos[1] = {nullptr};
  OrtNode* context_nodes[1] = {nullptr};
  OrtEp* ep = handle_->ep;
  const OrtStatus* status = ep->Compile(ep, graphs, fused_nodes, 1, infos, context_nodes);
  // Only a node the plugin made with CreateNode becomes the host's; anything else it returned
  // there (a node of the graph it was shown, a stale pointer) is never freed or read.
  const bool own_node = usable(context_nodes[0]) && context_nodes[0]->plugin_owned;
  std::unique_ptr<OrtNode> context_node(own_node ? context_nodes[0] : nullptr);
  if (context_node) context_node->plugin_owned = false;
  if (status) {
    if (infos[0]) ep->ReleaseNodeComputeInfos(ep, infos, 1);
    return fail(ErrorCode::kRuntime, fmt::format("the {} EP's Compile failed for partition '{}'", info_.name, partition.name),
                take_status(const_cast<OrtStatus*>(status)),
                "see the plugin's documentation, or run these nodes on another EP with --ep");
  }
  if (context_nodes[0] && !own_node) {
    ep->ReleaseNodeComputeInfos(ep, infos, 1);
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's Compile returned an EPContext node for partition '{}' that it did not make with "
                            "OrtModelEditorApi::CreateNode",
                            info_.name, partition.name),
                "ep_context_nodes[0] is not an OrtNode from CreateNode (a node of the graph it was given, or not a node "
                "at all); the host takes ownership of these nodes and frees them",
                "fix the plugin: build EPContext nodes with CreateNode, or leave the entry NULL");
  }
  if (!infos[0])
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's Compile returned no OrtNodeComputeInfo for partition '{}'", info_.name, partition.name),
                "Compile reported success but left node_compute_infos[0] NULL", "fix the plugin");
  PluginPartition::Parts parts{handle_, infos[0], {partition.name, std::move(sources), {}}, std::move(context_node)};
  for (ValueId v : partition.outputs) parts.plan.add_output(graph, v);
  auto compiled = PluginPartition::create(std::move(parts));
  if (!compiled) return std::unexpected(compiled.error());
  return std::unique_ptr<CompiledPartition>(std::move(*compiled));
}

bool PluginProvider::saves_context(const Partition& partition, const CompiledPartition& compiled) const {
  (void)partition;
  return dynamic_cast<const PluginKernelPartition*>(&compiled) == nullptr;
}

Expected<EpContext> PluginProvider::save_context(const Partition& partition, const CompiledPartition& compiled) {
  return from_library(*handle_, read_context_node(partition, compiled));
}

Expected<EpContext> PluginProvider::read_context_node(const Partition& partition, const CompiledPartition& compiled) const {
  const auto* plugin = dynamic_cast<const PluginPartition*>(&compiled);
  const OrtNode* node = plugin ? plugin->context_node() : nullptr;
  if (!node)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP returned no EPContext node for partition '{}'", info_.name, partition.name),
                fmt::format("Compile left ep_context_nodes[0] NULL although session option {}=1 was set",
                            NXRT_ORT_EP_CONTEXT_ENABLE_KEY),
                "use a plugin that supports EPContext models, or leave this EP out of compile-epcontext");
  auto text = [&](const char* name) {
    const OrtOpAttr* a = find_attr(*node, name);
    return a ? a->s : std::string();
  };
  auto integer = [&](const char* name, int64_t fallback) {
    const OrtOpAttr* a = find_attr(*node, name);
    return a ? a->i : fallback;
  };
  if (node->op_type != "EPContext" || node->domain != "com.microsoft")
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP returned a '{}::{}' node where an EPContext node belongs", info_.name, node->domain,
                            node->op_type),
                "Compile must return com.microsoft::EPContext nodes", "fix the plugin");
  if (auto problem = context_node_problem(*node); !problem.empty())
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's EPContext node '{}' for partition '{}' {}", info_.name, node->name, partition.name,
                            problem),
                "an EPContext node carries its payload in the string attribute ep_cache_context, and the attributes "
                "of com.microsoft::EPContext have fixed types",
                "fix the plugin: set ep_cache_context, and give each EPContext attribute its schema's type");
  if (integer("embed_mode", 1) != 1)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP returned an EPContext node with embed_mode=0 for partition '{}'", info_.name,
                            partition.name),
                "nxrt writes the payload itself (inline or to a side file, by --embed/--external) and asks plugins for "
                "embed_mode=1",
                "let the plugin honour ep.context_embed_mode=1");
  EpContext ctx;
  ctx.source = text("source");
  if (ctx.source.empty()) ctx.source = info_.name;
  if (ctx.source != info_.name)
    return fail(ErrorCode::kRuntime,
                fmt::format("the {} EP's EPContext node names source '{}'", info_.name, ctx.source),
                "nxrt hands EPContext nodes back to a plugin EP by its name", "let the plugin set source to its EP name");
  const std::string payload = text("ep_cache_context");
  ctx.owned.resize(payload.size());
  std::memcpy(ctx.owned.data(), payload.data(), payload.size());
  ctx.partition_name = partition.name;
  ctx.main_context = integer("main_context", 1);
  ctx.ep_sdk_version = text("ep_sdk_version");
  ctx.hardware_architecture = text("hardware_architecture");
  ctx.notes = text("notes");
  return ctx;
}

Expected<std::unique_ptr<CompiledPartition>> PluginProvider::load_context(const EpContext& context,
                                                                          const Partition& partition) {
  const Graph& graph = *partition.graph;
  auto view = make_subgraph_view(graph, partition.nodes, partition.name, graph.model_path.string());
  // The plugin always reads its payload inline, wherever the model keeps it.
  OrtNode& node = *view->nodes.front();
  const auto payload = context.payload();
  for (auto& a : node.attributes) {
    if (a->name == "ep_cache_context") a->s.assign(reinterpret_cast<const char*>(payload.data()), payload.size());
    if (a->name == "embed_mode") a->i = 1;
  }
  auto claims = from_library(*handle_, run_get_capability(graph, *view));
  if (!claims) return std::unexpected(claims.error());
  if (claims->claims.groups.empty())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("the {} EP does not claim EPContext node '{}' in GetCapability", info_.name, node.name),
                "the node names this EP as its source, but the plugin declined it",
                "recompile the original model with nxrt compile-epcontext and this plugin version");
  const bool drop = claims->drop_constants.front();
  return from_library(*handle_, compile_view(partition, *view, drop));
}

std::string PluginProvider::compatibility_info() const {
  const std::string fallback = fmt::format("{} {}", info_.name, info_.version);
  OrtEp* ep = handle_->ep;
  if (!ep->GetCompiledModelCompatibilityInfo) return fallback;
  // ORT passes the graph being compiled, and a plugin may read it: hand it the main graph the
  // EP claimed nodes of, never NULL.
  const Graph* main = nullptr;
  {
    std::lock_guard lock(mutex_);
    main = main_graph_;
  }
  if (!main) return fallback;
  auto view = make_graph_view(*main, main->model_path.string(), main->ir_version);
  const char* text = ep->GetCompiledModelCompatibilityInfo(ep, view.get());
  return text ? text : fallback;
}

}  // namespace nxrt::ort_plugin
