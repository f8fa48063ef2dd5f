// GatherBlockQuantized's claim check and shapes (nxrt/ep/gather_block_quantized.h).
#include "nxrt/ep/gather_block_quantized.h"

#include <fmt/format.h>

#include <bit>

namespace nxrt {

QuantizedRows QuantizedRows::of(const NodeContext& ctx) {
  return {ctx.input_dtype(kGbqData), ctx.attrs().int_or("bits", 4), ctx.attrs().int_or("block_size", 128)};
}

KernelMatch check_gather_block_quantized_node(const NodeContext& ctx, std::string_view ep) {
  const QuantizedRows q = QuantizedRows::of(ctx);
  NXRT_REQUIRE(q.type == DType::kUInt8 || q.type == DType::kInt4 || q.type == DType::kUInt4,
               "GatherBlockQuantized: data is {}; the {} EP implements uint8, int4 and uint4 tables (not float8 or "
               "float4)",
               dtype_name(q.type), ep);
  NXRT_REQUIRE(ctx.input_dtype(kGbqIndices) == DType::kInt32 || ctx.input_dtype(kGbqIndices) == DType::kInt64,
               "GatherBlockQuantized: indices are {}; they must be int32 or int64",
               dtype_name(ctx.input_dtype(kGbqIndices)));
  NXRT_REQUIRE(!ctx.has_input(kGbqZeroPoints) || ctx.input_dtype(kGbqZeroPoints) == q.type,
               "GatherBlockQuantized: zero_points are {} and data {}; they must be one type",
               dtype_name(ctx.input_dtype(kGbqZeroPoints)), dtype_name(q.type));
  NXRT_REQUIRE(q.type != DType::kUInt8 || q.bits == 2 || q.bits == 4 || q.bits == 8,
               "GatherBlockQuantized: bits {}; uint8 tables hold 2, 4 or 8 bits per value", q.bits);
  NXRT_REQUIRE(q.block >= 16 && std::has_single_bit(static_cast<uint64_t>(q.block)),
               "GatherBlockQuantized: block_size {} must be a power of two of at least 16", q.block);
  const int64_t rank = ctx.input_rank(kGbqData).value_or(2);
  auto axis = [&](const char* name, int64_t fallback) {
    const int64_t a = ctx.attrs().int_or(name, fallback);
    return a < 0 ? a + rank : a;
  };
  NXRT_REQUIRE(rank >= 2 && axis("gather_axis", 0) == 0 && axis("quantize_axis", 1) == rank - 1,
               "GatherBlockQuantized: gather_axis {} and quantize_axis {} of data of rank {}; the {} EP implements "
               "gathering along the first axis of a table quantized along its last (rank 2 or more)",
               ctx.attrs().int_or("gather_axis", 0), ctx.attrs().int_or("quantize_axis", 1), rank, ep);
  return KernelMatch::supported();
}

Expected<Shape> gather_block_quantized_shape(const QuantizedRows& q, const Shape& ds, const Shape& indices,
                                             const Shape& scales, const Shape* zero_points) {
  const int64_t elements = ds.back(), width = q.values(elements);
  Shape per_row(ds.begin(), ds.end() - 1);  // data's dims but the last: one row each
  Shape scale_shape = per_row, zero_shape = per_row;
  scale_shape.push_back(q.blocks(elements));
  zero_shape.push_back(q.zero_elements(elements));
  if (scales != scale_shape || (zero_points && *zero_points != zero_shape))
    return fail(ErrorCode::kRuntime,
                fmt::format("GatherBlockQuantized: data {} has scales {}{}", shape_to_string(ds),
                            shape_to_string(scales),
                            zero_points ? fmt::format(" and zero_points {}", shape_to_string(*zero_points)) : ""),
                fmt::format("rows of {} values in blocks of {} need scales {} and zero_points {}", width, q.block,
                            shape_to_string(scale_shape), shape_to_string(zero_shape)),
                "give scales and zero points of those shapes, or the block_size and bits they were made with");
  Shape out = indices;
  out.insert(out.end(), ds.begin() + 1, ds.end() - 1);
  out.push_back(width);
  return out;
}

}  // namespace nxrt
