// The oneDNN EP's Concat against the cpu EP.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Inputs of `base` shape whose size along `axis` is 1, 2, 3, ...
std::vector<Tensor> parts(const Shape& base, int64_t axis, std::size_t count) {
  std::vector<Tensor> out;
  const auto a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<int64_t>(base.size()) : axis);
  for (std::size_t i = 0; i < count; ++i) {
    Shape s = base;
    s[a] = static_cast<int64_t>(i) + 1;
    out.push_back(random_tensor(s, static_cast<unsigned>(i) + 1));
  }
  return out;
}

NodeSpec concat(std::vector<Tensor> inputs, std::optional<int64_t> axis, int64_t opset = 13) {
  return {.op_type = "Concat", .opset = opset, .inputs = std::move(inputs),
          .attrs = axis ? attrs({{"axis", *axis}}) : AttributeMap{}};
}

std::string decline_reason(const NodeSpec& spec) {
  const KernelMatch m = claim_on("onednn", spec);
  REQUIRE_FALSE(m.is_supported());
  return m.reason();
}

}  // namespace

TEST_CASE("onednn Concat matches the cpu EP on every axis, 1-D to 6-D", "[onednn]") {
  const Shape shapes[] = {{4}, {3, 4}, {2, 3, 4}, {2, 3, 4, 5}, {2, 1, 3, 2, 2}, {1, 2, 2, 1, 2, 3}};
  for (const Shape& s : shapes) {
    const auto rank = static_cast<int64_t>(s.size());
    for (int64_t axis = -rank; axis < rank; ++axis) {
      INFO("shape " << shape_to_string(s) << " axis " << axis);
      check_matches_cpu("onednn", concat(parts(s, axis, 3), axis));
    }
  }
}

TEST_CASE("onednn Concat matches the cpu EP at every opset, with one input and constants", "[onednn]") {
  const std::vector<Tensor> two = parts({2, 3, 4}, 1, 2);
  check_matches_cpu("onednn", concat(two, std::nullopt, 1));  // Concat-1's axis defaults to 1
  check_matches_cpu("onednn", concat(parts({2, 3, 4}, 0, 2), 0, 1));
  check_matches_cpu("onednn", concat(two, 1, 4));
  check_matches_cpu("onednn", concat(two, -2, 11));
  check_matches_cpu("onednn", concat(two, 1, 13));
  check_matches_cpu("onednn", concat({random_tensor({2, 5}, 9)}, 0));
  NodeSpec with_constant = concat(parts({3, 2, 2}, 2, 3), 2);
  with_constant.constant = {false, true, false};
  check_matches_cpu("onednn", with_constant);
  const Tensor same = random_tensor({2, 3}, 4);
  check_matches_cpu("onednn", concat({same, same, same}, 0));
}

TEST_CASE("onednn Concat declines what it cannot run", "[onednn]") {
  CHECK_THAT(decline_reason(concat({random_tensor({2, 0}, 1), random_tensor({2, 3}, 2)}, 1)),
             Catch::Contains("Concat: input 0 is empty [2,0]; the onednn EP needs non-empty tensors"));
  CHECK_THAT(decline_reason(concat(parts({1, 1, 1, 1, 1, 1, 2}, 0, 2), 0)),
             Catch::Contains("Concat: input 0 has rank 7; the onednn EP supports ranks 1 to 6"));
  CHECK(decline_reason(concat(parts({2, 3}, 0, 2), std::nullopt)) ==
        "Concat: the axis attribute (int) is missing; Concat-13 requires it");
  CHECK(decline_reason(concat(parts({2, 3}, 0, 2), 2)) ==
        "Concat: axis 2 is out of range for inputs of rank 2; valid axes are [-2, 1]");
  CHECK_THAT(decline_reason(concat({random_tensor({2, 3}, 1), random_tensor({3, 3}, 2)}, 1)),
             Catch::Contains("Concat: input 1 has shape [3,3], which does not match input 0's shape [2,3]"));
  CHECK_THAT(decline_reason(concat({Tensor::from_vector<int64_t>({2}, {1, 2}), Tensor::from_vector<int64_t>({1}, {3})},
                                   0)),
             Catch::Contains("Concat: input 0 is int64; the onednn EP computes in float32 only"));
}
