// The partitioner: convex groups per EP, a valid execution order and the boundary rule.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <random>
#include <set>

#include "lib_test_util.h"
#include "nxrt/session/claims.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Placement by node name; nodes not named are left unplaced.
std::vector<std::string> place(const Graph& g, const std::map<std::string, std::string>& by_name) {
  std::vector<std::string> placement(g.nodes.size());
  for (const Node& n : g.nodes)
    if (auto it = by_name.find(n.name); it != by_name.end()) placement[static_cast<std::size_t>(n.id)] = it->second;
  return placement;
}

std::vector<Partition> partition(const Graph& g, const std::map<std::string, std::string>& by_name) {
  return make_partitions(g, place(g, by_name), std::vector<bool>(g.nodes.size(), false));
}

std::vector<std::string> node_names(const Graph& g, const Partition& p) {
  std::vector<std::string> out;
  for (NodeId id : p.nodes) out.push_back(g.node(id).name);
  return out;
}

std::vector<std::string> value_names(const Graph& g, const std::vector<ValueId>& ids) {
  std::vector<std::string> out;
  for (ValueId v : ids) out.push_back(g.value(v).name);
  return out;
}

// Every boundary input of a partition is a graph input, a constant or produced by an
// earlier partition; every member is in exactly one partition; indices and member order hold.
std::string order_problem(const Graph& g, const std::vector<Partition>& parts, const std::vector<std::string>& placement) {
  std::vector<int> part_of(g.nodes.size(), -1);
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].index != static_cast<int>(i)) return fmt::format("partition {} has index {}", i, parts[i].index);
    if (parts[i].graph != &g) return "a partition points at another graph";
    for (NodeId id : parts[i].nodes) {
      if (part_of[static_cast<std::size_t>(id)] >= 0) return fmt::format("node {} is in two partitions", id);
      if (placement[static_cast<std::size_t>(id)] != parts[i].ep) return fmt::format("node {} is on the wrong EP", id);
      part_of[static_cast<std::size_t>(id)] = static_cast<int>(i);
    }
    for (std::size_t k = 1; k < parts[i].nodes.size(); ++k)
      if (parts[i].nodes[k - 1] >= parts[i].nodes[k]) return fmt::format("partition {} is not in node order", i);
  }
  for (const Node& n : g.nodes)
    if (placement[static_cast<std::size_t>(n.id)].empty() != (part_of[static_cast<std::size_t>(n.id)] < 0))
      return fmt::format("node {} placed/partitioned mismatch", n.name);
  for (std::size_t i = 0; i < parts.size(); ++i)
    for (ValueId v : parts[i].inputs) {
      const NodeId producer = g.value(v).producer;
      if (producer < 0) continue;
      const int from = part_of[static_cast<std::size_t>(producer)];
      if (from < 0) continue;  // an unplaced producer: the session refuses such a model anyway
      if (from >= static_cast<int>(i))
        return fmt::format("partition {} reads '{}' from partition {}", i, g.value(v).name, from);
    }
  return {};
}

// No path leaves a partition and comes back into it.
std::string convexity_problem(const Graph& g, const std::vector<Partition>& parts) {
  for (const Partition& p : parts) {
    const std::set<NodeId> members(p.nodes.begin(), p.nodes.end());
    std::vector<NodeId> stack;
    std::vector<bool> seen(g.nodes.size(), false);
    for (NodeId m : p.nodes)
      for (ValueId out : g.node(m).outputs)
        if (out != kNoValue)
          for (NodeId c : g.value(out).consumers)
            if (!members.contains(c)) stack.push_back(c);
    while (!stack.empty()) {
      const NodeId n = stack.back();
      stack.pop_back();
      if (members.contains(n)) return fmt::format("a path leaves {} and re-enters at '{}'", p.name, g.node(n).name);
      if (seen[static_cast<std::size_t>(n)]) continue;
      seen[static_cast<std::size_t>(n)] = true;
      for (ValueId out : g.node(n).outputs)
        if (out != kNoValue)
          for (NodeId c : g.value(out).consumers) stack.push_back(c);
    }
  }
  return {};
}

}  // namespace

TEST_CASE("the partition checks themselves flag a non-convex or misordered group", "[lib][partition]") {
  // Guards the property tests below against checks that pass vacuously.
  GraphBuilder b;
  b.input("x");
  b.node("A", "Relu", {"x"}, {"a"});
  b.node("U", "Neg", {"a"}, {"u"});
  b.node("B", "Add", {"a", "u"}, {"b"});
  b.output("b");
  const Graph& g = b.finish();
  Partition ab, u;
  ab.graph = u.graph = &g;
  ab.ep = "ep1";
  ab.name = "ep1_0";
  ab.nodes = {0, 2};
  u.ep = "ep2";
  u.name = "ep2_0";
  u.index = 1;
  u.nodes = {1};
  compute_boundary(g, ab);
  compute_boundary(g, u);
  const std::vector<std::string> placement{"ep1", "ep2", "ep1"};
  CHECK(convexity_problem(g, {ab, u}) == "a path leaves ep1_0 and re-enters at 'B'");
  CHECK(order_problem(g, {ab, u}, placement) == "partition 0 reads 'u' from partition 1");
}

TEST_CASE("a node of another EP between two nodes splits their EP's partition", "[lib][partition]") {
  GraphBuilder b;
  b.input("x");
  b.node("A", "Relu", {"x"}, {"a"});
  b.node("U", "Neg", {"a"}, {"u"});
  b.node("B", "Add", {"a", "u"}, {"b"});
  b.output("b");
  const Graph& g = b.finish();
  const std::map<std::string, std::string> placement{{"A", "ep1"}, {"U", "ep2"}, {"B", "ep1"}};
  auto parts = partition(g, placement);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].name == "ep1_0");
  CHECK(node_names(g, parts[0]) == std::vector<std::string>{"A"});
  CHECK(parts[1].name == "ep2_0");
  CHECK(node_names(g, parts[1]) == std::vector<std::string>{"U"});
  CHECK(parts[2].name == "ep1_1");
  CHECK(node_names(g, parts[2]) == std::vector<std::string>{"B"});
  CHECK(value_names(g, parts[0].outputs) == std::vector<std::string>{"a"});
  CHECK(value_names(g, parts[2].inputs) == std::vector<std::string>{"a", "u"});
  CHECK(order_problem(g, parts, place(g, placement)).empty());
  CHECK(convexity_problem(g, parts).empty());
}

TEST_CASE("a chain on one EP is one partition with the chain's boundary", "[lib][partition]") {
  GraphBuilder b;
  b.input("x");
  b.constant("W", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  b.node("n1", "Relu", {"x"}, {"v1"});
  b.node("n2", "Add", {"v1", "W"}, {"v2"});
  b.node("n3", "Neg", {"v2"}, {"v3"});
  b.output("v3");
  const Graph& g = b.finish();
  auto parts = partition(g, {{"n1", "ep1"}, {"n2", "ep1"}, {"n3", "ep1"}});
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].ep == "ep1");
  CHECK(parts[0].name == "ep1_0");
  CHECK(node_names(g, parts[0]) == std::vector<std::string>{"n1", "n2", "n3"});
  CHECK(value_names(g, parts[0].inputs) == std::vector<std::string>{"x"});
  CHECK(value_names(g, parts[0].outputs) == std::vector<std::string>{"v3"});
}

TEST_CASE("compute_boundary applies the one boundary rule", "[lib][partition]") {
  GraphBuilder b;
  b.input("z");
  b.input("x");
  b.constant("W", Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
  // D is an initializer that is also a graph input: a default the caller may override.
  b.input("D");
  b.graph.value(b.id("D")).initializer = WeightHandle::resident(Tensor::from_vector<float>({4}, {0, 0, 0, 0}));
  b.node("p1", "Add", {"x", "W"}, {"a"});
  b.node("p2", "Mul", {"z", "a"}, {"b"});
  b.node("p3", "Add", {"b", "x"}, {"c"});
  b.node("p4", "Add", {"c", "D"}, {"e"});
  b.node("q", "Neg", {"a"}, {"d"});
  b.node("r", "Neg", {"e"}, {"f"});
  b.output("f");
  b.output("d");
  b.output("c");
  const Graph& g = b.finish();

  Partition whole;
  whole.graph = &g;
  whole.nodes = {*g.find_node("p1"), *g.find_node("p2"), *g.find_node("p3"), *g.find_node("p4")};
  compute_boundary(g, whole);
  // First-use order (not graph-input order); W is owned by the partition, D is not.
  CHECK(value_names(g, whole.inputs) == std::vector<std::string>{"x", "z", "D"});
  // Production order: a (used by q, a non-member), c (a graph output), e (used by r).
  // b is only used inside.
  CHECK(value_names(g, whole.outputs) == std::vector<std::string>{"a", "c", "e"});

  Partition tail;
  tail.graph = &g;
  tail.nodes = {*g.find_node("p2"), *g.find_node("p3")};
  tail.inputs = {42};  // stale contents are replaced
  compute_boundary(g, tail);
  CHECK(value_names(g, tail.inputs) == std::vector<std::string>{"z", "a", "x"});
  CHECK(value_names(g, tail.outputs) == std::vector<std::string>{"c"});
}

TEST_CASE("crossing branches on two EPs never give cyclic partitions", "[lib][partition]") {
  // a(ep1) -> c(ep2) and b(ep2) -> d(ep1): {a,d} and {b,c} would need each other.
  const std::vector<std::vector<std::string>> orders{
      {"a", "b", "c", "d"}, {"b", "a", "c", "d"}, {"a", "b", "d", "c"}, {"b", "a", "d", "c"},
      {"a", "c", "b", "d"}, {"b", "d", "a", "c"}};
  for (const auto& order : orders) {
    INFO(fmt::format("node order {}", fmt::join(order, ",")));
    GraphBuilder b;
    b.input("x");
    for (const auto& name : order) {
      if (name == "a") b.node("a", "Relu", {"x"}, {"va"});
      if (name == "b") b.node("b", "Relu", {"x"}, {"vb"});
      if (name == "c") b.node("c", "Add", {"va", "x"}, {"vc"});
      if (name == "d") b.node("d", "Add", {"vb", "x"}, {"vd"});
    }
    b.output("vc");
    b.output("vd");
    const Graph& g = b.finish();
    const std::map<std::string, std::string> placement{{"a", "ep1"}, {"b", "ep2"}, {"c", "ep2"}, {"d", "ep1"}};
    auto parts = partition(g, placement);
    CHECK(parts.size() >= 3);
    CHECK(order_problem(g, parts, place(g, placement)) == "");
    CHECK(convexity_problem(g, parts) == "");
  }
}

TEST_CASE("EPContext nodes get a partition of their own", "[lib][partition]") {
  GraphBuilder b;
  b.input("x");
  b.node("n1", "Relu", {"x"}, {"v1"});
  b.node("ctx", "EPContext", {"v1"}, {"v2"});
  b.node("n3", "Neg", {"v2"}, {"v3"});
  b.output("v3");
  const Graph& g = b.finish();
  std::vector<bool> alone(3, false);
  alone[1] = true;
  auto parts = make_partitions(g, std::vector<std::string>(3, "ep1"), alone);
  REQUIRE(parts.size() == 3);
  CHECK(node_names(g, parts[1]) == std::vector<std::string>{"ctx"});
  CHECK(value_names(g, parts[1].inputs) == std::vector<std::string>{"v1"});
  CHECK(value_names(g, parts[1].outputs) == std::vector<std::string>{"v2"});
}

namespace {

struct RandomCase {
  Graph graph;
  std::vector<std::string> placement;
  std::vector<bool> alone;
};

// A random DAG: each node reads 1-3 earlier values; placement over `eps` EPs, with
// `unplaced` and `alone` chances per node (in percent).
RandomCase random_case(uint32_t seed, int nodes, int eps, int unplaced, int alone) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  GraphBuilder b;
  std::vector<std::string> values{"in0", "in1", "in2"};
  for (const auto& v : values) b.input(v);
  b.constant("K", Tensor::from_vector<float>({4}, {1, 1, 1, 1}));
  values.push_back("K");
  RandomCase rc;
  for (int i = 0; i < nodes; ++i) {
    const int fan_in = 1 + pick(3);
    std::vector<std::string> ins;
    // Prefer recent values so chains form, but reach back sometimes.
    for (int k = 0; k < fan_in; ++k) {
      const int n = static_cast<int>(values.size());
      ins.push_back(values[static_cast<std::size_t>(pick(3) == 0 ? pick(n) : std::max(0, n - 1 - pick(4)))]);
    }
    const std::string out = fmt::format("v{}", i);
    const std::string name = fmt::format("n{}", i);
    if (ins.size() == 1) b.node(name, "Relu", {ins[0]}, {out});
    else if (ins.size() == 2) b.node(name, "Add", {ins[0], ins[1]}, {out});
    else b.node(name, "Sum", {ins[0], ins[1], ins[2]}, {out});
    values.push_back(out);
    rc.placement.push_back(pick(100) < unplaced ? "" : fmt::format("ep{}", pick(eps)));
    rc.alone.push_back(pick(100) < alone);
  }
  // Outputs: every value nobody reads, plus a few that are read.
  b.finish();
  for (int i = 0; i < nodes; ++i) {
    const std::string v = fmt::format("v{}", i);
    if (b.graph.value(b.id(v)).consumers.empty() || pick(10) == 0) b.output(v);
  }
  rc.graph = std::move(b.finish());
  return rc;
}

}  // namespace

TEST_CASE("random DAGs give convex partitions in a valid execution order", "[lib][partition][property]") {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    const int eps = 2 + static_cast<int>(seed % 2);
    RandomCase rc = random_case(seed, 30, eps, 0, seed % 3 == 0 ? 10 : 0);
    const Graph& g = rc.graph;
    auto parts = make_partitions(g, rc.placement, rc.alone);
    INFO("seed " << seed);
    REQUIRE(order_problem(g, parts, rc.placement) == "");
    REQUIRE(convexity_problem(g, parts) == "");
    for (const Partition& p : parts) {
      if (p.nodes.size() > 1)
        for (NodeId id : p.nodes) REQUIRE_FALSE(rc.alone[static_cast<std::size_t>(id)]);
      // Each partition's boundary is the shared rule's.
      Partition again = p;
      compute_boundary(g, again);
      REQUIRE(again.inputs == p.inputs);
      REQUIRE(again.outputs == p.outputs);
    }
    ++checked;
  }
  CHECK(checked == 300);
}

TEST_CASE("random DAGs with unplaced nodes still give convex partitions", "[lib][partition][property]") {
  for (uint32_t seed = 1; seed <= 300; ++seed) {
    RandomCase rc = random_case(seed, 30, 2, 10, 0);
    const Graph& g = rc.graph;
    auto parts = make_partitions(g, rc.placement, rc.alone);
    INFO("seed " << seed);
    REQUIRE(order_problem(g, parts, rc.placement) == "");
    REQUIRE(convexity_problem(g, parts) == "");
  }
}
