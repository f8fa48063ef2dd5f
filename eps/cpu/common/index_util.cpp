// Index resolution with errors that name the offending index, and the strided offset walk.
#include "common/index_util.h"

#include <fmt/format.h>

namespace nxrt::cpu {

Expected<int64_t> resolve_index(std::string_view op, int64_t index, int64_t position, int64_t axis, int64_t dim,
                                bool allow_negative) {
  const int64_t resolved = index < 0 && allow_negative ? index + dim : index;
  if (resolved >= 0 && resolved < dim) return resolved;
  return fail(ErrorCode::kRuntime,
              fmt::format("{}: index {} at position {} of the indices is out of range for axis {} of size {}", op,
                          index, position, axis, dim),
              allow_negative ? fmt::format("{} accepts indices in [{}, {}] for this axis", op, -dim, dim - 1)
                             : fmt::format("{} at this opset accepts indices in [0, {}] for this axis", op, dim - 1),
              "fix the indices input so that every index addresses an element of its axis");
}

Expected<std::vector<int64_t>> resolve_indices(std::string_view op, const Tensor& indices, int64_t axis,
                                               int64_t dim, bool allow_negative) {
  std::vector<int64_t> values = indices.to_int64_vector();
  for (std::size_t k = 0; k < values.size(); ++k) {
    auto r = resolve_index(op, values[k], static_cast<int64_t>(k), axis, dim, allow_negative);
    if (!r) return std::unexpected(std::move(r.error()));
    values[k] = *r;
  }
  return values;
}

std::vector<int64_t> strided_offsets(std::span<const int64_t> shape, std::span<const int64_t> strides,
                                     int64_t skip_axis) {
  const int64_t n = shape_numel(shape);
  std::vector<int64_t> offsets(static_cast<std::size_t>(std::max<int64_t>(n, 0)));
  if (n <= 0) return offsets;
  std::vector<int64_t> coord(shape.size(), 0);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    offsets[static_cast<std::size_t>(i)] = offset;
    // Odometer step: the innermost axis advances, carries reset an axis to 0.
    for (std::size_t d = shape.size(); d-- > 0;) {
      const int64_t stride = static_cast<int64_t>(d) == skip_axis ? 0 : strides[d];
      offset += stride;
      if (++coord[d] < shape[d]) break;
      offset -= coord[d] * stride;
      coord[d] = 0;
    }
  }
  return offsets;
}

}  // namespace nxrt::cpu
