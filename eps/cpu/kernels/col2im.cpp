// Col2Im-18: scatters sliding blocks (columns, as im2col makes them) back into an n-D image,
// summing where blocks overlap.
#include <algorithm>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using Col2ImTypes = TypeList<float, double, int32_t, int64_t>;

struct Col2ImAttrs {
  std::vector<int64_t> dilations, pads, strides;  // empty: the defaults (1, 0, 1)
};

// Blocks along each spatial dim, checked against the column count L; what the kernel and the
// check share.
Expected<std::vector<int64_t>> block_counts(const Col2ImAttrs& a, const std::vector<int64_t>& image,
                                            const std::vector<int64_t>& block, int64_t columns) {
  const std::size_t n = image.size();
  auto bad = [&](std::string what) {
    return fail(ErrorCode::kRuntime, fmt::format("Col2Im: {}", what),
                "image_shape and block_shape give one size per spatial dim; dilations and strides one value per "
                "dim, pads two (all begins, then all ends)",
                "fix the node's attributes or its image_shape and block_shape inputs");
  };
  if (n == 0 || block.size() != n) return bad(fmt::format("image_shape {} and block_shape {} differ in length",
                                                          shape_to_string(image), shape_to_string(block)));
  if ((!a.dilations.empty() && a.dilations.size() != n) || (!a.strides.empty() && a.strides.size() != n) ||
      (!a.pads.empty() && a.pads.size() != 2 * n))
    return bad(fmt::format("dilations, strides or pads do not fit {} spatial dims", n));
  std::vector<int64_t> counts(n);
  int64_t total = 1;
  for (std::size_t d = 0; d < n; ++d) {
    const int64_t dil = a.dilations.empty() ? 1 : a.dilations[d], stride = a.strides.empty() ? 1 : a.strides[d];
    const int64_t pad = a.pads.empty() ? 0 : a.pads[d] + a.pads[d + n];
    const int64_t extent = dil * (block[d] - 1) + 1;
    if (dil < 1 || stride < 1 || block[d] < 1 || image[d] + pad < extent)
      return bad(fmt::format("a block of {} (dilation {}) does not fit image size {} with padding {} in dim {}",
                             block[d], dil, image[d], pad, d));
    counts[d] = (image[d] + pad - extent) / stride + 1;
    total *= counts[d];
  }
  if (total != columns)
    return bad(fmt::format("the input has {} columns; image_shape {} and block_shape {} give {}", columns,
                           shape_to_string(image), shape_to_string(block), total));
  return counts;
}

Col2ImAttrs read_attrs(const NodeContext& ctx) {
  return {ctx.attrs().ints_or("dilations", {}), ctx.attrs().ints_or("pads", {}), ctx.attrs().ints_or("strides", {})};
}

KernelMatch check_col2im(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3 && ctx.has_input(1) && ctx.has_input(2),
               "Col2Im: expected 3 inputs (input, image_shape, block_shape), got {}", ctx.input_count());
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, Col2ImTypes{}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 2, {DType::kInt64}));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "Col2Im: input has rank {}; expected [N, C * prod(block), L]",
               ctx.input_rank(0).value_or(3));
  const auto image = constant_ints(ctx, 1), block = constant_ints(ctx, 2);
  const auto x = ctx.input_static_shape(0);
  if (image && block && x) {
    auto counts = block_counts(read_attrs(ctx), *image, *block, (*x)[2]);
    if (!counts) return declined_by(counts.error());
    const int64_t per_channel = shape_numel(*block);
    NXRT_REQUIRE((*x)[1] % per_channel == 0, "Col2Im: dim 1 of the input ({}) is not a multiple of prod(block_shape) {}",
                 (*x)[1], per_channel);
  }
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
    auto counts = block_counts(attrs_, image, block, x.shape()[2]);
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
              const int64_t stride = attrs_.strides.empty() ? 1 : attrs_.strides[d];
              const int64_t dil = attrs_.dilations.empty() ? 1 : attrs_.dilations[d];
              const int64_t pad = attrs_.pads.empty() ? 0 : attrs_.pads[d];
              const int64_t at = bp[d] * stride - pad + kp[d] * dil;
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
                    [](const NodeContext& ctx) { return make_kernel<Col2ImKernel>(read_attrs(ctx)); }}};
}

}  // namespace nxrt::cpu
