// Channels-last tensors: what the cpu EP keeps inside a partition between kernels that read and
// write it (see layout.h). Such a value is stored N x spatial... x C, the shape its kernels see,
// where ONNX (and every other reader) has N x C x spatial...
#pragma once

#include "nxrt/ep/tensor.h"

namespace nxrt::cpu {

// Where a kernel's X and Y are stored: as ONNX lays them out, or channels-last.
struct ChannelsLast {
  bool x = false;
  bool y = false;
  bool any() const { return x || y; }
};

// N x C x spatial... as stored channels-last: N x spatial... x C (rank 1 and below as it is).
inline Shape channels_last_shape(const Shape& s) {
  if (s.size() < 2) return s;
  Shape out = {s[0]};
  out.insert(out.end(), s.begin() + 2, s.end());
  out.push_back(s[1]);
  return out;
}

// The ONNX shape of a channels-last tensor of shape `s` (N x spatial... x C).
inline Shape channels_first_shape(const Shape& s) {
  if (s.size() < 2) return s;
  Shape out = {s[0], s.back()};
  out.insert(out.end(), s.begin() + 1, s.end() - 1);
  return out;
}

}  // namespace nxrt::cpu
