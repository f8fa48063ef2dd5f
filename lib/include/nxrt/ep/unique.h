// Unique's grouping, on a host tensor, shared by the EPs that run it (the cpu EP, and the cuda
// EP after reading its input back): the distinct slices along an axis (or the distinct
// elements of the flattened tensor), sorted or in order of first occurrence.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

struct UniqueGroups {
  int64_t outer = 1, count = 0, inner = 1;  // x as (outer, count, inner) slices along the axis
  Shape shape;                   // output 0's: x's with first.size() slices along the axis, or [first.size()]
  std::vector<int64_t> first;    // per output slice: its first index in x (output 1, `indices`)
  std::vector<int64_t> inverse;  // per input slice: its output slice (output 2)
  std::vector<int64_t> counts;   // per output slice: how often it occurs (output 3)
};

// x contiguous on the host, of any dtype but the 4-bit ones; slices compare element by element,
// NaN after every number and equal to NaN. `axis` (negative: from the end) out of range is a
// kRuntime error.
Expected<UniqueGroups> find_unique(const Tensor& x, std::optional<int64_t> axis, bool sorted);

}  // namespace nxrt
