// The oneDNN EP's BatchNormalization, LRN and LayerNormalization against the cpu EP, and
// their declines.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "kernel_harness.h"

namespace nxrt::test {
namespace {

// BatchNormalization of X with statistics of `stats` shape (variance positive).
NodeSpec batch_norm(Shape x, Shape stats, int64_t opset, AttributeMap a = {}, bool constant = true) {
  NodeSpec s{.op_type = "BatchNormalization", .opset = opset};
  s.inputs = {random_tensor(std::move(x), 1), random_tensor(stats, 2), random_tensor(stats, 3),
              random_tensor(stats, 4), random_tensor(stats, 5, 0.1f, 3.0f)};
  s.constant = {false, constant, constant, constant, constant};
  s.attrs = std::move(a);
  return s;
}

NodeSpec lrn(Shape x, int64_t size, AttributeMap a = {}) {
  NodeSpec s{.op_type = "LRN", .opset = 13};
  s.inputs = {random_tensor(std::move(x), 6)};
  s.attrs = std::move(a);
  s.attrs.set("size", Attribute{size});
  return s;
}

NodeSpec layer_norm(Shape x, int64_t axis, bool with_b, bool constant = true) {
  const auto rank = static_cast<int64_t>(x.size());
  const Shape normalized(x.begin() + (axis < 0 ? axis + rank : axis), x.end());
  NodeSpec s{.op_type = "LayerNormalization", .opset = 17};
  s.inputs = {random_tensor(std::move(x), 7), random_tensor(normalized, 8)};
  if (with_b) s.inputs.push_back(random_tensor(normalized, 9));
  s.constant = {false, constant, constant};
  s.attrs = attrs({{"axis", axis}, {"epsilon", 1e-3f}});
  return s;
}

}  // namespace

TEST_CASE("onednn BatchNormalization matches the cpu EP on 2-D to 6-D", "[onednn]") {
  for (const Shape& x : {Shape{4, 3}, Shape{2, 3, 7}, Shape{2, 3, 4, 5}, Shape{1, 3, 2, 3, 4}, Shape{2, 3, 2, 1, 2, 3}})
    for (const bool constant : {true, false}) {
      INFO("X " << shape_to_string(x) << " constant statistics " << constant);
      check_matches_cpu("onednn", batch_norm(x, {3}, 15, attrs({{"epsilon", 1e-2f}}), constant));
    }
  check_matches_cpu("onednn", batch_norm({2, 5, 3, 3}, {5}, 9));
  check_matches_cpu("onednn", batch_norm({2, 5, 3, 3}, {5}, 14, attrs({{"training_mode", int64_t{0}}})));
  SECTION("opsets 6 and 7: is_test and per-position statistics (spatial=0)") {
    check_matches_cpu("onednn", batch_norm({2, 3, 4, 4}, {3}, 6, attrs({{"is_test", int64_t{1}}, {"momentum", 0.2f}})));
    check_matches_cpu("onednn", batch_norm({2, 3, 4}, {3, 4}, 7, attrs({{"spatial", int64_t{0}}})));
    check_matches_cpu("onednn", batch_norm({2, 3, 4}, {3}, 7, attrs({{"spatial", int64_t{1}}})));
  }
}

TEST_CASE("onednn BatchNormalization declines training", "[onednn]") {
  const KernelMatch training =
      claim_on("onednn", batch_norm({2, 3, 4, 4}, {3}, 15, attrs({{"training_mode", int64_t{1}}})));
  REQUIRE_FALSE(training);
  CHECK_THAT(training.reason(), Catch::Contains("training_mode=1"));
  CHECK_THAT(claim_on("onednn", batch_norm({2, 3, 4, 4}, {3}, 6)).reason(), Catch::Contains("is_test=0"));
  NodeSpec outputs = batch_norm({2, 3, 4, 4}, {3}, 9);
  outputs.outputs = 3;
  CHECK_THAT(claim_on("onednn", outputs).reason(), Catch::Contains("output 1 (running or saved statistics)"));
}

TEST_CASE("onednn LRN matches the cpu EP for odd sizes and declines even ones", "[onednn]") {
  check_matches_cpu("onednn", lrn({2, 7, 4, 5}, 3, attrs({{"alpha", 2e-4f}, {"beta", 0.5f}, {"bias", 2.0f}})));
  check_matches_cpu("onednn", lrn({1, 16, 5, 5}, 5));
  check_matches_cpu("onednn", lrn({1, 6, 3, 3}, 1));
  check_matches_cpu("onednn", lrn({2, 9, 6}, 7, attrs({{"alpha", 0.1f}})));
  check_matches_cpu("onednn", lrn({1, 5, 2, 3, 2}, 3, attrs({{"alpha", 0.1f}})));
  NodeSpec old = lrn({1, 8, 3, 3}, 5, attrs({{"alpha", 0.01f}, {"beta", 0.9f}}));
  old.opset = 1;
  check_matches_cpu("onednn", old);
  for (int64_t size : {2, 4}) {
    const KernelMatch even = claim_on("onednn", lrn({1, 6, 3, 3}, size));
    REQUIRE_FALSE(even);
    CHECK_THAT(even.reason(), Catch::Contains(fmt::format("size {} is even", size)));
  }
}

TEST_CASE("onednn LayerNormalization matches the cpu EP on every axis", "[onednn]") {
  for (const bool with_b : {true, false})
    for (const bool constant : {true, false}) {
      INFO("B " << with_b << " constant " << constant);
      check_matches_cpu("onednn", layer_norm({3, 4}, 0, with_b, constant));
      check_matches_cpu("onednn", layer_norm({3, 4}, -1, with_b, constant));
      for (int64_t axis : {0, 1, 2, -1, -2, -3})
        check_matches_cpu("onednn", layer_norm({2, 3, 5}, axis, with_b, constant));
      for (int64_t axis : {1, 3, -2}) check_matches_cpu("onednn", layer_norm({2, 3, 4, 5}, axis, with_b, constant));
    }
  NodeSpec leading_ones = layer_norm({2, 3, 5}, 1, true);
  leading_ones.inputs[1] = leading_ones.inputs[1].reshaped({1, 3, 5});
  check_matches_cpu("onednn", leading_ones);
}

TEST_CASE("onednn LayerNormalization declines statistics outputs and broadcast scales", "[onednn]") {
  NodeSpec stats = layer_norm({2, 3, 5}, -1, true);
  stats.outputs = 3;
  const KernelMatch m = claim_on("onednn", stats);
  REQUIRE_FALSE(m);
  CHECK_THAT(m.reason(), Catch::Contains("Mean or InvStdDev output is requested"));
  NodeSpec broadcast = layer_norm({2, 3, 5}, 1, false);
  broadcast.inputs[1] = random_tensor({5}, 10);
  CHECK_THAT(claim_on("onednn", broadcast).reason(), Catch::Contains("Scale [5] broadcasts over the normalized dims"));
  NodeSpec stash = layer_norm({2, 3, 5}, -1, true);
  stash.attrs.set("stash_type", Attribute{int64_t{0}});
  CHECK_THAT(claim_on("onednn", stash).reason(), Catch::Contains("stash_type 0 is not supported"));
}

}  // namespace nxrt::test
