// Reshape, Flatten, Squeeze, Unsqueeze, Identity (views of their input) and Shape.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// The output is the input's storage under another shape.
void require_view_of(const Tensor& out, const Tensor& in, const Shape& shape) {
  CHECK(out.shape() == shape);
  CHECK(out.storage() == in.storage());
  CHECK(out.data_as<char>() == in.data_as<char>());
}

}  // namespace

TEST_CASE("Reshape is a view and applies the 0 and -1 rules", "[cpu][shape]") {
  const Tensor x = iota_float({2, 3, 4});
  require_view_of(run_one({.op_type = "Reshape", .opset = 13, .inputs = {x, int64s({4, -1})}}), x, {4, 6});
  require_view_of(run_one({.op_type = "Reshape", .opset = 13, .inputs = {x, int64s({0, -1})}}), x, {2, 12});
  require_view_of(run_one({.op_type = "Reshape", .opset = 14, .inputs = {x, int64s({0, 0, 2, 2})}}), x, {2, 3, 2, 2});
  const Tensor y = run_one({.op_type = "Reshape", .opset = 5, .inputs = {x, int64s({-1})}});
  CHECK(compare_tensors(y, iota_float({24})).empty());

  SECTION("allowzero=1 keeps a 0 as a size") {
    const Tensor empty = Tensor::from_vector<float>({0, 3}, {});
    const Tensor z = run_one({.op_type = "Reshape", .opset = 14, .inputs = {empty, int64s({3, 0})},
                              .attrs = attrs({{"allowzero", int64_t{1}}})});
    CHECK(z.shape() == Shape{3, 0});
    // Before opset 14 the attribute does not exist: the 0 copies the input's dimension.
    const Tensor w = run_one({.op_type = "Reshape", .opset = 13, .inputs = {x, int64s({0, 12})},
                              .attrs = attrs({{"allowzero", int64_t{1}}})});
    CHECK(w.shape() == Shape{2, 12});
  }
  SECTION("strings and bools are reshaped too") {
    Tensor s = Tensor::empty(DType::kString, {2, 2});
    for (int i = 0; i < 4; ++i) s.mut_as<std::string>()[i] = std::string(static_cast<std::size_t>(i + 1), 'a');
    const Tensor r = run_one({.op_type = "Reshape", .opset = 14, .inputs = {s, int64s({4})}});
    require_view_of(r, s, {4});
    CHECK(r.data_as<std::string>()[3] == "aaaa");
    const std::byte bools[] = {std::byte{1}, std::byte{0}};
    const Tensor b = Tensor::from_bytes(DType::kBool, {2}, bools);
    require_view_of(run_one({.op_type = "Reshape", .opset = 14, .inputs = {b, int64s({1, 2})}}), b, {1, 2});
  }
}

TEST_CASE("Reshape rejects element-count changes, at claim and at run time", "[cpu][shape][claim]") {
  const Tensor x = iota_float({2, 3});
  auto m = claim_on_cpu({.op_type = "Reshape", .opset = 14, .inputs = {x, int64s({-1, -1})}, .constant = {false, true}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Reshape: shape [-1,-1] has 2 dimensions of -1; give the actual size for all but one -1");
  m = claim_on_cpu({.op_type = "Reshape", .opset = 14, .inputs = {x, int64s({4, 2})}, .constant = {false, true}});
  REQUIRE_FALSE(m);
  CHECK(m.reason().starts_with("Reshape: cannot reshape a tensor of shape [2,3] (6 elements) to [4,2]"));

  auto r = run_on_cpu({.op_type = "Reshape", .opset = 14, .inputs = {x, int64s({4, -1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "Reshape: cannot reshape a tensor of shape [2,3] (6 elements) to [4,-1]");
  CHECK(r.error().why == "the other dimensions multiply to 4, which does not divide 6");
  r = run_on_cpu({.op_type = "Reshape", .opset = 14, .inputs = {x, int64s({0, 0, 0})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Reshape: shape [0,0,0] copies dimension 2 of the input, whose shape [2,3] has rank 2");
}

TEST_CASE("Flatten makes a matrix around axis, negative from opset 11", "[cpu][shape]") {
  const Tensor x = iota_float({2, 3, 4});
  require_view_of(run_one({.op_type = "Flatten", .opset = 9, .inputs = {x}}), x, {2, 12});
  require_view_of(run_one({.op_type = "Flatten", .opset = 1, .inputs = {x}, .attrs = attrs({{"axis", int64_t{0}}})}), x, {1, 24});
  require_view_of(run_one({.op_type = "Flatten", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{3}}})}), x, {24, 1});
  require_view_of(run_one({.op_type = "Flatten", .opset = 11, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-1}}})}), x, {6, 4});

  auto m = claim_on_cpu({.op_type = "Flatten", .opset = 10, .inputs = {x}, .attrs = attrs({{"axis", int64_t{-1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Flatten: axis -1 is negative; Flatten accepts negative axes from opset 11 on and this node has opset 10");
  m = claim_on_cpu({.op_type = "Flatten", .opset = 13, .inputs = {x}, .attrs = attrs({{"axis", int64_t{4}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Flatten: axis 4 is out of range for an input of rank 3; valid axes are [-3, 3]");
}

TEST_CASE("Squeeze drops size-1 axes given by attribute or input", "[cpu][shape]") {
  const Tensor x = iota_float({1, 3, 1, 2});
  require_view_of(run_one({.op_type = "Squeeze", .opset = 13, .inputs = {x}}), x, {3, 2});
  require_view_of(run_one({.op_type = "Squeeze", .opset = 1, .inputs = {x}, .attrs = attrs({{"axes", ints{2}}})}), x, {1, 3, 2});
  require_view_of(run_one({.op_type = "Squeeze", .opset = 11, .inputs = {x}, .attrs = attrs({{"axes", ints{-2, 0}}})}), x, {3, 2});
  require_view_of(run_one({.op_type = "Squeeze", .opset = 13, .inputs = {x, int64s({0, -2})}}), x, {3, 2});

  auto m = claim_on_cpu({.op_type = "Squeeze", .opset = 10, .inputs = {x}, .attrs = attrs({{"axes", ints{-2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Squeeze: axes [-2] has a negative axis; Squeeze accepts negative axes from opset 11 on and this node has opset 10");
  m = claim_on_cpu({.op_type = "Squeeze", .opset = 11, .inputs = {x}, .attrs = attrs({{"axes", ints{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Squeeze: axis 1 has size 3 in input shape [1,3,1,2]; remove the axis from axes");
  // An axes input computed at run time is checked when the kernel runs.
  auto r = run_on_cpu({.op_type = "Squeeze", .opset = 13, .inputs = {x, int64s({4})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Squeeze: axis 4 is out of range for rank 4");
  CHECK(r.error().why == "valid axes are [-4, 3]");
}

TEST_CASE("Unsqueeze inserts axes counted in the output's rank", "[cpu][shape]") {
  const Tensor x = iota_float({3, 2});
  require_view_of(run_one({.op_type = "Unsqueeze", .opset = 1, .inputs = {x}, .attrs = attrs({{"axes", ints{0, 3}}})}), x, {1, 3, 2, 1});
  require_view_of(run_one({.op_type = "Unsqueeze", .opset = 11, .inputs = {x}, .attrs = attrs({{"axes", ints{-1, 1}}})}), x, {3, 1, 2, 1});
  require_view_of(run_one({.op_type = "Unsqueeze", .opset = 13, .inputs = {x, int64s({2})}}), x, {3, 2, 1});
  const Tensor scalar = Tensor::from_vector<int64_t>({}, {5});
  require_view_of(run_one({.op_type = "Unsqueeze", .opset = 13, .inputs = {scalar, int64s({0})}}), scalar, {1});

  auto m = claim_on_cpu({.op_type = "Unsqueeze", .opset = 13, .inputs = {x, int64s({1, -3})}, .constant = {false, true}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Unsqueeze: axis 1 appears twice in axes [1,-3]; remove the repeated axis");
  m = claim_on_cpu({.op_type = "Unsqueeze", .opset = 11, .inputs = {x}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Unsqueeze: the axes attribute (ints) is missing; Unsqueeze-11 requires it");
}

TEST_CASE("Identity returns its input", "[cpu][shape]") {
  const Tensor x = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  require_view_of(run_one({.op_type = "Identity", .opset = 1, .inputs = {x}}), x, {2, 2});
  require_view_of(run_one({.op_type = "Identity", .opset = 16, .inputs = {x}}), x, {2, 2});
}

TEST_CASE("Shape returns the dims, sliced by start and end from opset 15", "[cpu][shape]") {
  const Tensor x = iota_float({2, 3, 4, 5});
  CHECK(compare_tensors(run_one({.op_type = "Shape", .opset = 13, .inputs = {x}}), int64s({2, 3, 4, 5})).empty());
  // Before opset 15 start/end do not exist and are ignored.
  CHECK(compare_tensors(run_one({.op_type = "Shape", .opset = 14, .inputs = {x}, .attrs = attrs({{"start", int64_t{2}}})}),
                        int64s({2, 3, 4, 5})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{1}}, {"end", int64_t{-1}}})}),
                        int64s({3, 4})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{-10}}, {"end", int64_t{10}}})}),
                        int64s({2, 3, 4, 5})).empty());
  CHECK(run_one({.op_type = "Shape", .opset = 15, .inputs = {x}, .attrs = attrs({{"start", int64_t{3}}, {"end", int64_t{1}}})}).shape() == Shape{0});
  CHECK(compare_tensors(run_one({.op_type = "Shape", .opset = 15, .inputs = {Tensor::from_vector<float>({}, {1})}}),
                        Tensor::from_vector<int64_t>({0}, {})).empty());
}

TEST_CASE("Size counts elements; Reshape-1 takes the shape attribute", "[cpu][shape]") {
  const Tensor size = run_one({.op_type = "Size", .opset = 13, .inputs = {iota_float({2, 3, 4})}});
  CHECK(size.shape().empty());
  CHECK(size.data_as<int64_t>()[0] == 24);
  CHECK(run_one({.op_type = "Size", .opset = 1, .inputs = {Tensor::from_vector<float>({0, 3}, {})}}).data_as<int64_t>()[0] == 0);

  const Tensor x = iota_float({2, 3});
  require_view_of(run_one({.op_type = "Reshape", .opset = 1, .inputs = {x}, .attrs = attrs({{"shape", ints{3, -1}}})}), x, {3, 2});
  auto m = claim_on_cpu({.op_type = "Reshape", .opset = 1, .inputs = {x}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Reshape: the shape attribute (ints) is missing; Reshape-1 requires it");
}
