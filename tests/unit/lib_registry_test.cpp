// OpRegistry lookups and declines, the claim macros, EpRegistry verdicts and the
// EPContext source-key registry.
#include <catch2/catch.hpp>

#include "lib_test_util.h"
#include "nxrt/ep/claim.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/ep/provider.h"
#include "nxrt/ep/registry.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

namespace {

class NoopKernel final : public Kernel {
 public:
  explicit NoopKernel(std::string tag) : tag_(std::move(tag)) {}
  Expected<void> compute(KernelContext&) override { return {}; }
  std::string_view variant() const override { return tag_; }

 private:
  std::string tag_;
};

// A registration whose kernel's variant() names the registration, so tests see which ran.
KernelDef def(std::string domain, std::string op, int64_t since, int64_t until = 0) {
  const std::string tag = fmt::format("{}@{}", op, since);
  return KernelDef{{std::move(domain), std::move(op), since}, until,
                   [](const NodeContext&) { return KernelMatch::supported(Cost{1, 2, {}}); },
                   [tag](const NodeContext&) -> Expected<std::unique_ptr<Kernel>> {
                     return std::unique_ptr<Kernel>(std::make_unique<NoopKernel>(tag));
                   }};
}

}  // namespace

TEST_CASE("OpRegistry treats domains \"\" and \"ai.onnx\" as one", "[lib][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("ai.onnx", "Relu", 6)));
  CHECK(reg.find("", "Relu", 17) != nullptr);
  CHECK(reg.find("ai.onnx", "Relu", 17) == reg.find("", "Relu", 17));
  CHECK(reg.find("", "Relu", 17)->key.domain.empty());
  CHECK(reg.earliest_version("", "Relu") == 6);
  CHECK(reg.earliest_version("ai.onnx", "Relu") == 6);
  // The same key spelled the other way is a duplicate.
  auto dup = reg.add(def("", "Relu", 6));
  REQUIRE_FALSE(dup);
  CHECK_THAT(dup.error().what, Contains("ai.onnx::Relu@6 registered twice"));
  CHECK(reg.find("com.microsoft", "Relu", 17) == nullptr);
}

TEST_CASE("OpRegistry picks the highest since_version not above the opset", "[lib][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add_all({def("", "Softmax", 13), def("", "Softmax", 1, 12), def("", "Sum", 8), def("", "Tanh", 6)}));
  CHECK(reg.size() == 4);
  CHECK(reg.find("", "Softmax", 1)->key.since_version == 1);
  CHECK(reg.find("", "Softmax", 12)->key.since_version == 1);
  CHECK(reg.find("", "Softmax", 13)->key.since_version == 13);
  CHECK(reg.find("", "Softmax", 21)->key.since_version == 13);
  CHECK(reg.find("", "Sum", 7) == nullptr);  // neighbours in the map must not leak in
  CHECK(reg.find("", "Softmay", 13) == nullptr);
  CHECK(reg.find("", "Tanh", 5) == nullptr);

  // entries() is sorted by key.
  auto entries = reg.entries();
  REQUIRE(entries.size() == 4);
  CHECK(entries[0]->key.to_string() == "ai.onnx::Softmax@1");
  CHECK(entries[1]->key.to_string() == "ai.onnx::Softmax@13");
  CHECK(entries[2]->key.to_string() == "ai.onnx::Sum@8");

  // create() builds the kernel of the entry find() chose.
  OneNode n12("Softmax", 12), n13("Softmax", 13);
  auto k12 = reg.create(n12.ctx(), "test");
  auto k13 = reg.create(n13.ctx(), "test");
  REQUIRE(k12);
  REQUIRE(k13);
  CHECK((*k12)->variant() == "Softmax@1");
  CHECK((*k13)->variant() == "Softmax@13");
}

TEST_CASE("OpRegistry declines an opset below the earliest registration with both versions", "[lib][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("", "Gelu", 20)));
  OneNode n("Gelu", 17);
  KernelMatch m = reg.check(n.ctx(), "test");
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gelu: this EP registers ai.onnx::Gelu from opset 20; the model imports opset 17");
  auto k = reg.create(n.ctx(), "test");
  REQUIRE_FALSE(k);
  CHECK(k.error().code == ErrorCode::kUnclaimed);
  CHECK(k.error().why == m.reason());
}

TEST_CASE("OpRegistry declines an unregistered op naming the op and opset", "[lib][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("", "Relu", 6)));
  OneNode n("Frobnicate", 17, "com.example");
  KernelMatch m = reg.check(n.ctx(), "myep");
  REQUIRE_FALSE(m);
  CHECK_THAT(m.reason(), Contains("com.example::Frobnicate (opset 17) is not implemented by the myep EP"));
  CHECK_THAT(m.reason(), Contains("nxrt list-eps --ops"));
}

TEST_CASE("OpRegistry honours until_version", "[lib][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("", "Unsqueeze", 1, 12)));
  OneNode in_range("Unsqueeze", 11), at_end("Unsqueeze", 12), past("Unsqueeze", 13);
  CHECK(reg.check(in_range.ctx(), "test"));
  CHECK(reg.check(at_end.ctx(), "test"));
  KernelMatch m = reg.check(past.ctx(), "test");
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        "Unsqueeze: this EP implements opsets 1 to 12 of ai.onnx::Unsqueeze; the model imports opset 13, whose "
        "semantics changed");
  // A later registration takes over where the first one stops.
  REQUIRE(reg.add(def("", "Unsqueeze", 13)));
  CHECK(reg.check(past.ctx(), "test"));
}

TEST_CASE("OpRegistry's check result is the KernelDef's own verdict", "[lib][registry]") {
  OpRegistry reg;
  KernelDef d = def("", "Conv", 11);
  d.check = [](const NodeContext& ctx) {
    NXRT_REQUIRE(ctx.input_dtype(0) == DType::kFloat64, "Conv: input 0 has type {}; only double",
                 dtype_name(ctx.input_dtype(0)));
    return KernelMatch::supported();
  };
  REQUIRE(reg.add(std::move(d)));
  OneNode n("Conv", 17);
  CHECK(reg.check(n.ctx(), "test").reason() == "Conv: input 0 has type float; only double");
  auto k = reg.create(n.ctx(), "test");
  REQUIRE_FALSE(k);
  CHECK(k.error().what == "the test EP cannot build a kernel for 'Conv_0' (ai.onnx::Conv, opset 17)");
}

namespace {

int g_formatted = 0;

std::string counted(const std::string& text) {
  ++g_formatted;
  return text;
}

KernelMatch require_positive(int x) {
  NXRT_REQUIRE(x > 0, "Op: x must be positive, got {} ({})", x, counted("expensive"));
  return KernelMatch::supported();
}

KernelMatch deny(int x) { return NXRT_DENY("Op: {} is never supported ({})", x, counted("always")); }

}  // namespace

TEST_CASE("NXRT_REQUIRE evaluates its message only when the check fails", "[lib][claim]") {
  g_formatted = 0;
  CHECK(require_positive(3));
  CHECK(g_formatted == 0);
  KernelMatch m = require_positive(-2);
  REQUIRE_FALSE(m);
  CHECK(g_formatted == 1);
  CHECK(m.reason() == "Op: x must be positive, got -2 (expensive)");
}

TEST_CASE("NXRT_DENY always formats its reason", "[lib][claim]") {
  g_formatted = 0;
  KernelMatch m = deny(7);
  CHECK_FALSE(m.is_supported());
  CHECK(g_formatted == 1);
  CHECK(m.reason() == "Op: 7 is never supported (always)");
}

TEST_CASE("KernelMatch::declined never has an empty reason", "[lib][claim]") {
  KernelMatch m = KernelMatch::declined("");
  CHECK_FALSE(m);
  CHECK_FALSE(m.reason().empty());
  CHECK_THAT(m.reason(), Contains("bug in the EP"));
  KernelMatch s = KernelMatch::supported(Cost{10, 20, {}});
  CHECK(s);
  CHECK(s.cost().flops == 10);
  CHECK(s.cost().bytes_moved == 20);
  CHECK_FALSE(s.cost().time_us);
}

namespace {

// An EP that claims ops from a list; it may be unavailable.
class FakeEp final : public ExecutionProvider {
 public:
  FakeEp(std::string name, std::vector<std::string> ops, std::vector<std::string> sources = {},
         std::string unavailable = {})
      : ops_(std::move(ops)) {
    info_.name = std::move(name);
    info_.context_sources = std::move(sources);
    info_.available = unavailable.empty();
    info_.unavailable_reason = std::move(unavailable);
  }
  const EpInfo& info() const override { return info_; }
  KernelMatch claim(const NodeContext& ctx) const override {
    ++claims;
    for (const auto& op : ops_)
      if (op == ctx.node().op_type) return KernelMatch::supported();
    return NXRT_DENY("{}: not in the {} EP's list", ctx.node().op_type, info_.name);
  }
  Expected<std::unique_ptr<CompiledPartition>> compile(const Partition&) override {
    return fail(ErrorCode::kRuntime, "not compiled");
  }
  mutable int claims = 0;

 private:
  EpInfo info_;
  std::vector<std::string> ops_;
};

}  // namespace

TEST_CASE("EpRegistry::verdicts gives every EP's verdict in priority order", "[lib][registry]") {
  EpRegistry eps;
  eps.add(std::make_unique<FakeEp>("gpu", std::vector<std::string>{"Relu"}, std::vector<std::string>{},
                                   "no CUDA device: cudaGetDeviceCount returned 100"));
  eps.add(std::make_unique<FakeEp>("fast", std::vector<std::string>{"Conv"}));
  eps.add(std::make_unique<FakeEp>("slow", std::vector<std::string>{"Relu", "Conv"}));
  eps.add(std::make_unique<FakeEp>("other", std::vector<std::string>{"Relu"}));
  OneNode n("Relu", 17);
  auto v = eps.verdicts(n.ctx());
  REQUIRE(v.size() == 4);
  CHECK(v[0].ep == "gpu");
  CHECK_FALSE(v[0].match);
  CHECK(v[0].match.reason() == "the gpu EP is unavailable: no CUDA device: cudaGetDeviceCount returned 100");
  CHECK(static_cast<const FakeEp&>(*eps.eps()[0]).claims == 0);  // an unavailable EP is not asked
  CHECK(v[1].ep == "fast");
  CHECK(v[1].match.reason() == "Relu: not in the fast EP's list");
  CHECK(v[2].ep == "slow");
  CHECK(v[2].match);
  CHECK(v[3].ep == "other");  // EPs after the first claim still answer
  CHECK(v[3].match);
  CHECK(eps.find("slow") == eps.eps()[2].get());
  CHECK(eps.find("nope") == nullptr);
}

TEST_CASE("build_ep_context_registry maps source keys and refuses a key two EPs accept", "[lib][epcontext]") {
  FakeEp cpu("cpu", {}, {"nxrt.cpu"});
  FakeEp onednn("onednn", {}, {"nxrt.onednn", "nxrt.onednn.v2"});
  FakeEp plain("plain", {});
  std::vector<ExecutionProvider*> eps{&cpu, &onednn, &plain};
  auto reg = build_ep_context_registry(eps);
  REQUIRE(reg);
  CHECK(reg->find("nxrt.cpu") == &cpu);
  CHECK(reg->find("nxrt.onednn.v2") == &onednn);
  CHECK(reg->find("QNNExecutionProvider") == nullptr);
  CHECK(reg->find("") == nullptr);
  CHECK(reg->describe_keys() == "cpu (nxrt.cpu), onednn (nxrt.onednn, nxrt.onednn.v2), plain (no keys)");
  CHECK(reg->keys().size() == 3);

  FakeEp clash("plugin", {}, {"nxrt.cpu"});
  std::vector<ExecutionProvider*> clashing{&cpu, &clash};
  auto bad = build_ep_context_registry(clashing);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "EPContext source 'nxrt.cpu' is accepted by two EPs: cpu and plugin");
  CHECK_FALSE(bad.error().how.empty());

  std::vector<ExecutionProvider*> none;
  auto empty = build_ep_context_registry(none);
  REQUIRE(empty);
  CHECK(empty->describe_keys() == "no EPs loaded");
}
