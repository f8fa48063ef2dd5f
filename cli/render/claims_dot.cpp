// explain-claims as Graphviz: nodes filled with the colour of their EP, partitions as
// clusters, subgraphs of If/Loop/Scan as dashed clusters inside their parent's partition.
#include <fmt/format.h>

#include <map>
#include <optional>
#include <utility>

#include "render/claims_view.h"

namespace nxrt::cli {
namespace {

// ColorBrewer Set3: light enough for black labels; EPs take them in priority order.
constexpr const char* kPalette[] = {"#8dd3c7", "#80b1d3", "#fdb462", "#b3de69", "#bebada", "#fccde5", "#d9d9d9", "#ccebc5"};
constexpr const char* kUnplaced = "#fb8072";

// A double-quoted DOT string; "\n" in `s` stays a line break of the label.
std::string dot_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

class DotWriter {
 public:
  explicit DotWriter(const ClaimsView& view) : view_(view), report_(view.analysis.report) {
    for (std::size_t i = 0; i < report_.eps.size(); ++i) colour_[report_.eps[i]] = kPalette[i % std::size(kPalette)];
    for (std::size_t i = 0; i < report_.nodes.size(); ++i) claim_of_[{report_.nodes[i].graph, report_.nodes[i].node}] = i;
  }

  std::string write() {
    const Graph& g = *view_.analysis.model.graph;
    out_ = fmt::format("digraph {} {{\n  label={};\n  labelloc=t;\n  rankdir=TB;\n"
                       "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n"
                       "  edge [fontname=\"Helvetica\", fontsize=8];\n",
                       dot_string(g.name.empty() ? "model" : g.name),
                       dot_string(fmt::format("{}\n{}", view_.analysis.model.path.filename().string(), summary_line(view_))));
    write_legend();
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
      line(fmt::format("{} [shape=ellipse, style=solid, label={}];", dot_string(fmt::format("in{}", k)), value_label(g, g.inputs[k])));
    for (std::size_t k = 0; k < g.outputs.size(); ++k)
      line(fmt::format("{} [shape=ellipse, style=solid, label={}];", dot_string(fmt::format("out{}", k)), value_label(g, g.outputs[k])));
    for (const Partition& p : report_.partitions) {
      line(fmt::format("subgraph {} {{", dot_string(fmt::format("cluster_p{}", p.index))));
      line(fmt::format("  label={}; style=rounded; color={};", dot_string(fmt::format("{} ({})", p.name, p.ep)), dot_string(colour_.at(p.ep))));
      for (NodeId id : p.nodes) write_node(claim_of_.at({&g, id}), "  ");
      line("}");
    }
    for (const NodeClaim& c : report_.nodes)
      if (!c.in_subgraph && c.partition < 0) write_node(claim_of_.at({&g, c.node}), "");
    write_edges(g);
    for (std::size_t k = 0; k < g.inputs.size(); ++k)
      for (NodeId consumer : g.value(g.inputs[k]).consumers)
        line(fmt::format("{} -> {};", dot_string(fmt::format("in{}", k)), node_id(&g, consumer)));
    for (std::size_t k = 0; k < g.outputs.size(); ++k)
      if (const NodeId producer = g.value(g.outputs[k]).producer; producer >= 0)
        line(fmt::format("{} -> {}{};", node_id(&g, producer), dot_string(fmt::format("out{}", k)),
                         edge_style(g, g.outputs[k], -1)));
    return out_ + "}\n";
  }

 private:
  void line(const std::string& s) { out_ += "  " + s + "\n"; }

  std::string node_id(const Graph* g, NodeId id) const { return dot_string(fmt::format("n{}", claim_of_.at({g, id}))); }

  static std::string value_label(const Graph& g, ValueId v) {
    return dot_string(fmt::format("{}\n{}", g.value(v).name, g.value(v).type.to_string()));
  }

  void write_legend() {
    line("subgraph cluster_legend {");
    line("  label=\"EPs\"; style=dashed;");
    for (std::size_t i = 0; i < report_.eps.size(); ++i)
      line(fmt::format("  {} [label={}, fillcolor={}];", dot_string(fmt::format("legend{}", i)), dot_string(report_.eps[i]),
                       dot_string(colour_.at(report_.eps[i]))));
    if (view_.summary.unplaced > 0)
      line(fmt::format("  \"legend_unplaced\" [label=\"no EP\", fillcolor={}, style=\"rounded,filled,bold\"];", dot_string(kUnplaced)));
    if (!placement_notes(view_).empty())
      line(fmt::format(
          "  \"legend_moved\" [label={}, style=dashed];",
          dot_string(fmt::format("EP*: moved there by --placement {}", placement_policy_name(report_.policy)))));
    line("}");
  }

  // A node, then the clusters of its subgraphs (run by its EP: filled with that colour, dashed).
  void write_node(std::size_t claim, const std::string& indent) {
    const NodeClaim& c = report_.nodes[claim];
    const Node& n = c.graph->node(c.node);
    const std::string& ep = c.in_subgraph ? report_.nodes[static_cast<std::size_t>(c.owner)].placed_ep : c.placed_ep;
    const std::string where = c.in_subgraph ? fmt::format("{} (subgraph)", ep.empty() ? "NONE" : ep) : placed_cell(c);
    // A node the placement policy moved says why when the pointer rests on it.
    const std::string tooltip =
        c.placement_note.empty() ? "" : fmt::format(", tooltip={}", dot_string(c.placement_note));
    line(fmt::format(
        "{}{} [label={}, fillcolor={}{}{}];", indent, dot_string(fmt::format("n{}", claim)),
        dot_string(fmt::format("{}\n{}\n{}", n.name, op_name(n.domain, n.op_type), where)),
        dot_string(ep.empty() ? kUnplaced : colour_.at(ep)),
        c.in_subgraph ? ", style=\"rounded,filled,dashed\"" : (ep.empty() ? ", style=\"rounded,filled,bold\"" : ""),
        tooltip));
    for (const auto& [attr, value] : n.attributes.all()) {
      auto* sub = std::get_if<std::shared_ptr<const Graph>>(&value.value);
      if (!sub) continue;
      line(fmt::format("{}subgraph {} {{", indent, dot_string(fmt::format("cluster_n{}_{}", claim, attr))));
      line(fmt::format("{}  label={}; style=dashed;", indent, dot_string(fmt::format("{} of {}", attr, n.name))));
      for (const Node& inner : (*sub)->nodes) write_node(claim_of_.at({sub->get(), inner.id}), indent + "  ");
      line(indent + "}");
      if (!(*sub)->nodes.empty())
        pending_.push_back(fmt::format("{} -> {} [style=dashed, arrowhead=odot, label={}];", dot_string(fmt::format("n{}", claim)),
                                       node_id(sub->get(), (*sub)->nodes.front().id), dot_string(attr)));
      subgraphs_.push_back(sub->get());
    }
  }

  // The edge's label, the value's name; red with the devices when the session copies the
  // value across devices (`to`: the consuming partition, -1 for a graph output; none when
  // the consumer is unplaced).
  std::string edge_style(const Graph& g, ValueId v, std::optional<int> to) const {
    if (to)
      for (const BoundaryValue& b : view_.summary.boundaries)
        if (b.value == v && b.to == *to && b.copied())
          return fmt::format(" [color=red, penwidth=2, label={}]",
                             dot_string(fmt::format("{}\ncopy {} -> {}", g.value(v).name, b.from_device.to_string(),
                                                    b.to_device.to_string())));
    return fmt::format(" [label={}]", dot_string(g.value(v).name));
  }

  void write_edges(const Graph& main) {
    for (const Node& n : main.nodes) {
      const int partition = report_.nodes[static_cast<std::size_t>(n.id)].partition;
      for (ValueId v : n.inputs)
        if (v != kNoValue && main.value(v).producer >= 0)
          line(fmt::format("{} -> {}{};", node_id(&main, main.value(v).producer), node_id(&main, n.id),
                           edge_style(main, v, partition >= 0 ? std::optional<int>(partition) : std::nullopt)));
    }
    for (const Graph* sub : subgraphs_)
      for (const Node& n : sub->nodes)
        for (ValueId v : n.inputs)
          if (v != kNoValue && sub->value(v).producer >= 0)
            line(fmt::format("{} -> {} [style=dashed];", node_id(sub, sub->value(v).producer), node_id(sub, n.id)));
    for (const auto& p : pending_) line(p);
  }

  const ClaimsView& view_;
  const ClaimsReport& report_;
  std::map<std::string, std::string> colour_;
  std::map<std::pair<const Graph*, NodeId>, std::size_t> claim_of_;
  std::vector<const Graph*> subgraphs_;  // in the order their clusters were written
  std::vector<std::string> pending_;     // parent -> subgraph edges, written after the clusters
  std::string out_;
};

}  // namespace

std::string render_claims_dot(const ClaimsView& view) { return DotWriter(view).write(); }

}  // namespace nxrt::cli
