// ClaimsView: what every explain-claims format renders, and the tables text and Markdown share.
#pragma once

#include <string>
#include <vector>

#include "nxrt/session/claims_summary.h"
#include "nxrt/session/session.h"
#include "render/table.h"

namespace nxrt::cli {

struct ClaimsView {
  const Analysis& analysis;
  std::vector<std::size_t> selected;   // claims the filters keep, indices into report.nodes
  ClaimsSummary summary;               // the whole model, whatever the filters
  std::vector<DeclineGroup> declines;  // of the selected claims
};

// "Conv" for ai.onnx, "com.microsoft::Gelu" otherwise.
std::string op_name(const std::string& domain, const std::string& op_type);
// The name, or "Loop_3/body/Add_1 (subgraph)" for subgraph nodes.
std::string claim_label(const NodeClaim& claim);
// "float[1,8,32,32]", one per output, marked when the shape is only known when running.
std::string output_types(const NodeClaim& claim);
// The partition's name, "-" for none.
std::string partition_name(const ClaimsReport& report, const NodeClaim& claim);
// "graph input", "graph output", "unplaced node" or the partition's name.
std::string boundary_end(const ClaimsReport& report, int partition, bool is_source);
// "3 values (1.2 KiB)"; "(1.2 KiB + 1 of unknown size)" or "(size unknown until run)" when
// some or all shapes are only known when running.
std::string tally_text(const BoundaryTally& tally);
// "ai.onnx 13, com.microsoft 1": the model's opset imports.
std::string opset_list(const Graph& graph);
// "11 nodes, 11 placed, 0 unclaimed, 1 partition"
std::string summary_line(const ClaimsView& view);
// The PLACED cell: the EP, "cpu*" when the placement policy moved the node there, "NONE"
// when no EP claims it, "(by parent)" for subgraph nodes.
std::string placed_cell(const NodeClaim& claim);
// Why the placement policy moved the selected nodes: each distinct note once, in node order.
std::vector<std::string> placement_notes(const ClaimsView& view);

Table node_table(const ClaimsView& view);
Table context_table(const ClaimsView& view);
Table partition_table(const ClaimsView& view);
Table ep_table(const ClaimsView& view);
// The capability table: one row per (EP, op, reason), with the count and the node names
// (the first `max_names`, then "+N more").
Table decline_table(const ClaimsView& view, std::size_t max_names);
// Values handed over between partitions or copied across devices, one row each.
Table boundary_table(const ClaimsView& view);

std::string render_claims_text(const ClaimsView& view);
std::string render_claims_markdown(const ClaimsView& view);
std::string render_claims_json(const ClaimsView& view);
std::string render_claims_dot(const ClaimsView& view);

}  // namespace nxrt::cli
