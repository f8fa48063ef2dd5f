// The fewer-partitions placement policy: which partitions move to their neighbours' EP, which stay, and the notes.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "lib_test_util.h"
#include "nxrt/ep/claim.h"
#include "nxrt/session/claims.h"

namespace nxrt::test {
namespace {

// Claims the ops it has a cost for, with that cost; declines the others.
class PolicyTestEp : public ExecutionProvider {
 public:
  PolicyTestEp(std::string name, std::map<std::string, Cost> costs) : costs_(std::move(costs)) {
    info_.name = std::move(name);
  }
  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override {
    if (auto it = costs_.find(ctx.node().op_type); it != costs_.end()) return KernelMatch::supported(it->second);
    return NXRT_DENY("{}: not in the {} EP's list", ctx.node().op_type, info_.name);
  }
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition&) override {
    return fail(ErrorCode::kRuntime, "not compiled");
  }

 private:
  EpInfo info_;
  std::map<std::string, Cost> costs_;
};

// Like PolicyTestEp, and answers for the whole graph: each node of `grouped` ops is a group.
class PolicyTestGroupEp final : public PolicyTestEp, public GraphClaimer {
 public:
  PolicyTestGroupEp(std::string name, std::map<std::string, Cost> costs, std::set<std::string> grouped)
      : PolicyTestEp(std::move(name), std::move(costs)), grouped_(std::move(grouped)) {}
  Expected<GraphClaims> claim_graph(const Graph& graph) const override {
    GraphClaims out;
    for (const Node& n : graph.nodes) {
      out.verdicts.push_back(claim(NodeContext(graph, n)));
      if (grouped_.contains(n.op_type)) out.groups.push_back({n.id});
    }
    return out;
  }

 private:
  std::set<std::string> grouped_;
};

const Cost kCheap{4, 48, {}};    // an elementwise op on 4 floats: under 1 FLOP per byte
const Cost kHeavy{400, 48, {}};  // more FLOPs than bytes: compute-bound
const Cost kUnknown{0, 0, {}};   // shapes unknown: no cost

// The model and the EPs of one case, analyzed under either policy.
struct PolicyCase {
  explicit PolicyCase(GraphBuilder& b) {
    model.path = "policy.onnx";
    model.graph = std::make_unique<Graph>(std::move(b.finish()));
  }
  PolicyCase& ep(std::string name, std::map<std::string, Cost> costs) {
    eps.add(std::make_unique<PolicyTestEp>(std::move(name), std::move(costs)));
    return *this;
  }
  PolicyCase& group_ep(std::string name, std::map<std::string, Cost> costs, std::set<std::string> grouped) {
    eps.add(std::make_unique<PolicyTestGroupEp>(std::move(name), std::move(costs), std::move(grouped)));
    return *this;
  }
  ClaimsReport analyze(PlacementPolicy policy = PlacementPolicy::kFewerPartitions) {
    std::vector<ExecutionProvider*> list;
    for (const auto& e : eps.eps()) list.push_back(e.get());
    auto contexts = build_ep_context_registry(list);
    REQUIRE(contexts);
    auto r = analyze_claims(model, eps, *contexts, policy);
    REQUIRE(r);
    for (const Partition& p : r->partitions) CHECK(convexity_violation(*model.graph, p.nodes).empty());
    return std::move(*r);
  }
  const NodeClaim& node(const ClaimsReport& r, const std::string& name) const {
    return r.nodes[static_cast<std::size_t>(*model.graph->find_node(name))];
  }
  std::vector<std::string> layout(const ClaimsReport& r) const {
    std::vector<std::string> out;
    for (const Partition& p : r.partitions) {
      std::vector<std::string> names;
      for (NodeId id : p.nodes) names.push_back(model.graph->node(id).name);
      out.push_back(fmt::format("{}:{}", p.ep, fmt::join(names, ",")));
    }
    return out;
  }

  Model model;
  EpRegistry eps;
};

// x -> a (Sin) -> m (Mul) -> b (Cos) -> y; the Mul multiplies by the input.
GraphBuilder sandwich() {
  GraphBuilder b;
  b.input("x");
  b.node("a", "Sin", {"x"}, {"va"});
  b.node("m", "Mul", {"va", "x"}, {"vm"});
  b.node("b", "Cos", {"vm"}, {"y"});
  b.output("y");
  return b;
}

}  // namespace

TEST_CASE("fewer-partitions moves a memory-bound partition between two of another EP's partitions",
          "[lib][claims][placement]") {
  GraphBuilder b = sandwich();
  PolicyCase c(b);
  c.ep("fast", {{"Mul", kCheap}}).ep("host", {{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}});

  const ClaimsReport first = c.analyze(PlacementPolicy::kFirstClaim);
  CHECK(first.policy == PlacementPolicy::kFirstClaim);
  CHECK(c.layout(first) == std::vector<std::string>{"host:a", "fast:m", "host:b"});
  for (const NodeClaim& n : first.nodes) CHECK(n.placement_note.empty());

  const ClaimsReport r = c.analyze();
  CHECK(r.policy == PlacementPolicy::kFewerPartitions);
  CHECK(c.layout(r) == std::vector<std::string>{"host:a,m,b"});
  const NodeClaim& m = c.node(r, "m");
  CHECK(m.placed_ep == "host");
  CHECK(m.partition == 0);
  CHECK(m.placement_note ==
        "moved from fast to host: its fast partition (m) only does memory-bound work (under 1 FLOP per byte) between "
        "host nodes, and host claims all of it; --placement first-claim keeps it on fast");
  CHECK(c.node(r, "a").placement_note.empty());
  CHECK(c.node(r, "b").placement_note.empty());
}

TEST_CASE("fewer-partitions keeps compute-bound nodes, nodes without a cost and nodes the other EP declines",
          "[lib][claims][placement]") {
  const std::vector<std::string> split{"host:a", "fast:m", "host:b"};
  SECTION("more FLOPs than bytes") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kHeavy}}).ep("host", {{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}});
    CHECK(c.layout(c.analyze()) == split);
  }
  SECTION("no known cost") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kUnknown}}).ep("host", {{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}});
    CHECK(c.layout(c.analyze()) == split);
  }
  SECTION("the neighbours' EP declines it") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}}).ep("host", {{"Sin", kCheap}, {"Cos", kCheap}});
    const ClaimsReport r = c.analyze();
    CHECK(c.layout(r) == split);
    CHECK(c.node(r, "m").placement_note.empty());
  }
}

TEST_CASE("fewer-partitions keeps a partition one of whose neighbours is on a third EP", "[lib][claims][placement]") {
  GraphBuilder b = sandwich();
  PolicyCase c(b);
  c.ep("fast", {{"Mul", kCheap}})
      .ep("host", {{"Sin", kCheap}, {"Mul", kCheap}})
      .ep("third", {{"Cos", kCheap}, {"Mul", kCheap}});
  CHECK(c.layout(c.analyze()) == std::vector<std::string>{"host:a", "fast:m", "third:b"});
}

TEST_CASE("fewer-partitions: graph inputs and outputs are neutral, but a partition needs a neighbouring node",
          "[lib][claims][placement]") {
  SECTION("only graph inputs and outputs") {
    GraphBuilder b;
    b.input("x");
    b.node("m", "Mul", {"x", "x"}, {"y"});
    b.output("y");
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}}).ep("host", {{"Mul", kCheap}});
    const ClaimsReport r = c.analyze();
    CHECK(c.layout(r) == std::vector<std::string>{"fast:m"});
    CHECK(c.node(r, "m").placement_note.empty());
  }
  SECTION("a graph input and a consumer on the other EP") {
    GraphBuilder b;
    b.input("x");
    b.node("m", "Mul", {"x", "x"}, {"vm"});
    b.node("a", "Sin", {"vm"}, {"y"});
    b.output("y");
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}}).ep("host", {{"Mul", kCheap}, {"Sin", kCheap}});
    CHECK(c.layout(c.analyze()) == std::vector<std::string>{"host:m,a"});
  }
  SECTION("a neighbour no EP claims") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}}).ep("host", {{"Sin", kCheap}, {"Mul", kCheap}});
    const ClaimsReport r = c.analyze();
    CHECK(c.layout(r) == std::vector<std::string>{"host:a", "fast:m"});
    CHECK(c.node(r, "b").placed_ep.empty());
  }
}

TEST_CASE("fewer-partitions moves neighbouring partitions of one EP together when all of them qualify",
          "[lib][claims][placement]") {
  // A residual chain: m feeds both s2 (host) and r (fast), so neither fast partition has
  // only host neighbours, and each stays unless both move.
  GraphBuilder b;
  b.input("x");
  b.node("s1", "Sin", {"x"}, {"v1"});
  b.node("m", "Mul", {"v1", "x"}, {"vm"});
  b.node("s2", "Cos", {"vm"}, {"v2"});
  b.node("r", "Add", {"v2", "vm"}, {"y"});
  b.output("y");
  const std::map<std::string, Cost> host{{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}, {"Add", kCheap}};

  SECTION("both memory-bound: both move") {
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}, {"Add", kCheap}}).ep("host", host);
    CHECK(c.layout(c.analyze(PlacementPolicy::kFirstClaim)) ==
          std::vector<std::string>{"host:s1", "fast:m", "host:s2", "fast:r"});
    const ClaimsReport r = c.analyze();
    CHECK(c.layout(r) == std::vector<std::string>{"host:s1,m,s2,r"});
    CHECK(c.node(r, "m").placement_note ==
          "moved from fast to host: its fast partition (m) only does memory-bound work (under 1 FLOP per byte) between "
          "host nodes and the fast partition (r), which moved to host with it, and host claims all of it; "
          "--placement first-claim keeps it on fast");
  }
  SECTION("the Add is compute-bound: neither moves") {
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}, {"Add", kHeavy}}).ep("host", host);
    CHECK(c.layout(c.analyze()) == std::vector<std::string>{"host:s1", "fast:m", "host:s2", "fast:r"});
  }
}

TEST_CASE("fewer-partitions leaves GetCapability groups where they are, and moves nothing onto such an EP",
          "[lib][claims][placement]") {
  SECTION("the partition is a group") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.group_ep("grouping", {{"Mul", kCheap}}, {"Mul"}).ep("host", {{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}});
    CHECK(c.layout(c.analyze()) == std::vector<std::string>{"host:a", "grouping:m", "host:b"});
  }
  SECTION("the neighbours' EP answers for the whole graph") {
    GraphBuilder b = sandwich();
    PolicyCase c(b);
    c.ep("fast", {{"Mul", kCheap}})
        .group_ep("grouping", {{"Sin", kCheap}, {"Cos", kCheap}, {"Mul", kCheap}}, {"Sin", "Cos"});
    CHECK(c.layout(c.analyze()) == std::vector<std::string>{"grouping:a", "fast:m", "grouping:b"});
  }
}

TEST_CASE("fewer-partitions keeps partitions convex where a moved node could close a path",
          "[lib][claims][placement]") {
  // a -> m -> b on host/fast/host, plus a path a -> t -> b through a third EP: moving m to
  // host must not put a, m and b in one partition around t.
  GraphBuilder b;
  b.input("x");
  b.node("a", "Sin", {"x"}, {"va"});
  b.node("t", "Tanh", {"va"}, {"vt"});
  b.node("m", "Mul", {"va", "x"}, {"vm"});
  b.node("b", "Add", {"vm", "vt"}, {"y"});
  b.output("y");
  PolicyCase c(b);
  c.ep("fast", {{"Mul", kCheap}})
      .ep("host", {{"Sin", kCheap}, {"Add", kCheap}, {"Mul", kCheap}})
      .ep("third", {{"Tanh", kCheap}});
  const ClaimsReport r = c.analyze();  // analyze() checks every partition is convex
  CHECK(c.node(r, "m").placed_ep == "host");
  CHECK(c.layout(r) == std::vector<std::string>{"host:a,m", "third:t", "host:b"});
}

TEST_CASE("placement policies have names that parse back", "[lib][claims][placement]") {
  for (std::string_view name : placement_policy_names()) {
    const auto p = parse_placement_policy(name);
    REQUIRE(p);
    CHECK(placement_policy_name(*p) == name);
  }
  CHECK(parse_placement_policy("fewer-partitions") == PlacementPolicy::kFewerPartitions);
  CHECK(parse_placement_policy("first-claim") == PlacementPolicy::kFirstClaim);
  CHECK_FALSE(parse_placement_policy("fastest"));
  CHECK(kDefaultPlacementPolicy == PlacementPolicy::kFewerPartitions);
}

}  // namespace nxrt::test
