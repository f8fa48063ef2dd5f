// MatMulNBits' claim checks and weight geometry (nxrt/ep/matmul_nbits.h).
#include "nxrt/ep/matmul_nbits.h"

#include <fmt/format.h>

#include <bit>
#include <string>

namespace nxrt {


MatMulNBitsGeometry MatMulNBitsGeometry::of(const AttributeMap& attrs) {
  return {attrs.int_or("K", 0), attrs.int_or("N", 0), attrs.int_or("bits", 4), attrs.int_or("block_size", 0)};
}

KernelMatch check_matmul_nbits_node(const NodeContext& ctx, std::string_view ep) {
  const MatMulNBitsGeometry g = MatMulNBitsGeometry::of(ctx.attrs());
  const DType t = ctx.input_dtype(kNbitsA);
  NXRT_REQUIRE(ctx.input_dtype(kNbitsB) == DType::kUInt8, "MatMulNBits: B is {}; it must be uint8",
               dtype_name(ctx.input_dtype(kNbitsB)));
  NXRT_REQUIRE(ctx.input_dtype(kNbitsScales) == t, "MatMulNBits: scales are {} and A {}; they must be one type",
               dtype_name(ctx.input_dtype(kNbitsScales)), dtype_name(t));
  NXRT_REQUIRE(!ctx.has_input(kNbitsZeroPoints) || ctx.input_dtype(kNbitsZeroPoints) == DType::kUInt8 ||
                   ctx.input_dtype(kNbitsZeroPoints) == t,
               "MatMulNBits: zero_points are {}; they must be uint8 (packed) or A's type {}",
               dtype_name(ctx.input_dtype(kNbitsZeroPoints)), dtype_name(t));
  NXRT_REQUIRE(!ctx.has_input(kNbitsGroupIndex),
               "MatMulNBits: g_idx (input 4, deprecated) is not implemented by the {} EP; quantize the weights "
               "again without act-order (g_idx) reordering",
               ep);
  NXRT_REQUIRE(!ctx.has_input(kNbitsBias) || ctx.input_dtype(kNbitsBias) == t, "MatMulNBits: the bias is {} and A {}",
               dtype_name(ctx.input_dtype(kNbitsBias)), dtype_name(t));
  NXRT_REQUIRE(g.k > 0 && g.n > 0, "MatMulNBits: attributes K {} and N {} must both be given and positive", g.k,
               g.n);
  NXRT_REQUIRE(g.bits == 2 || g.bits == 4 || g.bits == 8,
               "MatMulNBits: bits {}; the {} EP implements 2, 4 and 8 (those ONNX Runtime supports)", g.bits, ep);
  NXRT_REQUIRE(g.block >= 16 && std::has_single_bit(static_cast<uint64_t>(g.block)),
               "MatMulNBits: block_size {} must be a power of two of at least 16", g.block);
  NXRT_REQUIRE(ctx.attrs().int_or("weight_prepacked", 0) == 0,
               "MatMulNBits: weight_prepacked {} means B is in a CUDA kernel's layout; the {} EP reads the "
               "standard layout (weight_prepacked 0)",
               ctx.attrs().int_or("weight_prepacked", 0), ep);
  const auto a = ctx.input_static_shape(kNbitsA);
  NXRT_REQUIRE(!a || (!a->empty() && a->back() == g.k), "MatMulNBits: A has shape {}; its last dimension must be K {}",
               a ? shape_to_string(*a) : "", g.k);
  auto count_is = [&](std::size_t i, int64_t want) {
    const auto shape = ctx.has_input(i) ? ctx.input_static_shape(i) : std::nullopt;
    return !shape || shape_numel(*shape) == want;
  };
  NXRT_REQUIRE(count_is(kNbitsB, g.n * g.blocks() * g.block_bytes()),
               "MatMulNBits: B must hold N x ceil(K / block_size) x block_size * bits / 8 = {} x {} x {} bytes", g.n,
               g.blocks(), g.block_bytes());
  NXRT_REQUIRE(count_is(kNbitsScales, g.n * g.blocks()),
               "MatMulNBits: scales must hold N x ceil(K / block_size) = {} x {}", g.n, g.blocks());
  const bool packed_zeros = ctx.input_dtype(kNbitsZeroPoints) == DType::kUInt8;
  NXRT_REQUIRE(count_is(kNbitsZeroPoints, g.n * (packed_zeros ? g.zero_bytes() : g.blocks())),
               "MatMulNBits: zero_points must hold {} x {} {}", g.n, packed_zeros ? g.zero_bytes() : g.blocks(),
               packed_zeros ? "bytes (packed as B is)" : "values (one per block)");
  NXRT_REQUIRE(count_is(kNbitsBias, g.n), "MatMulNBits: the bias must hold N = {} values", g.n);
  return KernelMatch::supported();
}

MatMulNBitsSizes matmul_nbits_sizes(const Tensor& a, const Tensor& b, const Tensor& scales, const Tensor* zero_points,
                                    const Tensor* bias) {
  return {.a = &a.shape(),
          .b = b.numel(),
          .scales = scales.numel(),
          .zero_points = zero_points ? std::optional(zero_points->numel()) : std::nullopt,
          .packed_zero_points = zero_points && zero_points->dtype() == DType::kUInt8,
          .bias = bias ? std::optional(bias->numel()) : std::nullopt};
}

Expected<void> check_matmul_nbits_inputs(const MatMulNBitsGeometry& g, const MatMulNBitsSizes& in) {
  if (in.a && (in.a->empty() || in.a->back() != g.k))
    return fail(ErrorCode::kRuntime,
                fmt::format("MatMulNBits: A has shape {}; its last dimension must be K {}", shape_to_string(*in.a),
                            g.k),
                "A's rows multiply the K x N weight", fmt::format("give A of shape [..., {}]", g.k));
  auto wrong = [&](std::string_view input, int64_t have, int64_t want, std::string_view unit) -> Expected<void> {
    return fail(ErrorCode::kRuntime, fmt::format("MatMulNBits: {} holds {} {}", input, have, unit),
                fmt::format("K {}, N {}, bits {} and block_size {} need {} {}", g.k, g.n, g.bits, g.block, want, unit),
                fmt::format("give {} of {} {}, or attributes that match it", input, want, unit));
  };
  const int64_t blocks = g.blocks();
  if (in.b != g.n * blocks * g.block_bytes())
    return wrong("B (input 1)", in.b, g.n * blocks * g.block_bytes(), "bytes");
  if (in.scales != g.n * blocks) return wrong("scales (input 2)", in.scales, g.n * blocks, "values");
  if (in.zero_points && !in.packed_zero_points && *in.zero_points != g.n * blocks)
    return wrong("zero_points (input 3)", *in.zero_points, g.n * blocks, "values");
  if (in.zero_points && in.packed_zero_points && *in.zero_points != g.n * g.zero_bytes())
    return wrong("zero_points (input 3)", *in.zero_points, g.n * g.zero_bytes(), "bytes");
  if (in.bias && *in.bias != g.n)
    return fail(ErrorCode::kRuntime, fmt::format("MatMulNBits: the bias holds {} values", *in.bias),
                fmt::format("it adds one value per column of Y, N = {}", g.n),
                fmt::format("give a bias of {} values", g.n));
  return {};
}

}  // namespace nxrt
