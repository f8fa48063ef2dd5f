// Reading numeric inputs of any dtype as int64 or double; the tensor-inputs claim check.
#include "common/numeric_input.h"

#include <cmath>

#include "common/elementwise.h"

namespace nxrt::cpu {

KernelMatch require_tensor_inputs(const NodeContext& ctx) {
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    const ValueType* type = ctx.input_type(i);
    NXRT_REQUIRE(type == nullptr || type->kind == ValueType::Kind::kTensor || type->kind == ValueType::Kind::kUnknown,
                 "{}: input {} is {}, not a tensor; the cpu EP supports tensor inputs only for {}", ctx.node().op_type,
                 i, type->to_string(), ctx.node().op_type);
  }
  return KernelMatch::supported();
}

namespace {

template <class R>
std::vector<R> numeric_as(const Tensor& t) {
  std::vector<R> out(static_cast<std::size_t>(std::max<int64_t>(t.numel(), 0)));
  auto convert = [&](auto tag) -> Expected<void> {
    using T = typename decltype(tag)::type;
    const T* p = t.data_as<T>();
    for (std::size_t i = 0; i < out.size(); ++i) {
      const auto v = static_cast<ComputeType<T>>(p[i]);
      if constexpr (std::is_floating_point_v<decltype(v)> && std::is_integral_v<R>)
        out[i] = std::fabs(static_cast<double>(v)) < 9.2e18 ? static_cast<R>(v) : R{0};  // NaN too
      else
        out[i] = static_cast<R>(v);
    }
    return {};
  };
  if (!dispatch_dtype(TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                               uint64_t, bool>{},
                      t.dtype(), convert))
    std::fill(out.begin(), out.end(), R{0});
  return out;
}

}  // namespace

std::vector<int64_t> numeric_as_int64(const Tensor& t) { return numeric_as<int64_t>(t); }
std::vector<double> numeric_as_double(const Tensor& t) { return numeric_as<double>(t); }

}  // namespace nxrt::cpu
