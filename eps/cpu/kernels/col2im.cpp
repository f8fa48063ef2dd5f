// Col2Im-18: scatters sliding blocks (columns, as im2col makes them) back into an n-D image,
// summing where blocks overlap.
#include <algorithm>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/col2im.h"

namespace nxrt::cpu {
namespace {

using Col2ImTypes = TypeList<float, double, int32_t, int64_t>;

KernelMatch check_col2im(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, Col2ImTypes{}));
  NXRT_REQUIRE_MATCH(check_col2im_node(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class Col2ImKernel final : public Kernel {
 public:
  explicit Col2ImKernel(Col2ImAttrs attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(Col2ImTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> image = ctx.input(1).to_int64_vector(), block = ctx.input(2).to_int64_vector();
    if (x.shape().size() != 3)
      return fail(ErrorCode::kRuntime, fmt::format("Col2Im: input {} is not [N, C * prod(block), L]",
                                                   shape_to_string(x.shape())));
    auto counts = col2im_block_counts(attrs_, image, block, x.shape()[2]);
    if (!counts) return std::unexpected(std::move(counts.error()));
    const int64_t kernel = shape_numel(block), batch = x.shape()[0];
    if (kernel == 0 || x.shape()[1] % kernel != 0)
      return fail(ErrorCode::kRuntime, fmt::format("Col2Im: dim 1 of input {} is not a multiple of prod(block_shape) {}",
                                                   shape_to_string(x.shape()), kernel));
    const int64_t channels = x.shape()[1] / kernel, columns = x.shape()[2];
    Shape out_shape{batch, channels};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    auto y = ctx.output(0, x.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const std::size_t n = image.size();
    const int64_t plane = shape_numel(image);
    const T* in = x.data_as<T>();
    T* out = y->template mut_as<T>();
    std::fill(out, out + y->numel(), T{0});
    ctx.parallel().for_range(batch * channels, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> kp(n), bp(n);
      for (int64_t p = begin; p < end; ++p) {
        T* dst = out + p * plane;
        for (int64_t k = 0; k < kernel; ++k) {
          for (int64_t r = k, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
            kp[static_cast<std::size_t>(d)] = r % block[static_cast<std::size_t>(d)];
            r /= block[static_cast<std::size_t>(d)];
          }
          const T* src = in + (p * kernel + k) * columns;
          for (int64_t l = 0; l < columns; ++l) {
            int64_t offset = 0;
            bool inside = true;
            for (int64_t r = l, d = static_cast<int64_t>(n) - 1; d >= 0; --d) {
              const auto u = static_cast<std::size_t>(d);
              bp[u] = r % (*counts)[u];
              r /= (*counts)[u];
            }
            for (std::size_t d = 0; d < n && inside; ++d) {
              const int64_t at = bp[d] * attrs_.stride(d) - attrs_.pad_begin(d) + kp[d] * attrs_.dilation(d);
              inside = at >= 0 && at < image[d];
              offset = offset * image[d] + at;
            }
            if (inside) dst[offset] += src[l];
          }
        }
      }
    });
    return {};
  }

  Col2ImAttrs attrs_;
};

}  // namespace

std::vector<KernelDef> col2im_kernels() {
  return {KernelDef{{"", "Col2Im", 18}, 0, check_col2im,
                    [](const NodeContext& ctx) { return make_kernel<Col2ImKernel>(read_col2im_attrs(ctx.attrs())); }}};
}

}  // namespace nxrt::cpu
