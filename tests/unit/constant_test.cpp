// Constant (every value attribute per opset, declines) and ConstantOfShape (fill values).
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("Constant returns its value attribute without a copy", "[cpu][constant]") {
  const Tensor value = Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4});
  for (int64_t opset : {1, 9, 13}) {
    const Tensor y = run_one({.op_type = "Constant", .opset = opset, .attrs = attrs({{"value", value}})});
    CHECK(compare_tensors(y, value).empty());
    CHECK(y.storage() == value.storage());
  }
}

TEST_CASE("Constant-12 builds tensors from value_float(s), value_int(s) and value_string(s)", "[cpu][constant]") {
  CHECK(compare_tensors(run_one({.op_type = "Constant", .opset = 12, .attrs = attrs({{"value_float", 2.5f}})}),
                        Tensor::from_vector<float>({}, {2.5f})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_floats", floats{1, 2}}})}),
                        Tensor::from_vector<float>({2}, {1, 2})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_int", int64_t{-7}}})}),
                        Tensor::from_vector<int64_t>({}, {-7})).empty());
  CHECK(compare_tensors(run_one({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_ints", ints{3, 4, 5}}})}),
                        int64s({3, 4, 5})).empty());
  const Tensor s = run_one({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_string", std::string("hello")}})});
  CHECK(s.dtype() == DType::kString);
  CHECK(s.shape().empty());
  CHECK(s.data_as<std::string>()[0] == "hello");
  const Tensor ss = run_one({.op_type = "Constant", .opset = 13,
                             .attrs = attrs({{"value_strings", std::vector<std::string>{"a", "bc"}}})});
  CHECK(ss.shape() == Shape{2});
  CHECK(ss.data_as<std::string>()[1] == "bc");
}

TEST_CASE("Constant declines sparse values, old opsets' missing attributes and ambiguity", "[cpu][constant][claim]") {
  auto m = claim_on_cpu({.op_type = "Constant", .opset = 13, .attrs = attrs({{"sparse_value", OpaqueAttribute{}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Constant: sparse_value is not supported by the cpu EP; store the constant densely in the value attribute");
  m = claim_on_cpu({.op_type = "Constant", .opset = 11, .attrs = attrs({{"value_int", int64_t{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Constant: attribute value_int exists from opset 12 on and this node has opset 11; use the value attribute");
  m = claim_on_cpu({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_int", int64_t{1}}, {"value_float", 1.0f}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Constant: expected exactly one value attribute, got 2 (value_float, value_int); use one of value, value_float(s), value_int(s), value_string(s)");
  m = claim_on_cpu({.op_type = "Constant", .opset = 13, .attrs = attrs({{"value_ints", int64_t{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Constant: attribute value_ints has type int, expected ints");
}

TEST_CASE("ConstantOfShape fills a runtime shape with its value", "[cpu][constant]") {
  const Tensor zeros = run_one({.op_type = "ConstantOfShape", .opset = 9, .inputs = {int64s({2, 3})}});
  CHECK(compare_tensors(zeros, Tensor::from_vector<float>({2, 3}, std::vector<float>(6, 0.0f))).empty());
  const Tensor sevens = run_one({.op_type = "ConstantOfShape", .opset = 20, .inputs = {int64s({4})},
                                 .attrs = attrs({{"value", Tensor::from_vector<int64_t>({1}, {7})}})});
  CHECK(compare_tensors(sevens, int64s({7, 7, 7, 7})).empty());
  const Tensor scalar = run_one({.op_type = "ConstantOfShape", .opset = 9, .inputs = {Tensor::from_vector<int64_t>({0}, {})},
                                 .attrs = attrs({{"value", Tensor::from_vector<double>({1}, {1.5})}})});
  CHECK(compare_tensors(scalar, Tensor::from_vector<double>({}, {1.5})).empty());
  const std::byte one[] = {std::byte{1}};
  const Tensor trues = run_one({.op_type = "ConstantOfShape", .opset = 9, .inputs = {int64s({100, 300})},
                                .attrs = attrs({{"value", Tensor::from_bytes(DType::kBool, {1}, one)}}), .threads = 4});
  CHECK(trues.dtype() == DType::kBool);
  CHECK(std::all_of(trues.data_as<bool>(), trues.data_as<bool>() + trues.numel(), [](bool b) { return b; }));
  CHECK(run_one({.op_type = "ConstantOfShape", .opset = 9, .inputs = {int64s({3, 0})}}).numel() == 0);
}

TEST_CASE("ConstantOfShape rejects negative sizes and multi-element values", "[cpu][constant][claim]") {
  auto r = run_on_cpu({.op_type = "ConstantOfShape", .opset = 9, .inputs = {int64s({2, -1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "ConstantOfShape: shape [2,-1] has size -1 at index 1");
  auto m = claim_on_cpu({.op_type = "ConstantOfShape", .opset = 9, .inputs = {int64s({2})},
                         .attrs = attrs({{"value", Tensor::from_vector<float>({2}, {1, 2})}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ConstantOfShape: the value tensor has shape [2] (2 elements); it must hold exactly one");
  m = claim_on_cpu({.op_type = "ConstantOfShape", .opset = 9, .inputs = {Tensor::from_vector<int32_t>({1}, {2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ConstantOfShape: input 0 has type int32; the cpu EP supports int64 for ConstantOfShape");
}
