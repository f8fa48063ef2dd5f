// Writes EPContext models in ONNX Runtime's format (EPCONTEXT.md).
#include "nxrt/session/epcontext_writer.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <set>

#include "nxrt/io/atomic_file.h"
#include "nxrt/model/tensor_proto.h"

namespace nxrt {
namespace {

namespace fs = std::filesystem;

std::string sanitize_file_part(std::string s) {
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-') c = '_';
  return s;
}

void set_attr(onnx::NodeProto& node, const std::string& name, int64_t value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void set_attr(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  auto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

// Names every node of `graph` (recursively) reads, for keeping initializers alive.
void collect_reads(const onnx::GraphProto& graph, std::set<std::string>& reads) {
  for (const auto& node : graph.node()) {
    for (const auto& in : node.input()) reads.insert(in);
    for (const auto& a : node.attribute()) {
      if (a.has_g()) collect_reads(a.g(), reads);
      for (const auto& g : a.graphs()) collect_reads(g, reads);
    }
  }
}

// Whether `a` and `b` are one file, or would be once `a` is written. A path that cannot be
// resolved (a name too long, a folder removed meanwhile) is not the input: writing it fails
// later with its own error.
bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  if (fs::exists(a, ec) && fs::exists(b, ec) && fs::equivalent(a, b, ec)) return true;
  std::error_code ec_a, ec_b;
  const fs::path real_a = fs::weakly_canonical(a, ec_a);
  const fs::path real_b = fs::weakly_canonical(b, ec_b);
  return !ec_a && !ec_b && real_a == real_b;
}

Expected<void> check_target(const fs::path& target, const fs::path& input, bool force) {
  if (same_file(target, input))
    return fail(ErrorCode::kUsage, fmt::format("refusing to write over the input model '{}'", input.string()), {},
                "choose another output path with -o");
  std::error_code ec;
  if (fs::exists(target, ec) && !force)
    return fail(ErrorCode::kUsage, fmt::format("'{}' already exists", target.string()), {},
                "pass --force to overwrite it, or choose another path with -o");
  return {};
}

}  // namespace

fs::path default_context_output(const fs::path& input) {
  return input.parent_path() / fmt::format("{}_ctx.onnx", input.stem().string());
}

Expected<EpContextWriteResult> write_epcontext_model(const Session& session, const EpContextWriteOptions& options) {
  const Model& model = session.model();
  const Graph& graph = *model.graph;
  const ClaimsReport& report = session.report();
  for (const Node& n : graph.nodes)
    if (n.is_ep_context())
      return fail(ErrorCode::kUsage,
                  fmt::format("'{}' already contains EPContext nodes ('{}')", model.path.string(), n.name),
                  "a compiled model cannot be compiled again", "compile the original model instead");
  if (auto r = check_target(options.output, model.path, options.force); !r) return std::unexpected(r.error());

  EpContextWriteResult result;
  result.output = options.output;
  const fs::path out_dir = options.output.parent_path();
  const std::string stem = options.output.stem().string();

  // Which partitions become contexts, and how many per EP (to name side files).
  std::vector<std::optional<EpContext>> contexts(report.partitions.size());
  std::map<std::string, int> per_ep;
  for (const Partition& p : report.partitions) {
    auto* capable = dynamic_cast<ContextCapable*>(session.eps().find(p.ep));
    const CompiledPartition& compiled = session.compiled(static_cast<std::size_t>(p.index));
    if (!capable || !capable->saves_context(p, compiled)) continue;
    auto ctx = capable->save_context(p, compiled);
    if (!ctx) return forward_error(std::move(ctx), fmt::format("saving partition '{}' on the {} EP", p.name, p.ep));
    contexts[static_cast<std::size_t>(p.index)] = std::move(*ctx);
    ++per_ep[p.ep];
    result.compatibility[p.ep] = capable->compatibility_info();
  }
  if (per_ep.empty() && !options.allow_empty)
    return fail(ErrorCode::kRuntime,
                fmt::format("no partition of '{}' could be compiled to an EPContext node", model.path.string()),
                fmt::format("none of the EPs that own partitions ({}) can save contexts",
                            fmt::join(report.eps, ", ")),
                "use an EP with the 'epcontext' capability (see nxrt list-eps), or pass --allow-empty");

  onnx::ModelProto out = *model.proto;
  auto* g = out.mutable_graph();
  g->clear_node();
  StagedFiles files;
  std::map<std::string, int> per_ep_index;
  // Original NodeProtos are found by their first output (names may have been made up by the
  // loader, and the IR's node order may differ from the file's).
  std::map<std::string, const onnx::NodeProto*> by_output;
  for (const auto& n : model.proto->graph().node())
    for (const auto& o : n.output())
      if (!o.empty()) by_output[o] = &n;
  auto original_of = [&](const Node& node) -> const onnx::NodeProto* {
    for (ValueId v : node.outputs)
      if (v != kNoValue)
        if (auto it = by_output.find(graph.value(v).name); it != by_output.end()) return it->second;
    return nullptr;
  };

  for (const Partition& p : report.partitions) {
    auto& ctx = contexts[static_cast<std::size_t>(p.index)];
    if (!ctx) {
      for (NodeId id : p.nodes) {
        const onnx::NodeProto* original = original_of(graph.node(id));
        if (!original)
          return fail(ErrorCode::kRuntime, fmt::format("node {} has no outputs to identify it by",
                                                       graph.node(id).describe()));
        *g->add_node() = *original;
        ++result.kept_nodes;
      }
      continue;
    }
    onnx::NodeProto& node = *g->add_node();
    const std::string node_name = options.node_name_prefix + p.name;
    node.set_name(node_name);
    node.set_op_type("EPContext");
    node.set_domain("com.microsoft");
    for (ValueId v : p.inputs) node.add_input(graph.value(v).name);
    for (ValueId v : p.outputs) node.add_output(graph.value(v).name);
    const auto payload = ctx->payload();
    WrittenContext written{node_name, p.name, p.ep, p.nodes.size(), payload.size(), "inline"};
    set_attr(node, "main_context", int64_t{1});
    if (options.embed) {
      set_attr(node, "embed_mode", int64_t{1});
      set_attr(node, "ep_cache_context", std::string(reinterpret_cast<const char*>(payload.data()), payload.size()));
    } else {
      const int index = per_ep_index[p.ep]++;
      const std::string file = per_ep[p.ep] == 1
                                   ? sanitize_file_part(fmt::format("{}_{}.bin", stem, p.ep))
                                   : sanitize_file_part(fmt::format("{}_{}_{}.bin", stem, p.ep, index));
      const fs::path target = out_dir / file;
      if (auto r = check_target(target, model.path, options.force); !r) return std::unexpected(r.error());
      if (auto r = files.stage(target, payload); !r) return std::unexpected(r.error());
      result.side_files.push_back(target);
      set_attr(node, "embed_mode", int64_t{0});
      set_attr(node, "ep_cache_context", file);
      written.location = file;
    }
    set_attr(node, "source", ctx->source);
    set_attr(node, "partition_name", p.name);
    set_attr(node, "ep_sdk_version", ctx->ep_sdk_version);
    set_attr(node, "hardware_architecture", ctx->hardware_architecture);
    set_attr(node, "onnx_model_filename", model.path.filename().string());
    if (!ctx->notes.empty()) set_attr(node, "notes", ctx->notes);
    result.contexts.push_back(std::move(written));
  }

  // Keep initializers that a remaining node still reads; external ones become inline,
  // since the output may live in another folder than the weights file.
  std::set<std::string> reads;
  collect_reads(*g, reads);
  for (const auto& o : g->output()) reads.insert(o.name());
  std::set<std::string> inputs;
  for (const auto& in : g->input()) inputs.insert(in.name());
  auto* inits = g->mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    auto& init = *inits->Mutable(i);
    if (!reads.contains(init.name()) && !inputs.contains(init.name())) {
      inits->DeleteSubrange(i, 1);
      continue;
    }
    // The loaded proto's initializers carry no data (the graph holds it): write it back.
    auto id = graph.find_value(init.name());
    auto t = graph.value(*id).initializer->materialize();
    if (!t) return forward_error(std::move(t), fmt::format("copying initializer '{}'", init.name()));
    const std::string name = init.name();
    init.Clear();
    tensor_to_proto(*t, init);
    init.set_name(name);
  }
  // Values the IR holds as constants but the file computed (folded Constant nodes) become
  // initializers when a remaining node or a graph output still reads them.
  std::set<std::string> defined = inputs;
  for (const auto& init : g->initializer()) defined.insert(init.name());
  for (const auto& n : g->node())
    for (const auto& o : n.output()) defined.insert(o);
  for (const std::string& name : reads) {
    if (name.empty() || defined.contains(name)) continue;
    auto id = graph.find_value(name);
    if (!id || !graph.value(*id).initializer) continue;
    auto t = graph.value(*id).initializer->materialize();
    if (!t) return forward_error(std::move(t), fmt::format("writing initializer '{}'", name));
    auto* init = g->add_initializer();
    tensor_to_proto(*t, *init);
    init->set_name(name);
  }
  // value_info of values that now live inside blobs goes too.
  std::set<std::string> live = reads;
  for (const auto& n : g->node())
    for (const auto& o : n.output()) live.insert(o);
  auto* infos = g->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i)
    if (!live.contains(infos->Get(i).name())) infos->DeleteSubrange(i, 1);

  bool has_ms = false;
  for (const auto& op : out.opset_import()) has_ms |= op.domain() == "com.microsoft";
  if (!has_ms) {
    auto* op = out.add_opset_import();
    op->set_domain("com.microsoft");
    op->set_version(1);
  }
  auto* props = out.mutable_metadata_props();
  for (int i = props->size() - 1; i >= 0; --i)
    if (props->Get(i).key().starts_with("ep_compatibility_info.")) props->DeleteSubrange(i, 1);
  for (const auto& [ep, info] : result.compatibility) {  // std::map: sorted, deterministic
    auto* p = out.add_metadata_props();
    p->set_key("ep_compatibility_info." + ep);
    p->set_value(info);
  }

  std::string bytes;
  if (!out.SerializeToString(&bytes))
    return fail(ErrorCode::kRuntime, fmt::format("cannot serialize the model for '{}'", options.output.string()),
                "protobuf refused it (over 2 GiB?)", "use --external so payloads go to side files");
  if (auto r = files.stage(options.output, std::as_bytes(std::span(bytes.data(), bytes.size()))); !r)
    return std::unexpected(r.error());
  if (auto r = files.commit(); !r) return std::unexpected(r.error());
  return result;
}

}  // namespace nxrt
