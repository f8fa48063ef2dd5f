// TensorScatter-24: the KV-cache update, past_cache with update's rows written along axis from
// each batch entry's write index (the geometry is lib's, nxrt/ep/tensor_scatter.h); any
// fixed-size type.
#include "nxrt/ep/tensor_scatter.h"

#include <fmt/format.h>

#include <cstring>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_tensor_scatter(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_tensor_scatter_node(ctx));
  const DType t = ctx.input_dtype(0);
  NXRT_REQUIRE(t != DType::kUndefined && t != DType::kString && dtype_size(t) > 0,
               "TensorScatter: past_cache has type {}; the cpu EP supports every fixed-size type", dtype_name(t));
  return KernelMatch::supported(copy_cost(ctx));
}

class TensorScatterKernel final : public Kernel {
 public:
  explicit TensorScatterKernel(AttributeMap attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& cache = ctx.input(0);
    const Tensor& update = ctx.input(1);
    const bool indexed = ctx.has_input(2);
    auto p = plan_tensor_scatter(attrs_, cache.shape(), update.shape(), given_shape(ctx, 2));
    if (!p) return std::unexpected(std::move(p.error()));
    const int64_t* write = indexed ? ctx.input(2).data_as<int64_t>() : nullptr;
    for (int64_t b = 0; b < p->batch; ++b) {
      const int64_t w = write ? write[b] : 0;
      if (p->update_len > 0 && (p->position(w, 0) < 0 || p->position(w, p->update_len - 1) < 0))
        return fail(ErrorCode::kRuntime,
                    fmt::format("TensorScatter: write_indices[{}] is {}, so {} rows do not fit the cache's {} in "
                                "linear mode",
                                b, w, p->update_len, p->cache_len),
                    "linear mode writes rows w to w + update length - 1, all inside the cache",
                    "give smaller write indices, a longer cache, or mode circular");
    }
    auto y = ctx.output(0, cache.dtype(), cache.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const std::size_t row = static_cast<std::size_t>(p->inner) * dtype_size(cache.dtype());
    auto* dst = y->mut_as<std::byte>();
    const auto* src = update.data_as<std::byte>();
    std::memcpy(dst, cache.data_as<std::byte>(), static_cast<std::size_t>(cache.numel()) * dtype_size(cache.dtype()));
    for (int64_t o = 0; o < p->outer; ++o) {
      const int64_t w = write ? write[p->batch_of(o)] : 0;
      for (int64_t s = 0; s < p->update_len; ++s)
        std::memcpy(dst + static_cast<std::size_t>(o * p->cache_len + p->position(w, s)) * row,
                    src + static_cast<std::size_t>(o * p->update_len + s) * row, row);
    }
    return {};
  }
  std::string_view variant() const override { return "rows"; }

 private:
  AttributeMap attrs_;
};

}  // namespace

std::vector<KernelDef> tensor_scatter_kernels() {
  return {KernelDef{{"", "TensorScatter", 24}, 0, check_tensor_scatter, [](const NodeContext& ctx) {
                      return make_kernel<TensorScatterKernel>(ctx.attrs());
                    }}};
}

}  // namespace nxrt::cpu
