// MaxUnpool's shapes (nxrt/ep/max_unpool.h).
#include "nxrt/ep/max_unpool.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace nxrt {

Expected<UnpoolShapes> max_unpool_shapes(const WindowAttrs& attrs, const Shape& x,
                                         const std::optional<std::vector<int64_t>>& output_shape) {
  const std::size_t spatial = attrs.kernel.size();
  if (x.size() != spatial + 2)
    return fail(ErrorCode::kRuntime, fmt::format("MaxUnpool: X {} does not have the {} spatial dims of kernel_shape {}",
                                                 shape_to_string(x), spatial, attrs.kernel));
  UnpoolShapes s;
  s.pooled = {x[0], x[1]};
  for (std::size_t i = 0; i < spatial; ++i) {
    const int64_t size = (x[i + 2] - 1) * attrs.strides[i] + attrs.kernel[i] - attrs.pads[i] - attrs.pads[i + spatial];
    if (size < 0)
      return fail(ErrorCode::kRuntime, fmt::format("MaxUnpool: spatial dim {} of the output would be {}", i, size),
                  fmt::format("X {} with kernel_shape {}, strides {} and pads {}", shape_to_string(x), attrs.kernel,
                              attrs.strides, attrs.pads));
    s.pooled.push_back(size);
  }
  if (!output_shape) {
    s.output = s.pooled;
    return s;
  }
  s.output = Shape(output_shape->begin(), output_shape->end());
  bool fits = s.output.size() == s.pooled.size();
  for (std::size_t d = 0; fits && d < s.output.size(); ++d) fits = d < 2 ? s.output[d] == s.pooled[d] : s.output[d] >= s.pooled[d];
  if (!fits)
    return fail(ErrorCode::kRuntime, fmt::format("MaxUnpool: output_shape {} does not fit X {}", s.output, shape_to_string(x)),
                fmt::format("it must keep X's batch and channels and be at least the unpooled shape {}",
                            shape_to_string(s.pooled)),
                "fix the output_shape input");
  return s;
}

}  // namespace nxrt
