// nxrt explain-claims: every EP's verdict on every node, the placement and the partitions.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>

#include "cli_common.h"
#include "commands.h"
#include "render/claims_view.h"

namespace nxrt::cli {
namespace {

struct ExplainFlags {
  std::string model;
  EpFlags ep;
  std::string node;
  std::string op;
  bool declined_only = false;
  std::string format = "text";
};

bool selected(const ExplainFlags& f, const NodeClaim& c) {
  const Node& n = c.graph->node(c.node);
  if (!f.node.empty() && n.name != f.node && c.path != f.node) return false;
  if (!f.op.empty() && n.op_type != f.op) return false;
  if (f.declined_only)
    return std::any_of(c.verdicts.begin(), c.verdicts.end(), [](const EpVerdict& v) { return !v.match; });
  return true;
}

int explain_claims(const ExplainFlags& f) {
  if (f.format == "dot" && (!f.node.empty() || !f.op.empty() || f.declined_only))
    return report(Error{ErrorCode::kUsage, "--format dot draws the whole graph: --node, --op and --declined-only do not apply",
                        "a graph with nodes left out would show edges and partitions that are not there",
                        "drop the filters, or use --format text, md or json with them", {}});
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  auto analysis = analyze(f.model, *options);
  if (!analysis) return report(analysis.error());
  const ClaimsReport& r = analysis->report;
  std::vector<std::size_t> chosen;
  for (std::size_t i = 0; i < r.nodes.size(); ++i)
    if (selected(f, r.nodes[i])) chosen.push_back(i);
  const ClaimsView view{*analysis, chosen, summarize_claims(r, *analysis->model.graph, analysis->eps), group_declines(r, chosen)};
  if (f.format == "json")
    fmt::print("{}", render_claims_json(view));
  else if (f.format == "md")
    fmt::print("{}", render_claims_markdown(view));
  else if (f.format == "dot")
    fmt::print("{}", render_claims_dot(view));
  else
    fmt::print("{}", render_claims_text(view));
  if (f.format != "json" && f.format != "md")  // those two carry the warnings themselves
    for (const auto& w : analysis->model.warnings) fmt::print(stderr, "warning: {}\n", w);
  const auto missing = analysis->report.unclaimed();
  if (missing.empty()) return 0;
  std::fflush(stdout);  // the report first, then the verdict, also when both go to one pipe
  fmt::print(stderr, "error: {} node{} of '{}' cannot be placed on any EP (see the verdicts above)\n", missing.size(),
             missing.size() == 1 ? "" : "s", f.model);
  return static_cast<int>(ErrorCode::kUnclaimed);
}

}  // namespace

Action add_explain_claims(CLI::App& app) {
  auto f = std::make_shared<ExplainFlags>();
  auto* cmd = app.add_subcommand("explain-claims", "show every EP's verdict on every node, the placement and partitions");
  cmd->add_option("MODEL", f->model, "the .onnx model")->required();
  f->ep.add_to(*cmd);
  f->ep.add_target_arch_to(*cmd);
  cmd->add_option("--node", f->node, "only this node (name or subgraph path)");
  cmd->add_option("--op", f->op, "only nodes of this op type");
  cmd->add_flag("--declined-only", f->declined_only, "only nodes that some EP declined");
  auto* format = cmd->add_option("--format", f->format,
                                 "text (tables; 'table' is the same), json, md (Markdown for CI comments) or dot (Graphviz)")
                     ->check(CLI::IsMember({"text", "table", "json", "md", "dot"}))
                     ->capture_default_str();
  cmd->add_flag_callback("--json", [f] { f->format = "json"; }, "same as --format json")->excludes(format);
  return [f] { return explain_claims(*f); };
}

}  // namespace nxrt::cli
