// TensorScatter-24's geometry (nxrt/ep/tensor_scatter.h).
#include "nxrt/ep/tensor_scatter.h"

#include <fmt/format.h>

namespace nxrt {
namespace {

Error scatter_misfit(std::string what, std::string why) {
  return Error{ErrorCode::kRuntime,
               "TensorScatter: " + std::move(what),
               std::move(why),
               "fix the shapes of the node's inputs or its axis",
               {}};
}

}  // namespace

KernelMatch check_tensor_scatter_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 2 && ctx.input_count() <= 3 && ctx.has_input(1),
               "TensorScatter: expected inputs past_cache, update and optional write_indices, got {}",
               ctx.input_count());
  const std::string mode = ctx.attrs().string_or("mode", "linear");
  NXRT_REQUIRE(mode == "linear" || mode == "circular",
               "TensorScatter: mode '{}' is not defined; use linear or circular", mode);
  NXRT_REQUIRE(ctx.input_dtype(1) == ctx.input_dtype(0),
               "TensorScatter: update has type {} and past_cache {}; they must match", dtype_name(ctx.input_dtype(1)),
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(!ctx.has_input(2) || ctx.input_dtype(2) == DType::kInt64 || ctx.input_dtype(2) == DType::kUndefined,
               "TensorScatter: write_indices has type {}; expected int64", dtype_name(ctx.input_dtype(2)));
  const auto cache = ctx.input_static_shape(0), update = ctx.input_static_shape(1);
  const auto indices = ctx.has_input(2) ? ctx.input_static_shape(2) : std::nullopt;
  if (const auto rank = ctx.input_rank(0)) {
    const int64_t axis = ctx.attrs().int_or("axis", -2);
    const int64_t a = axis < 0 ? axis + *rank : axis;
    NXRT_REQUIRE(a >= 1 && a < *rank,
                 "TensorScatter: axis {} of a rank-{} past_cache must name a dim after the batch (dim 0)", axis, *rank);
  }
  if (cache && update && (!ctx.has_input(2) || indices))
    if (auto plan = plan_tensor_scatter(ctx.attrs(), *cache, *update, indices ? &*indices : nullptr); !plan)
      return declined_by(plan.error());
  return KernelMatch::supported();
}

Expected<TensorScatterPlan> plan_tensor_scatter(const AttributeMap& attrs, const Shape& cache, const Shape& update,
                                                const Shape* write_indices) {
  const int64_t rank = static_cast<int64_t>(cache.size());
  const int64_t axis = attrs.int_or("axis", -2);
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 1 || a >= rank)
    return fail(scatter_misfit(
        fmt::format("axis {} does not name a dim after the batch of past_cache {}", axis, shape_to_string(cache)),
        "the cache is [batch, ..., sequence, ...] and write_indices index its batch"));
  bool fits = update.size() == cache.size();
  for (int64_t d = 0; fits && d < rank; ++d)
    fits = d == a ? update[static_cast<std::size_t>(d)] <= cache[static_cast<std::size_t>(d)]
                  : update[static_cast<std::size_t>(d)] == cache[static_cast<std::size_t>(d)];
  if (!fits)
    return fail(scatter_misfit(
        fmt::format("update has shape {} and past_cache {}", shape_to_string(update), shape_to_string(cache)),
        fmt::format("update matches past_cache in every dim but axis {}, where it is no longer", a)));
  if (write_indices && *write_indices != Shape{cache[0]})
    return fail(scatter_misfit(
        fmt::format("write_indices has shape {}; expected [{}]", shape_to_string(*write_indices), cache[0]),
        "write_indices holds one position per batch entry"));
  TensorScatterPlan p;
  const auto split = static_cast<std::size_t>(a);
  p.batch = cache[0];
  p.outer = shape_numel(std::span(cache).first(split));
  p.cache_len = cache[split];
  p.update_len = update[split];
  p.inner = shape_numel(std::span(cache).subspan(split + 1));
  p.circular = attrs.string_or("mode", "linear") == "circular";
  return p;
}

}  // namespace nxrt
