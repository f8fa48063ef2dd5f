// The Reduce family: hand-computed values for each op and attribute mode, and ReduceSum,
// ReduceMean, ReduceMax against a reference that visits every input coordinate.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Sums (or averages) x over `axes` (all when empty) by mapping each input coordinate to its
// output element.
template <class T>
Tensor reference(const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool mean) {
  const Shape& s = x.shape();
  std::vector<bool> reduced(s.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<std::size_t>(a < 0 ? a + static_cast<int64_t>(s.size()) : a)] = true;
  Shape out, kept;
  int64_t count = 1;
  for (std::size_t d = 0; d < s.size(); ++d) {
    if (reduced[d]) count *= s[d];
    else kept.push_back(s[d]);
    if (!reduced[d]) out.push_back(s[d]);
    else if (keepdims) out.push_back(1);
  }
  std::vector<double> acc(static_cast<std::size_t>(shape_numel(kept)), 0.0);
  std::vector<int64_t> coord(s.size(), 0);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i, o = 0;
    for (std::size_t d = s.size(); d-- > 0;) {
      coord[d] = rest % s[d];
      rest /= s[d];
    }
    for (std::size_t d = 0; d < s.size(); ++d)
      if (!reduced[d]) o = o * s[d] + coord[d];
    acc[static_cast<std::size_t>(o)] += static_cast<double>(x.data_as<T>()[i]);
  }
  std::vector<T> values;
  for (double a : acc) values.push_back(static_cast<T>(mean ? a / static_cast<double>(count) : a));
  return Tensor::from_vector<T>(out, values);
}

Tensor axes_input(std::vector<int64_t> axes) {
  return Tensor::from_vector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
}

}  // namespace

TEST_CASE("ReduceSum-13 takes axes as an input", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({2, 3, 4}, random_floats(24, 1));
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({1})}}),
                        reference<float>(x, {1}, true, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({-1, 0})},
                                 .constant = {false, true}, .attrs = attrs({{"keepdims", int64_t{0}}})}),
                        reference<float>(x, {2, 0}, false, false)).empty());
  // No axes: everything, or nothing with noop_with_empty_axes.
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x}}),
                        reference<float>(x, {}, true, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({})}}),
                        reference<float>(x, {}, true, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({})},
                                 .attrs = attrs({{"noop_with_empty_axes", int64_t{1}}})}),
                        x).empty());
}

TEST_CASE("ReduceSum-11 and ReduceMean-17 take axes as an attribute", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({3, 1, 4, 5}, random_floats(60, 2));
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 11, .inputs = {x}, .attrs = attrs({{"axes", ints{-2}}})}),
                        reference<float>(x, {2}, true, false)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 17, .inputs = {x},
                                 .attrs = attrs({{"axes", ints{0, 3}}, {"keepdims", int64_t{0}}})}),
                        reference<float>(x, {0, 3}, false, true)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 1, .inputs = {x}}),
                        reference<float>(x, {}, true, true)).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{1}}})}),
                        reference<float>(x, {1}, true, true)).empty());
}

TEST_CASE("ReduceMean-18 takes axes as an input", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<double>({2, 3, 4}, std::vector<double>(24, 1.5));
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 18, .inputs = {x, axes_input({1, 2})}}),
                        Tensor::from_vector<double>({2, 1, 1}, {1.5, 1.5})).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 18, .inputs = {x},
                                 .attrs = attrs({{"noop_with_empty_axes", int64_t{1}}})}),
                        x).empty());
}

TEST_CASE("integer reductions and means truncate", "[cpu][reduce]") {
  const Tensor i = Tensor::from_vector<int32_t>({2, 3}, {1, 2, 4, -1, -2, -4});
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {i, axes_input({1})}}),
                        Tensor::from_vector<int32_t>({2, 1}, {7, -7})).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 13, .inputs = {i}, .attrs = attrs({{"axes", ints{1}}})}),
                        Tensor::from_vector<int32_t>({2, 1}, {2, -2})).empty());
  const Tensor l = Tensor::from_vector<int64_t>({2, 2}, {4000000000LL, 4000000000LL, 1, 2});
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {l, axes_input({0})},
                                 .attrs = attrs({{"keepdims", int64_t{0}}})}),
                        Tensor::from_vector<int64_t>({2}, {4000000001LL, 4000000002LL})).empty());
}

TEST_CASE("reductions over every axis pattern match the reference, serial and parallel", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({3, 50, 7, 20}, random_floats(3 * 50 * 7 * 20, 3));
  const std::vector<std::vector<int64_t>> patterns = {{0}, {1}, {2}, {3}, {0, 1}, {1, 3}, {0, 2}, {0, 3}, {1, 2, 3}, {}};
  for (const auto& axes : patterns)
    for (int threads : {1, 4}) {
      INFO("axes " << axes.size() << " threads " << threads);
      CHECK(compare_tensors(run_one({.op_type = "ReduceMean", .opset = 18, .inputs = {x, axes_input(axes)},
                                     .threads = threads}),
                            reference<float>(x, axes, true, true), 1e-5, 1e-6).empty());
    }
  // One long row split into parts, and a tall column reduction.
  const Tensor row = Tensor::from_vector<float>({1, 300001}, random_floats(300001, 4));
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {row, axes_input({1})}, .threads = 4}),
                        reference<float>(row, {1}, true, false), 1e-5, 1e-3).empty());
  const Tensor tall = Tensor::from_vector<float>({5000, 3}, random_floats(15000, 5));
  CHECK(compare_tensors(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {tall, axes_input({0})}, .threads = 4}),
                        reference<float>(tall, {0}, false, false).reshaped({1, 3}), 1e-5, 1e-4).empty());
}

TEST_CASE("reductions of empty dims give 0 sums and NaN means", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({0, 3}, {});
  const Tensor sum = run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({0})}});
  CHECK(compare_tensors(sum, Tensor::from_vector<float>({1, 3}, {0, 0, 0})).empty());
  const Tensor mean = run_one({.op_type = "ReduceMean", .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{0}}})});
  CHECK(std::isnan(mean.data_as<float>()[0]));
  CHECK(run_one({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({1})}}).shape() == Shape{0, 1});
}

TEST_CASE("reductions decline bad axes and unsupported types", "[cpu][reduce][claim]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, random_floats(6, 1));
  auto range = claim_on_cpu({.op_type = "ReduceSum", .opset = 13, .inputs = {x, axes_input({2})}, .constant = {false, true}});
  REQUIRE_FALSE(range);
  CHECK(range.reason() == "ReduceSum: axis 2 is out of range for rank 2; fix the axes of the node");
  auto negative = claim_on_cpu({.op_type = "ReduceMean", .opset = 10, .inputs = {x}, .attrs = attrs({{"axes", ints{-1}}})});
  REQUIRE_FALSE(negative);
  CHECK(negative.reason() == "ReduceMean: axis -1 is negative; use axis 1 or a model with opset 11 or later");
  auto type = claim_on_cpu({.op_type = "ReduceMax", .inputs = {Tensor::from_vector<uint16_t>({1}, {1})}});
  REQUIRE_FALSE(type);
  CHECK(type.reason() == "ReduceMax: input 0 has type uint16; the cpu EP supports float, double, float16, int32, int64, "
                         "int8, uint8 for ReduceMax");
  auto attr = claim_on_cpu({.op_type = "ReduceSum", .opset = 13, .inputs = {x}, .attrs = attrs({{"axes", ints{0}}})});
  REQUIRE_FALSE(attr);
  CHECK(attr.reason() == "ReduceSum: opset 13 takes axes as input 1, but the node has an axes attribute; re-export the "
                         "model for this opset");
}

namespace {

// The maximum of x over `axes`, like reference() above.
Tensor reference_max(const Tensor& x, const std::vector<int64_t>& axes) {
  const Shape& s = x.shape();
  std::vector<bool> reduced(s.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<std::size_t>(a)] = true;
  Shape out;
  for (std::size_t d = 0; d < s.size(); ++d) out.push_back(reduced[d] ? 1 : s[d]);
  std::vector<float> best(static_cast<std::size_t>(shape_numel(out)), -INFINITY);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t rest = i, o = 0, scale = 1;
    for (std::size_t d = s.size(); d-- > 0;) {
      const int64_t c = rest % s[d];
      rest /= s[d];
      if (!reduced[d]) o += c * scale;
      scale *= out[d];
    }
    best[static_cast<std::size_t>(o)] = std::max(best[static_cast<std::size_t>(o)], x.data_as<float>()[i]);
  }
  return Tensor::from_vector<float>(out, best);
}

Tensor reduce_op(const std::string& op, int64_t opset, const Tensor& x, AttributeMap a) {
  return run_one({.op_type = op, .opset = opset, .inputs = {x}, .attrs = std::move(a)});
}

}  // namespace

TEST_CASE("each reduction computes its own formula", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, {1, -2, 3, 4, 5, -6});
  CHECK(compare_tensors(reduce_op("ReduceMax", 13, x, attrs({{"axes", ints{1}}})),
                        Tensor::from_vector<float>({2, 1}, {3, 5})).empty());
  CHECK(compare_tensors(reduce_op("ReduceMin", 13, x, attrs({{"axes", ints{-1}}, {"keepdims", int64_t{0}}})),
                        Tensor::from_vector<float>({2}, {-2, -6})).empty());
  CHECK(compare_tensors(reduce_op("ReduceProd", 1, x, attrs({{"axes", ints{0}}})),
                        Tensor::from_vector<float>({1, 3}, {4, -10, -18})).empty());
  CHECK(compare_tensors(reduce_op("ReduceSumSquare", 11, x, {}), Tensor::from_vector<float>({1, 1}, {91})).empty());
  CHECK(compare_tensors(reduce_op("ReduceL1", 13, x, attrs({{"axes", ints{1}}})),
                        Tensor::from_vector<float>({2, 1}, {6, 15})).empty());
  CHECK(compare_tensors(reduce_op("ReduceL2", 13, x, attrs({{"axes", ints{1}}})),
                        Tensor::from_vector<float>({2, 1}, {3.7416574f, 8.7749644f})).empty());
  const Tensor pos = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  CHECK(compare_tensors(reduce_op("ReduceLogSum", 13, pos, attrs({{"axes", ints{1}}})),
                        Tensor::from_vector<float>({2, 1}, {std::log(3.0f), std::log(7.0f)})).empty());
  // Stable: exp(1000) overflows, the shifted sum does not; an all -inf row stays -inf.
  const Tensor big = Tensor::from_vector<float>({3, 2}, {1000, 1000, 0, -INFINITY, -INFINITY, -INFINITY});
  const Tensor lse = reduce_op("ReduceLogSumExp", 13, big, attrs({{"axes", ints{1}}, {"keepdims", int64_t{0}}}));
  CHECK(compare_tensors(lse, Tensor::from_vector<float>({3}, {1000.6931472f, 0, -INFINITY})).empty());
}

TEST_CASE("opset 18 reductions take axes as an input", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<int8_t>({2, 2}, {-3, 7, 5, -8});
  CHECK(compare_tensors(run_one({.op_type = "ReduceMax", .opset = 18, .inputs = {x, axes_input({-2})}}),
                        Tensor::from_vector<int8_t>({1, 2}, {5, 7})).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceMin", .opset = 18, .inputs = {x}, .attrs = attrs({{"keepdims", int64_t{0}}})}),
                        Tensor::from_vector<int8_t>({}, {-8})).empty());
  CHECK(compare_tensors(run_one({.op_type = "ReduceL1", .opset = 18, .inputs = {x, axes_input({})},
                                 .attrs = attrs({{"noop_with_empty_axes", int64_t{1}}})}),
                        x).empty());
  const Tensor u = Tensor::from_vector<uint8_t>({3}, {2, 9, 4});
  CHECK(compare_tensors(run_one({.op_type = "ReduceProd", .opset = 18, .inputs = {u, axes_input({0})}}),
                        Tensor::from_vector<uint8_t>({1}, {72})).empty());
  const Tensor d = Tensor::from_vector<double>({2, 2}, {1, 2, 3, 4});
  CHECK(compare_tensors(run_one({.op_type = "ReduceSumSquare", .opset = 18, .inputs = {d, axes_input({0})},
                                 .attrs = attrs({{"keepdims", int64_t{0}}})}),
                        Tensor::from_vector<double>({2}, {10, 20})).empty());
}

TEST_CASE("reductions over an empty set give the identity of the reduction", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({2, 0, 2}, {});
  const auto over = [&](const char* op) {
    return run_one({.op_type = op, .opset = 18, .inputs = {x, axes_input({1})}});
  };
  CHECK(compare_tensors(over("ReduceMax"), Tensor::from_vector<float>({2, 1, 2}, std::vector<float>(4, -INFINITY))).empty());
  CHECK(compare_tensors(over("ReduceMin"), Tensor::from_vector<float>({2, 1, 2}, std::vector<float>(4, INFINITY))).empty());
  CHECK(compare_tensors(over("ReduceProd"), Tensor::from_vector<float>({2, 1, 2}, std::vector<float>(4, 1))).empty());
  CHECK(compare_tensors(over("ReduceL2"), Tensor::from_vector<float>({2, 1, 2}, std::vector<float>(4, 0))).empty());
  CHECK(compare_tensors(over("ReduceLogSumExp"),
                        Tensor::from_vector<float>({2, 1, 2}, std::vector<float>(4, -INFINITY))).empty());
  const Tensor i = Tensor::from_vector<int32_t>({0, 2}, {});
  CHECK(compare_tensors(run_one({.op_type = "ReduceMin", .opset = 13, .inputs = {i}, .attrs = attrs({{"axes", ints{0}}})}),
                        Tensor::from_vector<int32_t>({1, 2}, {INT32_MAX, INT32_MAX})).empty());
}

TEST_CASE("ReduceMax over every axis pattern matches the reference, serial and parallel", "[cpu][reduce]") {
  const Tensor x = Tensor::from_vector<float>({3, 50, 7, 20}, random_floats(3 * 50 * 7 * 20, 7));
  const std::vector<std::vector<int64_t>> patterns = {{0}, {1}, {3}, {0, 2}, {1, 2, 3}, {}};
  for (const auto& axes : patterns)
    for (int threads : {1, 4}) {
      INFO("axes " << axes.size() << " threads " << threads);
      CHECK(compare_tensors(run_one({.op_type = "ReduceMax", .opset = 18, .inputs = {x, axes_input(axes)},
                                     .threads = threads}),
                            reference_max(x, axes)).empty());
    }
  // One long row split into parts combined after.
  const Tensor row = Tensor::from_vector<float>({1, 300001}, random_floats(300001, 8));
  CHECK(compare_tensors(run_one({.op_type = "ReduceMax", .opset = 18, .inputs = {row, axes_input({1})}, .threads = 4}),
                        reference_max(row, {1})).empty());
}
