// Groups claimed together (GetCapability): the convexity check that rejects them and the
// clusters that keep each group in a partition of its own.
#include <catch2/catch.hpp>

#include "lib_test_util.h"
#include "nxrt/session/claims.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

std::vector<NodeId> ids(const Graph& g, const std::vector<std::string>& names) {
  std::vector<NodeId> out;
  for (const auto& n : names) out.push_back(*g.find_node(n));
  return out;
}

}  // namespace

TEST_CASE("convexity_violation names the path that leaves a group and comes back", "[lib][partition]") {
  GraphBuilder b;
  b.input("x");
  b.node("A", "Relu", {"x"}, {"a"});
  b.node("U", "Sigmoid", {"a"}, {"u"});
  b.node("V", "Neg", {"u"}, {"v"});
  b.node("B", "Add", {"a", "v"}, {"b"});
  b.output("b");
  const Graph& g = b.finish();
  CHECK(convexity_violation(g, ids(g, {"A", "B"})) == "'A' -> 'U' -> 'V' -> 'B'");
  CHECK(convexity_violation(g, ids(g, {"A", "U", "V", "B"})).empty());
  CHECK(convexity_violation(g, ids(g, {"U", "V"})).empty());
}

TEST_CASE("nodes of different clusters on one EP stay in different partitions", "[lib][partition]") {
  GraphBuilder b;
  b.input("x");
  b.node("A", "Relu", {"x"}, {"a"});
  b.node("B", "Neg", {"a"}, {"b"});
  b.node("C", "Abs", {"b"}, {"c"});
  b.output("c");
  const Graph& g = b.finish();
  const std::vector<std::string> placement(3, "plugin");
  const std::vector<bool> alone(3, false);
  CHECK(make_partitions(g, placement, alone).size() == 1);
  auto parts = make_partitions(g, placement, alone, {0, 0, 1});
  REQUIRE(parts.size() == 2);
  CHECK(parts[0].nodes == ids(g, {"A", "B"}));
  CHECK(parts[1].nodes == ids(g, {"C"}));
}
