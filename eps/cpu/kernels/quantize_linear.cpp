// QuantizeLinear and DequantizeLinear: per-tensor, per-axis and (opset 21) blocked scales,
// to and from uint8, int8, uint16, int16, int4, uint4, int2, uint2, the float8 types and
// float4e2m1 (dequantize also from int32).
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/mx_float.h"
#include "nxrt/ep/quantize_scale.h"

namespace nxrt::cpu {
namespace {

std::string quantized_types_at(int64_t opset) {
  if (opset >= 25) return "uint8, int8, uint16, int16, uint4, int4, uint2, int2, the float8 types and float4e2m1";
  if (opset >= 23) return "uint8, int8, uint16, int16, uint4, int4, the float8 types and float4e2m1";
  if (opset >= 21) return "uint8, int8, uint16, int16, uint4, int4 and the float8 types";
  if (opset >= 19) return "uint8, int8 and the float8 types";
  return "uint8 and int8";
}

// Calls fn with the C++ type elements of quantized type t are held in.
template <class Fn>
Expected<void> visit_quantized(DType t, Fn&& fn) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt4:
    case DType::kInt2:
      return fn(std::type_identity<int8_t>{});
    case DType::kUInt16: return fn(std::type_identity<uint16_t>{});
    case DType::kInt16: return fn(std::type_identity<int16_t>{});
    case DType::kInt32: return fn(std::type_identity<int32_t>{});
    default:
      return fn(std::type_identity<uint8_t>{});  // uint8, uint4, uint2, float bit patterns
  }
}

// Element i of a quantized tensor as a float (float bit patterns decoded).
template <class Q>
float quantized_value(DType t, const Q* data, int64_t i) {
  if constexpr (std::is_same_v<Q, uint8_t>)
    if (is_byte_float(t)) return byte_float_to_float(t, data[i]);
  return static_cast<float>(data[i]);
}

// The scale and zero point of both ops: float scales shaped for the tensor, the axis or
// (opset 21) blocks, zero points of the scale's shape.
KernelMatch check_scales(const NodeContext& ctx, DType quantized) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_dtype(1) == DType::kFloat32, "{}: the scale has type {}; the cpu EP takes float scales "
               "(opset 19's float16 and bfloat16 scales are not implemented)", op, dtype_name(ctx.input_dtype(1)));
  const int64_t block = ctx.opset() >= 21 ? ctx.attrs().int_or("block_size", 0) : 0;
  NXRT_REQUIRE(block >= 0, "{}: block_size {} is negative", op, block);
  if (ctx.has_input(2))
    NXRT_REQUIRE(ctx.input_dtype(2) == quantized, "{}: the zero point has type {} and the quantized tensor {}; they "
                 "must match", op, dtype_name(ctx.input_dtype(2)), dtype_name(quantized));
  const auto x_rank = ctx.input_rank(0);
  const auto scale_rank = ctx.input_rank(1);
  if (block == 0) {
    const int64_t max_rank = ctx.opset() >= 13 ? 1 : 0;
    NXRT_REQUIRE(scale_rank.value_or(0) <= max_rank, "{}: the scale has rank {}; opset {} supports rank <= {}", op,
                 *scale_rank, ctx.opset(), max_rank);
    if (ctx.has_input(2))
      NXRT_REQUIRE(ctx.input_rank(2).value_or(0) <= max_rank, "{}: the zero point has rank {}; opset {} supports "
                   "rank <= {}", op, *ctx.input_rank(2), ctx.opset(), max_rank);
  } else {
    NXRT_REQUIRE(!x_rank || !scale_rank || *x_rank == *scale_rank, "{}: blocked quantization (block_size {}) needs "
                 "a scale of x's rank {}, got rank {}", op, block, x_rank.value_or(0), scale_rank.value_or(0));
    const auto zp_shape = ctx.has_input(2) ? ctx.input_static_shape(2) : std::nullopt;
    const auto scale_shape = ctx.input_static_shape(1);
    NXRT_REQUIRE(!zp_shape || !scale_shape || *zp_shape == *scale_shape, "{}: blocked quantization needs a zero "
                 "point of the scale's shape {}, got {}", op, shape_to_string(scale_shape.value_or(Shape{})),
                 shape_to_string(zp_shape.value_or(Shape{})));
  }
  const auto xs = ctx.input_static_shape(0), ss = ctx.input_static_shape(1);
  if (xs && ss) {
    auto map = scale_map(op, *xs, *ss, ctx.opset() >= 13 ? ctx.attrs().int_or("axis", 1) : 1, block);
    if (!map) return KernelMatch::declined(fmt::format("{}; {}", map.error().what, map.error().why));
  }
  return KernelMatch::supported();
}

// ---- QuantizeLinear ----

// The output type: the zero point's, else attribute output_dtype (opset 21), else uint8.
std::optional<DType> quantized_type(const NodeContext& ctx) {
  if (ctx.has_input(2)) return ctx.input_dtype(2);
  const int64_t code = ctx.opset() >= 21 ? ctx.attrs().int_or("output_dtype", 0) : 0;
  if (code == 0) return DType::kUInt8;
  return dtype_from_onnx(static_cast<int32_t>(code));
}

KernelMatch check_quantize_linear(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kInt32}));
  const int64_t code = ctx.opset() >= 21 ? ctx.attrs().int_or("output_dtype", 0) : 0;
  const auto q = quantized_type(ctx);
  NXRT_REQUIRE(q && is_quantized_type(*q, ctx.opset()),
               "QuantizeLinear: output type {} is not supported by the cpu EP at opset {}; it quantizes to {}",
               q ? std::string(dtype_name(*q)) : std::to_string(code), ctx.opset(), quantized_types_at(ctx.opset()));
  NXRT_REQUIRE(code == 0 || !ctx.has_input(2) || dtype_from_onnx(static_cast<int32_t>(code)) == ctx.input_dtype(2),
               "QuantizeLinear: output_dtype {} differs from the zero point's type {}; they must match", code,
               dtype_name(ctx.input_dtype(2)));
  NXRT_REQUIRE_MATCH(check_scales(ctx, *q));
  return KernelMatch::supported(elementwise_cost(ctx, 3));
}

// QuantizeLinear-23 adds `precision`, the type the division by the scale is computed in
// (default: the scale's). The cpu EP divides float32 by float32 scales.
KernelMatch check_quantize_linear_23(const NodeContext& ctx) {
  const int64_t precision = ctx.attrs().int_or("precision", 0);
  NXRT_REQUIRE(precision == 0 || precision == static_cast<int64_t>(DType::kFloat32),
               "QuantizeLinear-23: precision {} ({}) is not supported by the cpu EP; it divides in float (omit "
               "precision or set it to 1)",
               precision, dtype_name(dtype_from_onnx(static_cast<int32_t>(precision)).value_or(DType::kUndefined)));
  return check_quantize_linear(ctx);
}

// Attributes shared by both kernels.
struct QuantAttrs {
  int64_t axis = 1;
  int64_t block = 0;
  bool saturate = true;  // float8 outputs: out-of-range values saturate (opset 19's default); float4e2m1 always does
};

QuantAttrs quant_attrs(const NodeContext& ctx) {
  QuantAttrs a;
  if (ctx.opset() >= 13) a.axis = ctx.attrs().int_or("axis", 1);
  if (ctx.opset() >= 21) a.block = ctx.attrs().int_or("block_size", 0);
  if (ctx.opset() >= 19) a.saturate = ctx.attrs().int_or("saturate", 1) != 0;
  return a;
}

// Whether `quantized` values run in vector loops over runs of one scale: the integer types but
// int32 (4-bit and 2-bit ones are held a byte each), without blocks.
bool runs_by_scale(DType quantized, const QuantAttrs& attrs) {
  return attrs.block == 0 && is_integer(quantized) && quantized != DType::kInt32;
}

// Calls run(begin, end, c) over the elements [0, count) in runs that share scale c (per tensor
// or per axis, not blocked), split over `parallel`.
template <class Run>
void for_each_scale_run(const ScaleMap& map, int64_t count, const Parallel& parallel, Run run) {
  if (map.per_tensor) {
    parallel.for_range(count, kElementwiseGrain, [&](int64_t b, int64_t e) { run(b, e, 0); });
    return;
  }
  const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / map.inner);
  parallel.for_range(count / map.inner, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) run(r * map.inner, (r + 1) * map.inner, r % map.axis_size);
  });
}

// y[i] = clamp(round(x[i] / scale) + zero, lo, hi) for one run of a scale: the integer types'
// loop, in vectors. (Its own function: in a lambda, the stores could alias the captures.)
template <class Q>
void quantize_run(const float* x, int64_t count, float scale, float zero, float lo, float hi, Q* y) {
  for (int64_t i = 0; i < count; ++i)
    y[i] = static_cast<Q>(std::min(std::max(std::nearbyint(x[i] / scale) + zero, lo), hi));
}

// y[i] = (x[i] - zero) * scale for one run of a scale, for types of up to 16 bits (the
// difference is exact in int32), in vectors.
template <class Q>
void dequantize_run(const Q* x, int64_t count, int32_t zero, float scale, float* y) {
  for (int64_t i = 0; i < count; ++i) y[i] = static_cast<float>(static_cast<int32_t>(x[i]) - zero) * scale;
}

// y = saturate(round(x / scale) + zero_point), rounding half to even; float outputs (float8,
// float4e2m1) round x / scale + zero_point as Cast does.
class QuantizeLinearKernel final : public Kernel {
 public:
  // `x` is the input's type, when the claim knew it.
  QuantizeLinearKernel(QuantAttrs attrs, DType q, DType x) : attrs_(attrs), q_(q), x_(x) {}
  Expected<void> compute(KernelContext& ctx) override {
    return visit_quantized(q_, [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override {
    return runs_by_scale(q_, attrs_) && x_ == DType::kFloat32 ? "scale-runs" : "per-element";
  }

 private:
  template <class Q>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    auto map = scale_map("QuantizeLinear", x.shape(), scale.shape(), attrs_.axis, attrs_.block);
    if (!map) return std::unexpected(map.error());
    auto y = ctx.output(0, q_, x.shape());
    if (!y) return std::unexpected(y.error());
    const float* s = scale.data_as<float>();
    const Q* zp = ctx.has_input(2) ? ctx.input(2).data_as<Q>() : nullptr;
    const bool zp_per_element = zp && ctx.input(2).numel() > 1;
    const auto [lo, hi] = std::pair<float, float>(quantized_integer_range(q_));
    Q* out = y->template mut_as<Q>();
    if constexpr (std::is_integral_v<Q> && sizeof(Q) <= 2) {  // the storage of runs_by_scale's types
      if (runs_by_scale(q_, attrs_) && x.dtype() == DType::kFloat32) {
        const float* in = x.data_as<float>();
        for_each_scale_run(*map, x.numel(), ctx.parallel(), [&](int64_t b, int64_t e, int64_t c) {
          const float z = zp ? static_cast<float>(zp[zp_per_element ? c : 0]) : 0.f;
          quantize_run(in + b, e - b, s[c], z, lo, hi, out + b);
        });
        return {};
      }
    }
    auto quantize = [&](auto* in) {
      ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t c = map->index(i);
          const float z = zp ? quantized_value(q_, zp, zp_per_element ? c : 0) : 0.f;
          const float v = static_cast<float>(in[i]) / s[c];
          if (is_byte_float(q_))
            out[i] = static_cast<Q>(float_to_byte_float(q_, v + z, attrs_.saturate));
          else out[i] = static_cast<Q>(std::clamp(std::nearbyint(v) + z, lo, hi));
        }
      });
    };
    if (x.dtype() == DType::kInt32) quantize(x.data_as<int32_t>());
    else quantize(x.data_as<float>());
    return {};
  }
  QuantAttrs attrs_;
  DType q_;
  DType x_;
};

// ---- DequantizeLinear ----

KernelMatch check_dequantize_linear(const NodeContext& ctx) {
  const DType x = ctx.input_dtype(0);
  NXRT_REQUIRE(x == DType::kInt32 || is_quantized_type(x, ctx.opset()),
               "DequantizeLinear: input type {} is not supported by the cpu EP at opset {}; it dequantizes {} and "
               "int32", dtype_name(x), ctx.opset(), quantized_types_at(ctx.opset()));
  NXRT_REQUIRE_MATCH(check_scales(ctx, x));
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

// DequantizeLinear-23 adds `output_dtype` (default: the scale's type). The cpu EP outputs
// the type of its float32 scales.
KernelMatch check_dequantize_linear_23(const NodeContext& ctx) {
  const int64_t code = ctx.attrs().int_or("output_dtype", 0);
  NXRT_REQUIRE(code == 0 || code == static_cast<int64_t>(DType::kFloat32),
               "DequantizeLinear-23: output_dtype {} ({}) is not supported by the cpu EP; it outputs float, the type "
               "of its scales (omit output_dtype or set it to 1)",
               code, dtype_name(dtype_from_onnx(static_cast<int32_t>(code)).value_or(DType::kUndefined)));
  return check_dequantize_linear(ctx);
}

// y = (x - zero_point) * scale.
class DequantizeLinearKernel final : public Kernel {
 public:
  // `x` is the quantized input's type, when the claim knew it.
  DequantizeLinearKernel(QuantAttrs attrs, DType x) : attrs_(attrs), x_(x) {}
  std::string_view variant() const override { return runs_by_scale(x_, attrs_) ? "scale-runs" : "per-element"; }
  Expected<void> compute(KernelContext& ctx) override {
    return visit_quantized(ctx.input(0).dtype(), [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class Q>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    auto map = scale_map("DequantizeLinear", x.shape(), scale.shape(), attrs_.axis, attrs_.block);
    if (!map) return std::unexpected(map.error());
    auto y = ctx.output(0, DType::kFloat32, x.shape());
    if (!y) return std::unexpected(y.error());
    const DType t = x.dtype();
    const float* s = scale.data_as<float>();
    const Q* zp = ctx.has_input(2) ? ctx.input(2).data_as<Q>() : nullptr;
    const bool zp_per_element = zp && ctx.input(2).numel() > 1;
    const Q* in = x.data_as<Q>();
    float* out = y->mut_as<float>();
    if constexpr (std::is_integral_v<Q> && sizeof(Q) <= 2) {  // the storage of runs_by_scale's types
      if (runs_by_scale(t, attrs_)) {
        for_each_scale_run(*map, x.numel(), ctx.parallel(), [&](int64_t b, int64_t e, int64_t c) {
          const int32_t z = zp ? static_cast<int32_t>(zp[zp_per_element ? c : 0]) : 0;
          dequantize_run(in + b, e - b, z, s[c], out + b);
        });
        return {};
      }
    }
    ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const int64_t c = map->index(i);
        if (is_byte_float(t)) {
          const float z = zp ? quantized_value(t, zp, zp_per_element ? c : 0) : 0.f;
          out[i] = (quantized_value(t, in, i) - z) * s[c];
          continue;
        }
        // Integers subtract exactly (int32 - int32 may not fit a float's mantissa).
        const int64_t z = zp ? static_cast<int64_t>(zp[zp_per_element ? c : 0]) : 0;
        out[i] = static_cast<float>(static_cast<int64_t>(in[i]) - z) * s[c];
      }
    });
    return {};
  }
  QuantAttrs attrs_;
  DType x_;
};

}  // namespace

std::vector<KernelDef> quantize_linear_kernels() {
  auto quantize = [](const NodeContext& ctx) {
    return make_kernel<QuantizeLinearKernel>(quant_attrs(ctx), *quantized_type(ctx), ctx.input_dtype(0));
  };
  auto dequantize = [](const NodeContext& ctx) {
    return make_kernel<DequantizeLinearKernel>(quant_attrs(ctx), ctx.input_dtype(0));
  };
  return {
      KernelDef{{"", "QuantizeLinear", 10}, 12, check_quantize_linear, quantize},
      // Opsets 19 and 21 add types, saturate, blocked quantization and output_dtype, all
      // read by the validator and the kernel; 23 adds precision.
      KernelDef{{"", "QuantizeLinear", 13}, 22, check_quantize_linear, quantize},
      KernelDef{{"", "QuantizeLinear", 23}, 0, check_quantize_linear_23, quantize},
      KernelDef{{"", "DequantizeLinear", 10}, 12, check_dequantize_linear, dequantize},
      KernelDef{{"", "DequantizeLinear", 13}, 22, check_dequantize_linear, dequantize},
      KernelDef{{"", "DequantizeLinear", 23}, 0, check_dequantize_linear_23, dequantize},
  };
}

}  // namespace nxrt::cpu
