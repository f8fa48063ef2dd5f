// Bit operations on integer tensors with multidirectional broadcasting: BitShift,
// BitwiseAnd, BitwiseOr, BitwiseXor, and the unary BitwiseNot.
#include <string>
#include <type_traits>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using UnsignedTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntegerTypes = TypeList<int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;

// Shifting by the width or more moves every bit out (C++ leaves it undefined).
template <bool kLeft>
struct ShiftOp {
  template <class T>
  T operator()(T x, T n) const {
    if (n >= sizeof(T) * 8) return 0;
    return static_cast<T>(kLeft ? x << n : x >> n);
  }
};

struct AndOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
struct OrOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
struct XorOp {
  template <class T>
  T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// Two inputs of one type from `Types`, broadcast against each other.
template <class Types>
KernelMatch check_bitwise(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.input_count() == 2, "{}: expected 2 inputs, got {}", op, ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, Types{}));
  NXRT_REQUIRE(ctx.input_dtype(0) == ctx.input_dtype(1),
               "{}: inputs have types {} and {}; both must have the same type (insert a Cast)", op,
               dtype_name(ctx.input_dtype(0)), dtype_name(ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 1}));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

template <class Types, class Op>
class BitwiseKernel final : public Kernel {
 public:
  explicit BitwiseKernel(std::string op) : op_(std::move(op)) {}
  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(Types{}, ctx.input(0).dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      return broadcast_binary<T, T, T>(ctx, op_, Op{});
    });
  }
  std::string_view variant() const override { return "broadcast"; }

 private:
  std::string op_;
};

template <class Op>
KernelDef bitwise_def(const char* op) {
  return KernelDef{{"", op, 18}, 0, check_bitwise<IntegerTypes>, [op](const NodeContext&) {
                     return make_kernel<BitwiseKernel<IntegerTypes, Op>>(op);
                   }};
}

KernelMatch check_bit_shift(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_bitwise<UnsignedTypes>(ctx));
  const auto direction = ctx.attrs().get_string("direction");
  NXRT_REQUIRE(direction.has_value(), "BitShift: attribute 'direction' is missing; set it to LEFT or RIGHT");
  NXRT_REQUIRE(*direction == "LEFT" || *direction == "RIGHT",
               "BitShift: direction is '{}'; it must be LEFT or RIGHT", *direction);
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

Expected<std::unique_ptr<Kernel>> create_bit_shift(const NodeContext& ctx) {
  if (ctx.attrs().string_or("direction", "") == "LEFT")
    return make_kernel<BitwiseKernel<UnsignedTypes, ShiftOp<true>>>("BitShift");
  return make_kernel<BitwiseKernel<UnsignedTypes, ShiftOp<false>>>("BitShift");
}

}  // namespace

std::vector<KernelDef> bitwise_kernels() {
  return {
      KernelDef{{"", "BitShift", 11}, 0, check_bit_shift, create_bit_shift},
      bitwise_def<AndOp>("BitwiseAnd"),
      bitwise_def<OrOp>("BitwiseOr"),
      bitwise_def<XorOp>("BitwiseXor"),
      map_def<IntegerTypes>("BitwiseNot", 18, [](auto x) { return static_cast<decltype(x)>(~x); }),
  };
}

}  // namespace nxrt::cpu
