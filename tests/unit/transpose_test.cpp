// Transpose against a per-element reference, over the row, tile and view paths and dtypes.
#include <catch2/catch.hpp>

#include <numeric>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

// out[j0..jn] = in[i] with i[perm[k]] = j[k], one element at a time.
template <class T>
Tensor reference_transpose(const Tensor& in, const std::vector<int64_t>& perm) {
  const Shape& s = in.shape();
  Shape out_shape;
  for (int64_t p : perm) out_shape.push_back(s[static_cast<std::size_t>(p)]);
  Tensor out = Tensor::empty(in.dtype(), out_shape);
  const Shape in_strides = contiguous_strides(s);
  std::vector<int64_t> j(perm.size(), 0);
  for (int64_t o = 0; o < out.numel(); ++o) {
    int64_t offset = 0;
    for (std::size_t k = 0; k < perm.size(); ++k) offset += j[k] * in_strides[static_cast<std::size_t>(perm[k])];
    out.mut_as<T>()[o] = in.data_as<T>()[offset];
    for (std::size_t k = perm.size(); k-- > 0;) {
      if (++j[k] < out_shape[k]) break;
      j[k] = 0;
    }
  }
  return out;
}

template <class T>
Tensor counting(DType dtype, Shape shape) {
  Tensor t = Tensor::empty(dtype, shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.mut_as<T>()[i] = static_cast<T>(i * 7 + 1);
  return t;
}

Tensor run_transpose(const Tensor& x, std::optional<ints> perm, int threads = 2) {
  NodeSpec spec{.op_type = "Transpose", .opset = 13, .inputs = {x}, .threads = threads};
  if (perm) spec.attrs = attrs({{"perm", *perm}});
  auto out = run_on_cpu(spec);
  INFO((out ? std::string() : out.error().render()));
  REQUIRE(out);
  return (*out)[0];
}

}  // namespace

TEST_CASE("Transpose matches the reference on every path", "[cpu][transpose]") {
  struct Case {
    Shape shape;
    ints perm;
  };
  const std::vector<Case> cases = {
      {{37, 53}, {1, 0}},                  // one 2-D tile grid with ragged edges
      {{2, 3, 4}, {1, 0, 2}},              // last axis stays: row copies
      {{2, 3, 4}, {2, 0, 1}},              // tiles with an outer axis
      {{2, 3, 5, 7}, {0, 2, 3, 1}},        // NCHW -> NHWC, H and W merge
      {{2, 5, 7, 3}, {0, 3, 1, 2}},        // NHWC -> NCHW
      {{1, 3, 1, 4}, {2, 3, 0, 1}},        // size-1 axes dropped
      {{3, 2, 4, 5}, {3, 1, 0, 2}},        // nothing merges
      {{64, 3, 130}, {2, 1, 0}},
  };
  for (const Case& c : cases) {
    INFO("shape " << shape_to_string(c.shape) << " perm " << shape_to_string(c.perm));
    const Tensor f = counting<float>(DType::kFloat32, c.shape);
    check_equal(run_transpose(f, c.perm), reference_transpose<float>(f, c.perm));
    const Tensor i64 = counting<int64_t>(DType::kInt64, c.shape);
    check_equal(run_transpose(i64, c.perm, 4), reference_transpose<int64_t>(i64, c.perm));
    const Tensor u8 = counting<uint8_t>(DType::kUInt8, c.shape);
    check_equal(run_transpose(u8, c.perm, 1), reference_transpose<uint8_t>(u8, c.perm));
    // float16 is moved as 2-byte words; compare them as uint16.
    const Tensor h = counting<uint16_t>(DType::kFloat16, c.shape);
    const Tensor th = run_transpose(h, c.perm);
    CHECK(th.dtype() == DType::kFloat16);
    const Tensor rh = reference_transpose<uint16_t>(h, c.perm);
    CHECK(std::equal(th.data_as<uint16_t>(), th.data_as<uint16_t>() + th.numel(), rh.data_as<uint16_t>()));
  }
}

TEST_CASE("Transpose reverses the axes without perm and handles strings", "[cpu][transpose]") {
  const Tensor x = counting<int32_t>(DType::kInt32, {2, 3, 4});
  check_equal(run_transpose(x, std::nullopt), reference_transpose<int32_t>(x, {2, 1, 0}));

  Tensor s = Tensor::empty(DType::kString, {2, 3});
  for (int i = 0; i < 6; ++i) s.mut_as<std::string>()[i] = std::to_string(i).insert(0, 1, 's');
  const Tensor t = run_transpose(s, ints{1, 0});
  CHECK(t.shape() == Shape{3, 2});
  check_equal(t, reference_transpose<std::string>(s, {1, 0}));
}

TEST_CASE("Transpose that only moves size-1 axes is a view", "[cpu][transpose]") {
  const Tensor x = counting<float>(DType::kFloat32, {3, 1, 4});
  const Tensor y = run_transpose(x, ints{1, 0, 2});
  CHECK(y.shape() == Shape{1, 3, 4});
  CHECK(y.storage() == x.storage());
  const Tensor z = run_transpose(x, ints{0, 2, 1});
  CHECK(z.storage() == x.storage());
  check_equal(z, reference_transpose<float>(x, {0, 2, 1}));
  const Tensor w = run_transpose(x, ints{2, 1, 0});
  CHECK(w.storage() != x.storage());
  check_equal(w, reference_transpose<float>(x, {2, 1, 0}));
}

TEST_CASE("Transpose declines perms that are not permutations of the axes", "[cpu][transpose][claim]") {
  const Tensor x = counting<float>(DType::kFloat32, {2, 3});
  auto m = claim_on_cpu({.op_type = "Transpose", .inputs = {x}, .attrs = attrs({{"perm", ints{0, 0}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Transpose: perm [0,0] is not a permutation of the axes 0..1");
  m = claim_on_cpu({.op_type = "Transpose", .inputs = {x}, .attrs = attrs({{"perm", ints{2, 0, 1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Transpose: perm [2,0,1] has 3 entries for an input of rank 2; it needs one per axis");
}
