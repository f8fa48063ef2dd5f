// explain-claims for people: the node table, partitions, per-EP totals, declines, boundaries.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "render/claims_view.h"

namespace nxrt::cli {

std::string render_claims_text(const ClaimsView& view) {
  const Analysis& a = view.analysis;
  const ClaimsReport& r = a.report;
  const Graph& g = *a.model.graph;
  std::string out =
      fmt::format("model: {} (IR {}, {}; {} node{})\nEPs in priority order: {}\nplacement: {}\n\n",
                  a.model.path.string(), a.model.ir_version, opset_list(g), g.nodes.size(),
                  g.nodes.size() == 1 ? "" : "s", fmt::join(r.eps, ", "), placement_policy_name(r.policy));
  // Each table, or what stands for it when it has no rows, after a blank line.
  auto section = [&out](const Table& t, const char* when_empty) {
    out += '\n';
    out += t.empty() ? std::string(when_empty) : t.render();
  };
  const Table nodes = node_table(view);
  out += nodes.empty() ? "no node matches the filters\n" : nodes.render();
  if (const auto notes = placement_notes(view); !notes.empty())
    out +=
        fmt::format("\n* moved by --placement {}:\n  {}\n", placement_policy_name(r.policy), fmt::join(notes, "\n  "));
  if (!r.context_nodes.empty()) section(context_table(view), "");
  section(partition_table(view), "no partitions\n");
  section(ep_table(view), "");
  section(decline_table(view, 8), "no EP declined any of these nodes\n");
  out += fmt::format("\nboundaries: {} between partitions, {} copied across devices\n",
                     tally_text(view.summary.between_partitions), tally_text(view.summary.device_copies));
  if (const Table b = boundary_table(view); !b.empty()) out += b.render();
  if (!a.rewrites.empty()) out += fmt::format("\nbefore placement:\n  {}\n", fmt::join(a.rewrites, "\n  "));
  out += fmt::format("\nsummary: {}\n", summary_line(view));
  return out;
}

}  // namespace nxrt::cli
