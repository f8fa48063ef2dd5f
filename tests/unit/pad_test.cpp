// Pad in every mode (constant, edge, reflect, wrap), negative pads, each opset's way of
// passing pads and value, the axes input, and decline texts.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor floats_of(Shape shape, std::vector<float> v) { return Tensor::from_vector<float>(std::move(shape), v); }

Tensor pad(int64_t opset, const Tensor& x, std::vector<int64_t> pads, const char* mode) {
  return run_one({.op_type = "Pad", .opset = opset, .inputs = {x, int64s(std::move(pads))},
                  .attrs = attrs({{"mode", std::string(mode)}})});
}

}  // namespace

TEST_CASE("Pad modes on a vector", "[cpu][indexing]") {
  const Tensor x = floats_of({3}, {1, 2, 3});
  check_equal(pad(13, x, {2, 2}, "constant"), floats_of({7}, {0, 0, 1, 2, 3, 0, 0}));
  check_equal(pad(13, x, {2, 2}, "edge"), floats_of({7}, {1, 1, 1, 2, 3, 3, 3}));
  check_equal(pad(13, x, {2, 2}, "reflect"), floats_of({7}, {3, 2, 1, 2, 3, 2, 1}));
  check_equal(pad(19, x, {2, 2}, "wrap"), floats_of({7}, {2, 3, 1, 2, 3, 1, 2}));
  // Negative pads crop.
  check_equal(pad(11, x, {-1, 1}, "constant"), floats_of({3}, {2, 3, 0}));
}

TEST_CASE("Pad takes value and pads as attributes before opset 11, as inputs after", "[cpu][indexing]") {
  const Tensor x = floats_of({2, 2}, {1, 2, 3, 4});
  const Tensor expected = floats_of({3, 3}, {9, 9, 9, 1, 2, 9, 3, 4, 9});
  check_equal(run_one({.op_type = "Pad", .opset = 1, .inputs = {x},
                       .attrs = attrs({{"paddings", ints{1, 0, 0, 1}}, {"value", 9.0f}})}),
              expected);
  check_equal(run_one({.op_type = "Pad", .opset = 2, .inputs = {x},
                       .attrs = attrs({{"pads", ints{1, 0, 0, 1}}, {"value", 9.0f}})}),
              expected);
  check_equal(run_one({.op_type = "Pad", .opset = 13, .inputs = {x, int64s({1, 0, 0, 1}), floats_of({}, {9})}}), expected);
  // Pad-18's axes input names the padded axes; pads holds their begins, then their ends.
  check_equal(run_one({.op_type = "Pad", .opset = 18, .inputs = {x, int64s({1, 1}), Tensor(), int64s({-1})}}),
              floats_of({2, 4}, {0, 1, 2, 0, 0, 3, 4, 0}));
  // Integer data with an integer constant; 2-D edge padding.
  const Tensor xi = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  check_equal(run_one({.op_type = "Pad", .opset = 11, .inputs = {xi, int64s({0, 1, 1, 0}), Tensor::from_vector<int32_t>({}, {-5})}}),
              Tensor::from_vector<int32_t>({3, 3}, {-5, 1, 2, -5, 3, 4, -5, -5, -5}));
  check_equal(run_one({.op_type = "Pad", .opset = 11, .inputs = {x, int64s({1, 1, 1, 1})}, .attrs = attrs({{"mode", std::string("edge")}})}),
              floats_of({4, 4}, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
}

TEST_CASE("Pad declines unknown modes and reports bad pads", "[cpu][indexing][claim]") {
  const Tensor x = floats_of({3}, {1, 2, 3});
  auto m = claim_on_cpu({.op_type = "Pad", .opset = 18, .inputs = {x, int64s({1, 1})}, .attrs = attrs({{"mode", std::string("wrap")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Pad: mode 'wrap' is not defined for Pad-18; the modes are constant, reflect, edge (wrap from opset 19)");
  m = claim_on_cpu({.op_type = "Pad", .opset = 2, .inputs = {x}, .attrs = attrs({{"pads", ints{1, 1, 1, 1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Pad: pads has 4 entries for an input of rank 1; it needs 2");
  // A value the cpu EP cannot write in the data's type is declined, not padded with zeros.
  const Tensor bf16 = run_one({.op_type = "Cast", .inputs = {x}, .attrs = attrs({{"to", int64_t{16}}})});
  m = claim_on_cpu({.op_type = "Pad", .opset = 2, .inputs = {bf16}, .attrs = attrs({{"pads", ints{1, 1}}, {"value", 0.5f}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Pad: value=0.5 at opset 2 for bfloat16 data; the cpu EP pads that type with zeros only (this form "
                      "of Pad is defined for float16, float and double)");
  CHECK(claim_on_cpu({.op_type = "Pad", .opset = 2, .inputs = {bf16}, .attrs = attrs({{"pads", ints{1, 1}}})}));
  auto r = run_on_cpu({.op_type = "Pad", .opset = 13, .inputs = {x, int64s({1, 1, 1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Pad: pads has 3 entries for 1 axes of an input of rank 1");
  r = run_on_cpu({.op_type = "Pad", .opset = 13, .inputs = {x, int64s({-2, -2})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Pad: pads -2 and -2 on axis 0 of size 3 leave a negative size");
}
