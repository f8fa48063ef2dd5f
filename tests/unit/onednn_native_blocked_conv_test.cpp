// nxrt's blocked and Winograd convolutions (onednn/native/blocked_conv.h, winograd_conv.h):
// their output, reordered back to plain NCHW, against a direct reference on the plain tensors,
// over 1x1 and 3x3 kernels, strides, uneven pads, odd counts of output blocks, pixel counts
// that are not multiples of a tile, odd output sizes (Winograd's 2x2 tiles), inputs summed in
// several spans, batches, and every epilogue.
#include <catch2/catch.hpp>

#if NXRT_HAVE_ONEDNN
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_harness.h"
#include "onednn/native/blocked_conv.h"
#include "onednn/native/winograd_conv.h"

namespace nxrt::test {
namespace {

using onednn::BlockedConvEpilogue;
using onednn::BlockedConvShape;
using tag = dnnl::memory::format_tag;
using dnnl::memory;

// out[n][o][oh][ow] = relu?(bias[o] + sum of x * w over the window + (sum? dst_before)), plain NCHW.
std::vector<float> reference(const BlockedConvShape& s, BlockedConvEpilogue e, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& bias,
                             const std::vector<float>& dst_before) {
  std::vector<float> out(dst_before.size());
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t o = 0; o < s.out_channels; ++o)
      for (int64_t oh = 0; oh < s.out_h; ++oh)
        for (int64_t ow = 0; ow < s.out_w; ++ow) {
          double acc = e.bias ? bias[static_cast<std::size_t>(o)] : 0.0;
          for (int64_t c = 0; c < s.in_channels; ++c)
            for (int64_t kh = 0; kh < s.kernel_h; ++kh)
              for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
                const int64_t ih = oh * s.stride_h - s.pad_top + kh, iw = ow * s.stride_w - s.pad_left + kw;
                if (ih < 0 || ih >= s.in_h || iw < 0 || iw >= s.in_w) continue;
                const auto xi = static_cast<std::size_t>(((n * s.in_channels + c) * s.in_h + ih) * s.in_w + iw);
                const auto wi = static_cast<std::size_t>(((o * s.in_channels + c) * s.kernel_h + kh) * s.kernel_w + kw);
                acc += static_cast<double>(x[xi]) * w[wi];
              }
          const auto at = static_cast<std::size_t>(((n * s.out_channels + o) * s.out_h + oh) * s.out_w + ow);
          if (e.sum) acc += dst_before[at];
          out[at] = static_cast<float>(e.relu ? std::max(acc, 0.0) : acc);
        }
  return out;
}

enum class Kernel { kBlocked, kWinograd };

// Runs the kernel on plain tensors, reordered into its layouts; returns the output, plain.
std::vector<float> run_native(Kernel kernel, const BlockedConvShape& s, BlockedConvEpilogue e,
                              const std::vector<float>& x, const std::vector<float>& w,
                              const std::vector<float>& bias, const std::vector<float>& dst_before) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const auto f32 = memory::data_type::f32;
  auto blocked = [&](const memory::dims& dims, tag plain_tag, tag blocked_tag, const std::vector<float>& values) {
    memory plain({dims, f32, plain_tag}, engine, const_cast<float*>(values.data()));
    memory m({dims, f32, blocked_tag}, engine);
    dnnl::reorder(plain, m).execute(stream, plain, m);
    return m;
  };
  const memory::dims dst_dims = {s.batch, s.out_channels, s.out_h, s.out_w};
  memory src = blocked({s.batch, s.in_channels, s.in_h, s.in_w}, tag::nchw, tag::nChw8c, x);
  const memory::dims w_dims = {s.out_channels, s.in_channels, s.kernel_h, s.kernel_w};
  std::vector<float> transformed;
  if (kernel == Kernel::kWinograd) transformed = onednn::winograd_weights(s, w.data());
  memory weights = kernel == Kernel::kWinograd
                       ? memory({{static_cast<int64_t>(transformed.size())}, f32, tag::a}, engine, transformed.data())
                       : blocked(w_dims, tag::oihw, tag::OIhw8i8o, w);
  memory dst = blocked(dst_dims, tag::nchw, tag::nChw8c, dst_before);
  memory b({{s.out_channels}, f32, tag::a}, engine, const_cast<float*>(bias.data()));
  const int64_t scratch_floats = kernel == Kernel::kWinograd ? onednn::winograd_conv_scratch_floats(s)
                                                              : onednn::blocked_conv_scratch_floats(s);
  memory scratch({{std::max<int64_t>(1, scratch_floats)}, f32, tag::a}, engine);
  stream.wait();
  const auto native = kernel == Kernel::kWinograd ? onednn::make_winograd_conv(s, e) : onednn::make_blocked_conv(s, e);
  native->execute(
      {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_BIAS, b}, {DNNL_ARG_DST, dst},
       {DNNL_ARG_SCRATCHPAD, scratch}});
  std::vector<float> out(dst_before.size());
  memory plain_dst({dst_dims, f32, tag::nchw}, engine, out.data());
  dnnl::reorder(dst, plain_dst).execute(stream, dst, plain_dst);
  stream.wait();
  return out;
}

// Largest |a - b|, relative to the reference's largest magnitude (at least 1): the sums differ
// in rounding only, which grows with the terms summed, not with each output's own size.
double max_error(const std::vector<float>& a, const std::vector<float>& b) {
  double worst = 0, scale = 1;
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst = std::max(worst, static_cast<double>(std::fabs(a[i] - b[i])));
    scale = std::max(scale, static_cast<double>(std::fabs(b[i])));
  }
  return worst / scale;
}

void check_conv(const char* what, const BlockedConvShape& s, BlockedConvEpilogue e,
                Kernel kernel = Kernel::kBlocked) {
  REQUIRE((kernel == Kernel::kWinograd ? onednn::winograd_conv_supports(s) : onednn::blocked_conv_supports(s)));
  const auto count = [](int64_t a, int64_t b, int64_t c, int64_t d) { return static_cast<std::size_t>(a * b * c * d); };
  const auto x = random_floats(count(s.batch, s.in_channels, s.in_h, s.in_w), 11);
  const auto w = random_floats(count(s.out_channels, s.in_channels, s.kernel_h, s.kernel_w), 12);
  const auto bias = random_floats(static_cast<std::size_t>(s.out_channels), 13);
  const auto dst_before = random_floats(count(s.batch, s.out_channels, s.out_h, s.out_w), 14);
  INFO(what << " (bias " << e.bias << ", sum " << e.sum << ", relu " << e.relu << ")");
  CHECK(max_error(run_native(kernel, s, e, x, w, bias, dst_before), reference(s, e, x, w, bias, dst_before)) < 1e-5);
}

void check_every_epilogue(const char* what, const BlockedConvShape& s, Kernel kernel) {
  for (bool bias : {false, true})
    for (bool sum : {false, true})
      for (bool relu : {false, true}) check_conv(what, s, {bias, sum, relu}, kernel);
}

// A shape: {batch, in_channels, out_channels, in_h, in_w, out_h, out_w, kernel_h, kernel_w,
// stride_h, stride_w, pad_top, pad_left}.
struct Case {
  const char* what;
  BlockedConvShape shape;
};

}  // namespace

TEST_CASE("onednn blocked convolution matches a direct reference", "[onednn]") {
  const std::vector<Case> cases = {
      {"1x1 on 7x7 (ResNet's last stage)", {1, 32, 48, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0}},
      {"1x1 stride 2, three output blocks, batch 2", {2, 16, 24, 14, 14, 7, 7, 1, 1, 2, 2, 0, 0}},
      {"3x3 pad 1", {1, 24, 16, 7, 7, 7, 7, 3, 3, 1, 1, 1, 1}},
      {"3x3 stride 2 pad 1", {1, 8, 8, 14, 14, 7, 7, 3, 3, 2, 2, 1, 1}},
      {"3x2 kernel, pads top 1 and right 1 only", {1, 16, 8, 6, 5, 5, 5, 3, 2, 1, 1, 1, 0}},
      {"one output block, 5x3 output", {1, 8, 8, 5, 3, 5, 3, 1, 1, 1, 1, 0, 0}},
      {"2048 inputs: summed in several spans", {1, 2048, 16, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0}},
      {"a single output pixel (a Gemm)", {1, 64, 40, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}},
  };
  for (const Case& c : cases) check_conv(c.what, c.shape, {.bias = true, .sum = true, .relu = true});
  check_every_epilogue("3x3 pad 1, every epilogue", cases[2].shape, Kernel::kBlocked);
  check_conv("2048 inputs, no sum: spans after the first add to dst", cases[6].shape, {.bias = true, .relu = true});
}

TEST_CASE("onednn Winograd convolution matches a direct reference", "[onednn]") {
  const std::vector<Case> cases = {
      {"pad 1 on 14x14 (ResNet's third stage)", {1, 32, 16, 14, 14, 14, 14, 3, 3, 1, 1, 1, 1}},
      {"pad 1 on 7x7: odd output, last tiles half outside", {1, 16, 24, 7, 7, 7, 7, 3, 3, 1, 1, 1, 1}},
      {"no pads: 5x6 output of a 7x8 input, batch 2", {2, 8, 8, 7, 8, 5, 6, 3, 3, 1, 1, 0, 0}},
      {"pads top 1 and left 0 only", {1, 8, 16, 6, 6, 5, 4, 3, 3, 1, 1, 1, 0}},
      {"1024 inputs: summed in several spans", {1, 1024, 16, 14, 14, 14, 14, 3, 3, 1, 1, 1, 1}},
  };
  for (const Case& c : cases)
    check_conv(c.what, c.shape, {.bias = true, .sum = true, .relu = true}, Kernel::kWinograd);
  check_every_epilogue("7x7, every epilogue", cases[1].shape, Kernel::kWinograd);
  BlockedConvShape strided = cases[0].shape;
  strided.stride_h = strided.stride_w = 2;
  strided.out_h = strided.out_w = 7;
  CHECK_FALSE(onednn::winograd_conv_supports(strided));
  BlockedConvShape five = cases[0].shape;
  five.kernel_h = five.kernel_w = 5;
  CHECK_FALSE(onednn::winograd_conv_supports(five));
}

TEST_CASE("onednn blocked convolution takes only whole blocks of channels; pads need scratch", "[onednn]") {
  BlockedConvShape s{1, 16, 16, 7, 7, 7, 7, 1, 1, 1, 1, 0, 0};
  CHECK(onednn::blocked_conv_supports(s));
  s.in_channels = 12;
  CHECK_FALSE(onednn::blocked_conv_supports(s));
  s.in_channels = 16;
  s.out_channels = 20;
  CHECK_FALSE(onednn::blocked_conv_supports(s));
  s.out_channels = 16;
  CHECK(onednn::blocked_conv_scratch_floats(s) == 0);
  s.kernel_h = s.kernel_w = 3;
  s.pad_top = s.pad_left = 1;
  CHECK(onednn::blocked_conv_scratch_floats(s) == 2 * 9 * 9 * 8);
}

}  // namespace nxrt::test
#endif
