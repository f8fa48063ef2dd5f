// RotaryEmbedding-23's geometry (nxrt/ep/rotary_embedding.h).
#include "nxrt/ep/rotary_embedding.h"

#include <fmt/format.h>

namespace nxrt {
namespace {

Error rotary_misfit(std::string what, std::string why) {
  return Error{ErrorCode::kRuntime,
               "RotaryEmbedding: " + std::move(what),
               std::move(why),
               "fix the shapes of the node's inputs or its num_heads and rotary_embedding_dim",
               {}};
}

}  // namespace

KernelMatch check_rotary_embedding_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 3 && ctx.input_count() <= 4 && ctx.has_input(1) && ctx.has_input(2),
               "RotaryEmbedding: expected inputs X, cos_cache, sin_cache and optional position_ids, got {}",
               ctx.input_count());
  const int64_t rotary_dim = ctx.attrs().int_or("rotary_embedding_dim", 0);
  NXRT_REQUIRE(rotary_dim >= 0 && rotary_dim % 2 == 0,
               "RotaryEmbedding: rotary_embedding_dim {} must be 0 (the whole head) or a positive even number",
               rotary_dim);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 3 || *rank == 4,
               "RotaryEmbedding: X has rank {}; expected [batch, seq, hidden] or [batch, heads, seq, head_size]",
               rank.value_or(0));
  NXRT_REQUIRE(rank != 3 || ctx.attrs().int_or("num_heads", 0) > 0,
               "RotaryEmbedding: X has rank 3, so the num_heads attribute must be given and positive");
  const bool with_ids = ctx.has_input(3);
  for (std::size_t i : {1, 2})
    if (const auto r = ctx.input_rank(i))
      NXRT_REQUIRE(*r == (with_ids ? 2 : 3), "RotaryEmbedding: input {} ({}) has rank {}; expected {} {}", i,
                   i == 1 ? "cos_cache" : "sin_cache", *r, with_ids ? 2 : 3,
                   with_ids ? "([positions, rotary_dim / 2]) with position_ids"
                            : "([batch, seq, rotary_dim / 2]) without position_ids");
  NXRT_REQUIRE(!with_ids || ctx.input_dtype(3) == DType::kInt64 || ctx.input_dtype(3) == DType::kUndefined,
               "RotaryEmbedding: position_ids has type {}; expected int64", dtype_name(ctx.input_dtype(3)));
  const auto x = ctx.input_static_shape(0), cos = ctx.input_static_shape(1), sin = ctx.input_static_shape(2);
  const auto ids = with_ids ? ctx.input_static_shape(3) : std::nullopt;
  if (x && cos && sin && (!with_ids || ids))
    if (auto plan = plan_rotary_embedding(ctx.attrs(), *x, *cos, *sin, ids ? &*ids : nullptr); !plan)
      return declined_by(plan.error());
  return KernelMatch::supported();
}

Expected<RotaryEmbeddingPlan> plan_rotary_embedding(const AttributeMap& attrs, const Shape& x, const Shape& cos,
                                                    const Shape& sin, const Shape* position_ids) {
  RotaryEmbeddingPlan p;
  p.interleaved = attrs.int_or("interleaved", 0) != 0;
  p.with_position_ids = position_ids != nullptr;
  if (x.size() == 4) {
    p.batch = x[0], p.heads = x[1], p.seq = x[2], p.head_size = x[3];
    p.head_stride = p.seq * p.head_size, p.seq_stride = p.head_size;
  } else if (x.size() == 3) {
    const int64_t heads = attrs.int_or("num_heads", 0);
    if (heads <= 0 || x[2] % heads != 0)
      return fail(rotary_misfit(fmt::format("X has shape {}, whose hidden size {} does not split into num_heads {}",
                                            shape_to_string(x), x[2], heads),
                                "a rank-3 X is [batch, seq, num_heads * head_size]"));
    p.batch = x[0], p.seq = x[1], p.heads = heads, p.head_size = x[2] / heads;
    p.head_stride = p.head_size, p.seq_stride = x[2];
  } else {
    return fail(rotary_misfit(fmt::format("X has shape {}", shape_to_string(x)),
                              "X must be [batch, seq, hidden] or [batch, heads, seq, head_size]"));
  }
  p.batch_stride = p.heads * p.seq * p.head_size;
  const int64_t rotary_dim = attrs.int_or("rotary_embedding_dim", 0);
  p.rotary_dim = rotary_dim > 0 ? rotary_dim : p.head_size;
  if (p.rotary_dim > p.head_size || p.rotary_dim % 2 != 0)
    return fail(rotary_misfit(
        fmt::format("rotary_embedding_dim {} does not fit heads of {} channels", p.rotary_dim, p.head_size),
        "the rotated channels must be an even count no larger than head_size"));
  if (cos != sin)
    return fail(rotary_misfit(
        fmt::format("cos_cache has shape {} and sin_cache {}", shape_to_string(cos), shape_to_string(sin)),
        "the two caches must have the same shape"));
  const Shape expected = position_ids ? Shape{cos.empty() ? 0 : cos[0], p.half()} : Shape{p.batch, p.seq, p.half()};
  if (cos != expected)
    return fail(rotary_misfit(fmt::format("cos_cache and sin_cache have shape {}; expected {}", shape_to_string(cos),
                                          shape_to_string(expected)),
                              position_ids ? "with position_ids the caches are [positions, rotary_dim / 2]"
                                           : "without position_ids the caches are [batch, seq, rotary_dim / 2]"));
  if (position_ids && *position_ids != Shape{p.batch, p.seq})
    return fail(rotary_misfit(fmt::format("position_ids has shape {}; expected {}", shape_to_string(*position_ids),
                                          shape_to_string(Shape{p.batch, p.seq})),
                              "position_ids holds one position per token: [batch, seq]"));
  p.cache_rows = position_ids ? cos[0] : p.batch * p.seq;
  return p;
}

}  // namespace nxrt
