// nxrt's own MaxPool loop for blocked and channels-last data (onednn/native/max_pool.h): its
// output, reordered back to plain NCHW, against a direct reference on the plain input, in every
// layout it accepts; and the layouts it leaves to oneDNN.
#include <catch2/catch.hpp>

#if NXRT_HAVE_ONEDNN
#include <algorithm>
#include <limits>
#include <vector>

#include "kernel_harness.h"
#include "onednn/native/max_pool.h"

namespace nxrt::test {
namespace {

using onednn::MaxPoolDim;
using tag = dnnl::memory::format_tag;
using dnnl::memory;

// MaxPool over plain N, C, spatial... data (1 or 2 spatial dims), taps in the pads skipped.
std::vector<float> reference(const std::vector<float>& x, const memory::dims& dims, const std::vector<MaxPoolDim>& w) {
  const MaxPoolDim flat{1, 1, 1, 1, 1, 0};
  const MaxPoolDim& h = w.size() == 2 ? w[0] : flat;
  const MaxPoolDim& v = w.back();
  const int64_t planes = dims[0] * dims[1];
  std::vector<float> out;
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < h.out; ++oh)
      for (int64_t ow = 0; ow < v.out; ++ow) {
        float best = std::numeric_limits<float>::lowest();
        for (int64_t kh = 0; kh < h.kernel; ++kh)
          for (int64_t kw = 0; kw < v.kernel; ++kw) {
            const int64_t ih = oh * h.stride - h.pad_begin + kh * h.dilation;
            const int64_t iw = ow * v.stride - v.pad_begin + kw * v.dilation;
            if (ih >= 0 && ih < h.in && iw >= 0 && iw < v.in)
              best = std::max(best, x[static_cast<std::size_t>((p * h.in + ih) * v.in + iw)]);
          }
        out.push_back(best);
      }
  return out;
}

memory::desc plain(const memory::dims& d) {
  return {d, memory::data_type::f32, d.size() == 3 ? tag::ncw : tag::nchw};
}

// Runs the native kernel on `x` (plain) laid out as `layout`; returns the output, plain.
std::vector<float> run_native(const std::vector<float>& x, const memory::dims& dims, tag layout,
                              const std::vector<MaxPoolDim>& w) {
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  memory::dims out_dims = {dims[0], dims[1]};
  for (const MaxPoolDim& d : w) out_dims.push_back(d.out);
  memory plain_src(plain(dims), engine, const_cast<float*>(x.data()));
  memory src({dims, memory::data_type::f32, layout}, engine);
  dnnl::reorder(plain_src, src).execute(stream, plain_src, src);
  auto native = onednn::make_native_max_pool(src.get_desc(), w);
  REQUIRE(native.has_value());
  memory dst(native->dst_md, engine);
  native->kernel->execute({{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
  std::vector<float> out(static_cast<std::size_t>(out_dims[0] * out_dims[1] * out_dims.back() *
                                                  (out_dims.size() == 4 ? out_dims[2] : 1)));
  memory plain_dst(plain(out_dims), engine, out.data());
  dnnl::reorder(dst, plain_dst).execute(stream, dst, plain_dst);
  stream.wait();
  return out;
}

}  // namespace

TEST_CASE("onednn native MaxPool matches a direct reference in blocked and channels-last layouts", "[onednn]") {
  struct Window {
    const char* what;
    MaxPoolDim h, w;
  };
  // {in, out, kernel, stride, dilation, pad_begin}; outs follow ONNX's rules for the pads.
  const std::vector<Window> windows = {
      {"3x3 stride 2, pad 1 (ResNet)", {9, 5, 3, 2, 1, 1}, {9, 5, 3, 2, 1, 1}},
      {"3x3 stride 2, ceil_mode (SqueezeNet)", {10, 5, 3, 2, 1, 0}, {10, 5, 3, 2, 1, 0}},
      {"2x3 dilated 2x1, uneven pads", {8, 7, 2, 1, 2, 1}, {7, 6, 3, 1, 1, 0}},
      {"pads as large as the kernel", {4, 7, 2, 1, 1, 2}, {4, 7, 2, 1, 1, 2}},
  };
  for (int64_t channels : {3, 8, 13, 24, 32}) {
    for (tag layout : {tag::nChw8c, tag::nChw16c, tag::nhwc}) {
      for (const Window& win : windows) {
        const memory::dims dims = {2, channels, win.h.in, win.w.in};
        const std::vector<MaxPoolDim> w = {win.h, win.w};
        const auto x = random_floats(static_cast<std::size_t>(2 * channels * win.h.in * win.w.in), 5);
        INFO(win.what << ", C=" << channels << ", layout " << static_cast<int>(layout));
        CHECK(run_native(x, dims, layout, w) == reference(x, dims, w));
      }
    }
  }
  for (tag layout : {tag::nCw8c, tag::nCw16c, tag::nwc}) {
    const memory::dims dims = {1, 20, 11};
    const std::vector<MaxPoolDim> w = {{11, 5, 3, 2, 1, 0}};
    const auto x = random_floats(220, 9);
    INFO("1-D, layout " << static_cast<int>(layout));
    CHECK(run_native(x, dims, layout, w) == reference(x, dims, w));
  }
}

TEST_CASE("onednn native MaxPool leaves plain and 3-D data to oneDNN", "[onednn]") {
  const MaxPoolDim d{6, 3, 2, 2, 1, 0};
  CHECK_FALSE(onednn::make_native_max_pool(plain({1, 8, 6, 6}), std::vector<MaxPoolDim>{d, d}).has_value());
  CHECK_FALSE(onednn::make_native_max_pool(memory::desc({1, 8, 6, 6, 6}, memory::data_type::f32, tag::nCdhw8c),
                                           std::vector<MaxPoolDim>{d, d, d})
                  .has_value());
  CHECK(onednn::make_native_max_pool(memory::desc({1, 8, 6, 6}, memory::data_type::f32, tag::nChw8c),
                                     std::vector<MaxPoolDim>{d, d})
            .has_value());
}

}  // namespace nxrt::test
#endif
