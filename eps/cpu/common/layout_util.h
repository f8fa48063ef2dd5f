// Helpers of the data-movement kernels (shape ops, Transpose, Concat/Split, Slice/Gather,
// constants): they serve every dtype by copying elements by size, strings as objects.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// Elements per parallel chunk of a copy, at least: smaller chunks cost more in scheduling than
// they gain.
inline constexpr int64_t kGrainElements = 16384;

// Calls fn(std::type_identity<T>{}) where T is std::string for strings and otherwise an
// unsigned integer of the element's size, so that assigning a T copies one element of
// any dtype (float16 and bfloat16 as uint16_t, bool as uint8_t...).
template <class Fn>
decltype(auto) visit_element_type(DType t, Fn&& fn) {
  if (t == DType::kString) return fn(std::type_identity<std::string>{});
  switch (dtype_size(t)) {
    case 1: return fn(std::type_identity<uint8_t>{});
    case 2: return fn(std::type_identity<uint16_t>{});
    case 4: return fn(std::type_identity<uint32_t>{});
    default: return fn(std::type_identity<uint64_t>{});
  }
}

// Copies n elements between non-overlapping buffers; strings are assigned, not memcpy'd.
void copy_elements(DType t, void* dst, const void* src, int64_t n);

// The contiguous run of `source`'s elements that starts at element `offset`, as a tensor
// of `shape` sharing the storage (a ViewOutput: nothing is copied).
Tensor contiguous_view(const Tensor& source, int64_t offset, Shape shape);

// Product of shape[begin, end): the outer or inner extent around an axis.
int64_t dims_product(std::span<const int64_t> shape, std::size_t begin, std::size_t end);

// Axes walked by an outer loop, each with its stride in the input and in the output.
struct OuterAxes {
  Shape sizes, in_strides, out_strides;

  int64_t count() const { return shape_numel(sizes); }
  // Input and output offsets, in elements, of outer position i (row-major over sizes).
  std::pair<int64_t, int64_t> offsets(int64_t i) const {
    int64_t in = 0, out = 0;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      const int64_t idx = i % sizes[d];
      i /= sizes[d];
      in += idx * in_strides[d];
      out += idx * out_strides[d];
    }
    return {in, out};
  }
};

// Cost of a kernel that moves elements without arithmetic: every output element read once
// and written once; zeros while an output's shape is symbolic.
Cost copy_cost(const NodeContext& ctx);

// Declines an axis attribute that is negative before opset 11 or, when input 0's rank is
// known, out of range for it (Concat, Split, Gather).
KernelMatch check_axis_attribute(const NodeContext& ctx, int64_t axis);

// Like check_axis_attribute, but a negative axis counts from the back at every opset, as
// ONNX Runtime accepts it in models exported before opset 11 (pytorch's GLU splits on -1).
KernelMatch check_axis_in_range(const NodeContext& ctx, int64_t axis);

// Resolves axes against `rank` (negative ones from the back when allow_negative), rejecting
// out-of-range and repeated axes with an error that names `op` and the valid range.
Expected<std::vector<int64_t>> normalize_axes(std::string_view op, std::span<const int64_t> axes,
                                              int64_t rank, bool allow_negative);

}  // namespace nxrt::cpu
