// One pooling output's window over the input, for the pools that visit each output's taps
// (pool.cpp, qlinear_pool.cpp): where it starts, which taps read inside the input, and how many
// lie inside the padded input.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "nxrt/ir/window.h"

namespace nxrt::cpu {

// Per dim (d, h, w): the input index of tap 0, the taps [first, second) that read inside the
// input, and how many taps lie inside the padded input (what count_include_pad divides by).
struct Window {
  std::array<int64_t, 3> start, first, second, padded;

  int64_t valid_count() const { return (second[0] - first[0]) * (second[1] - first[1]) * (second[2] - first[2]); }
  int64_t padded_count() const { return padded[0] * padded[1] * padded[2]; }
};

// Fills dim q of `win` for output index o.
inline void locate(const WindowDim& d, int64_t o, std::size_t q, Window& win) {
  const int64_t start = o * d.stride - d.pad_begin;
  auto below = [&](int64_t limit) {  // taps t with start + t * dilation < limit
    return limit <= start ? int64_t{0} : std::min(d.kernel, (limit - start + d.dilation - 1) / d.dilation);
  };
  win.start[q] = start;
  win.first[q] = start >= 0 ? 0 : std::min(d.kernel, (-start + d.dilation - 1) / d.dilation);
  win.second[q] = std::max(win.first[q], below(d.in));
  win.padded[q] = below(d.in + d.pad_end);
}

// Calls fn(o, window) for every output o of one plane (row-major over d, h, w), with its window.
template <class Fn>
void for_each_output_window(const Window3& w, Fn fn) {
  const auto& [dd, dh, dw] = w;
  Window win{};
  for (int64_t od = 0; od < dd.out; ++od) {
    locate(dd, od, 0, win);
    for (int64_t oh = 0; oh < dh.out; ++oh) {
      locate(dh, oh, 1, win);
      for (int64_t ow = 0; ow < dw.out; ++ow) {
        locate(dw, ow, 2, win);
        fn((od * dh.out + oh) * dw.out + ow, win);
      }
    }
  }
}

// Calls fn(id, ih, iw) for every tap of the window that reads inside the input.
template <class Fn>
void for_each_tap(const Window3& w, const Window& win, Fn fn) {
  for (int64_t a = win.first[0]; a < win.second[0]; ++a)
    for (int64_t b = win.first[1]; b < win.second[1]; ++b)
      for (int64_t e = win.first[2]; e < win.second[2]; ++e)
        fn(win.start[0] + a * w[0].dilation, win.start[1] + b * w[1].dilation, win.start[2] + e * w[2].dilation);
}

}  // namespace nxrt::cpu
