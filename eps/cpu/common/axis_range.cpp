// Range copies along one axis: an outer loop over the dims before it, a contiguous block
// of (count x inner) elements per step.
#include "common/axis_range.h"

#include "common/layout_util.h"

namespace nxrt::cpu {
namespace {

const char* element_ptr(const Tensor& t, int64_t element) {
  return static_cast<const char*>(t.view().data()) + element * static_cast<int64_t>(dtype_size(t.dtype()));
}
char* element_ptr_mut(const Tensor& t, int64_t element) {
  return static_cast<char*>(t.mut().data()) + element * static_cast<int64_t>(dtype_size(t.dtype()));
}

}  // namespace

Tensor take_range(const Tensor& source, int64_t axis, int64_t begin, int64_t count) {
  const Shape& shape = source.shape();
  const auto a = static_cast<std::size_t>(axis);
  const int64_t outer = dims_product(shape, 0, a);
  const int64_t inner = dims_product(shape, a + 1, shape.size());
  Shape out_shape = shape;
  out_shape[a] = count;
  Tensor out = Tensor::empty(source.dtype(), out_shape);
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(source.dtype(), element_ptr_mut(out, o * count * inner),
                  element_ptr(source, (o * shape[a] + begin) * inner), count * inner);
  return out;
}

Tensor take_slice(const Tensor& source, int64_t axis, int64_t index) {
  Shape shape = source.shape();
  shape.erase(shape.begin() + axis);
  return take_range(source, axis, index, 1).reshaped(std::move(shape));
}

void put_range(const Tensor& dest, int64_t axis, int64_t begin, const Tensor& source) {
  const Shape& shape = dest.shape();
  const auto a = static_cast<std::size_t>(axis);
  const int64_t outer = dims_product(shape, 0, a);
  const int64_t inner = dims_product(shape, a + 1, shape.size());
  const int64_t count = source.shape()[a];
  for (int64_t o = 0; o < outer; ++o)
    copy_elements(dest.dtype(), element_ptr_mut(dest, (o * shape[a] + begin) * inner),
                  element_ptr(source, o * count * inner), count * inner);
}

Tensor stack(std::span<const Tensor> items, int64_t axis, DType dtype, const Shape& item_shape) {
  Shape shape = item_shape;
  shape.insert(shape.begin() + axis, static_cast<int64_t>(items.size()));
  Tensor out = Tensor::empty(dtype, shape);
  Shape one = item_shape;
  one.insert(one.begin() + axis, 1);
  for (std::size_t i = 0; i < items.size(); ++i)
    put_range(out, axis, static_cast<int64_t>(i), items[i].reshaped(one));
  return out;
}

}  // namespace nxrt::cpu
