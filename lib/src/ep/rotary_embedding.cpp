// RotaryEmbedding's geometry, ONNX's and ONNX Runtime's (nxrt/ep/rotary_embedding.h).
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

constexpr std::string_view kMicrosoftRotary = "com.microsoft RotaryEmbedding";

std::unexpected<Error> microsoft_rotary_misfit(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("{}: {}", kMicrosoftRotary, what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
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

KernelMatch check_microsoft_rotary_embedding_node(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 4 && ctx.has_input(1) && ctx.has_input(2) && ctx.has_input(3),
               "{}: input, position_ids, cos_cache and sin_cache are all required", kMicrosoftRotary);
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kInt64, "{}: position_ids is {}; it must be int64", kMicrosoftRotary,
               dtype_name(ctx.input_dtype(1)));
  for (std::size_t i : {2, 3})
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0),
                 "{}: input {} has type {} and input 0 {}; they must be equal", kMicrosoftRotary, i,
                 dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.attrs().int_or("rotary_embedding_dim", 0) <= 0 || ctx.attrs().int_or("num_heads", 0) > 0,
               "{}: rotary_embedding_dim is given without num_heads; give num_heads too", kMicrosoftRotary);
  const auto x = ctx.input_static_shape(0), ids = ctx.input_static_shape(1);
  const auto cos = ctx.input_static_shape(2), sin = ctx.input_static_shape(3);
  if (x && ids && cos && sin)
    if (auto plan = plan_microsoft_rotary_embedding(ctx.attrs(), *x, *ids, *cos, *sin); !plan)
      return declined_by(plan.error());
  return KernelMatch::supported();
}

Expected<RotaryEmbeddingPlan> plan_microsoft_rotary_embedding(const AttributeMap& attrs, const Shape& x,
                                                              const Shape& ids, const Shape& cos, const Shape& sin) {
  RotaryEmbeddingPlan p;
  p.interleaved = attrs.int_or("interleaved", 0) != 0;
  p.with_position_ids = true;
  const int64_t heads = attrs.int_or("num_heads", 0), rotary_dim = attrs.int_or("rotary_embedding_dim", 0);
  if (cos.size() != 2 || cos != sin)
    return microsoft_rotary_misfit(
        fmt::format("cos_cache has shape {} and sin_cache {}", shape_to_string(cos), shape_to_string(sin)),
        "both are [positions, rotary_dim / 2]");
  if (x.size() != 3 && x.size() != 4)
    return microsoft_rotary_misfit(fmt::format("input has shape {}", shape_to_string(x)),
                                   "input is [batch, seq, hidden] or [batch, heads, seq, head_size]");
  p.batch = x[0];
  p.seq = x.size() == 4 ? x[2] : x[1];
  const int64_t hidden = x.size() == 4 ? x[1] * x[3] : x[2];
  p.head_size = x.size() == 4 ? x[3] : heads > 0 ? hidden / heads : 2 * cos[1];
  p.rotary_dim = rotary_dim > 0 ? rotary_dim : p.head_size;
  if (p.head_size <= 0 || hidden % p.head_size != 0 || (heads > 0 && hidden != heads * p.head_size) ||
      p.rotary_dim > p.head_size || p.rotary_dim % 2 != 0 || cos[1] != p.rotary_dim / 2)
    return microsoft_rotary_misfit(
        fmt::format("input has shape {}, cos_cache {}, num_heads {} and rotary_embedding_dim {}", shape_to_string(x),
                    shape_to_string(cos), heads, rotary_dim),
        "heads of head_size channels (num_heads of them, or 2 * cos_cache's width without rotary_embedding_dim) "
        "rotate their first rotary_embedding_dim channels (even, at most head_size), and cos_cache is "
        "rotary_embedding_dim / 2 wide");
  p.heads = hidden / p.head_size;
  if (x.size() == 4) {
    p.head_stride = p.seq * p.head_size, p.seq_stride = p.head_size;
  } else {
    p.head_stride = p.head_size, p.seq_stride = hidden;
  }
  p.batch_stride = p.heads * p.seq * p.head_size;
  p.cache_rows = cos[0];
  if (shape_numel(ids) != 1 && ids != Shape{p.batch, p.seq})
    return microsoft_rotary_misfit(
        fmt::format("position_ids has shape {}", shape_to_string(ids)),
        fmt::format("position_ids is [{}, {}], or one value (the first token's position)", p.batch, p.seq));
  p.first_position_only = shape_numel(ids) == 1;
  return p;
}

}  // namespace nxrt
