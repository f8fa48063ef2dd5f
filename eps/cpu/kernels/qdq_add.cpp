// DequantizeLinear of two tensors -> Add (-> Relu) -> QuantizeLinear as one step, built by the
// cpu EP's fusion step (fusion.h): a QDQ model's residual connection (ONNX Runtime's
// QLinearAdd) without its three float tensors. It computes what the four or five kernels do, in
// the same order of the same float operations, so the outputs are the same bits.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/broadcast.h"
#include "common/byte_quantization.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// y[i] = saturate(round(v / y_scale) + y_zero) of v = (a[i] - a_zero) * a_scale + (b[i] - b_zero)
// * b_scale, v clamped at 0 first when `relu`. Contracting a product and the sum into one
// fused multiply-add would round once where DequantizeLinear and Add round twice: not here.
template <class A, class B, class Y>
[[gnu::optimize("fp-contract=off")]] void add_quantized(const A* a, const B* b, int64_t count, ByteQuantization qa,
                                                        ByteQuantization qb, ByteQuantization qy, bool relu, Y* y) {
  const float lo = std::numeric_limits<Y>::lowest(), hi = std::numeric_limits<Y>::max();
  const auto zero = static_cast<float>(qy.zero);
  for (int64_t i = 0; i < count; ++i) {
    const float da = static_cast<float>(static_cast<int32_t>(a[i]) - qa.zero) * qa.scale;
    const float db = static_cast<float>(static_cast<int32_t>(b[i]) - qb.zero) * qb.scale;
    float v = da + db;
    if (relu) v = v > 0 ? v : 0.f;
    y[i] = static_cast<Y>(std::min(std::max(std::nearbyint(v / qy.scale) + zero, lo), hi));
  }
}

// Inputs: A, A's scale and zero point, B, B's scale and zero point, Y's scale and zero point
// (the zero points may be omitted: 0). Output: Y, of the QuantizeLinear's type.
class QdqAddKernel final : public Kernel {
 public:
  QdqAddKernel(DType y_type, bool relu) : y_type_(y_type), relu_(relu) {}
  std::string_view variant() const override { return relu_ ? "dq+add+relu+q" : "dq+add+q"; }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    if (a.shape() != b.shape())
      return fail(ErrorCode::kRuntime,
                  fmt::format("DequantizeLinear+Add+QuantizeLinear: the two quantized inputs are {} and {}",
                              shape_to_string(a.shape()), shape_to_string(b.shape())),
                  "the step was fused for two inputs of one shape, as the model declares them",
                  "give inputs of the shapes the model declares");
    auto q = read_per_tensor_quantizations<3>(ctx, "DequantizeLinear+Add+QuantizeLinear", {1, 4, 6});
    if (!q) return std::unexpected(q.error());
    auto y = ctx.output(0, y_type_, a.shape());
    if (!y) return std::unexpected(y.error());
    return visit_byte_type(a.dtype(), [&](auto ta) {
      return visit_byte_type(b.dtype(), [&](auto tb) {
        return visit_byte_type(y_type_, [&](auto ty) -> Expected<void> {
          using A = decltype(ta);
          using B = decltype(tb);
          using Y = decltype(ty);
          const A* pa = a.data_as<A>();
          const B* pb = b.data_as<B>();
          Y* py = y->template mut_as<Y>();
          ctx.parallel().for_range(a.numel(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
            add_quantized(pa + begin, pb + begin, end - begin, (*q)[0], (*q)[1], (*q)[2], relu_, py + begin);
          });
          return {};
        });
      });
    });
  }

 private:
  DType y_type_;
  bool relu_;
};

}  // namespace

Expected<std::unique_ptr<Kernel>> make_qdq_add(DType y_type, bool relu) {
  return make_kernel<QdqAddKernel>(y_type, relu);
}

}  // namespace nxrt::cpu
