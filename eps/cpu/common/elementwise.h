// Elementwise helpers beyond broadcasting: a float16 element type computed in float, the
// map over one input, and the legacy (opset 1-6) `broadcast`/`axis` attributes.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/broadcast.h"
#include "common/vector_math.h"

namespace nxrt::cpu {

// A float16 element: stored as IEEE binary16 bits, computed in float (the CPU has no half
// arithmetic), rounded back to nearest even on assignment.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) { floats_to_halves(&f, &bits, 1); }  // NOLINT: converts like a float type
  operator float() const {                             // NOLINT
    float f;
    halves_to_floats(&bits, &f, 1);
    return f;
  }
};
static_assert(sizeof(Half) == 2);

template <>
struct ElementDType<Half> {
  static constexpr DType kValue = DType::kFloat16;
};

// The type a computation on T runs in: float for Half, T otherwise.
template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, Half>, float, T>;

using FloatHalfTypes = TypeList<float, double, Half>;

// The elements of a float or float16 tensor as floats (float16 exactly widened).
std::vector<float> float_or_half_as_floats(const Tensor& t);
using SignedTypes = TypeList<float, double, Half, int8_t, int16_t, int32_t, int64_t>;
using AllNumericTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;

// Output 0 (of type O, shaped like input 0) = fn(x) for each element x of input 0 of type T;
// fn sees and returns ComputeType values.
template <class T, class O = T, class Fn>
Expected<void> map_elements(KernelContext& ctx, Fn fn) {
  const Tensor& x = ctx.input(0);
  auto y = ctx.output(0, ElementDType<O>::kValue, x.shape());
  if (!y) return std::unexpected(std::move(y.error()));
  const T* in = x.data_as<T>();
  O* out = y->template mut_as<O>();
  ctx.parallel().for_range(x.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) out[i] = static_cast<O>(fn(static_cast<ComputeType<T>>(in[i])));
  });
  return {};
}

// A kernel applying one scalar function to each element of a type from `Types`; O is the
// output element type (void: the input's).
template <class Types, class O, class Fn>
class MapKernel final : public Kernel {
 public:
  explicit MapKernel(Fn fn) : fn_(fn) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(Types{}, ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return map_elements<T, std::conditional_t<std::is_void_v<O>, T, O>>(ctx, fn_);
    });
  }
  std::string_view variant() const override { return "unary-scalar"; }

 private:
  Fn fn_;
};

// Input 0 is a tensor of a type from `Types`; opset 1's consumed_inputs only named buffers
// to reuse and is ignored.
template <class Types>
KernelMatch check_map(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_type(0) == nullptr || ctx.input_type(0)->kind == ValueType::Kind::kTensor,
               "{}: input 0 is not a tensor; the cpu EP supports tensors only", ctx.node().op_type);
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, Types{}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// A registration of `op` for opsets [since, until] (0: open) computing fn(x) for the element
// types `Types`.
template <class Types = FloatHalfTypes, class O = void, class Fn>
KernelDef map_def(const char* op, int64_t since, Fn fn, int64_t until = 0) {
  return KernelDef{{"", op, since}, until, check_map<Types>,
                   [fn](const NodeContext&) { return make_kernel<MapKernel<Types, O, Fn>>(fn); }};
}

// Like map_def, for functions with attributes: make(ctx) returns the scalar function.
template <class Types = FloatHalfTypes, class O = void, class Make>
KernelDef map_def_with(const char* op, int64_t since, Make make, int64_t until = 0) {
  using Fn = decltype(make(std::declval<const NodeContext&>()));
  return KernelDef{{"", op, since}, until, check_map<Types>,
                   [make](const NodeContext& ctx) { return make_kernel<MapKernel<Types, O, Fn>>(make(ctx)); }};
}

// The opset 1-6 broadcasting of Add, Sub, Mul, Div, Pow, Equal, Less, Greater, And, Or, Xor:
// with broadcast=1, B's shape matches a contiguous run of A's dims starting at `axis`
// (default: the trailing dims); with broadcast=0 the shapes must be equal.
struct LegacyBroadcast {
  bool legacy = false;     // the node's opset is below 7
  bool broadcast = false;  // the `broadcast` attribute
  std::optional<int64_t> axis;

  static LegacyBroadcast from(const NodeContext& ctx);
};

// B's shape with A's rank (ones around the aligned run), ready for numpy broadcasting; B's
// own shape for non-legacy nodes and scalars; an error when the attributes cannot align them.
Expected<Shape> align_legacy_shape(std::string_view op, const LegacyBroadcast& legacy, const Shape& a,
                                   const Shape& b);

// Declines a legacy node whose static shapes the attributes cannot align.
KernelMatch require_legacy_broadcastable(const NodeContext& ctx, const LegacyBroadcast& legacy);

// Output 0 = op(input 0, input 1) broadcast per `legacy` (numpy rules when not legacy).
template <class A, class B, class O, class Op>
Expected<void> broadcast_binary_legacy(KernelContext& ctx, std::string_view op_name,
                                       const LegacyBroadcast& legacy, Op op) {
  if (!legacy.legacy) return broadcast_binary<A, B, O>(ctx, op_name, op);
  auto shape = align_legacy_shape(op_name, legacy, ctx.input(0).shape(), ctx.input(1).shape());
  if (!shape) return std::unexpected(std::move(shape.error()));
  return broadcast_binary<A, B, O>(ctx, op_name, ctx.input(0), ctx.input(1).reshaped(*shape), op);
}

}  // namespace nxrt::cpu
