// BitShift and the Bitwise ops against hand-computed results.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("BitShift moves bits both ways and clears on shifts past the width", "[cpu][bitwise][elementwise]") {
  const Tensor x = Tensor::from_vector<uint8_t>({4}, {0x81, 16, 3, 255});
  const Tensor n = Tensor::from_vector<uint8_t>({4}, {1, 2, 8, 0});
  CHECK(compare_tensors(run_one({.op_type = "BitShift", .inputs = {x, n}, .attrs = attrs({{"direction", std::string("LEFT")}})}),
                        Tensor::from_vector<uint8_t>({4}, {0x02, 64, 0, 255})).empty());
  CHECK(compare_tensors(run_one({.op_type = "BitShift", .inputs = {x, Tensor::from_vector<uint8_t>({}, {1})},
                                 .attrs = attrs({{"direction", std::string("RIGHT")}})}),
                        Tensor::from_vector<uint8_t>({4}, {0x40, 8, 1, 127})).empty());
}

TEST_CASE("Bitwise And Or Xor broadcast and Not inverts", "[cpu][bitwise][elementwise]") {
  const Tensor a = Tensor::from_vector<int32_t>({2, 2}, {0b1100, 0b1010, -1, 0});
  const Tensor b = Tensor::from_vector<int32_t>({2}, {0b1010, 0b0110});
  CHECK(compare_tensors(run_one({.op_type = "BitwiseAnd", .opset = 18, .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({2, 2}, {0b1000, 0b0010, 0b1010, 0})).empty());
  CHECK(compare_tensors(run_one({.op_type = "BitwiseOr", .opset = 18, .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({2, 2}, {0b1110, 0b1110, -1, 0b0110})).empty());
  CHECK(compare_tensors(run_one({.op_type = "BitwiseXor", .opset = 18, .inputs = {a, b}}),
                        Tensor::from_vector<int32_t>({2, 2}, {0b0110, 0b1100, ~0b1010, 0b0110})).empty());
  CHECK(compare_tensors(run_one({.op_type = "BitwiseNot", .opset = 18, .inputs = {Tensor::from_vector<int8_t>({2}, {0, 5})}}),
                        Tensor::from_vector<int8_t>({2}, {-1, -6})).empty());
}

TEST_CASE("BitShift declines signed types and a missing direction", "[cpu][bitwise][claim][elementwise]") {
  const Tensor i = Tensor::from_vector<int32_t>({1}, {1});
  auto sign = claim_on_cpu({.op_type = "BitShift", .inputs = {i, i}, .attrs = attrs({{"direction", std::string("LEFT")}})});
  REQUIRE_FALSE(sign);
  CHECK(sign.reason() == "BitShift: input 0 has type int32; the cpu EP supports uint8, uint16, uint32, uint64 for BitShift");
  const Tensor u = Tensor::from_vector<uint32_t>({1}, {1});
  auto missing = claim_on_cpu({.op_type = "BitShift", .inputs = {u, u}});
  REQUIRE_FALSE(missing);
  CHECK(missing.reason() == "BitShift: attribute 'direction' is missing; set it to LEFT or RIGHT");
}
