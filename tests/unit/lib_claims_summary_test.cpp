// summarize_claims and group_declines: per-EP totals, boundary values, device copies, declines.
#include <catch2/catch.hpp>

#include <map>

#include "lib_test_util.h"
#include "nxrt/ep/claim.h"
#include "nxrt/session/claims_summary.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Claims the ops it has a cost for; runs on `device`.
class CostedEp final : public ExecutionProvider {
 public:
  CostedEp(std::string name, DeviceId device, std::map<std::string, double> flops) : flops_(std::move(flops)) {
    info_.name = std::move(name);
    info_.device = device;
  }
  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override {
    if (auto it = flops_.find(ctx.node().op_type); it != flops_.end()) return KernelMatch::supported({it->second, 0, {}});
    return NXRT_DENY("{}: not in the {} EP's list", ctx.node().op_type, info_.name);
  }
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition&) override {
    return fail(ErrorCode::kRuntime, "not compiled");
  }

 private:
  EpInfo info_;
  std::map<std::string, double> flops_;
};

// x -> relu_a (dev) -> sin_b (host) -> loop (dev, body: inner_relu, inner_sin) -> y of unknown size.
struct Fixture {
  Fixture() {
    GraphBuilder body;
    body.input("s");
    body.node("inner_relu", "Relu", {"s"}, {"t"});
    body.node("inner_sin", "Sin", {"t"}, {"u"});
    body.output("u");
    auto sub = std::make_shared<const Graph>(std::move(body.finish()));

    GraphBuilder b;
    b.input("x");
    b.node("relu_a", "Relu", {"x"}, {"a"});
    b.node("sin_b", "Sin", {"a"}, {"b"});
    b.node("loop", "Loop", {"b"}, {"y"}, DType::kFloat32, {-1});
    b.graph.nodes.back().attributes.set("body", Attribute{sub});
    b.output("y");
    model.path = "summary.onnx";
    model.graph = std::make_unique<Graph>(std::move(b.finish()));

    eps.add(std::make_unique<CostedEp>("dev", DeviceId{DeviceType::kCuda, 0},
                                       std::map<std::string, double>{{"Relu", 4}, {"Loop", 0}}));
    eps.add(std::make_unique<CostedEp>("host", kHostDevice, std::map<std::string, double>{{"Relu", 2}, {"Sin", 8}}));
    std::vector<ExecutionProvider*> list;
    for (const auto& ep : eps.eps()) list.push_back(ep.get());
    auto contexts = build_ep_context_registry(list);
    REQUIRE(contexts);
    auto r = analyze_claims(model, eps, *contexts, PlacementPolicy::kFirstClaim);
    REQUIRE(r);
    report = std::move(*r);
  }
  Model model;
  EpRegistry eps;
  ClaimsReport report;
};

}  // namespace

TEST_CASE("summarize_claims counts nodes, subgraph nodes, partitions and FLOPs per EP", "[lib][claims]") {
  Fixture f;
  const ClaimsSummary s = summarize_claims(f.report, *f.model.graph, f.eps);
  REQUIRE(s.eps.size() == 2);
  CHECK(s.eps[0].ep == "dev");
  CHECK(s.eps[0].device.to_string() == "cuda:0");
  CHECK(s.eps[0].nodes == 2);
  CHECK(s.eps[0].subgraph_nodes == 2);
  CHECK(s.eps[0].partitions == 2);
  CHECK(s.eps[0].flops == 4);
  CHECK(s.eps[1].ep == "host");
  CHECK(s.eps[1].nodes == 1);
  CHECK(s.eps[1].subgraph_nodes == 0);
  CHECK(s.eps[1].partitions == 1);
  CHECK(s.eps[1].flops == 8);
  CHECK(s.nodes == 3);
  CHECK(s.unplaced == 0);
  CHECK(s.subgraph_nodes == 2);
  CHECK(f.report.nodes[3].owner == 2);  // loop/body/inner_relu belongs to 'loop'
}

TEST_CASE("summarize_claims lists boundary values and the copies across devices", "[lib][claims]") {
  Fixture f;
  const ClaimsSummary s = summarize_claims(f.report, *f.model.graph, f.eps);
  const Graph& g = *f.model.graph;
  std::vector<std::string> seen;
  for (const BoundaryValue& b : s.boundaries)
    seen.push_back(fmt::format("{} {}->{} {}->{} {}", g.value(b.value).name, b.from, b.to, b.from_device.to_string(),
                               b.to_device.to_string(), b.bytes ? std::to_string(*b.bytes) : "?"));
  CHECK(seen == std::vector<std::string>{"x -1->0 cpu->cuda:0 16", "a 0->1 cuda:0->cpu 16", "b 1->2 cpu->cuda:0 16",
                                         "y 2->-1 cuda:0->cpu ?"});
  CHECK(s.between_partitions.values == 2);
  CHECK(s.between_partitions.bytes == 32);
  CHECK(s.between_partitions.unknown_size == 0);
  CHECK(s.device_copies.values == 4);
  CHECK(s.device_copies.bytes == 48);
  CHECK(s.device_copies.unknown_size == 1);
}

TEST_CASE("group_declines groups by EP, op and reason, subgraph nodes included", "[lib][claims]") {
  Fixture f;
  std::vector<std::size_t> all(f.report.nodes.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  const auto groups = group_declines(f.report, all);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].ep == "dev");
  CHECK(groups[0].op_type == "Sin");
  CHECK(groups[0].reason == "Sin: not in the dev EP's list");
  REQUIRE(groups[0].claims.size() == 2);
  CHECK(f.report.nodes[groups[0].claims[0]].path == "sin_b");
  CHECK(f.report.nodes[groups[0].claims[1]].path == "loop/body/inner_sin");
  CHECK(f.report.nodes[groups[0].claims[1]].in_subgraph);
  CHECK(groups[1].ep == "host");
  CHECK(groups[1].op_type == "Loop");
  CHECK(groups[1].claims == std::vector<std::size_t>{2});

  const std::vector<std::size_t> only_loop{2};
  const auto filtered = group_declines(f.report, only_loop);
  REQUIRE(filtered.size() == 1);
  CHECK(filtered[0].op_type == "Loop");
}
