// explain-claims as Markdown for a CI comment: the verdict first, the node table folded.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/claims_view.h"

namespace nxrt::cli {

std::string render_claims_markdown(const ClaimsView& view) {
  const Analysis& a = view.analysis;
  const ClaimsReport& r = a.report;
  const Graph& g = *a.model.graph;
  std::string out =
      fmt::format("## nxrt explain-claims: `{}`\n\n**{}** · EPs in priority order: {} · placement: {} · IR {}, {}\n",
                  a.model.path.filename().string(), summary_line(view), fmt::join(r.eps, ", "),
                  placement_policy_name(r.policy), a.model.ir_version, opset_list(g));
  const auto missing = r.unclaimed();
  if (!missing.empty()) {
    std::vector<std::string> names;
    for (const NodeClaim* c : missing) names.push_back(fmt::format("`{}`", c->path));
    out += fmt::format("\n> **{} node{} cannot be placed on any EP:** {}\n", missing.size(), missing.size() == 1 ? "" : "s",
                       fmt::join(names, ", "));
  }
  // A heading and its table, or what stands for it when it has no rows.
  auto section = [&out](const char* heading, const Table& t, const char* when_empty) {
    out += fmt::format("\n### {}\n\n{}", heading, t.empty() ? std::string(when_empty) : t.render_markdown());
  };
  section("Placement by EP", ep_table(view), "");
  out += fmt::format("\n**Boundaries:** {} between partitions, {} copied across devices\n",
                     tally_text(view.summary.between_partitions), tally_text(view.summary.device_copies));
  if (const Table b = boundary_table(view); !b.empty()) out += fmt::format("\n{}", b.render_markdown());
  section("Declines", decline_table(view, 20), "No EP declined any of these nodes.\n");
  section("Partitions", partition_table(view), "No partitions.\n");
  if (const auto notes = placement_notes(view); !notes.empty())
    out += fmt::format("\n### Moved by --placement {}\n\nNodes marked `*` in the node table:\n\n- {}\n",
                       placement_policy_name(r.policy), fmt::join(notes, "\n- "));
  if (!r.context_nodes.empty()) section("EPContext nodes", context_table(view), "");
  const Table nodes = node_table(view);
  out += fmt::format("\n<details><summary>Every node's verdicts ({})</summary>\n\n{}\n</details>\n", view.selected.size(),
                     nodes.empty() ? std::string("No node matches the filters.\n") : nodes.render_markdown());
  if (!a.rewrites.empty()) out += fmt::format("\n**Before placement:**\n\n- {}\n", fmt::join(a.rewrites, "\n- "));
  if (!a.model.warnings.empty()) out += fmt::format("\n**Warnings:**\n\n- {}\n", fmt::join(a.model.warnings, "\n- "));
  return out;
}

}  // namespace nxrt::cli
