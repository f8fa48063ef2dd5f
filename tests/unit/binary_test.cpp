// The broadcasting helper and the arithmetic family (Add Sub Mul Div Pow) against reference
// loops over numpy-style indices.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "cpu/common/broadcast.h"
#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// Flat index into `shape` of the output coordinate `coord` (right-aligned, broadcast dims
// read index 0): the definition the helper's merged iteration must agree with.
int64_t broadcast_index(const Shape& shape, const Shape& out, const std::vector<int64_t>& coord) {
  int64_t index = 0;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const std::size_t ax = out.size() - shape.size() + i;
    index = index * shape[i] + (shape[i] == 1 ? 0 : coord[ax]);
  }
  return index;
}

// Reference: out[coord] = fn(a[..], b[..]) by explicit coordinates.
template <class T, class Fn>
Tensor reference_binary(const Tensor& a, const Tensor& b, const Shape& out, Fn fn) {
  std::vector<T> values(static_cast<std::size_t>(shape_numel(out)));
  std::vector<int64_t> coord(out.size(), 0);
  for (std::size_t flat = 0; flat < values.size(); ++flat) {
    int64_t rest = static_cast<int64_t>(flat);
    for (std::size_t ax = out.size(); ax-- > 0;) {
      coord[ax] = rest % out[ax];
      rest /= out[ax];
    }
    values[flat] = fn(a.data_as<T>()[broadcast_index(a.shape(), out, coord)],
                      b.data_as<T>()[broadcast_index(b.shape(), out, coord)]);
  }
  return Tensor::from_vector<T>(out, values);
}

}  // namespace

TEST_CASE("broadcast_shape follows numpy and names the conflicting axis", "[cpu][binary][broadcast]") {
  const Shape a{2, 1, 3}, b{4, 1}, c{5};
  const Shape* ok[] = {&a, &b};
  auto s = cpu::broadcast_shape("Add", ok);
  REQUIRE(s);
  CHECK(*s == Shape{2, 4, 3});

  const Shape* bad[] = {&a, &c};
  auto e = cpu::broadcast_shape("Add", bad);
  REQUIRE_FALSE(e);
  CHECK(e.error().what == "Add: input shapes [2,1,3] and [5] are not broadcastable");
  CHECK(e.error().why ==
        "at output axis 2 input 0 has 3 and input 1 has 5; numpy broadcasting needs equal dims or 1");

  const Shape scalar{}, zero{0, 3}, row{1, 3};
  const Shape* empty[] = {&scalar, &zero, &row};
  auto z = cpu::broadcast_shape("Where", empty);
  REQUIRE(z);
  CHECK(*z == Shape{0, 3});
}

TEST_CASE("Broadcast runs cover every output element with the right input offsets", "[cpu][binary][broadcast]") {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {2, 3, 4}}, {{2, 3, 4}, {}},     {{2, 3, 4}, {3, 1}},  {{5, 1, 4}, {1, 3, 1}},
      {{1, 3, 1, 4}, {2, 1, 5, 1}}, {{7}, {3, 1}}, {{2, 1, 1, 3}, {2, 4, 5, 3}},
  };
  for (const auto& [sa, sb] : cases) {
    auto bc = cpu::Broadcast<2>::make("Add", {&sa, &sb});
    REQUIRE(bc);
    const Shape& out = bc->shape();
    std::vector<int> seen(static_cast<std::size_t>(bc->numel()), 0);
    // Odd chunk bounds exercise runs that start and end inside a row.
    for (int64_t begin = 0; begin < bc->numel(); begin += 7) {
      const int64_t end = std::min(bc->numel(), begin + 7);
      bc->for_each_run(begin, end, [&](int64_t o, const std::array<int64_t, 2>& in,
                                       const std::array<int64_t, 2>& step, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          std::vector<int64_t> coord(out.size());
          int64_t rest = o + i;
          for (std::size_t ax = out.size(); ax-- > 0;) {
            coord[ax] = rest % out[ax];
            rest /= out[ax];
          }
          CHECK(in[0] + i * step[0] == broadcast_index(sa, out, coord));
          CHECK(in[1] + i * step[1] == broadcast_index(sb, out, coord));
          ++seen[static_cast<std::size_t>(o + i)];
        }
      });
    }
    CHECK(std::count(seen.begin(), seen.end(), 1) == bc->numel());
  }
}

TEST_CASE("Add Sub Mul Div broadcast float tensors like numpy", "[cpu][binary]") {
  const Tensor a = Tensor::from_vector<float>({2, 1, 3}, random_floats(6, 1));
  const Tensor b = Tensor::from_vector<float>({4, 1}, random_floats(4, 2, 0.5f, 2));
  const Shape out{2, 4, 3};
  CHECK(compare_tensors(run_one({.op_type = "Add", .inputs = {a, b}}),
                        reference_binary<float>(a, b, out, [](float x, float y) { return x + y; })).empty());
  CHECK(compare_tensors(run_one({.op_type = "Sub", .opset = 13, .inputs = {a, b}}),
                        reference_binary<float>(a, b, out, [](float x, float y) { return x - y; })).empty());
  CHECK(compare_tensors(run_one({.op_type = "Mul", .opset = 7, .inputs = {a, b}}),
                        reference_binary<float>(a, b, out, [](float x, float y) { return x * y; })).empty());
  CHECK(compare_tensors(run_one({.op_type = "Div", .opset = 14, .inputs = {a, b}}),
                        reference_binary<float>(a, b, out, [](float x, float y) { return x / y; })).empty());

  // Scalar operand on either side, and a constant (initializer) operand.
  const Tensor s = Tensor::from_vector<float>({}, {3});
  CHECK(compare_tensors(run_one({.op_type = "Sub", .inputs = {s, a}}),
                        reference_binary<float>(s, a, a.shape(), [](float x, float y) { return x - y; })).empty());
  CHECK(compare_tensors(run_one({.op_type = "Div", .inputs = {a, s}, .constant = {false, true}}),
                        reference_binary<float>(a, s, a.shape(), [](float x, float y) { return x / y; })).empty());
}

TEST_CASE("Add over a large attention-mask-like broadcast runs in parallel", "[cpu][binary]") {
  const Tensor scores = Tensor::from_vector<float>({2, 4, 33, 65}, random_floats(2 * 4 * 33 * 65, 3));
  const Tensor mask = Tensor::from_vector<float>({2, 1, 1, 65}, random_floats(2 * 65, 4));
  const Tensor bias = Tensor::from_vector<float>({4, 1, 1}, random_floats(4, 5));
  for (int threads : {1, 4}) {
    CHECK(compare_tensors(run_one({.op_type = "Add", .inputs = {scores, mask}, .threads = threads}),
                          reference_binary<float>(scores, mask, scores.shape(),
                                                  [](float x, float y) { return x + y; })).empty());
    CHECK(compare_tensors(run_one({.op_type = "Mul", .inputs = {bias, scores}, .threads = threads}),
                          reference_binary<float>(bias, scores, scores.shape(),
                                                  [](float x, float y) { return x * y; })).empty());
  }
}

TEST_CASE("integer arithmetic wraps and Div truncates toward zero", "[cpu][binary]") {
  const Tensor a = Tensor::from_vector<int32_t>({4}, {-7, 7, std::numeric_limits<int32_t>::min(), 9});
  const Tensor b = Tensor::from_vector<int32_t>({4}, {2, -2, -1, 3});
  CHECK(compare_tensors(run_one({.op_type = "Div", .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({4}, {-3, -3, std::numeric_limits<int32_t>::min(), 3})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Add", .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({4}, {-5, 5, std::numeric_limits<int32_t>::max(), 12})).empty());

  const Tensor i8 = Tensor::from_vector<int8_t>({2}, {120, -128});
  CHECK(compare_tensors(run_one({.op_type = "Add", .inputs = {i8, Tensor::from_vector<int8_t>({}, {10})}}),
                        Tensor::from_vector<int8_t>({2}, {-126, -118})).empty());
  const Tensor u16 = Tensor::from_vector<uint16_t>({1}, {65535});
  CHECK(compare_tensors(run_one({.op_type = "Mul", .inputs = {u16, u16}}),
                        Tensor::from_vector<uint16_t>({1}, {1})).empty());
  const Tensor i64 = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  CHECK(compare_tensors(run_one({.op_type = "Sub", .inputs = {i64, Tensor::from_vector<int64_t>({2, 1}, {10, 20})}}),
                        Tensor::from_vector<int64_t>({2, 2}, {-9, -8, -17, -16})).empty());
  const Tensor u64 = Tensor::from_vector<uint64_t>({2}, {10, 3});
  CHECK(compare_tensors(run_one({.op_type = "Div", .inputs = {u64, Tensor::from_vector<uint64_t>({}, {3})}}),
                        Tensor::from_vector<uint64_t>({2}, {3, 1})).empty());
  const Tensor d = Tensor::from_vector<double>({2}, {1, 2});
  CHECK(compare_tensors(run_one({.op_type = "Mul", .inputs = {d, d}}), Tensor::from_vector<double>({2}, {1, 4})).empty());
}

TEST_CASE("integer Div by zero is a runtime error naming the node", "[cpu][binary]") {
  auto r = run_on_cpu({.op_type = "Div", .inputs = {Tensor::from_vector<int64_t>({3}, {1, 2, 3}),
                                                    Tensor::from_vector<int64_t>({3}, {1, 0, 1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "integer division by zero in 'Div_0' (ai.onnx::Div, opset 17)");
  CHECK(r.error().why == "element 1 of the divisor (input 1, int64 [3]) is 0");
  // Float division by zero is IEEE, not an error.
  auto f = run_on_cpu({.op_type = "Div", .inputs = {Tensor::from_vector<float>({1}, {1}),
                                                    Tensor::from_vector<float>({1}, {0})}});
  REQUIRE(f);
  CHECK(std::isinf((*f)[0].data_as<float>()[0]));
}

TEST_CASE("Pow handles scalar fast paths, mixed exponent types and integer bases", "[cpu][binary]") {
  const Tensor x = Tensor::from_vector<float>({2, 3}, random_floats(6, 7, 0.1f, 3));
  for (float e : {1.0f, 2.0f, 3.0f, 0.5f, 1.7f, -1.0f}) {
    const Tensor ex = Tensor::from_vector<float>({}, {e});
    CHECK(compare_tensors(run_one({.op_type = "Pow", .inputs = {x, ex}}),
                          reference_binary<float>(x, ex, x.shape(), [](float b, float p) { return std::pow(b, p); }))
              .empty());
  }
  const Tensor ey = Tensor::from_vector<float>({3}, {0.5f, 2, -1.5f});
  CHECK(compare_tensors(run_one({.op_type = "Pow", .opset = 15, .inputs = {x, ey}}),
                        reference_binary<float>(x, ey, x.shape(), [](float b, float p) { return std::pow(b, p); }))
            .empty());

  // float base, int64 exponent
  auto fi = run_one({.op_type = "Pow", .inputs = {Tensor::from_vector<float>({2}, {2, 3}),
                                                  Tensor::from_vector<int64_t>({2}, {3, -1})}});
  CHECK(compare_tensors(fi, Tensor::from_vector<float>({2}, {8, 1.0f / 3})).empty());

  // integer base: exact for large int64 results; negative exponents truncate
  auto ii = run_one({.op_type = "Pow", .inputs = {Tensor::from_vector<int64_t>({4}, {3, -2, 2, 1}),
                                                  Tensor::from_vector<int32_t>({4}, {39, 3, -1, -5})}});
  CHECK(compare_tensors(ii, Tensor::from_vector<int64_t>({4}, {4052555153018976267LL, -8, 0, 1})).empty());
  auto id = run_one({.op_type = "Pow", .inputs = {Tensor::from_vector<int32_t>({2}, {4, 9}),
                                                  Tensor::from_vector<double>({}, {0.5})}});
  CHECK(compare_tensors(id, Tensor::from_vector<int32_t>({2}, {2, 3})).empty());
}

TEST_CASE("arithmetic ops decline mixed types, strings and static shape conflicts", "[cpu][binary][claim]") {
  auto mixed = claim_on_cpu({.op_type = "Add", .inputs = {Tensor::from_vector<float>({2}, {1, 2}),
                                                          Tensor::from_vector<double>({2}, {1, 2})}});
  REQUIRE_FALSE(mixed);
  CHECK(mixed.reason() == "Add: inputs have types float and double; both must have the same type (insert a Cast)");

  auto shapes = claim_on_cpu({.op_type = "Mul", .inputs = {Tensor::from_vector<float>({2, 3}, random_floats(6, 1)),
                                                           Tensor::from_vector<float>({4}, random_floats(4, 1))}});
  REQUIRE_FALSE(shapes);
  CHECK(shapes.reason() ==
        "Mul: inputs 0 (float[2,3]) and 1 (float[4]) are not broadcastable: at output axis 1 they have 3 and 4; "
        "fix the shapes the model feeds to the node");

  auto pow = claim_on_cpu({.op_type = "Pow", .inputs = {Tensor::from_vector<uint8_t>({1}, {2}),
                                                        Tensor::from_vector<uint8_t>({1}, {2})}});
  REQUIRE_FALSE(pow);
  CHECK(pow.reason() == "Pow: input 0 has type uint8; the cpu EP supports float, double, float16, int32, int64 for Pow");

  auto old = claim_on_cpu({.op_type = "Add", .opset = 6, .inputs = {Tensor::from_vector<float>({2, 3}, random_floats(6, 1)),
                                                                    Tensor::from_vector<float>({3}, {1, 2, 3})}});
  REQUIRE_FALSE(old);
  CHECK(old.reason() == "Add: input shapes [2,3] and [3] do not match (broadcast is 0, which needs equal shapes at "
                        "opsets below 7); fix the shapes the model feeds to the node");
}

TEST_CASE("opset 1-6 broadcast aligns B with A from the axis attribute", "[cpu][binary][elementwise]") {
  const Tensor a = iota_float({2, 3, 2});
  const Tensor b = Tensor::from_vector<float>({3}, {10, 20, 30});
  // axis=1: b[j] is added to a[i][j][k].
  const Tensor mid = run_one({.op_type = "Add", .opset = 6, .inputs = {a, b},
                              .attrs = attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{1}}})});
  std::vector<float> expected(12);
  for (int i = 0; i < 12; ++i) expected[static_cast<std::size_t>(i)] = static_cast<float>(i) + 10.0f * static_cast<float>(i / 2 % 3 + 1);
  CHECK(compare_tensors(mid, Tensor::from_vector<float>({2, 3, 2}, expected)).empty());
  // No axis: B aligns with A's trailing dims.
  const Tensor tail = run_one({.op_type = "Sub", .opset = 1, .inputs = {a, Tensor::from_vector<float>({2}, {1, 2})},
                               .attrs = attrs({{"broadcast", int64_t{1}}})});
  for (int i = 0; i < 12; ++i) CHECK(tail.data_as<float>()[i] == static_cast<float>(i - 1 - i % 2));
  const Tensor pow = run_one({.op_type = "Pow", .opset = 1, .inputs = {a, Tensor::from_vector<float>({2}, {1, 2})},
                              .attrs = attrs({{"broadcast", int64_t{1}}, {"axis", int64_t{0}}})});
  for (int i = 0; i < 12; ++i) CHECK(pow.data_as<float>()[i] == Approx(std::pow(static_cast<float>(i), i < 6 ? 1.0f : 2.0f)));
}

TEST_CASE("Mod takes the divisor's sign, or with fmod=1 the dividend's", "[cpu][binary][elementwise]") {
  const Tensor a = Tensor::from_vector<int32_t>({5}, {-4, 7, 5, -7, 4});
  const Tensor b = Tensor::from_vector<int32_t>({5}, {3, -3, 2, 2, -2});
  CHECK(compare_tensors(run_one({.op_type = "Mod", .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({5}, {2, -2, 1, 1, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Mod", .inputs = {a, b}, .attrs = attrs({{"fmod", int64_t{1}}})}),
                        Tensor::from_vector<int32_t>({5}, {-1, 1, 1, -1, 0})).empty());
  const Tensor f = run_one({.op_type = "Mod", .inputs = {Tensor::from_vector<double>({2}, {-4.5, 4.5}),
                                                          Tensor::from_vector<double>({}, {2})},
                            .attrs = attrs({{"fmod", int64_t{1}}})});
  CHECK(compare_tensors(f, Tensor::from_vector<double>({2}, {-0.5, 0.5})).empty());
  const Tensor u = run_one({.op_type = "Mod", .inputs = {Tensor::from_vector<uint8_t>({2}, {250, 7}),
                                                          Tensor::from_vector<uint8_t>({2}, {7, 250})}});
  CHECK(compare_tensors(u, Tensor::from_vector<uint8_t>({2}, {5, 7})).empty());
  auto zero = run_on_cpu({.op_type = "Mod", .inputs = {a, Tensor::from_vector<int32_t>({}, {0})}});
  REQUIRE_FALSE(zero);
}

TEST_CASE("Pow mixes base and exponent types", "[cpu][binary][elementwise]") {
  const Tensor fi = run_one({.op_type = "Pow", .opset = 15, .inputs = {Tensor::from_vector<float>({3}, {2, 3, 0.5f}),
                                                                       Tensor::from_vector<int64_t>({3}, {3, -1, 4})}});
  CHECK(compare_tensors(fi, Tensor::from_vector<float>({3}, {8, 1.0f / 3, 0.0625f})).empty());
  const Tensor iu = run_one({.op_type = "Pow", .inputs = {Tensor::from_vector<int64_t>({2}, {3, -2}),
                                                          Tensor::from_vector<uint32_t>({2}, {4, 5})}});
  CHECK(compare_tensors(iu, Tensor::from_vector<int64_t>({2}, {81, -32})).empty());
}
