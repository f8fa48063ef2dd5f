// explain-claims as JSON; the schema is docs/json/explain-claims.schema.json.
#include <nlohmann/json.hpp>

#include "render/claims_view.h"

namespace nxrt::cli {
namespace {

using Json = nlohmann::ordered_json;

Json optional_string(const std::string& s) { return s.empty() ? Json() : Json(s); }

Json opsets_json(const Graph& g) {
  Json j = Json::object();
  for (const auto& [domain, version] : g.opset_imports) j[display_domain(domain)] = version;
  return j;
}

// The partition's name; null for none (-1).
Json partition_json(const ClaimsReport& r, int partition) {
  return partition >= 0 ? Json(r.partitions[static_cast<std::size_t>(partition)].name) : Json();
}

Json node_json(const ClaimsReport& r, const NodeClaim& c) {
  const Node& n = c.graph->node(c.node);
  Json verdicts = Json::array();
  for (const EpVerdict& v : c.verdicts) {
    Json j = {{"ep", v.ep}, {"claimed", v.match.is_supported()}};
    if (v.match)
      j["cost"] = {{"flops", v.match.cost().flops}, {"bytes", v.match.cost().bytes_moved}};
    else
      j["reason"] = v.match.reason();
    verdicts.push_back(std::move(j));
  }
  return {{"name", n.name},
          {"path", c.path},
          {"op_type", n.op_type},
          {"domain", display_domain(n.domain)},
          {"opset", n.opset},
          {"in_subgraph", c.in_subgraph},
          {"placed_ep", optional_string(c.placed_ep)},
          {"partition", partition_json(r, c.partition)},
          {"outputs", output_types(c)},
          {"verdicts", std::move(verdicts)},
          {"placement_note", optional_string(c.placement_note)}};
}

Json names_json(const Graph& g, const std::vector<ValueId>& values) {
  Json j = Json::array();
  for (ValueId v : values) j.push_back(g.value(v).name);
  return j;
}

Json tally_json(const BoundaryTally& t) {
  return {{"values", t.values}, {"bytes", t.bytes}, {"unknown_size", t.unknown_size}};
}

Json summary_json(const ClaimsView& view) {
  const ClaimsSummary& s = view.summary;
  const ClaimsReport& r = view.analysis.report;
  const Graph& g = *view.analysis.model.graph;
  Json eps = Json::array();
  for (const EpTotals& e : s.eps)
    eps.push_back({{"ep", e.ep},
                   {"device", e.device.to_string()},
                   {"nodes", e.nodes},
                   {"subgraph_nodes", e.subgraph_nodes},
                   {"partitions", e.partitions},
                   {"flops", e.flops}});
  Json values = Json::array();
  for (const BoundaryValue& b : s.boundaries)
    values.push_back({{"value", g.value(b.value).name},
                      {"from", partition_json(r, b.from)},
                      {"to", partition_json(r, b.to)},
                      {"from_device", b.from_device.to_string()},
                      {"to_device", b.to_device.to_string()},
                      {"copied", b.copied()},
                      {"bytes", b.bytes ? Json(*b.bytes) : Json()}});
  return {{"nodes", s.nodes},
          {"placed", s.nodes - s.unplaced},
          {"unclaimed", s.unplaced},
          {"subgraph_nodes", s.subgraph_nodes},
          {"partitions", r.partitions.size()},
          {"eps", std::move(eps)},
          {"between_partitions", tally_json(s.between_partitions)},
          {"device_copies", tally_json(s.device_copies)},
          {"boundaries", std::move(values)}};
}

Json declines_json(const ClaimsView& view) {
  const ClaimsReport& r = view.analysis.report;
  Json out = Json::array();
  for (const DeclineGroup& d : view.declines) {
    Json nodes = Json::array();
    for (std::size_t i : d.claims) nodes.push_back({{"path", r.nodes[i].path}, {"in_subgraph", r.nodes[i].in_subgraph}});
    out.push_back({{"ep", d.ep},
                   {"domain", display_domain(d.domain)},
                   {"op_type", d.op_type},
                   {"reason", d.reason},
                   {"count", d.claims.size()},
                   {"nodes", std::move(nodes)}});
  }
  return out;
}

}  // namespace

std::string render_claims_json(const ClaimsView& view) {
  const Analysis& a = view.analysis;
  const ClaimsReport& r = a.report;
  const Graph& g = *a.model.graph;
  Json nodes = Json::array();
  for (std::size_t i : view.selected) nodes.push_back(node_json(r, r.nodes[i]));
  Json partitions = Json::array();
  for (const Partition& p : r.partitions) {
    Json members = Json::array();
    for (NodeId id : p.nodes) members.push_back(g.node(id).name);
    partitions.push_back({{"name", p.name},
                          {"ep", p.ep},
                          {"nodes", std::move(members)},
                          {"inputs", names_json(g, p.inputs)},
                          {"outputs", names_json(g, p.outputs)}});
  }
  Json contexts = Json::array();
  for (const ContextNodeInfo& c : r.context_nodes)
    contexts.push_back({{"node", g.node(c.node).name},
                        {"source", c.source},
                        {"ep", optional_string(c.ep)},
                        {"payload_bytes", c.payload_bytes},
                        {"location", c.location}});
  const Json doc = {{"model", a.model.path.string()},
                    {"ir_version", a.model.ir_version},
                    {"opsets", opsets_json(g)},
                    {"eps", r.eps},
                    {"placement", std::string(placement_policy_name(r.policy))},
                    {"summary", summary_json(view)},
                    {"declines", declines_json(view)},
                    {"nodes", std::move(nodes)},
                    {"partitions", std::move(partitions)},
                    {"context_nodes", std::move(contexts)},
                    {"rewrites", a.rewrites},
                    {"unclaimed", r.unclaimed().size()},
                    {"warnings", a.model.warnings}};
  return doc.dump(2) + "\n";
}

}  // namespace nxrt::cli
