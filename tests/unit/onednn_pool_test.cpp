// The oneDNN EP's pooling (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool) against the cpu EP.
#include <catch2/catch.hpp>

#include <string>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor pool_input(const Shape& shape, unsigned seed = 7) { return random_tensor(shape, seed); }

// N=2, C=3 and `spatial` dims of `size`.
Shape image(std::size_t spatial, int64_t size) {
  Shape s = {2, 3};
  s.insert(s.end(), spatial, size);
  return s;
}

void check_pool(const std::string& op, const Tensor& x, AttributeMap a, int64_t opset = 12) {
  INFO(op << "-" << opset << " on " << shape_to_string(x.shape()));
  check_matches_cpu("onednn", {.op_type = op, .opset = opset, .inputs = {x}, .attrs = std::move(a)});
}

std::string decline_reason(const std::string& op, const Tensor& x, AttributeMap a, int64_t opset = 12,
                           std::size_t outputs = 1) {
  const KernelMatch m =
      claim_on("onednn", {.op_type = op, .opset = opset, .inputs = {x}, .attrs = std::move(a), .outputs = outputs});
  REQUIRE_FALSE(m.is_supported());
  return m.reason();
}

ints repeat(std::size_t n, int64_t v) { return ints(n, v); }

}  // namespace

TEST_CASE("onednn MaxPool matches the cpu EP in every window mode, 1-D to 3-D", "[onednn]") {
  for (std::size_t spatial = 1; spatial <= 3; ++spatial) {
    const Tensor x = pool_input(image(spatial, spatial == 3 ? 7 : 9));
    const ints k3 = repeat(spatial, 3), k2 = repeat(spatial, 2), s2 = repeat(spatial, 2);
    check_pool("MaxPool", x, attrs({{"kernel_shape", k3}}));
    check_pool("MaxPool", x, attrs({{"kernel_shape", k3}, {"pads", repeat(2 * spatial, 1)}}));
    check_pool("MaxPool", x, attrs({{"kernel_shape", k3}, {"strides", s2}}));
    check_pool("MaxPool", x, attrs({{"kernel_shape", k2}, {"dilations", s2}}));
    check_pool("MaxPool", x, attrs({{"kernel_shape", k3}, {"strides", s2}, {"ceil_mode", int64_t{1}}}));
    check_pool("MaxPool", x,
               attrs({{"kernel_shape", k2}, {"strides", s2}, {"dilations", s2}, {"ceil_mode", int64_t{1}}}));
    for (const char* pad : {"SAME_UPPER", "SAME_LOWER", "VALID"}) {
      check_pool("MaxPool", x, attrs({{"kernel_shape", k2}, {"strides", s2}, {"auto_pad", std::string(pad)}}));
      check_pool("MaxPool", x, attrs({{"kernel_shape", k3}, {"auto_pad", std::string(pad)}}));
    }
  }
}

TEST_CASE("onednn MaxPool matches the cpu EP with uneven pads, every opset and windows in the padding",
          "[onednn]") {
  const Tensor x = pool_input({1, 2, 6, 5});
  const AttributeMap plain = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 1}}, {"pads", ints{0, 1, 2, 0}}});
  for (int64_t opset : {1, 8, 10, 11, 12}) check_pool("MaxPool", x, plain, opset);
  check_pool("MaxPool", x, attrs({{"kernel_shape", ints{3, 3}}, {"strides", ints{3, 3}}, {"pads", ints{1, 0, 2, 1}},
                                  {"ceil_mode", int64_t{1}}}));
  // Pads as large as the kernel: outputs whose window holds no input.
  check_pool("MaxPool", x, attrs({{"kernel_shape", ints{2, 2}}, {"pads", ints{2, 2, 2, 2}}}));
  // ceil_mode drops the last window, which would start in the end padding.
  check_pool("MaxPool", pool_input({1, 2, 4}),
             attrs({{"kernel_shape", ints{1}}, {"strides", ints{2}}, {"pads", ints{0, 2}}, {"ceil_mode", int64_t{1}}}));
}

TEST_CASE("onednn AveragePool matches the cpu EP with and without the padding counted", "[onednn]") {
  for (std::size_t spatial = 1; spatial <= 3; ++spatial) {
    const Tensor x = pool_input(image(spatial, spatial == 3 ? 7 : 9), 11);
    const ints k3 = repeat(spatial, 3), k2 = repeat(spatial, 2), s2 = repeat(spatial, 2);
    for (int64_t include : {0, 1}) {
      const auto count = std::pair<std::string, Attribute::Value>{"count_include_pad", include};
      check_pool("AveragePool", x, attrs({{"kernel_shape", k3}, count}));
      check_pool("AveragePool", x, attrs({{"kernel_shape", k3}, {"pads", repeat(2 * spatial, 1)}, count}));
      check_pool("AveragePool", x,
                 attrs({{"kernel_shape", k3}, {"strides", s2}, {"pads", repeat(2 * spatial, 2)}, count}));
      for (const char* pad : {"SAME_UPPER", "SAME_LOWER", "VALID"})
        check_pool("AveragePool", x, attrs({{"kernel_shape", k2}, {"strides", s2}, {"auto_pad", std::string(pad)},
                                            count}));
      // ceil_mode where the last window ends inside the pads: both counts agree with the cpu EP.
      check_pool("AveragePool", x, attrs({{"kernel_shape", k3}, {"strides", s2}, {"pads", repeat(2 * spatial, 1)},
                                          {"ceil_mode", int64_t{1}}, count}));
    }
    // ceil_mode past the end pads, counting only the input.
    check_pool("AveragePool", x, attrs({{"kernel_shape", k2}, {"strides", s2}, {"ceil_mode", int64_t{1}}}));
  }
}

TEST_CASE("onednn AveragePool matches the cpu EP at every opset", "[onednn]") {
  const Tensor x = pool_input({1, 2, 7, 6}, 3);
  const AttributeMap a = attrs({{"kernel_shape", ints{3, 2}}, {"strides", ints{2, 2}}, {"pads", ints{1, 0, 1, 1}}});
  for (int64_t opset : {1, 7, 10, 11, 19}) check_pool("AveragePool", x, a, opset);
  AttributeMap counted = a;
  counted.set("count_include_pad", Attribute{int64_t{1}});
  for (int64_t opset : {7, 10, 11, 19}) check_pool("AveragePool", x, counted, opset);
  // AveragePool-19's dilations, with ceil_mode and either count.
  for (int64_t include : {0, 1})
    check_pool("AveragePool", x,
               attrs({{"kernel_shape", ints{2, 2}}, {"dilations", ints{2, 3}}, {"strides", ints{1, 2}},
                      {"pads", ints{1, 1, 1, 1}}, {"ceil_mode", int64_t{1}}, {"count_include_pad", include}}),
               19);
  // ceil_mode dropping a window that starts in the end pads, padding counted.
  check_pool("AveragePool", pool_input({1, 2, 4}),
             attrs({{"kernel_shape", ints{1}}, {"strides", ints{2}}, {"pads", ints{0, 2}}, {"ceil_mode", int64_t{1}},
                    {"count_include_pad", int64_t{1}}}));
}

TEST_CASE("onednn GlobalAveragePool and GlobalMaxPool match the cpu EP, 1-D to 3-D", "[onednn]") {
  for (std::size_t spatial = 1; spatial <= 3; ++spatial) {
    const Tensor x = pool_input(image(spatial, 5), 5);
    check_pool("GlobalAveragePool", x, {}, 1);
    check_pool("GlobalMaxPool", x, {}, 1);
  }
}

TEST_CASE("onednn pooling declines what oneDNN computes differently", "[onednn]") {
  const Tensor x = pool_input({1, 1, 5, 5});
  CHECK(decline_reason("MaxPool", x, attrs({{"kernel_shape", ints{2, 2}}}), 12, 2) ==
        "MaxPool: the Indices output is not supported by the onednn EP; the cpu EP computes it");
  CHECK_THAT(decline_reason("MaxPool", Tensor::from_vector<uint8_t>({1, 1, 2, 2}, {1, 2, 3, 4}),
                            attrs({{"kernel_shape", ints{2, 2}}})),
             Catch::Contains("input 0 is uint8; the onednn EP computes in float32 only"));
  // 5 - 2 = 3 is odd: ceil_mode adds a window reaching one past the input.
  CHECK_THAT(decline_reason("AveragePool", x,
                            attrs({{"kernel_shape", ints{2, 2}}, {"strides", ints{2, 2}}, {"ceil_mode", int64_t{1}},
                                   {"count_include_pad", int64_t{1}}})),
             Catch::Contains("AveragePool: with ceil_mode the last window of a dim of size 5 reaches 1 past the end "
                             "pad 0; onednn divides it by the whole kernel"));
  CHECK_THAT(decline_reason("AveragePool", x, attrs({{"kernel_shape", ints{2, 2}}, {"pads", ints{2, 0, 0, 0}}})),
             Catch::Contains("AveragePool: pads 2 and 0 around a dim of size 5 leave a window of span 2 with no input"));
  CHECK_THAT(decline_reason("AveragePool", pool_input({1, 1, 4}),
                            attrs({{"kernel_shape", ints{1}}, {"strides", ints{2}}, {"pads", ints{0, 2}},
                                   {"ceil_mode", int64_t{1}}})),
             Catch::Contains("leave a window of span 1 with no input"));
  CHECK_THAT(decline_reason("GlobalAveragePool", pool_input({1, 1, 2, 2, 2, 2}), {}, 1),
             Catch::Contains("GlobalAveragePool: input 0 has rank 6; the onednn EP supports ranks 3 to 5"));
  CHECK_THAT(decline_reason("MaxPool", pool_input({1, 1, 5, 5}), attrs({{"kernel_shape", ints{2}}})),
             Catch::Contains("kernel_shape [2] has 1 values for 2 spatial dims"));
}
