// The axis-range helpers behind Loop, Scan and the sequence ops.
#include <catch2/catch.hpp>

#include "common/axis_range.h"
#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("take_range and take_slice copy positions along an inner axis", "[cpu][axis_range]") {
  const Tensor x = iota_float({2, 3, 2});  // x[i][j][k] = 6i + 2j + k
  const Tensor middle = cpu::take_range(x, 1, 1, 2);
  CHECK(compare_tensors(middle, Tensor::from_vector<float>({2, 2, 2}, {2, 3, 4, 5, 8, 9, 10, 11})) == "");
  const Tensor last = cpu::take_slice(x, 1, 2);
  CHECK(compare_tensors(last, Tensor::from_vector<float>({2, 2}, {4, 5, 10, 11})) == "");
}

TEST_CASE("put_range writes into the positions of an axis and stack adds a new axis", "[cpu][axis_range]") {
  const Tensor a = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor b = Tensor::from_vector<float>({2}, {3, 4});
  const std::vector<Tensor> items{a, b};
  CHECK(compare_tensors(cpu::stack(items, 0, DType::kFloat32, {2}), Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4})) ==
        "");
  CHECK(compare_tensors(cpu::stack(items, 1, DType::kFloat32, {2}), Tensor::from_vector<float>({2, 2}, {1, 3, 2, 4})) ==
        "");
  const Tensor dest = Tensor::from_vector<float>({2, 3}, {0, 0, 0, 0, 0, 0});
  cpu::put_range(dest, 1, 1, Tensor::from_vector<float>({2, 2}, {5, 6, 7, 8}));
  CHECK(compare_tensors(dest, Tensor::from_vector<float>({2, 3}, {0, 5, 6, 0, 7, 8})) == "");
}

TEST_CASE("axis ranges copy strings as objects", "[cpu][axis_range]") {
  Tensor s = Tensor::empty(DType::kString, {2, 2});
  auto* p = s.mut_as<std::string>();
  for (int i = 0; i < 4; ++i) p[i] = std::string(static_cast<std::size_t>(i + 1), static_cast<char>('a' + i));
  const Tensor column = cpu::take_slice(s, 1, 1);
  REQUIRE(column.shape() == Shape{2});
  CHECK(column.data_as<std::string>()[0] == "bb");
  CHECK(column.data_as<std::string>()[1] == "dddd");
}
