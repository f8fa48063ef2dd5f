// PlacementPolicy: how claimed nodes are placed on EPs, and the policies' names.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

namespace nxrt {

enum class PlacementPolicy {
  // Each node goes to the first EP, in priority order, that claims it.
  kFirstClaim,
  // First claim, then a partition whose nodes are all memory-bound (under 1 FLOP per byte)
  // moves to the EP that every neighbouring node is placed on, when that EP claims all of
  // it: a hand-over costs more than such nodes gain, and it splits the neighbour's
  // partitions (and the fusions inside them).
  kFewerPartitions,
};

inline constexpr PlacementPolicy kDefaultPlacementPolicy = PlacementPolicy::kFewerPartitions;

// "first-claim", "fewer-partitions": the names --placement takes.
std::string_view placement_policy_name(PlacementPolicy policy);
// Every policy's name, in the order of the enum.
std::vector<std::string_view> placement_policy_names();
// The policy of that name; nullopt for an unknown name.
std::optional<PlacementPolicy> parse_placement_policy(std::string_view name);

}  // namespace nxrt
