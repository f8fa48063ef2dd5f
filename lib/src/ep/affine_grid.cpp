// AffineGrid-20's geometry (nxrt/ep/affine_grid.h).
#include "nxrt/ep/affine_grid.h"

#include <fmt/format.h>

namespace nxrt {

Expected<Shape> affine_grid_output_shape(const Shape& theta, const std::vector<int64_t>& size) {
  const auto dims = static_cast<int64_t>(size.size()) - 2;  // spatial dims: 2 or 3
  if ((dims != 2 && dims != 3) || theta.size() != 3 || theta[0] != size[0] || theta[1] != dims || theta[2] != dims + 1)
    return fail(ErrorCode::kRuntime,
                fmt::format("AffineGrid: theta {} does not fit size {}", shape_to_string(theta), shape_to_string(size)),
                "2-D grids take theta [N, 2, 3] and size [N, C, H, W]; 3-D ones theta [N, 3, 4] and size "
                "[N, C, D, H, W]",
                "fix the node's inputs");
  Shape out{size[0]};
  for (auto d = size.begin() + 2; d != size.end(); ++d) {
    if (*d < 0)
      return fail(ErrorCode::kRuntime, fmt::format("AffineGrid: size {} has a negative dim", shape_to_string(size)),
                  "", "fix the node's size input");
    out.push_back(*d);
  }
  out.push_back(dims);
  return out;
}

KernelMatch check_affine_grid_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2 && ctx.has_input(1), "AffineGrid: expected 2 inputs (theta, size)");
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "AffineGrid: input 1 (size) has type {}; it must be int64",
               dtype_name(ctx.input_dtype(1)));
  if (const auto size = ctx.constant_ints(1))
    NXRT_REQUIRE(size->size() == 4 || size->size() == 5,
                 "AffineGrid: size has {} values; expected [N, C, H, W] or [N, C, D, H, W]", size->size());
  if (const auto theta = ctx.input_static_shape(0))
    NXRT_REQUIRE(theta->size() == 3 && (((*theta)[1] == 2 && (*theta)[2] == 3) || ((*theta)[1] == 3 && (*theta)[2] == 4)),
                 "AffineGrid: theta has shape {}; expected [N, 2, 3] or [N, 3, 4]", shape_to_string(*theta));
  return KernelMatch::supported();
}

}  // namespace nxrt
