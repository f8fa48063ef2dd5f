// ONNX Runtime's quantized element-wise ops, as its QOperator models hold them (com.microsoft,
// opset 1): QLinearAdd and QLinearMul with numpy broadcasting, QLinearSigmoid, QLinearLeakyRelu
// and QLinearConcat. Every tensor is uint8 or int8 with one scale and one zero point. The outputs
// are ONNX Runtime 1.30's on x86, bit for bit (testdata/com_microsoft holds its outputs):
// - QLinearAdd: c = a * ra + (b * rb + fixed), ra = a_scale / c_scale, rb = b_scale / c_scale,
//   fixed = c_zero - (a_zero * ra + b_zero * rb), each "x * r + s" one fused multiply-add, as
//   ONNX Runtime's AVX2 kernel computes it; an operand that is one value along a run is folded
//   into `fixed` first (fixed + x * r, one fused multiply-add too). This is the definition,
//   (a_scale (a - a_zero) + b_scale (b - b_zero)) / c_scale + c_zero, rounded differently;
// - QLinearMul: (a - a_zero)(b - b_zero), exact in float, times a_scale * b_scale / c_scale;
// - QLinearSigmoid, QLinearLeakyRelu and QLinearConcat's inputs quantized otherwise than Y: a
//   table of the 256 outputs, each x dequantized, f applied, quantized with Y's scale and zero.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "common/broadcast.h"
#include "common/byte_quantization.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// ---- QLinearAdd, QLinearMul ----

// Inputs A, A_scale, A_zero_point, B, B_scale, B_zero_point, C_scale, C_zero_point (zero points
// optional); output C of A's type.
KernelMatch check_qlinear_binary(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kUInt8, DType::kInt8}));
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(ctx.input_dtype(3) == t, "{}: A is {} and B {}; both must be one type", op, dtype_name(t),
               dtype_name(ctx.input_dtype(3)));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 1, 2, t, "A"));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 4, 5, t, "B"));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 6, 7, t, "C"));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 3}));
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

// QLinearAdd's factors (see the file's comment).
struct AddFactors {
  float a = 1, b = 1, fixed = 0;
};

// c[i] of QLinearAdd for a[i * sa], b[i * sb], i < n, sa and sb in {0, 1}. (Without contraction:
// the fused multiply-adds are the std::fma calls, nothing else.)
template <class T>
[[gnu::optimize("fp-contract=off")]] void qlinear_add_run(T* __restrict c, const T* __restrict a, int64_t sa,
                                                          const T* __restrict b, int64_t sb, int64_t n, AddFactors f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i)
      c[i] = saturate_round<T>(
          std::fma(static_cast<float>(a[i]), f.a, std::fma(static_cast<float>(b[i]), f.b, f.fixed)));
  } else if (sa == 1) {
    const float fixed = std::fma(static_cast<float>(*b), f.b, f.fixed);
    for (int64_t i = 0; i < n; ++i) c[i] = saturate_round<T>(std::fma(static_cast<float>(a[i]), f.a, fixed));
  } else if (sb == 1) {
    const float fixed = std::fma(static_cast<float>(*a), f.a, f.fixed);
    for (int64_t i = 0; i < n; ++i) c[i] = saturate_round<T>(std::fma(static_cast<float>(b[i]), f.b, fixed));
  } else {
    const float v = std::fma(static_cast<float>(*a), f.a, std::fma(static_cast<float>(*b), f.b, f.fixed));
    std::fill_n(c, n, saturate_round<T>(v));
  }
}

[[gnu::optimize("fp-contract=off")]] AddFactors add_factors(ByteQuantization qa, ByteQuantization qb,
                                                            ByteQuantization qc) {
  AddFactors f;
  f.a = qa.scale / qc.scale;
  f.b = qb.scale / qc.scale;
  f.fixed = static_cast<float>(qc.zero) -
            (f.a * static_cast<float>(qa.zero) + f.b * static_cast<float>(qb.zero));
  return f;
}

// c[i] of QLinearMul: (a - a_zero)(b - b_zero) * scale, rounded, moved by c_zero.
template <class T>
void qlinear_mul_run(T* __restrict c, const T* __restrict a, int64_t sa, const T* __restrict b, int64_t sb, int64_t n,
                     int32_t a_zero, int32_t b_zero, float scale, int32_t c_zero) {
  for (int64_t i = 0; i < n; ++i) {
    const int32_t product = (static_cast<int32_t>(a[i * sa]) - a_zero) * (static_cast<int32_t>(b[i * sb]) - b_zero);
    c[i] = quantize_rounded<T>(static_cast<float>(product) * scale, c_zero);
  }
}

class QLinearBinaryKernel final : public Kernel {
 public:
  explicit QLinearBinaryKernel(bool add) : add_(add) {}
  std::string_view variant() const override { return add_ ? "qlinear-add" : "qlinear-mul"; }

  Expected<void> compute(KernelContext& ctx) override {
    const std::string_view op = add_ ? "QLinearAdd" : "QLinearMul";
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    auto quantizations = read_per_tensor_quantizations<3>(ctx, op, {1, 4, 6});  // A, B, C
    if (!quantizations) return std::unexpected(quantizations.error());
    const auto& q = *quantizations;
    auto bc = Broadcast<2>::make(op, {&a.shape(), &b.shape()});
    if (!bc) return std::unexpected(std::move(bc.error()));
    auto c = ctx.output(0, a.dtype(), bc->shape());
    if (!c) return std::unexpected(c.error());
    return visit_byte_type(a.dtype(), [&](auto tag) -> Expected<void> {
      using T = decltype(tag);
      const T* pa = a.data_as<T>();
      const T* pb = b.data_as<T>();
      T* pc = c->template mut_as<T>();
      const AddFactors factors = add_factors(q[0], q[1], q[2]);
      const float mul_scale = q[0].scale * q[1].scale / q[2].scale;
      parallel_runs(ctx.parallel(), *bc,
                    [&](int64_t out, const std::array<int64_t, 2>& in, const std::array<int64_t, 2>& step, int64_t n) {
                      if (add_)
                        qlinear_add_run(pc + out, pa + in[0], step[0], pb + in[1], step[1], n, factors);
                      else
                        qlinear_mul_run(pc + out, pa + in[0], step[0], pb + in[1], step[1], n, q[0].zero, q[1].zero,
                                        mul_scale, q[2].zero);
                    });
      return {};
    });
  }

 private:
  bool add_;
};

// ---- QLinearSigmoid, QLinearLeakyRelu ----

// The 256 outputs of y = quantize(f(dequantize(x))), indexed by x's byte (an int8 x by its two's
// complement byte).
template <class T, class F>
std::array<T, 256> lookup_table(ByteQuantization qx, ByteQuantization qy, F f) {
  std::array<T, 256> table{};
  for (int v = 0; v < 256; ++v) {
    const auto x = static_cast<T>(static_cast<uint8_t>(v));
    const float real = static_cast<float>(static_cast<int32_t>(x) - qx.zero) * qx.scale;
    table[static_cast<std::size_t>(v)] = quantize_rounded<T>(f(real) / qy.scale, qy.zero);
  }
  return table;
}

// y[i] = table[x[i]'s byte], for every element, in parallel chunks.
template <class T>
void apply_table(const Parallel& parallel, const T* x, int64_t count, const std::array<T, 256>& table, T* y) {
  parallel.for_range(count, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) y[i] = table[static_cast<uint8_t>(x[i])];
  });
}

// Inputs X, X_scale, X_zero_point, Y_scale, Y_zero_point (zero points optional); Y of X's type.
KernelMatch check_qlinear_unary(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kUInt8, DType::kInt8}));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 1, 2, ctx.input_dtype(0), "X"));
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 3, 4, ctx.input_dtype(0), "Y"));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// f is the float function: sigmoid, or leaky ReLU with its alpha.
class QLinearTableKernel final : public Kernel {
 public:
  explicit QLinearTableKernel(std::optional<float> leaky_alpha) : alpha_(leaky_alpha) {}
  std::string_view variant() const override { return "qlinear-table"; }

  Expected<void> compute(KernelContext& ctx) override {
    const std::string_view op = alpha_ ? "QLinearLeakyRelu" : "QLinearSigmoid";
    auto q = read_per_tensor_quantizations<2>(ctx, op, {1, 3});  // X, Y
    if (!q) return std::unexpected(q.error());
    const auto [qx, qy] = *q;
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, x.dtype(), x.shape());
    if (!y) return std::unexpected(y.error());
    return visit_byte_type(x.dtype(), [&](auto tag) -> Expected<void> {
      using T = decltype(tag);
      const auto table = alpha_ ? lookup_table<T>(qx, qy, [a = *alpha_](float v) { return v >= 0 ? v : v * a; })
                                : lookup_table<T>(qx, qy, [](float v) { return 1.f / (1.f + std::exp(-v)); });
      apply_table(ctx.parallel(), x.data_as<T>(), x.numel(), table, y->template mut_as<T>());
      return {};
    });
  }

 private:
  std::optional<float> alpha_;
};

// ---- QLinearConcat ----

// Inputs Y_scale, Y_zero_point, then (X, X_scale, X_zero_point) per tensor; attribute axis.
KernelMatch check_qlinear_concat(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 5 && (ctx.input_count() - 2) % 3 == 0,
               "QLinearConcat: {} inputs; it takes Y_scale, Y_zero_point, then a tensor, its scale and its zero point "
               "per input",
               ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kUInt8, DType::kInt8}));
  const DType t = ctx.input_dtype(1);
  NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, 0, 1, t, "Y"));
  const auto axis = ctx.attrs().get_int("axis");
  NXRT_REQUIRE(axis.has_value(), "QLinearConcat: the axis attribute is missing; it is required");
  std::optional<int64_t> rank;
  for (std::size_t i = 2; i < ctx.input_count(); i += 3) {
    NXRT_REQUIRE(ctx.input_dtype(i) == t, "QLinearConcat: input {} is {}; every tensor must be {}, as Y_zero_point is",
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(t));
    NXRT_REQUIRE_MATCH(require_per_tensor_quantization(ctx, i + 1, i + 2, t, fmt::format("input {}", i)));
    const auto r = ctx.input_rank(i);
    if (!r) continue;
    NXRT_REQUIRE(!rank || *rank == *r, "QLinearConcat: the tensors have ranks {} and {}; they must be equal", *rank,
                 *r);
    rank = r;
  }
  NXRT_REQUIRE(!rank || normalize_axis(*axis, *rank), "QLinearConcat: axis {} is outside rank {}", *axis,
               rank.value_or(0));
  return KernelMatch::supported(elementwise_cost(ctx, 0));
}

// `channels_last`: the layout step's, joining channels-last values along their last axis.
class QLinearConcatKernel final : public Kernel {
 public:
  explicit QLinearConcatKernel(int64_t axis, bool channels_last = false) : axis_(axis), channels_last_(channels_last) {}
  std::string_view variant() const override { return channels_last_ ? "qlinear-concat nhwc" : "qlinear-concat"; }

  Expected<void> compute(KernelContext& ctx) override {
    auto qy = read_per_tensor_quantization(ctx, "QLinearConcat", 0, 1);
    if (!qy) return std::unexpected(qy.error());
    const Tensor& first = ctx.input(2);
    const auto rank = static_cast<int64_t>(first.shape().size());
    const auto axis = normalize_axis(axis_, rank);
    if (!axis)
      return fail(ErrorCode::kRuntime, fmt::format("QLinearConcat: axis {} is outside rank {}", axis_, rank),
                  "axis counts the tensors' dims (negative from the last)", "give an axis within the rank");
    Shape out = first.shape();
    out[static_cast<std::size_t>(*axis)] = 0;
    for (std::size_t i = 2; i < ctx.input_count(); i += 3) {
      const Shape& s = ctx.input(i).shape();
      bool fits = s.size() == out.size();
      for (std::size_t d = 0; fits && d < s.size(); ++d) fits = d == static_cast<std::size_t>(*axis) || s[d] == out[d];
      if (!fits)
        return fail(ErrorCode::kRuntime,
                    fmt::format("QLinearConcat: input {} is {} and input 2 {}", i, shape_to_string(s),
                                shape_to_string(first.shape())),
                    fmt::format("the tensors must agree in every dim but the axis ({})", *axis),
                    "give tensors that differ only along the axis");
      out[static_cast<std::size_t>(*axis)] += s[static_cast<std::size_t>(*axis)];
    }
    auto y = ctx.output(0, first.dtype(), out);
    if (!y) return std::unexpected(y.error());
    int64_t outer = 1;
    for (int64_t d = 0; d < *axis; ++d) outer *= out[static_cast<std::size_t>(d)];
    const int64_t y_row = outer > 0 ? y->numel() / outer : 0;  // elements of Y per outer index
    return visit_byte_type(first.dtype(), [&](auto tag) -> Expected<void> {
      using T = decltype(tag);
      T* py = y->template mut_as<T>();
      int64_t offset = 0;  // of this input's slab within a row of Y
      for (std::size_t i = 2; i < ctx.input_count(); i += 3) {
        auto qx = read_per_tensor_quantization(ctx, "QLinearConcat", i + 1, i + 2);
        if (!qx) return std::unexpected(qx.error());
        const Tensor& x = ctx.input(i);
        const int64_t row = outer > 0 ? x.numel() / outer : 0;
        const T* px = x.data_as<T>();
        const bool same = qx->scale == qy->scale && qx->zero == qy->zero;
        std::array<T, 256> table{};
        if (!same) table = lookup_table<T>(*qx, *qy, [](float v) { return v; });
        ctx.parallel().for_range(outer, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(row, 1)),
                                 [&](int64_t o0, int64_t o1) {
                                   for (int64_t o = o0; o < o1; ++o) {
                                     const T* from = px + o * row;
                                     T* to = py + o * y_row + offset;
                                     if (same) std::memcpy(to, from, static_cast<std::size_t>(row) * sizeof(T));
                                     else
                                       for (int64_t k = 0; k < row; ++k) to[k] = table[static_cast<uint8_t>(from[k])];
                                   }
                                 });
        offset += row;
      }
      return {};
    });
  }

 private:
  int64_t axis_;
  bool channels_last_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qlinear_concat_channels_last() {
  return make_kernel<QLinearConcatKernel>(-1, true);
}

std::vector<KernelDef> qlinear_kernels() {
  return {
      KernelDef{{"com.microsoft", "QLinearAdd", 1},
                0,
                check_qlinear_binary,
                [](const NodeContext&) { return make_kernel<QLinearBinaryKernel>(true); }},
      KernelDef{{"com.microsoft", "QLinearMul", 1},
                0,
                check_qlinear_binary,
                [](const NodeContext&) { return make_kernel<QLinearBinaryKernel>(false); }},
      KernelDef{{"com.microsoft", "QLinearSigmoid", 1},
                0,
                check_qlinear_unary,
                [](const NodeContext&) { return make_kernel<QLinearTableKernel>(std::nullopt); }},
      KernelDef{{"com.microsoft", "QLinearLeakyRelu", 1},
                0,
                check_qlinear_unary,
                [](const NodeContext& ctx) {
                  return make_kernel<QLinearTableKernel>(ctx.attrs().float_or("alpha", 0.01f));
                }},
      KernelDef{{"com.microsoft", "QLinearConcat", 1},
                0,
                check_qlinear_concat,
                [](const NodeContext& ctx) {
                  return make_kernel<QLinearConcatKernel>(ctx.attrs().int_or("axis", 0));
                }},
  };
}

}  // namespace nxrt::cpu
