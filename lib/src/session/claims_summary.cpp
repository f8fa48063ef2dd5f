// summarize_claims and group_declines: the totals and the capability table of explain-claims.
#include "nxrt/session/claims_summary.h"

#include <map>
#include <tuple>

#include "nxrt/ep/provider.h"

namespace nxrt {
namespace {

// Strings and types whose size depends on the data have no size before running.
std::optional<std::size_t> static_bytes(const ValueType& type) {
  if (type.kind != ValueType::Kind::kTensor || type.dtype == DType::kString) return std::nullopt;
  const std::size_t element = dtype_size(type.dtype);
  const auto shape = type.static_shape();
  if (element == 0 || !shape) return std::nullopt;
  return static_cast<std::size_t>(shape_numel(*shape)) * element;
}

DeviceId ep_device(const EpRegistry& eps, const std::string& name) {
  const ExecutionProvider* ep = eps.find(name);
  return ep ? ep->info().device : kHostDevice;
}

void add(BoundaryTally& tally, const BoundaryValue& b) {
  ++tally.values;
  if (b.bytes)
    tally.bytes += *b.bytes;
  else
    ++tally.unknown_size;
}

std::vector<BoundaryValue> boundary_values(const ClaimsReport& report, const Graph& graph, const EpRegistry& eps) {
  std::vector<BoundaryValue> out;
  auto partition_of = [&](NodeId producer) {
    return producer < 0 ? -1 : report.nodes[static_cast<std::size_t>(producer)].partition;
  };
  auto device_of = [&](int partition) {
    return partition < 0 ? kHostDevice : ep_device(eps, report.partitions[static_cast<std::size_t>(partition)].ep);
  };
  for (const Partition& p : report.partitions)
    for (ValueId v : p.inputs) {
      const int from = partition_of(graph.value(v).producer);
      out.push_back({v, from, p.index, device_of(from), device_of(p.index), static_bytes(graph.value(v).type)});
    }
  for (ValueId v : graph.outputs) {
    const int from = partition_of(graph.value(v).producer);
    if (from < 0) continue;  // an initializer or a graph input passed through: no partition hands it over
    out.push_back({v, from, -1, device_of(from), kHostDevice, static_bytes(graph.value(v).type)});
  }
  return out;
}

}  // namespace

ClaimsSummary summarize_claims(const ClaimsReport& report, const Graph& graph, const EpRegistry& eps) {
  ClaimsSummary s;
  std::map<std::string, std::size_t> row;
  for (const auto& name : report.eps) {
    row[name] = s.eps.size();
    s.eps.push_back({name, ep_device(eps, name)});
  }
  for (const NodeClaim& c : report.nodes) {
    const std::string& ep = c.in_subgraph ? report.nodes[static_cast<std::size_t>(c.owner)].placed_ep : c.placed_ep;
    if (c.in_subgraph) ++s.subgraph_nodes;
    else ++s.nodes;
    if (ep.empty()) {
      if (!c.in_subgraph) ++s.unplaced;
      continue;
    }
    EpTotals& t = s.eps[row.at(ep)];
    if (c.in_subgraph) {
      ++t.subgraph_nodes;
      continue;
    }
    ++t.nodes;
    for (const EpVerdict& v : c.verdicts)
      if (v.ep == ep) t.flops += v.match.cost().flops;
  }
  for (const Partition& p : report.partitions) ++s.eps[row.at(p.ep)].partitions;
  s.boundaries = boundary_values(report, graph, eps);
  for (const BoundaryValue& b : s.boundaries) {
    if (b.from >= 0 && b.to >= 0) add(s.between_partitions, b);
    if (b.copied()) add(s.device_copies, b);
  }
  return s;
}

std::vector<DeclineGroup> group_declines(const ClaimsReport& report, std::span<const std::size_t> claims) {
  std::map<std::string, std::size_t> priority;
  for (const auto& ep : report.eps) priority.emplace(ep, priority.size());
  using Key = std::tuple<std::size_t, std::string, std::string, std::string>;
  std::map<Key, DeclineGroup> groups;
  for (std::size_t i : claims) {
    const NodeClaim& c = report.nodes[i];
    const Node& n = c.graph->node(c.node);
    for (const EpVerdict& v : c.verdicts) {
      if (v.match) continue;
      auto [it, fresh] = groups.try_emplace(Key{priority.at(v.ep), n.domain, n.op_type, v.match.reason()});
      if (fresh) it->second = {v.ep, n.domain, n.op_type, v.match.reason(), {}};
      it->second.claims.push_back(i);
    }
  }
  std::vector<DeclineGroup> out;
  for (auto& [key, group] : groups) out.push_back(std::move(group));
  return out;
}

}  // namespace nxrt
