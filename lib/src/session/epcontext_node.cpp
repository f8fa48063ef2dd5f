// EPContext node attributes -> EpContext, with the path guard on external payloads.
#include "epcontext_node.h"

#include <fmt/format.h>

#include "nxrt/model/model.h"

namespace nxrt {
namespace {

EpContext attributes_of(const Node& node) {
  const AttributeMap& a = node.attributes;
  EpContext ctx;
  ctx.source = a.string_or("source", "");
  ctx.partition_name = a.string_or("partition_name", "");
  ctx.main_context = a.int_or("main_context", 1);
  ctx.embed_mode = a.int_or("embed_mode", 1);
  ctx.ep_sdk_version = a.string_or("ep_sdk_version", "");
  ctx.hardware_architecture = a.string_or("hardware_architecture", "");
  ctx.onnx_model_filename = a.string_or("onnx_model_filename", "");
  ctx.notes = a.string_or("notes", "");
  ctx.max_size = a.int_or("max_size", 0);
  return ctx;
}

std::unexpected<Error> bad_node(const Graph& graph, const Node& node, std::string what, std::string how) {
  return fail(ErrorCode::kInvalidInput, fmt::format("EPContext node '{}': {}", node.name, what),
              fmt::format("in the model in '{}'", graph.model_dir.string()), std::move(how));
}

}  // namespace

Expected<ContextNodeInfo> describe_context_node(const Graph& graph, const Node& node,
                                                const EpContextRegistry& contexts) {
  EpContext ctx = attributes_of(node);
  if (ctx.source.empty())
    return bad_node(graph, node, "has no 'source' attribute",
                    "EPContext nodes need the source key of the EP that consumes them; recompile the model");
  ContextNodeInfo info;
  info.node = node.id;
  info.source = ctx.source;
  if (ExecutionProvider* ep = contexts.find(ctx.source)) info.ep = ep->info().name;
  const std::string payload = node.attributes.string_or("ep_cache_context", "");
  if (ctx.main_context == 0) {
    info.location = "shared (main_context=0)";
  } else if (ctx.embed_mode == 0) {
    info.location = payload;
    std::error_code ec;
    if (auto path = guard_relative_path(graph.model_dir, payload, "EPContext payload"))
      info.payload_bytes = static_cast<std::size_t>(std::filesystem::file_size(*path, ec));
  } else {
    info.location = "inline";
    info.payload_bytes = payload.size();
  }
  return info;
}

Expected<std::map<NodeId, EpContext>> read_context_nodes(const Graph& graph) {
  std::map<NodeId, EpContext> out;
  std::map<std::pair<std::string, std::string>, NodeId> primaries;
  for (const Node& node : graph.nodes) {
    if (!node.is_ep_context()) continue;
    EpContext ctx = attributes_of(node);
    if (ctx.main_context == 0) continue;
    const Attribute* payload = node.attributes.find("ep_cache_context");
    const std::string* text = payload ? std::get_if<std::string>(&payload->value) : nullptr;
    if (!text)
      return bad_node(graph, node, "has no 'ep_cache_context' payload",
                      "the node is incomplete; recompile the model with nxrt compile-epcontext");
    if (ctx.embed_mode == 0) {
      ctx.external_path = *text;
      auto path = guard_relative_path(graph.model_dir, *text, "EPContext payload");
      if (!path) return forward_error(std::move(path), fmt::format("reading EPContext node '{}'", node.name));
      auto mapped = MappedFile::open(*path);
      if (!mapped) return forward_error(std::move(mapped), fmt::format("reading EPContext node '{}'", node.name));
      ctx.mapping = *mapped;
      ctx.mapped_bytes = std::span((*mapped)->data(), (*mapped)->size());
    } else {
      const auto* b = reinterpret_cast<const std::byte*>(text->data());
      ctx.owned.assign(b, b + text->size());
    }
    primaries.emplace(std::pair(ctx.source, ctx.partition_name), node.id);
    out.emplace(node.id, std::move(ctx));
  }
  for (const Node& node : graph.nodes) {
    if (!node.is_ep_context()) continue;
    EpContext ctx = attributes_of(node);
    if (ctx.main_context != 0) continue;
    auto primary = primaries.find(std::pair(ctx.source, ctx.partition_name));
    if (primary == primaries.end())
      return bad_node(graph, node,
                      fmt::format("has main_context=0 but no main_context=1 node has source '{}' and "
                                  "partition_name '{}'", ctx.source, ctx.partition_name),
                      "the model lost its primary context node; recompile it");
    const EpContext& p = out.at(primary->second);
    ctx.owned = p.owned;
    ctx.mapping = p.mapping;
    ctx.mapped_bytes = p.mapped_bytes;
    out.emplace(node.id, std::move(ctx));
  }
  return out;
}

}  // namespace nxrt
