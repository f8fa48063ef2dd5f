// numpy matmul's shapes: promotion of 1-D operands, batch broadcasting, per-product offsets.
#include "common/matmul_plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace nxrt::cpu {

namespace {

// The batch dims of a (promoted) operand, left-padded with 1s to `rank`.
Shape batch_dims(const Shape& shape, std::size_t rank) {
  Shape dims(rank, 1);
  const std::size_t own = shape.size() > 2 ? shape.size() - 2 : 0;
  std::copy(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(own),
            dims.begin() + static_cast<std::ptrdiff_t>(rank - own));
  return dims;
}

}  // namespace

Expected<MatMulPlan> plan_matmul(const Shape& a, const Shape& b) {
  if (a.empty() || b.empty())
    return fail(ErrorCode::kRuntime,
                fmt::format("MatMul: an input is a scalar (A {}, B {})", shape_to_string(a), shape_to_string(b)),
                "numpy matmul needs operands of rank >= 1");
  MatMulPlan p;
  p.m = a.size() == 1 ? 1 : a[a.size() - 2];
  p.k = a.back();
  const int64_t kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  p.n = b.size() == 1 ? 1 : b.back();
  if (kb != p.k)
    return fail(ErrorCode::kRuntime,
                fmt::format("MatMul: A {} has {} columns but B {} has {} rows", shape_to_string(a), p.k,
                            shape_to_string(b), kb),
                "the inner dimensions of a matrix product must match");
  const std::size_t rank = std::max(a.size(), b.size()) > 2 ? std::max(a.size(), b.size()) - 2 : 0;
  const Shape ab = batch_dims(a, rank), bb = batch_dims(b, rank);
  Shape batch(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    if (ab[d] != bb[d] && ab[d] != 1 && bb[d] != 1)
      return fail(
          ErrorCode::kRuntime,
          fmt::format("MatMul: batch dims of A {} and B {} do not broadcast", shape_to_string(a), shape_to_string(b)),
          fmt::format("dim {} of the batch is {} in A and {} in B", d, ab[d], bb[d]));
    batch[d] = ab[d] == 1 ? bb[d] : ab[d];
  }
  p.out = batch;
  if (a.size() > 1) p.out.push_back(p.m);
  if (b.size() > 1) p.out.push_back(p.n);
  // Walk the output batch in row-major order, carrying each operand's offset; a
  // broadcast dim (size 1) does not advance its operand.
  const int64_t count = shape_numel(batch);
  const Shape as = contiguous_strides(ab), bs = contiguous_strides(bb);
  Shape index(rank, 0);
  int64_t ao = 0, bo = 0;
  p.b_shared = true;
  for (int64_t i = 0; i < count; ++i) {
    p.a_offsets.push_back(ao * p.m * p.k);
    p.b_offsets.push_back(bo * p.k * p.n);
    p.b_shared = p.b_shared && bo == 0;
    for (std::size_t d = rank; d-- > 0;) {
      ++index[d];
      if (ab[d] != 1) ao += as[d];
      if (bb[d] != 1) bo += bs[d];
      if (index[d] < batch[d]) break;
      if (ab[d] != 1) ao -= as[d] * batch[d];
      if (bb[d] != 1) bo -= bs[d] * batch[d];
      index[d] = 0;
    }
  }
  return p;
}

}  // namespace nxrt::cpu
