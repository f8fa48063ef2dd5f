// Concat and Split over axes, opset modes, dtypes, views and error texts.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor floats_of(Shape shape, std::vector<float> v) { return Tensor::from_vector<float>(std::move(shape), v); }

std::vector<Tensor> run_ok(const NodeSpec& spec) {
  auto out = run_on_cpu(spec);
  INFO((out ? std::string() : out.error().render()));
  REQUIRE(out);
  return *out;
}

}  // namespace

TEST_CASE("Concat joins along an axis, negative from opset 11", "[cpu][concat]") {
  const Tensor a = floats_of({2, 2}, {1, 2, 3, 4});
  const Tensor b = floats_of({2, 3}, {5, 6, 7, 8, 9, 10});
  const Tensor ab = floats_of({2, 5}, {1, 2, 5, 6, 7, 3, 4, 8, 9, 10});
  auto out = run_ok({.op_type = "Concat", .opset = 4, .inputs = {a, b}, .attrs = attrs({{"axis", int64_t{1}}})});
  CHECK(compare_tensors(out[0], ab).empty());
  out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {a, b}, .attrs = attrs({{"axis", int64_t{-1}}})});
  CHECK(compare_tensors(out[0], ab).empty());
  out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {a, a, a}, .attrs = attrs({{"axis", int64_t{0}}})});
  CHECK(compare_tensors(out[0], floats_of({6, 2}, {1, 2, 3, 4, 1, 2, 3, 4, 1, 2, 3, 4})).empty());

  SECTION("empty inputs add nothing; a lone non-empty input is returned as is") {
    const Tensor empty = floats_of({2, 0}, {});
    out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {empty, a, empty}, .attrs = attrs({{"axis", int64_t{1}}})});
    CHECK(compare_tensors(out[0], a).empty());
    CHECK(out[0].storage() == a.storage());
    out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {empty, empty}, .attrs = attrs({{"axis", int64_t{1}}})});
    CHECK(out[0].shape() == Shape{2, 0});
  }
  SECTION("int64 shapes and strings") {
    out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {int64s({1, 2}), int64s({3})}, .attrs = attrs({{"axis", int64_t{0}}})});
    CHECK(compare_tensors(out[0], int64s({1, 2, 3})).empty());
    // Longer than the small-string buffer, so a byte copy would share heap pointers.
    const std::string long_text(40, 'q');
    Tensor s = Tensor::empty(DType::kString, {1, 2});
    s.mut_as<std::string>()[0] = std::string(1, 'x');
    s.mut_as<std::string>()[1] = long_text;
    out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {s, s}, .attrs = attrs({{"axis", int64_t{0}}})});
    REQUIRE(out[0].shape() == Shape{2, 2});
    CHECK(out[0].data_as<std::string>()[3] == long_text);
    CHECK(out[0].data_as<std::string>()[2] == "x");
  }
  SECTION("a large concat runs in parallel chunks") {
    std::vector<float> big(64 * 300), other(64 * 100);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
    for (std::size_t i = 0; i < other.size(); ++i) other[i] = -static_cast<float>(i);
    out = run_ok({.op_type = "Concat", .opset = 13, .inputs = {floats_of({64, 300}, big), floats_of({64, 100}, other)},
                  .attrs = attrs({{"axis", int64_t{1}}}), .threads = 4});
    const float* y = out[0].data_as<float>();
    bool same = true;
    for (int r = 0; r < 64; ++r)
      for (int c = 0; c < 400; ++c)
        same = same && y[r * 400 + c] == (c < 300 ? big[static_cast<std::size_t>(r * 300 + c)] : other[static_cast<std::size_t>(r * 100 + c - 300)]);
    CHECK(same);
  }
}

TEST_CASE("Concat declines bad axes and mismatched shapes", "[cpu][concat][claim]") {
  const Tensor a = floats_of({2, 2}, {1, 2, 3, 4});
  // Negative axes count from the back at every opset, as ONNX Runtime accepts them.
  CHECK(claim_on_cpu({.op_type = "Concat", .opset = 10, .inputs = {a, a}, .attrs = attrs({{"axis", int64_t{-1}}})}));
  auto m = claim_on_cpu({.op_type = "Concat", .opset = 10, .inputs = {a, a}, .attrs = attrs({{"axis", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Concat: axis 2 is out of range for an input of rank 2; valid axes are [-2, 1]");
  m = claim_on_cpu({.op_type = "Concat", .opset = 13, .inputs = {a, floats_of({3, 1}, {1, 2, 3})}, .attrs = attrs({{"axis", int64_t{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Concat: input 1 has shape [3,1], which does not match input 0's shape [2,2] outside axis 1; check the shapes of the inputs");
  m = claim_on_cpu({.op_type = "Concat", .opset = 13, .inputs = {a, a}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Concat: the axis attribute (int) is missing; Concat-13 requires it");
}

TEST_CASE("Split by attribute, input, equal parts and num_outputs", "[cpu][split]") {
  const Tensor x = floats_of({2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  SECTION("split attribute (opset 2-12), negative axis from 11") {
    auto out = run_ok({.op_type = "Split", .opset = 2, .inputs = {x}, .attrs = attrs({{"axis", int64_t{1}}, {"split", ints{1, 5}}}), .outputs = 2});
    CHECK(compare_tensors(out[0], floats_of({2, 1}, {0, 6})).empty());
    CHECK(compare_tensors(out[1], floats_of({2, 5}, {1, 2, 3, 4, 5, 7, 8, 9, 10, 11})).empty());
    out = run_ok({.op_type = "Split", .opset = 11, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-1}}}), .outputs = 3});
    CHECK(compare_tensors(out[2], floats_of({2, 2}, {4, 5, 10, 11})).empty());
  }
  SECTION("split input (opset 13)") {
    auto out = run_ok({.op_type = "Split", .opset = 13, .inputs = {x, int64s({4, 2})}, .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
    CHECK(compare_tensors(out[0], floats_of({2, 4}, {0, 1, 2, 3, 6, 7, 8, 9})).empty());
    CHECK(compare_tensors(out[1], floats_of({2, 2}, {4, 5, 10, 11})).empty());
  }
  SECTION("num_outputs (opset 18) makes a smaller last chunk") {
    const Tensor v = Tensor::from_vector<int32_t>({7}, {0, 1, 2, 3, 4, 5, 6});
    auto out = run_ok({.op_type = "Split", .opset = 18, .inputs = {v}, .attrs = attrs({{"num_outputs", int64_t{3}}}), .outputs = 3});
    CHECK(compare_tensors(out[0], Tensor::from_vector<int32_t>({3}, {0, 1, 2})).empty());
    CHECK(compare_tensors(out[1], Tensor::from_vector<int32_t>({3}, {3, 4, 5})).empty());
    CHECK(compare_tensors(out[2], Tensor::from_vector<int32_t>({1}, {6})).empty());
  }
  SECTION("pieces along the outermost axis are views of the input") {
    auto out = run_ok({.op_type = "Split", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{0}}}), .outputs = 2});
    CHECK(out[0].storage() == x.storage());
    CHECK(out[1].storage() == x.storage());
    CHECK(compare_tensors(out[1], floats_of({1, 6}, {6, 7, 8, 9, 10, 11})).empty());
  }
  SECTION("strings") {
    Tensor s = Tensor::empty(DType::kString, {2, 2});
    for (int i = 0; i < 4; ++i) s.mut_as<std::string>()[i] = std::string(20, static_cast<char>('a' + i));
    auto out = run_ok({.op_type = "Split", .opset = 13, .inputs = {s}, .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
    CHECK(out[1].data_as<std::string>()[1] == std::string(20, 'd'));
  }
}

TEST_CASE("Split rejects sizes that do not fit, at claim and at run time", "[cpu][split][claim]") {
  const Tensor x = floats_of({2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  auto m = claim_on_cpu({.op_type = "Split", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Split: an axis of size 5 cannot be split evenly into 2 outputs; give the split sizes (or num_outputs from opset 18 on)");
  m = claim_on_cpu({.op_type = "Split", .opset = 18, .inputs = {x}, .attrs = attrs({{"num_outputs", int64_t{3}}}), .outputs = 2});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Split: num_outputs=3 but the node has 2 outputs; they must agree");
  auto r = run_on_cpu({.op_type = "Split", .opset = 13, .inputs = {x, int64s({2, 2})}, .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "Split: split [2,2] does not divide an axis of size 5");
  CHECK(r.error().why == "the sizes must be >= 0 and add up to 5 (they add up to 4)");
}

TEST_CASE("Concat-1 and Split-1 take their legacy defaults and inputs", "[cpu][concat][split]") {
  const Tensor a = floats_of({2, 1}, {1, 2});
  const Tensor b = floats_of({2, 2}, {3, 4, 5, 6});
  // Concat-1's axis defaults to 1.
  auto out = run_ok({.op_type = "Concat", .opset = 1, .inputs = {a, b}});
  CHECK(compare_tensors(out[0], floats_of({2, 3}, {1, 3, 4, 2, 5, 6})).empty());
  // Split-1 takes the sizes as input 1.
  const Tensor x = floats_of({2, 3}, {0, 1, 2, 3, 4, 5});
  out = run_ok({.op_type = "Split", .opset = 1, .inputs = {x, int64s({1, 2})}, .attrs = attrs({{"axis", int64_t{1}}}), .outputs = 2});
  CHECK(compare_tensors(out[0], floats_of({2, 1}, {0, 3})).empty());
  CHECK(compare_tensors(out[1], floats_of({2, 2}, {1, 2, 4, 5})).empty());
  // pytorch's GLU exports Split on axis -1 at opset 6: accepted like ONNX Runtime does.
  out = run_ok({.op_type = "Split", .opset = 6, .inputs = {floats_of({1, 4}, {1, 2, 3, 4})}, .attrs = attrs({{"axis", int64_t{-1}}}), .outputs = 2});
  CHECK(compare_tensors(out[1], floats_of({1, 2}, {3, 4})).empty());
  auto m = claim_on_cpu({.op_type = "Split", .opset = 6, .inputs = {x, int64s({1, 2})}, .outputs = 2});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Split: input 1 (split) is not defined for Split-6; it gives the sizes as an attribute");
}
