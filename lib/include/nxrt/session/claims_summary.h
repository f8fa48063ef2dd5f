// ClaimsSummary: what a ClaimsReport adds up to (per-EP totals, boundary values, declines).
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/device.h"
#include "nxrt/session/claims.h"

namespace nxrt {

struct EpTotals {
  std::string ep;
  DeviceId device;
  std::size_t nodes = 0;           // main-graph nodes placed on the EP
  std::size_t subgraph_nodes = 0;  // nodes of the subgraphs of If/Loop/Scan nodes placed on it
  std::size_t partitions = 0;
  double flops = 0;                // the EP's own estimates for its main-graph nodes
};

// A value handed over at a partition boundary: into a partition, or out as a graph output.
// The session copies it when the two ends live on different devices.
struct BoundaryValue {
  ValueId value = kNoValue;
  int from = -1;                      // producing partition; -1: a graph input or an unplaced node (host)
  int to = -1;                        // consuming partition; -1: the caller, as a graph output (host)
  DeviceId from_device;
  DeviceId to_device;
  std::optional<std::size_t> bytes;   // when the dtype and shape are known before running
  bool copied() const { return from_device != to_device; }
};

struct BoundaryTally {
  std::size_t values = 0;
  std::size_t bytes = 0;         // of the values whose size is known
  std::size_t unknown_size = 0;  // values whose shape is only known when running
};

struct ClaimsSummary {
  std::vector<EpTotals> eps;               // priority order
  std::size_t nodes = 0;                   // main-graph nodes
  std::size_t unplaced = 0;                // main-graph nodes no EP claims
  std::size_t subgraph_nodes = 0;
  std::vector<BoundaryValue> boundaries;   // by consuming partition, in input order; graph outputs last
  BoundaryTally between_partitions;        // boundaries with a partition at both ends
  BoundaryTally device_copies;             // boundaries whose ends are on different devices
};

// One row of the capability table: the nodes (main graph and subgraphs) one EP declined
// for one reason.
struct DeclineGroup {
  std::string ep;
  std::string domain;                 // normalised: "" for ai.onnx
  std::string op_type;
  std::string reason;
  std::vector<std::size_t> claims;    // indices into ClaimsReport::nodes, in report order
};

ClaimsSummary summarize_claims(const ClaimsReport& report, const Graph& graph, const EpRegistry& eps);

// Groups the declines of the given claims (indices into report.nodes) by (EP, op, reason);
// sorted by EP priority, then domain, op and reason.
std::vector<DeclineGroup> group_declines(const ClaimsReport& report, std::span<const std::size_t> claims);

}  // namespace nxrt
