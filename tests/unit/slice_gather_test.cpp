// Slice (attributes and inputs, negative steps, clamping, views) and Gather (axes, index
// types, negative indices, out-of-range errors).
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// The ONNX reference: every axis walks range(start, end, step) after numpy-style clamping.
std::vector<int64_t> taken_indices(int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  std::vector<int64_t> out;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    for (int64_t i = start; i < end; i += step) out.push_back(i);
  } else {
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    for (int64_t i = start; i > end; i += step) out.push_back(i);
  }
  return out;
}

// Slices a [A,B,C] float tensor by explicit index lists per axis.
Tensor reference_slice3(const Tensor& x, const std::vector<std::vector<int64_t>>& taken) {
  const Shape& s = x.shape();
  std::vector<float> out;
  for (int64_t a : taken[0])
    for (int64_t b : taken[1])
      for (int64_t c : taken[2]) out.push_back(x.data_as<float>()[(a * s[1] + b) * s[2] + c]);
  return Tensor::from_vector<float>({static_cast<int64_t>(taken[0].size()), static_cast<int64_t>(taken[1].size()),
                                     static_cast<int64_t>(taken[2].size())}, out);
}

}  // namespace

TEST_CASE("Slice-10+ follows the ONNX clamping rules for every step sign", "[cpu][slice]") {
  const Tensor x = iota_float({4, 5, 6});
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max(), kMin = std::numeric_limits<int64_t>::min();
  struct Case {
    ints starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{1, 0}, {3, kMax}, {0, 2}, {1, 2}},
      {{-1}, {kMin}, {1}, {-1}},             // reverse a whole axis
      {{10, -2}, {-10, 0}, {2, 0}, {-2, -1}},
      {{-100}, {100}, {-1}, {3}},
      {{2, 1, 1}, {3, 4, 5}, {0, 1, 2}, {1, 1, 1}},
      {{0}, {0}, {1}, {1}},                  // empty
      {{3}, {1}, {2}, {1}},                  // start past end: empty
  };
  for (const Case& c : cases) {
    std::vector<std::vector<int64_t>> taken(3);
    for (std::size_t d = 0; d < 3; ++d) taken[d] = taken_indices(x.shape()[d], 0, kMax, 1);
    for (std::size_t k = 0; k < c.axes.size(); ++k) {
      const auto d = static_cast<std::size_t>(c.axes[k] < 0 ? c.axes[k] + 3 : c.axes[k]);
      taken[d] = taken_indices(x.shape()[d], c.starts[k], c.ends[k], c.steps[k]);
    }
    INFO("starts " << shape_to_string(c.starts) << " ends " << shape_to_string(c.ends) << " steps " << shape_to_string(c.steps));
    const Tensor y = run_one({.op_type = "Slice", .opset = 13,
                              .inputs = {x, int64s(c.starts), int64s(c.ends), int64s(c.axes), int64s(c.steps)}});
    CHECK(compare_tensors(y, reference_slice3(x, taken)).empty());
  }
}

TEST_CASE("Slice takes int32 inputs, optional axes and steps, and attributes before opset 10", "[cpu][slice]") {
  const Tensor x = iota_float({3, 4});
  const Tensor starts = Tensor::from_vector<int32_t>({2}, {1, -3});
  const Tensor ends = Tensor::from_vector<int32_t>({2}, {3, 4});
  const Tensor expected = Tensor::from_vector<float>({2, 3}, {5, 6, 7, 9, 10, 11});
  CHECK(compare_tensors(run_one({.op_type = "Slice", .opset = 10, .inputs = {x, starts, ends}}), expected).empty());
  CHECK(compare_tensors(run_one({.op_type = "Slice", .opset = 1, .inputs = {x},
                                 .attrs = attrs({{"starts", ints{1, -3}}, {"ends", ints{3, 4}}})}), expected).empty());
  CHECK(compare_tensors(run_one({.op_type = "Slice", .opset = 9, .inputs = {x},
                                 .attrs = attrs({{"starts", ints{1}}, {"ends", ints{1000}}, {"axes", ints{1}}})}),
                        Tensor::from_vector<float>({3, 3}, {1, 2, 3, 5, 6, 7, 9, 10, 11})).empty());
}

TEST_CASE("Slice of a contiguous run is a view", "[cpu][slice]") {
  const Tensor x = iota_float({4, 3, 2});
  const Tensor rows = run_one({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({1}), int64s({3})}});
  CHECK(rows.storage() == x.storage());
  CHECK(compare_tensors(rows, Tensor::from_vector<float>({2, 3, 2}, {6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17})).empty());
  const Tensor inner = run_one({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({2, 1}), int64s({3, 3}), int64s({0, 1})}});
  CHECK(inner.storage() == x.storage());
  CHECK(compare_tensors(inner, Tensor::from_vector<float>({1, 2, 2}, {14, 15, 16, 17})).empty());
  const Tensor strided = run_one({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({1}), int64s({2}), int64s({2})}});
  CHECK(strided.storage() != x.storage());
  CHECK(compare_tensors(strided, Tensor::from_vector<float>({4, 3, 1}, {1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23})).empty());
}

TEST_CASE("Slice copies strings and declines zero steps", "[cpu][slice][claim]") {
  Tensor s = Tensor::empty(DType::kString, {4});
  for (int i = 0; i < 4; ++i) s.mut_as<std::string>()[i] = std::to_string(i).insert(0, "word");
  const Tensor r = run_one({.op_type = "Slice", .opset = 13, .inputs = {s, int64s({-1}), int64s({std::numeric_limits<int64_t>::min()}), int64s({0}), int64s({-2})}});
  REQUIRE(r.shape() == Shape{2});
  CHECK(r.data_as<std::string>()[0] == "word3");
  CHECK(r.data_as<std::string>()[1] == "word1");

  const Tensor x = iota_float({3, 4});
  auto m = claim_on_cpu({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({0}), int64s({2}), int64s({1}), int64s({0})},
                         .constant = {false, true, true, true, true}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Slice: step 0 at index 0 (axis 1); fix the steps input");
  auto e = run_on_cpu({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({0}), int64s({2}), int64s({1}), int64s({0})}});
  REQUIRE_FALSE(e);
  CHECK(e.error().what == "Slice: step 0 at index 0 (axis 1)");
  m = claim_on_cpu({.op_type = "Slice", .opset = 13, .inputs = {x, int64s({0}), Tensor::from_vector<int32_t>({1}, {2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Slice: input 2 has type int32 but starts has type int64; starts, ends, axes and steps share one type (int32 or int64)");
}

TEST_CASE("Gather picks slices along an axis with int32 or int64 indices", "[cpu][gather]") {
  const Tensor x = iota_float({3, 4});
  CHECK(compare_tensors(run_one({.op_type = "Gather", .opset = 13, .inputs = {x, int64s({2, 0})}}),
                        Tensor::from_vector<float>({2, 4}, {8, 9, 10, 11, 0, 1, 2, 3})).empty());
  const Tensor idx = Tensor::from_vector<int32_t>({2, 2}, {3, -1, 0, 1});
  CHECK(compare_tensors(run_one({.op_type = "Gather", .opset = 11, .inputs = {x, idx}, .attrs = attrs({{"axis", int64_t{1}}})}),
                        Tensor::from_vector<float>({3, 2, 2}, {3, 3, 0, 1, 7, 7, 4, 5, 11, 11, 8, 9})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Gather", .opset = 13, .inputs = {x, Tensor::from_vector<int64_t>({}, {1})},
                                 .attrs = attrs({{"axis", int64_t{-1}}})}),
                        Tensor::from_vector<float>({3}, {1, 5, 9})).empty());
  // Shape -> Gather on an int64 vector, the common shape-computation pattern.
  CHECK(compare_tensors(run_one({.op_type = "Gather", .opset = 1, .inputs = {int64s({2, 3, 4}), Tensor::from_vector<int64_t>({}, {0})}}),
                        Tensor::from_vector<int64_t>({}, {2})).empty());
  Tensor s = Tensor::empty(DType::kString, {3});
  for (int i = 0; i < 3; ++i) s.mut_as<std::string>()[i] = std::string(30, static_cast<char>('x' + i));
  const Tensor g = run_one({.op_type = "Gather", .opset = 13, .inputs = {s, int64s({2, 2, 0})}});
  CHECK(g.data_as<std::string>()[1] == std::string(30, 'z'));
}

TEST_CASE("Gather reports indices out of range, negative indices before opset 11", "[cpu][gather]") {
  const Tensor x = iota_float({3, 4});
  auto r = run_on_cpu({.op_type = "Gather", .opset = 13, .inputs = {x, int64s({0, 3})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "Gather: index 3 at position 1 of the indices is out of range for axis 0 of size 3");
  CHECK(r.error().why == "Gather accepts indices in [-3, 2]");
  r = run_on_cpu({.op_type = "Gather", .opset = 10, .inputs = {x, int64s({-1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Gather: index -1 at position 0 of the indices is out of range for axis 0 of size 3");
  CHECK(r.error().why == "Gather before opset 11 accepts indices in [0, 2]");

  auto m = claim_on_cpu({.op_type = "Gather", .opset = 13, .inputs = {x, Tensor::from_vector<float>({1}, {0})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gather: input 1 has type float; the cpu EP supports int32, int64 for Gather");
  // A negative axis counts from the back at every opset, as ONNX Runtime accepts it.
  const Tensor last = run_one({.op_type = "Gather", .opset = 10, .inputs = {x, int64s({3, 0})}, .attrs = attrs({{"axis", int64_t{-1}}})});
  CHECK(compare_tensors(last, Tensor::from_vector<float>({3, 2}, {3, 0, 7, 4, 11, 8})).empty());
  m = claim_on_cpu({.op_type = "Gather", .opset = 10, .inputs = {x, int64s({0})}, .attrs = attrs({{"axis", int64_t{-3}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Gather: axis -3 is out of range for an input of rank 2; valid axes are [-2, 1]");
}
