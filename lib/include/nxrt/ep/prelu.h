// PRelu's slope as every EP reads it. From opset 7 the slope broadcasts onto X numpy-style.
// PRelu-1 and -6 take a slope of one element or, as Caffe2 and the PyTorch exporter of that
// time did, one value per channel (axis 1 of X); other slopes broadcast numpy-style there too.
#pragma once

#include <cstdint>

#include "nxrt/ep/tensor.h"

namespace nxrt {

// True when the node's slope holds one value per channel of X: the legacy form, read as a
// slope of shape [C, 1, ...] under numpy rules.
inline bool prelu_slope_per_channel(int64_t opset, const Shape& x, const Shape& slope) {
  return opset < 7 && slope.size() == 1 && x.size() >= 2 && slope[0] == x[1] && slope[0] != 1;
}

}  // namespace nxrt
