// The loader: ONNX protobuf -> nxrt IR, with shape inference and structural validation (no
// libonnx checker: it refuses IR versions and opsets newer than itself).
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <fstream>
#include <queue>
#include <set>

#include "convert.h"
#include "microsoft_schemas.h"
#include "schema_bridge.h"
#include "nxrt/model/model.h"
#include "nxrt/model/op_versions.h"
#include "nxrt/model/tensor_proto.h"

namespace nxrt {
namespace {

// Largest model file read into memory; protobuf itself cannot parse beyond 2 GiB.
constexpr std::uintmax_t kMaxModelBytes = (std::uintmax_t{2} << 30) - 1;

struct LoadState {
  std::filesystem::path file;         // for messages
  std::filesystem::path model_dir;
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;
  MappedFileCache files;
  bool check_definitions = true;  // LoadOptions::check_definitions
};

std::unexpected<Error> invalid(const LoadState& st, std::string what, std::string why = {}, std::string how = {}) {
  return fail(ErrorCode::kInvalidInput, fmt::format("{}: {}", st.file.string(), what), std::move(why),
              how.empty() ? "fix or re-export the model" : std::move(how));
}

// `release`: the same graph, writable; each initializer's data is dropped from it once the
// IR holds its copy, so a model's weights are never held twice (main graph only).
Expected<void> convert_graph(const onnx::GraphProto& gp, Graph& g, LoadState& st,
                             onnx::GraphProto* release = nullptr);

Expected<Attribute> convert_attribute(const onnx::AttributeProto& a, const Graph& owner, const std::string& node,
                                      LoadState& st) {
  using A = onnx::AttributeProto;
  auto type = a.type();
  if (type == A::UNDEFINED) {
    // Models before IR 2 leave `type` unset: read it from the field that is present.
    if (a.has_i()) type = A::INT;
    else if (a.has_f()) type = A::FLOAT;
    else if (a.has_s()) type = A::STRING;
    else if (a.has_t()) type = A::TENSOR;
    else if (a.has_g()) type = A::GRAPH;
    else if (a.ints_size()) type = A::INTS;
    else if (a.floats_size()) type = A::FLOATS;
    else if (a.strings_size()) type = A::STRINGS;
  }
  const std::string where = fmt::format("attribute '{}' of node '{}'", a.name(), node);
  switch (type) {
    case A::INT: return Attribute{a.i()};
    case A::FLOAT: return Attribute{a.f()};
    case A::STRING: return Attribute{a.s()};
    case A::INTS: return Attribute{std::vector<int64_t>(a.ints().begin(), a.ints().end())};
    case A::FLOATS: return Attribute{std::vector<float>(a.floats().begin(), a.floats().end())};
    case A::STRINGS: return Attribute{std::vector<std::string>(a.strings().begin(), a.strings().end())};
    case A::TENSOR: {
      auto t = tensor_from_proto(a.t(), where);
      if (!t) return std::unexpected(t.error());
      return Attribute{std::move(*t)};
    }
    case A::GRAPH: {
      auto sub = std::make_shared<Graph>();
      sub->parent = &owner;
      if (auto r = convert_graph(a.g(), *sub, st); !r)
        return forward_error(std::move(r), fmt::format("reading the subgraph in {}", where));
      return Attribute{std::shared_ptr<const Graph>(std::move(sub))};
    }
    default: return Attribute{OpaqueAttribute{a.SerializeAsString()}};
  }
}

// libonnx's definition of the operator version a node uses, or null where libonnx does not
// have that version: an ai.onnx version newer than the installed libonnx (its newest schema
// would describe an older version: ReduceMean-13 for a ReduceMean-18 node) or past
// kNewestKnownOpset, where nxrt cannot tell which version the node is.
// Whether libonnx defines operators in `domain` (normalized). Asking its registry about any
// other domain (com.microsoft's EPContext) would first build the whole registry, about 40M
// instructions and most of an EPContext model's load time, only to find nothing.
bool libonnx_defines(const std::string& domain) {
  return domain.empty() || domain == "ai.onnx.ml" || domain == "ai.onnx.training" ||
         domain == "ai.onnx.preview.training";
}

const onnx::OpSchema* libonnx_definition(const std::string& op_type, const std::string& domain, int64_t opset) {
  if (!libonnx_defines(domain)) return nullptr;
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op_type, static_cast<int>(opset), domain);
  if (!schema || schema->Deprecated() || !(domain.empty() || domain == "ai.onnx")) return schema;
  if (opset > kNewestKnownOpset) return nullptr;
  const OpVersionChange* change = op_version_at(op_type, opset);
  return change && change->since_version > schema->since_version() ? nullptr : schema;
}

const onnx::OpSchema* libonnx_definition(const Node& node) {
  return libonnx_definition(node.op_type, node.domain, node.opset);
}

// Attributes ONNX shape inference divides by (Conv and pooling windows, DepthToSpace and
// SpaceToDepth blocks, Conv groups) without checking them: each value must be at least 1.
bool has_zero_divisor(const onnx::NodeProto& np) {
  static const std::set<std::string> divisors = {"strides", "dilations", "kernel_shape", "blocksize", "group"};
  for (const auto& a : np.attribute()) {
    if (!divisors.contains(a.name())) continue;
    if (a.type() == onnx::AttributeProto::INT && a.i() < 1) return true;
    if (std::ranges::any_of(a.ints(), [](int64_t v) { return v < 1; })) return true;
  }
  return false;
}

// Whether ONNX shape inference can be trusted with every node of `gp` and of its subgraphs:
// each matches its libonnx definition and has no zero divisor. ONNX's inference functions
// assume both (Scan's reads a missing num_scan_inputs, Conv's divides by a zero stride). A
// model where this fails is not inferred; convert_graph and the EPs then report the node.
bool safe_for_shape_inference(const onnx::GraphProto& gp, const LoadState& st) {
  for (const auto& np : gp.node()) {
    if (has_zero_divisor(np)) return false;
    const std::string domain = normalize_domain(np.domain());
    if (auto op = st.opsets.find(domain); op != st.opsets.end()) {
      if (const onnx::OpSchema* schema = libonnx_definition(np.op_type(), domain, op->second);
          schema && !schema->Deprecated()) {
        try {
          schema->Verify(np);
        } catch (const onnx::checker::ValidationError&) {
          return false;
        }
      }
    }
    for (const auto& a : np.attribute()) {
      if (a.has_g() && !safe_for_shape_inference(a.g(), st)) return false;
      for (const auto& g : a.graphs())
        if (!safe_for_shape_inference(g, st)) return false;
    }
  }
  return true;
}

// Whether some node of `gp` or of its subgraphs has a type and shape rule: one in a domain libonnx
// defines, or a com.microsoft op nxrt infers (microsoft_schemas.h). Else ONNX shape inference has
// nothing to infer (an EPContext model, whose nodes are com.microsoft's EPContext).
bool has_inferable_ops(const onnx::GraphProto& gp) {
  for (const auto& np : gp.node()) {
    const std::string domain = normalize_domain(np.domain());
    if (libonnx_defines(domain) || (domain == "com.microsoft" && microsoft_schema(np.op_type(), 1))) return true;
    for (const auto& a : np.attribute()) {
      if (a.has_g() && has_inferable_ops(a.g())) return true;
      if (std::ranges::any_of(a.graphs(), has_inferable_ops)) return true;
    }
  }
  return false;
}

// Checks a node against its ONNX operator definition at the model's opset: input and output
// counts, attribute types, required attributes. Ops ONNX does not define, and versions the
// installed libonnx predates, are left to the EPs' claim validators.
Expected<void> verify_schema(const onnx::NodeProto& np, const Node& node, const LoadState& st) {
  const onnx::OpSchema* schema = libonnx_definition(node);
  if (!schema || schema->Deprecated()) return {};
  try {
    schema->Verify(np);
  } catch (const onnx::checker::ValidationError& e) {
    return invalid(st,
                   fmt::format("node '{}' does not match the definition of {}::{}-{}", node.name,
                               display_domain(node.domain), node.op_type, schema->since_version()),
                   e.what());
  }
  return {};
}

// Orders nodes so every producer comes before its consumers (stable: keeps file order
// where possible); fails on a cycle.
Expected<void> sort_topologically(Graph& g, LoadState& st) {
  const std::size_t n = g.nodes.size();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<NodeId>> users(n);
  for (const Node& node : g.nodes) {
    std::set<NodeId> deps;
    for (const auto* reads : {&node.inputs, &node.implicit_inputs})
      for (ValueId v : *reads)
        if (v != kNoValue && g.value(v).producer >= 0) deps.insert(g.value(v).producer);
    for (NodeId d : deps) users[static_cast<std::size_t>(d)].push_back(node.id);
    pending[static_cast<std::size_t>(node.id)] = static_cast<int>(deps.size());
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId u : users[static_cast<std::size_t>(id)])
      if (--pending[static_cast<std::size_t>(u)] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        return invalid(st, fmt::format("the graph has a cycle through node {}", g.nodes[i].describe()),
                       "ONNX graphs must be acyclic", "break the cycle; loops belong in a Loop node");
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (NodeId id : order) sorted.push_back(std::move(g.nodes[static_cast<std::size_t>(id)]));
  for (std::size_t i = 0; i < n; ++i) sorted[i].id = static_cast<NodeId>(i);
  g.nodes = std::move(sorted);
  g.rebuild_links();
  return {};
}

// Finds `name` in an enclosing graph (for subgraph references to outer values).
const Value* find_outer(const Graph* parent, const std::string& name) {
  for (const Graph* p = parent; p; p = p->parent)
    if (auto id = p->find_value(name)) return &p->value(*id);
  return nullptr;
}

// Fills `graph` (whose parent is already set) in place: subgraphs keep pointers to it.
Expected<void> convert_graph(const onnx::GraphProto& gp, Graph& graph, LoadState& st, onnx::GraphProto* release) {
  Graph* g = &graph;
  const Graph* parent = graph.parent;
  g->name = gp.name();
  g->model_dir = st.model_dir;
  g->model_path = st.file;
  g->ir_version = st.ir_version;
  g->opset_imports = st.opsets;

  for (int index = 0; index < gp.initializer_size(); ++index) {
    const onnx::TensorProto& init = gp.initializer(index);
    if (init.name().empty()) return invalid(st, "an initializer has no name");
    if (g->find_value(init.name()))
      return invalid(st, fmt::format("initializer '{}' is defined twice", init.name()));
    const std::string where = fmt::format("initializer '{}'", init.name());
    auto w = weight_from_proto(init, st.model_dir, where, st.files);
    if (!w) return forward_error(std::move(w), fmt::format("loading {}", st.file.string()));
    Value& v = g->value(g->intern_value(init.name()));
    v.type.dtype = w->dtype();
    std::vector<Dim> dims;
    for (int64_t d : w->shape()) dims.push_back(Dim{d, {}});
    v.type.shape = std::move(dims);
    v.initializer = std::move(*w);
    if (release && init.data_location() != onnx::TensorProto::EXTERNAL) {
      onnx::TensorProto& copy = *release->mutable_initializer(index);
      copy.clear_raw_data();
      copy.clear_float_data();
      copy.clear_int32_data();
      copy.clear_int64_data();
      copy.clear_double_data();
      copy.clear_uint64_data();
      copy.clear_string_data();
    }
  }
  if (gp.sparse_initializer_size() > 0)
    return invalid(st, "sparse initializers are not supported", {}, "densify them when exporting");

  std::set<std::string> input_names;
  for (const auto& in : gp.input()) {
    if (!input_names.insert(in.name()).second)
      return invalid(st, fmt::format("graph input '{}' is listed twice", in.name()));
    Value& v = g->value(g->intern_value(in.name()));
    v.is_graph_input = true;
    if (const int32_t code = in.type().tensor_type().elem_type(); code != 0 && !dtype_from_onnx(code))
      return invalid(st, fmt::format("graph input '{}' has element type {}, which is not supported by nxrt", in.name(),
                                     describe_onnx_type(code)),
                     "nxrt has no kernels or tensors of that type", "feed the model a standard numeric type");
    // A declared type wins over the initializer's: it is what callers may feed.
    if (in.has_type()) v.type = convert_type(in.type());
    g->inputs.push_back(g->intern_value(in.name()));
  }
  for (const auto& vi : gp.value_info()) {
    if (!vi.has_type()) continue;
    Value& v = g->value(g->intern_value(vi.name()));
    if (!v.initializer && !v.is_graph_input) v.type = convert_type(vi.type());
  }

  // First pass: create every node and its values, so subgraphs can see all outer names.
  std::set<std::string> node_names;
  for (int i = 0; i < gp.node_size(); ++i) {
    const auto& np = gp.node(i);
    Node node;
    node.id = static_cast<NodeId>(i);
    node.op_type = np.op_type();
    node.domain = normalize_domain(np.domain());
    node.name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), i) : np.name();
    // A repeated name gets a suffix; loop in case "<name>_<i>" is taken too.
    const std::string base_name = node.name;
    for (int suffix = i; !node_names.insert(node.name).second; ++suffix)
      node.name = fmt::format("{}_{}", base_name, suffix);
    auto op = st.opsets.find(node.domain);
    if (op == st.opsets.end())
      return invalid(st, fmt::format("node '{}' ({}::{}) uses domain '{}', which the model does not import", node.name,
                                     display_domain(node.domain), node.op_type,
                                     display_domain(node.domain)),
                     "every domain a node uses needs an opset_import entry",
                     fmt::format("add an opset_import for '{}'", display_domain(node.domain)));
    node.opset = op->second;
    if (st.check_definitions) {
      if (auto r = verify_schema(np, node, st); !r) return r;
    } else if (np.output_size() == 0 || np.output(0).empty()) {
      return invalid(st, fmt::format("node {} has no first output", node.describe()),
                     "every ONNX operator produces its first output");
    }
    for (const auto& name : np.input()) node.inputs.push_back(name.empty() ? kNoValue : g->intern_value(name));
    for (const auto& name : np.output()) {
      if (name.empty()) {
        node.outputs.push_back(kNoValue);
        continue;
      }
      ValueId v = g->intern_value(name);
      Value& val = g->value(v);
      if (val.producer >= 0 || val.initializer || val.is_graph_input)
        return invalid(st, fmt::format("value '{}' is produced twice (by node {})", name, node.describe()),
                       "ONNX graphs assign each value once");
      val.producer = node.id;
      node.outputs.push_back(v);
    }
    g->nodes.push_back(std::move(node));
  }
  for (int i = 0; i < gp.node_size(); ++i) {
    Node& node = g->nodes[static_cast<std::size_t>(i)];
    for (const auto& ap : gp.node(i).attribute()) {
      auto a = convert_attribute(ap, *g, node.name, st);
      if (!a) return std::unexpected(a.error());
      node.attributes.set(ap.name(), std::move(*a));
    }
    // What the node's subgraphs read from outside become its implicit inputs; a name
    // defined further out is interned here too, so this graph passes it along.
    std::set<std::string> outer_names;
    for (const auto& [name, attr] : node.attributes.all())
      if (const auto* sub = std::get_if<std::shared_ptr<const Graph>>(&attr.value))
        for (const Value& v : (*sub)->values)
          if (v.is_outer_scope) outer_names.insert(v.name);
    for (const auto& name : outer_names) node.implicit_inputs.push_back(g->intern_value(name));
  }

  // Every input must come from somewhere: a node, a graph input, an initializer or an
  // enclosing graph.
  for (Value& v : g->values) {
    if (v.producer >= 0 || v.is_graph_input || v.initializer) continue;
    if (const Value* outer = find_outer(parent, v.name)) {
      v.is_outer_scope = true;
      v.type = outer->type;
      continue;
    }
    bool used = false;
    std::string user;
    for (const Node& n : g->nodes)
      for (ValueId in : n.inputs)
        if (in != kNoValue && g->value(in).name == v.name && !used) {
          used = true;
          user = n.describe();
        }
    if (used)
      return invalid(st, fmt::format("node {} reads '{}', which nothing defines", user, v.name),
                     "it is not produced by a node, not a graph input or initializer, nor visible from an "
                     "enclosing graph", "fix the node's input name or add the missing producer");
  }
  for (const auto& out : gp.output()) {
    auto id = g->find_value(out.name());
    if (!id)
      return invalid(st, fmt::format("graph output '{}' is not produced by any node", out.name()), {},
                     "fix the output name or add the node that produces it");
    Value& v = g->value(*id);
    v.is_graph_output = true;
    if (out.has_type()) {
      ValueType declared = convert_type(out.type());
      if (declared.kind != ValueType::Kind::kTensor || v.type.dtype == DType::kUndefined || !v.type.shape)
        v.type = std::move(declared);
    }
    g->outputs.push_back(*id);
  }
  g->rebuild_links();
  return sort_topologically(*g, st);
}

// ONNX's shape inference walks nodes in file order and leaves a node's outputs untyped when
// its inputs come later; files listing nodes out of order get the order convert_graph would
// give (stable), subgraphs included. A cycle is left as is for convert_graph to report.
void order_proto_nodes(onnx::GraphProto& g) {
  for (auto& node : *g.mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) order_proto_nodes(*a.mutable_g());
      for (auto& sub : *a.mutable_graphs()) order_proto_nodes(sub);
    }
  const int n = g.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& out : g.node(i).output())
      if (!out.empty()) producer.emplace(out, i);
  std::vector<int> pending(static_cast<std::size_t>(n), 0);
  std::vector<std::vector<int>> users(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    std::set<int> deps;
    for (const auto& in : g.node(i).input())
      if (auto it = producer.find(in); it != producer.end()) deps.insert(it->second);
    for (int d : deps) users[static_cast<std::size_t>(d)].push_back(i);
    pending[static_cast<std::size_t>(i)] = static_cast<int>(deps.size());
  }
  std::priority_queue<int, std::vector<int>, std::greater<>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[static_cast<std::size_t>(i)] == 0) ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    const int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[static_cast<std::size_t>(i)])
      if (--pending[static_cast<std::size_t>(u)] == 0) ready.push(u);
  }
  if (static_cast<int>(order.size()) != n || std::is_sorted(order.begin(), order.end())) return;
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order) sorted.Add()->Swap(g.mutable_node(i));
  g.mutable_node()->Swap(&sorted);
}

Expected<void> apply_input_shapes(onnx::ModelProto& proto, const LoadOptions& options, const LoadState& st) {
  for (const auto& [name, shape] : options.input_shapes) {
    onnx::ValueInfoProto* target = nullptr;
    std::vector<std::string> names;
    for (auto& in : *proto.mutable_graph()->mutable_input()) {
      names.push_back(in.name());
      if (in.name() == name) target = &in;
    }
    if (!target)
      return fail(ErrorCode::kUsage, fmt::format("--shape names '{}', which is not an input of {}", name, st.file.string()),
                  {}, fmt::format("the inputs are: {}", fmt::join(names, ", ")));
    auto* tensor_type = target->mutable_type()->mutable_tensor_type();
    auto* dims = tensor_type->mutable_shape();
    if (dims->dim_size() != 0 && dims->dim_size() != static_cast<int>(shape.size()))
      return fail(ErrorCode::kUsage,
                  fmt::format("--shape gives input '{}' rank {}, the model declares rank {}", name, shape.size(),
                              dims->dim_size()));
    for (int i = 0; i < dims->dim_size(); ++i)
      if (dims->dim(i).has_dim_value() && dims->dim(i).dim_value() != shape[static_cast<std::size_t>(i)])
        return fail(ErrorCode::kUsage,
                    fmt::format("--shape gives input '{}' size {} in dimension {}; the model fixes it to {}", name,
                                shape[static_cast<std::size_t>(i)], i, dims->dim(i).dim_value()),
                    {}, "--shape can only set symbolic or unknown dimensions");
    dims->clear_dim();
    for (int64_t d : shape) dims->add_dim()->set_dim_value(d);
  }
  return {};
}

}  // namespace

Expected<Model> load_model_proto(std::shared_ptr<onnx::ModelProto> proto, const std::filesystem::path& path,
                                 const LoadOptions& options) {
  LoadState st;
  st.file = path;
  st.model_dir = path.parent_path();
  st.ir_version = proto->ir_version();
  st.check_definitions = options.check_definitions;
  if (!proto->has_graph()) return invalid(st, "the model has no graph", "it may not be an ONNX model at all");
  for (const auto& op : proto->opset_import()) st.opsets[normalize_domain(op.domain())] = op.version();
  // IR < 3 had no opset_import: those models are ai.onnx opset 1.
  if (!st.opsets.contains("")) st.opsets[""] = 1;
  if (auto r = apply_input_shapes(*proto, options, st); !r) return std::unexpected(r.error());

  Model model;
  model.path = path;
  model.ir_version = proto->ir_version();
  model.producer = proto->producer_version().empty()
                       ? proto->producer_name()
                       : fmt::format("{} {}", proto->producer_name(), proto->producer_version());
  for (const auto& p : proto->metadata_props()) model.metadata[p.key()] = p.value();
  // Model-local functions may define ops in any domain: only their absence makes inference moot.
  const bool inferable = has_inferable_ops(proto->graph()) || proto->functions_size() > 0;
  if (options.infer_shapes && inferable && safe_for_shape_inference(proto->graph(), st)) {
    order_proto_nodes(*proto->mutable_graph());
    try {
      onnx::shape_inference::InferShapes(*proto, &inference_schemas());
    } catch (const std::exception& e) {
      model.warnings.push_back(fmt::format("ONNX shape inference failed, shapes are partly unknown: {}", e.what()));
    }
  }
  model.graph = std::make_unique<Graph>();
  if (auto r = convert_graph(proto->graph(), *model.graph, st, proto->mutable_graph()); !r)
    return std::unexpected(r.error());
  model.proto = std::move(proto);
  return model;
}

Expected<Model> load_model(const std::filesystem::path& path, const LoadOptions& options) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot read model '{}'", path.string()), ec.message(),
                "check the path");
  if (std::filesystem::is_directory(path, ec))
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is a folder, not a model file", path.string()), {},
                "give the path of the .onnx file");
  if (size > kMaxModelBytes)
    return fail(ErrorCode::kInvalidInput, fmt::format("model '{}' is {} bytes", path.string(), size),
                "protobuf cannot parse files over 2 GiB", "store the weights as external data");
  auto mapped = MappedFile::open(path);
  if (!mapped) return forward_error(std::move(mapped), "loading the model");
  auto proto = std::make_shared<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>((*mapped)->data()),
                                                static_cast<int>((*mapped)->size()));
  stream.SetTotalBytesLimit(static_cast<int>(kMaxModelBytes));
  if (!proto->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is not a valid ONNX model", path.string()),
                "the protobuf could not be parsed (truncated, corrupted or another file type)",
                "re-export or re-download the model");
  // Protobuf copied what it needs: unmap the file before the graph takes the weights.
  mapped->reset();
  return load_model_proto(std::move(proto), path, options);
}

}  // namespace nxrt
