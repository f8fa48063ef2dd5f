// Parallel iteration over an input seen as (outer, len, inner) around one axis, in blocks
// of neighbouring inner positions: the scans and searches along an axis (ArgMax, CumSum)
// keep one running value per column of a block, so the inner loop runs unit-stride.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/broadcast.h"
#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// Columns per block: the running values of a block stay on the stack.
inline constexpr int64_t kAxisColumnBlock = 256;

// Calls fn(o, c0, width) for each outer position o and block [c0, c0 + width) of inner
// positions, width <= kAxisColumnBlock; element (o, j, c) lies at (o * len + j) * inner + c.
template <class Fn>
void for_axis_column_blocks(const Parallel& parallel, int64_t outer, int64_t len, int64_t inner, Fn&& fn) {
  const int64_t blocks = (inner + kAxisColumnBlock - 1) / kAxisColumnBlock;
  const int64_t grain =
      std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(len * std::min(inner, kAxisColumnBlock), 1));
  parallel.for_range(outer * blocks, grain, [&](int64_t b, int64_t e) {
    for (int64_t task = b; task < e; ++task) {
      const int64_t c0 = (task % blocks) * kAxisColumnBlock;
      fn(task / blocks, c0, std::min(kAxisColumnBlock, inner - c0));
    }
  });
}

}  // namespace nxrt::cpu
