// Merging the dimensions of a kernel's index space.
#include "index_space.h"

#include <cassert>

namespace nxrt::cuda {

void coalesce_dims(Shape& shape, std::span<Shape> strides) {
  for ([[maybe_unused]] const Shape& s : strides) assert(s.size() == shape.size());
  std::size_t kept = 0;  // dimensions [0, kept) hold the result so far
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    bool merges = kept > 0;
    for (const Shape& s : strides) merges = merges && s[kept - 1] == s[d] * shape[d];
    if (merges) {
      shape[kept - 1] *= shape[d];
      for (Shape& s : strides) s[kept - 1] = s[d];
      continue;
    }
    shape[kept] = shape[d];
    for (Shape& s : strides) s[kept] = s[d];
    ++kept;
  }
  shape.resize(kept);
  for (Shape& s : strides) s.resize(kept);
}

}  // namespace nxrt::cuda
