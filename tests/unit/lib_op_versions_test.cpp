// nxrt's table of ai.onnx op versions past opset 17, and the registry's declines that use it.
#include <catch2/catch.hpp>

#include <fmt/format.h>

#include <algorithm>

#include "lib_test_util.h"
#include "nxrt/ep/registry.h"
#include "nxrt/model/op_versions.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

KernelDef def(std::string op, int64_t since, int64_t until = 0) {
  return KernelDef{{"", std::move(op), since}, until,
                   [](const NodeContext&) { return KernelMatch::supported(); },
                   [](const NodeContext&) -> Expected<std::unique_ptr<Kernel>> { return nullptr; }};
}

}  // namespace

TEST_CASE("the op version table is sorted, unique and within opsets 18 to the newest known", "[lib][op_versions]") {
  const auto all = op_version_changes();
  REQUIRE(all.size() > 50);
  for (std::size_t i = 0; i < all.size(); ++i) {
    INFO(all[i].op << "-" << all[i].since_version);
    CHECK(all[i].since_version >= 18);
    CHECK(all[i].since_version <= kNewestKnownOpset);
    CHECK_FALSE(all[i].change.empty());
    if (i > 0)
      CHECK(std::make_pair(all[i - 1].op, all[i - 1].since_version) < std::make_pair(all[i].op, all[i].since_version));
  }
}

TEST_CASE("op_version_at and op_version_after find versions by opset", "[lib][op_versions]") {
  CHECK(op_version_at("Relu", 21) == nullptr);
  CHECK(op_version_at("Pad", 17) == nullptr);
  REQUIRE(op_version_at("Pad", 20) != nullptr);
  CHECK(op_version_at("Pad", 20)->since_version == 19);
  CHECK(op_version_at("Pad", 21)->since_version == 21);
  REQUIRE(op_version_after("Pad", 13, 21) != nullptr);
  CHECK(op_version_after("Pad", 13, 21)->since_version == 18);
  CHECK(op_version_after("Pad", 21, 21) == nullptr);
  CHECK(op_version_after("ReduceMax", 18, 19) == nullptr);
}

TEST_CASE("an open-ended registration stops before the next version nxrt knows", "[lib][op_versions][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("ReduceMean", 1, 17)));
  REQUIRE(reg.add(def("DFT", 17)));
  REQUIRE(reg.add(def("Relu", 14)));
  CHECK(OpRegistry::covered_until(*reg.find("", "DFT", 17)) == 19);
  CHECK(OpRegistry::covered_until(*reg.find("", "Relu", 14)) == kNewestKnownOpset);
  CHECK(reg.check(OneNode("DFT", 19).ctx(), "cpu"));
  KernelMatch dft = reg.check(OneNode("DFT", 20).ctx(), "cpu");
  REQUIRE_FALSE(dft);
  CHECK(dft.reason() ==
        "DFT-20 (dft_length and axis as inputs) is not implemented by the cpu EP; it implements opsets 17-19");
  KernelMatch mean = reg.check(OneNode("ReduceMean", 18).ctx(), "cpu");
  REQUIRE_FALSE(mean);
  CHECK(mean.reason() == "ReduceMean-18 (axes as an input) is not implemented by the cpu EP; it implements opsets 1-17");
}

TEST_CASE("versions that only add types do not end an open-ended registration", "[lib][op_versions][registry]") {
  REQUIRE(op_version_after("Conv", 11, kNewestKnownOpset) != nullptr);  // Conv-22: bfloat16
  CHECK(op_signature_change_after("Conv", 11, kNewestKnownOpset) == nullptr);
  REQUIRE(op_signature_change_after("QuantizeLinear", 21, 23) != nullptr);
  CHECK(op_signature_change_after("QuantizeLinear", 21, 23)->since_version == 23);
  CHECK(op_signature_change_after("Pad", 19, 23) == nullptr);  // Pad-21 and -23 add int4 and float4
  OpRegistry reg;
  REQUIRE(reg.add(def("Conv", 11)));
  REQUIRE(reg.add(def("DequantizeLinear", 13)));
  CHECK(OpRegistry::covered_until(*reg.find("", "Conv", 11)) == kNewestKnownOpset);
  CHECK(reg.check(OneNode("Conv", 22).ctx(), "cpu"));
  CHECK(OpRegistry::covered_until(*reg.find("", "DequantizeLinear", 13)) == 18);
}

TEST_CASE("an explicit until_version widens a registration over versions that only add types",
          "[lib][op_versions][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("Reshape", 14, 21)));
  CHECK(reg.check(OneNode("Reshape", 19).ctx(), "cpu"));
  CHECK(reg.check(OneNode("Reshape", 21).ctx(), "cpu"));
}

TEST_CASE("ai.onnx opsets newer than nxrt knows are declined naming the version it knows",
          "[lib][op_versions][registry]") {
  OpRegistry reg;
  REQUIRE(reg.add(def("Relu", 6, 13)));
  REQUIRE(reg.add(def("Relu", 14)));
  KernelMatch m = reg.check(OneNode("Relu", kNewestKnownOpset + 1).ctx(), "cpu");
  REQUIRE_FALSE(m);
  CHECK(m.reason() ==
        fmt::format("Relu: the model imports ai.onnx opset {}, newer than the opsets nxrt knows (up to {}); the cpu EP "
                    "implements Relu-14 (opsets 6-{}); export with opset {} or lower",
                    kNewestKnownOpset + 1, kNewestKnownOpset, kNewestKnownOpset, kNewestKnownOpset));
}
