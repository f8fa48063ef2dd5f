// The oneDNN EP's Softmax and LogSoftmax (opset 1..12 coerced to 2-D, 13+ one axis) against the cpu EP.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor softmax_input(const Shape& shape, unsigned seed = 3, float lo = -4, float hi = 4) {
  return random_tensor(shape, seed, lo, hi);
}

NodeSpec softmax(const std::string& op, int64_t opset, const Tensor& x, std::optional<int64_t> axis) {
  return {.op_type = op, .opset = opset, .inputs = {x}, .attrs = axis ? attrs({{"axis", *axis}}) : AttributeMap{}};
}

void check_softmax(const std::string& op, int64_t opset, const Tensor& x, std::optional<int64_t> axis) {
  INFO(op << "-" << opset << " on " << shape_to_string(x.shape()) << " axis " << (axis ? std::to_string(*axis) : "default"));
  check_matches_cpu("onednn", softmax(op, opset, x, axis));
}

const char* const kOps[] = {"Softmax", "LogSoftmax"};

}  // namespace

TEST_CASE("onednn Softmax-13 and LogSoftmax-13 match the cpu EP on every axis", "[onednn]") {
  const Shape shapes[] = {{7}, {3, 5}, {2, 3, 4}, {2, 3, 4, 5}, {2, 1, 3, 1, 4}};
  for (const char* op : kOps)
    for (const Shape& s : shapes) {
      const Tensor x = softmax_input(s);
      const auto rank = static_cast<int64_t>(s.size());
      check_softmax(op, 13, x, std::nullopt);
      for (int64_t axis = -rank; axis < rank; ++axis) check_softmax(op, 13, x, axis);
    }
}

TEST_CASE("onednn Softmax-1/11 and LogSoftmax-1/11 coerce to 2-D at axis like the cpu EP", "[onednn]") {
  const Shape shapes[] = {{7}, {3, 5}, {2, 3, 4}, {2, 3, 4, 5}, {2, 3, 1, 1}, {2, 1, 4, 1}};
  for (const char* op : kOps)
    for (int64_t opset : {1, 11})
      for (const Shape& s : shapes) {
        const Tensor x = softmax_input(s, 5);
        const auto rank = static_cast<int64_t>(s.size());
        if (rank > 1) check_softmax(op, opset, x, std::nullopt);
        for (int64_t axis = opset < 11 ? 0 : -rank; axis < rank; ++axis) check_softmax(op, opset, x, axis);
      }
}

TEST_CASE("onednn Softmax-11 and Softmax-13 differ on the same axis as ONNX defines", "[onednn]") {
  const Tensor x = softmax_input({2, 3, 4});
  auto coerced = run_on("onednn", softmax("Softmax", 11, x, 1));
  auto one_axis = run_on("onednn", softmax("Softmax", 13, x, 1));
  REQUIRE(coerced);
  REQUIRE(one_axis);
  // Opset 11 normalizes over 3 x 4 values per batch, opset 13 over the 3 values of each column.
  CHECK_FALSE(compare_tensors((*coerced)[0], (*one_axis)[0]).empty());
  float sum = 0;
  for (int64_t i = 0; i < 12; ++i) sum += (*coerced)[0].data_as<float>()[i];
  CHECK(sum == Approx(1.0f));
}

TEST_CASE("onednn Softmax and LogSoftmax stay finite for large inputs", "[onednn]") {
  const Tensor x = softmax_input({3, 6}, 9, 1000, 100000);
  for (const char* op : kOps) {
    check_softmax(op, 13, x, -1);
    check_softmax(op, 11, x, 1);
  }
}

TEST_CASE("onednn Softmax declines what it cannot run", "[onednn]") {
  const KernelMatch out_of_range = claim_on("onednn", softmax("Softmax", 13, softmax_input({2, 3}), 2));
  REQUIRE_FALSE(out_of_range.is_supported());
  CHECK(out_of_range.reason() == "Softmax: axis 2 is out of range for an input of rank 2; valid axes are [-2, 1]");
  const KernelMatch doubles = claim_on(
      "onednn", softmax("LogSoftmax", 13, Tensor::from_vector<double>({2}, {1.0, 2.0}), std::nullopt));
  REQUIRE_FALSE(doubles.is_supported());
  CHECK_THAT(doubles.reason(), Catch::Contains("LogSoftmax: input 0 is double; the onednn EP computes in float32"));
  const KernelMatch scalar =
      claim_on("onednn", softmax("Softmax", 13, Tensor::from_vector<float>({}, {1.0f}), std::nullopt));
  REQUIRE_FALSE(scalar.is_supported());
  CHECK_THAT(scalar.reason(), Catch::Contains("Softmax: input 0 has rank 0; the onednn EP supports ranks 1 to 12"));
}
