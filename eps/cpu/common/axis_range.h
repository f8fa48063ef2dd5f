// Copying a range of positions along one axis out of a tensor or into one: the slicing
// and stacking that Loop, Scan and the sequence ops do, for every dtype.
#pragma once

#include <cstdint>
#include <span>

#include "nxrt/ep/tensor.h"

namespace nxrt::cpu {

// Positions [begin, begin + count) of `axis` as a new contiguous tensor (dim axis = count).
Tensor take_range(const Tensor& source, int64_t axis, int64_t begin, int64_t count);
// Position `index` of `axis`, with that axis removed.
Tensor take_slice(const Tensor& source, int64_t axis, int64_t index);
// Writes `source` into positions [begin, begin + source.dim(axis)) of `axis` of `dest`;
// the other dims must agree.
void put_range(const Tensor& dest, int64_t axis, int64_t begin, const Tensor& source);
// Stacks equally shaped tensors along a new axis `axis` (0 <= axis <= rank).
Tensor stack(std::span<const Tensor> items, int64_t axis, DType dtype, const Shape& item_shape);

}  // namespace nxrt::cpu
