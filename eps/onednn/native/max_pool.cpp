// The loop: each output pixel of a row takes the maximum over the window's taps that lie
// inside the input (pads never win, as ONNX defines), one block of channels at a time so that
// the compiler turns the innermost loop into vector max instructions.
#include "native/max_pool.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

#include "native/lanes.h"

namespace nxrt::onednn {
namespace {

// Where the channels of one pixel are: `lanes` of them, `lane_group` apart in memory order
// as [batch][group][h][w][lanes] with pixel stride `pixel` (lanes for blocked data, C for
// channels last, where a group is a run of lanes inside one pixel).
struct Layout {
  int64_t batch = 0, groups = 0, lanes = 0;
  int64_t batch_stride = 0, group_stride = 0, row_stride = 0, pixel = 0;
};

// The taps [first, last) of a window starting at `start` that fall inside [0, in).
struct TapRange {
  int64_t first, last;
};
TapRange taps_inside(int64_t start, const MaxPoolDim& d) {
  auto ceil_div = [](int64_t a, int64_t b) { return a <= 0 ? 0 : (a + b - 1) / b; };
  const int64_t first = ceil_div(-start, d.dilation);
  const int64_t last = std::min(d.kernel, ceil_div(d.in - start, d.dilation));
  return {std::min(first, d.kernel), std::max(last, std::min(first, d.kernel))};
}

// One output row of one channel group, kLanes channels per pixel. `rows` and `cols`: the taps
// inside the input of this row's windows and of each column's. In two passes, each a run of
// independent max instructions: first over the window's rows for every input column (into
// `column_max`, w.in x kLanes floats), then over each window's columns. (Taking the 9 taps of
// a 3x3 window one after another made one chain of dependent maxes per pixel, which ran at
// the instruction's latency.) A NaN never wins, in either pass, as before.
template <int kLanes>
void pool_row(const float* src, float* dst, const Layout& in, const Layout& out, const MaxPoolDim& h,
              const MaxPoolDim& w, int64_t oh, TapRange rows, std::span<const TapRange> cols, float* column_max) {
  using V = Lanes<kLanes>;
  // A window with no input (never in valid ONNX) gives the lowest float, as the cpu EP does.
  const V lowest = broadcast_lanes<kLanes>(std::numeric_limits<float>::lowest());
  const int64_t h_start = oh * h.stride - h.pad_begin;
  const float* first_row = src + (h_start + rows.first * h.dilation) * in.row_stride;
  const int64_t row_step = h.dilation * in.row_stride;
  for (int64_t iw = 0; iw < w.in; ++iw) {
    V best = lowest;
    const float* p = first_row + iw * in.pixel;
    for (int64_t kh = rows.first; kh < rows.last; ++kh, p += row_step) {
      const V v = load_lanes<kLanes>(p);
      best = v > best ? v : best;
    }
    store_lanes<kLanes>(column_max + iw * kLanes, best);
  }
  for (int64_t ow = 0; ow < w.out; ++ow) {
    const int64_t w_start = ow * w.stride - w.pad_begin;
    const TapRange c = cols[static_cast<std::size_t>(ow)];
    V best = lowest;
    for (int64_t kw = c.first; kw < c.last; ++kw) {
      const V v = load_lanes<kLanes>(column_max + (w_start + kw * w.dilation) * kLanes);
      best = v > best ? v : best;
    }
    store_lanes<kLanes>(dst + ow * out.pixel, best);
  }
}

// The taps inside the input of every window along `d`.
std::vector<TapRange> taps_of_windows(const MaxPoolDim& d) {
  std::vector<TapRange> taps;
  for (int64_t o = 0; o < d.out; ++o) taps.push_back(taps_inside(o * d.stride - d.pad_begin, d));
  return taps;
}

class MaxPoolKernel final : public NativeKernel {
 public:
  MaxPoolKernel(Layout in, Layout out, MaxPoolDim h, MaxPoolDim w, std::string layout_name)
      : in_(in),
        out_(out),
        h_(h),
        w_(w),
        row_taps_(taps_of_windows(h)),
        col_taps_(taps_of_windows(w)),
        layout_name_(std::move(layout_name)) {}

  void execute(const std::unordered_map<int, dnnl::memory>& args) const override {
    const auto* src = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    auto* dst = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const int64_t rows = in_.batch * in_.groups * h_.out;
#pragma omp parallel
    {
      std::vector<float> column_max(static_cast<std::size_t>(w_.in) * 16);  // w.in x kLanes (at most 16)
#pragma omp for schedule(static)
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t oh = r % h_.out, group = r / h_.out % in_.groups, n = r / h_.out / in_.groups;
        const float* s = src + n * in_.batch_stride + group * in_.group_stride;
        float* d = dst + n * out_.batch_stride + group * out_.group_stride + oh * out_.row_stride;
        const TapRange taps = row_taps_[static_cast<std::size_t>(oh)];
        float* m = column_max.data();
        switch (in_.lanes) {
          case 16: pool_row<16>(s, d, in_, out_, h_, w_, oh, taps, col_taps_, m); break;
          case 8: pool_row<8>(s, d, in_, out_, h_, w_, oh, taps, col_taps_, m); break;
          default:  // channels last with C not a multiple of 8: one lane at a time
            for (int64_t c = 0; c < in_.lanes; ++c)
              pool_row<1>(s + c, d + c, in_, out_, h_, w_, oh, taps, col_taps_, m);
        }
      }
    }
  }

  std::string name() const override { return "nxrt:" + layout_name_; }

 private:
  Layout in_, out_;
  MaxPoolDim h_, w_;
  std::vector<TapRange> row_taps_, col_taps_;
  std::string layout_name_;
};

// The layouts this kernel reads, for a source of `dims` (N, C, spatial...).
struct KnownLayout {
  memory::format_tag tag;
  int64_t block;  // channels per block; 0: channels last
  const char* name;
};
std::vector<KnownLayout> known_layouts(std::size_t rank) {
  using tag = memory::format_tag;
  if (rank == 3) return {{tag::nCw8c, 8, "nCw8c"}, {tag::nCw16c, 16, "nCw16c"}, {tag::nwc, 0, "nwc"}};
  return {{tag::nChw8c, 8, "nChw8c"}, {tag::nChw16c, 16, "nChw16c"}, {tag::nhwc, 0, "nhwc"}};
}

// How data of `dims` (N, C, H, W) sits in memory in `known`.
Layout layout_of(const Dims& dims, const KnownLayout& known) {
  const int64_t c = dims[1], pixels = dims[2] * dims[3];
  Layout l;
  l.batch = dims[0];
  if (known.block > 0) {  // [N][C/B][H][W][B], the last block padded
    l.groups = (c + known.block - 1) / known.block;
    l.lanes = l.pixel = known.block;
    l.group_stride = pixels * known.block;
    l.batch_stride = l.groups * l.group_stride;
  } else {  // [N][H][W][C]: groups of 16 lanes (8 where C is not a multiple of 16)
    l.lanes = c % 16 == 0 ? 16 : c % 8 == 0 ? 8 : c;
    l.groups = c / l.lanes;
    l.pixel = c;
    l.group_stride = l.lanes;
    l.batch_stride = pixels * c;
  }
  l.row_stride = dims[3] * l.pixel;
  return l;
}

}  // namespace

std::optional<NativeMaxPool> make_native_max_pool(const memory::desc& src_md, std::span<const MaxPoolDim> dims) {
  const Dims src_dims = src_md.dims();
  const std::size_t rank = src_dims.size();
  if ((rank != 3 && rank != 4) || dims.size() != rank - 2 || src_md.data_type() != memory::data_type::f32)
    return std::nullopt;
  for (const KnownLayout& known : known_layouts(rank)) {
    if (src_md != memory::desc(src_dims, memory::data_type::f32, known.tag)) continue;
    Dims dst_dims = {src_dims[0], src_dims[1]};
    for (const MaxPoolDim& d : dims) dst_dims.push_back(d.out);
    // 1-D windows run as 2-D ones over a height of 1.
    const MaxPoolDim flat{1, 1, 1, 1, 1, 0};
    const MaxPoolDim& h = rank == 4 ? dims[0] : flat;
    const MaxPoolDim& w = dims.back();
    auto as_2d = [&](const Dims& d) { return rank == 4 ? d : Dims{d[0], d[1], 1, d[2]}; };
    auto kernel = std::make_shared<MaxPoolKernel>(layout_of(as_2d(src_dims), known), layout_of(as_2d(dst_dims), known),
                                                  h, w, known.name);
    return NativeMaxPool{std::move(kernel), memory::desc(dst_dims, memory::data_type::f32, known.tag)};
  }
  return std::nullopt;
}

}  // namespace nxrt::onednn
