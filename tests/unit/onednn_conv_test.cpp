// The oneDNN EP's Conv and ConvTranspose against the cpu EP, and their declines.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

namespace nxrt::test {
namespace {

NodeSpec conv(Shape x, Shape w, AttributeMap a, bool bias = true) {
  NodeSpec s{.op_type = "Conv", .opset = 11};
  s.inputs = {random_tensor(x, 1), random_tensor(w, 2)};
  s.constant = {false, true, true};
  if (bias) s.inputs.push_back(random_tensor({w[0]}, 3));
  s.attrs = std::move(a);
  return s;
}

}  // namespace

TEST_CASE("onednn Conv matches the cpu EP in every geometry", "[onednn]") {
  SECTION("2-D, pads and strides") {
    check_matches_cpu("onednn", conv({1, 3, 9, 9}, {4, 3, 3, 3}, attrs({{"pads", ints{1, 0, 2, 1}}, {"strides", ints{2, 1}}})));
  }
  SECTION("2-D without bias, dilations") {
    check_matches_cpu("onednn", conv({2, 4, 10, 8}, {6, 4, 3, 2}, attrs({{"dilations", ints{2, 3}}}), false));
  }
  SECTION("groups and depthwise") {
    check_matches_cpu("onednn", conv({1, 8, 7, 7}, {4, 4, 3, 3}, attrs({{"group", int64_t{2}}, {"pads", ints{1, 1, 1, 1}}})));
    check_matches_cpu("onednn", conv({1, 16, 9, 9}, {16, 1, 3, 3}, attrs({{"group", int64_t{16}}, {"strides", ints{2, 2}}})));
  }
  SECTION("auto_pad") {
    for (const char* mode : {"SAME_UPPER", "SAME_LOWER", "VALID"})
      check_matches_cpu("onednn", conv({1, 2, 8, 7}, {3, 2, 4, 3},
                                       attrs({{"auto_pad", std::string(mode)}, {"strides", ints{2, 3}}, {"dilations", ints{1, 2}}})));
  }
  SECTION("1-D and 3-D") {
    check_matches_cpu("onednn", conv({1, 3, 20}, {5, 3, 4}, attrs({{"pads", ints{1, 2}}, {"strides", ints{3}}})));
    check_matches_cpu("onednn", conv({1, 2, 5, 6, 7}, {4, 2, 2, 3, 2}, attrs({{"pads", ints{1, 0, 1, 0, 1, 1}}})));
  }
}

TEST_CASE("onednn Conv declines what it cannot compile once", "[onednn]") {
  NodeSpec s = conv({1, 3, 8, 8}, {4, 3, 3, 3}, {});
  s.constant = {false, false, true};
  const KernelMatch m = claim_on("onednn", s);
  REQUIRE_FALSE(m);
  CHECK_THAT(m.reason(), Catch::Contains("W (input 1) must be a constant initializer"));

  NodeSpec d = conv({1, 3, 8, 8}, {4, 3, 3, 3}, {});
  d.inputs[0] = Tensor::from_vector<double>({1, 3, 8, 8}, std::vector<double>(192, 1.0));
  d.inputs[1] = Tensor::from_vector<double>({4, 3, 3, 3}, std::vector<double>(108, 1.0));
  d.inputs.resize(2);
  CHECK_THAT(claim_on("onednn", d).reason(), Catch::Contains("float32 only"));
}

TEST_CASE("onednn ConvTranspose matches the cpu EP", "[onednn]") {
  auto deconv = [](Shape x, Shape w, AttributeMap a) {
    NodeSpec s{.op_type = "ConvTranspose", .opset = 11};
    s.inputs = {random_tensor(x, 4), random_tensor(w, 5), random_tensor({w[1] * a.int_or("group", 1)}, 6)};
    s.constant = {false, true, true};
    s.attrs = std::move(a);
    return s;
  };
  check_matches_cpu("onednn", deconv({1, 3, 5, 5}, {3, 2, 3, 3}, attrs({{"strides", ints{2, 2}}})));
  check_matches_cpu("onednn", deconv({1, 4, 4, 6}, {4, 3, 2, 3}, attrs({{"group", int64_t{2}}, {"pads", ints{1, 0, 0, 1}}})));
  check_matches_cpu("onednn", deconv({1, 2, 7}, {2, 3, 3}, attrs({{"dilations", ints{2}}, {"strides", ints{3}}})));

  NodeSpec shaped = deconv({1, 3, 5, 5}, {3, 2, 3, 3}, attrs({{"output_shape", ints{10, 10}}}));
  CHECK_THAT(claim_on("onednn", shaped).reason(), Catch::Contains("output_shape is not supported by the onednn EP"));
}

TEST_CASE("onednn eltwise and binary ops match the cpu EP", "[onednn]") {
  const Tensor x = random_tensor({2, 3, 4, 5}, 7);
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Exp", "Abs", "HardSwish"}) {
    NodeSpec s{.op_type = op, .opset = 14};
    s.inputs = {x};
    check_matches_cpu("onednn", s);
  }
  NodeSpec leaky{.op_type = "LeakyRelu", .opset = 6, .inputs = {x}, .attrs = attrs({{"alpha", 0.3f}})};
  check_matches_cpu("onednn", leaky);
  NodeSpec hs{.op_type = "HardSigmoid", .opset = 6, .inputs = {x}, .attrs = attrs({{"alpha", 0.25f}, {"beta", 0.4f}})};
  check_matches_cpu("onednn", hs);
  NodeSpec clip{.op_type = "Clip", .opset = 13};
  clip.inputs = {x, Tensor::from_vector<float>({}, {-0.5f}), Tensor::from_vector<float>({}, {0.75f})};
  clip.constant = {false, true, true};
  check_matches_cpu("onednn", clip);
  clip.constant = {false, false, true};
  CHECK_THAT(claim_on("onednn", clip).reason(), Catch::Contains("bounds must be constant"));

  const Tensor positive = Tensor::from_vector<float>({2, 3}, {0.5f, 1, 2, 3, 4, 5});
  for (const char* op : {"Log", "Sqrt"}) check_matches_cpu("onednn", NodeSpec{.op_type = op, .opset = 13, .inputs = {positive}});

  for (const char* op : {"Add", "Sub", "Mul", "Div", "Max", "Min"}) {
    check_matches_cpu("onednn", NodeSpec{.op_type = op, .opset = 13, .inputs = {x, random_tensor({2, 3, 4, 5}, 8)}});
    check_matches_cpu("onednn", NodeSpec{.op_type = op, .opset = 13, .inputs = {x, random_tensor({3, 1, 5}, 9)}});
  }
  // A first input that broadcasts: swapped for commutative ops, declined for the others.
  check_matches_cpu("onednn", NodeSpec{.op_type = "Mul", .opset = 13, .inputs = {random_tensor({4, 1}, 10), x}});
  NodeSpec sub{.op_type = "Sub", .opset = 13, .inputs = {random_tensor({4, 1}, 10), x}};
  CHECK_THAT(claim_on("onednn", sub).reason(), Catch::Contains("broadcasts only the second input"));

  NodeSpec sum{.op_type = "Sum", .opset = 13, .inputs = {x, random_tensor({2, 3, 4, 5}, 11), random_tensor({2, 3, 4, 5}, 12)}};
  check_matches_cpu("onednn", sum);
}

}  // namespace nxrt::test
