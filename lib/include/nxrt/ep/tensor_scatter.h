// TensorScatter-24's geometry as every EP reads it: present_cache is past_cache with update's
// rows written along `axis` (not 0, the batch) from write_indices[b] on for each batch entry b
// (0 without write_indices); mode "circular" wraps positions past the cache's length, "linear"
// must not reach them.
#pragma once

#include <cstdint>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

struct TensorScatterPlan {
  int64_t batch = 0;       // past_cache's dim 0
  int64_t outer = 0;       // elements of the dims before axis (batch included)
  int64_t cache_len = 0;   // past_cache's dim at axis
  int64_t update_len = 0;  // update's dim at axis
  int64_t inner = 0;       // elements of the dims after axis
  bool circular = false;

  // The batch entry of outer row `o`.
  int64_t batch_of(int64_t o) const { return o / (outer / batch); }
  // The cache position update row `s` goes to for write index `w`; -1 when linear mode leaves
  // the cache.
  int64_t position(int64_t w, int64_t s) const {
    const int64_t p = w + s;
    if (circular) return ((p % cache_len) + cache_len) % cache_len;
    return p >= 0 && p < cache_len ? p : -1;
  }
};

// Declines inputs other than (past_cache, update[, write_indices]), a mode other than linear and
// circular, an axis that is the batch or out of range, write_indices of a type other than int64,
// and, where shapes are static, what plan_tensor_scatter would refuse.
KernelMatch check_tensor_scatter_node(const NodeContext& ctx);

// The plan for the shapes of past_cache, update and (when given) write_indices.
Expected<TensorScatterPlan> plan_tensor_scatter(const AttributeMap& attrs, const Shape& cache, const Shape& update,
                                                const Shape* write_indices);

}  // namespace nxrt
