// Index checks and strided walks shared by the gather/scatter kernels: indices are data, so
// a bad one is a run-time error naming the index, where it sits and the bound it broke.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nxrt/ep/tensor.h"

namespace nxrt::cpu {

// Resolves `index` (at `position` of the indices input) against `axis` of size `dim`:
// negative values count from the back when allow_negative; an error otherwise.
Expected<int64_t> resolve_index(std::string_view op, int64_t index, int64_t position, int64_t axis, int64_t dim,
                                bool allow_negative);

// Every index of an int32/int64 tensor resolved against one axis (resolve_index per entry).
Expected<std::vector<int64_t>> resolve_indices(std::string_view op, const Tensor& indices, int64_t axis,
                                               int64_t dim, bool allow_negative);

// Element offset in a tensor with `strides` of each row-major position of `shape`, with the
// coordinate of `skip_axis` left out (it is added from an index): offsets[i] for position i.
std::vector<int64_t> strided_offsets(std::span<const int64_t> shape, std::span<const int64_t> strides,
                                     int64_t skip_axis);

}  // namespace nxrt::cpu
