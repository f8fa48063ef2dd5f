// ONNX Runtime's com.microsoft GatherBlockQuantized (what it computes, its claim check and its
// shapes in nxrt/ep/gather_block_quantized.h), with scales of float or float16; an index out of
// range is an error (as in ONNX Runtime 1.30; later versions' documentation gives zeros instead).
// Float8 and float4 tables are declined.
#include <fmt/format.h>

#include <bit>
#include <optional>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/gather_block_quantized.h"

namespace nxrt::cpu {
namespace {

// Value k of a row stored in `row` (one value per element for int4 and uint4, sign-extended).
int32_t table_value(const QuantizedRows& q, const uint8_t* row, int64_t k) {
  if (q.type == DType::kInt4) return static_cast<int8_t>(row[k]);
  if (q.type == DType::kUInt4 || q.bits == 8) return row[k];
  const auto shift = static_cast<unsigned>(k % q.per_element() * q.bits);
  return (row[k / q.per_element()] >> shift) & ((1 << q.bits) - 1);
}

KernelMatch check_gather_block_quantized(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_gather_block_quantized_node(ctx, "cpu"));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, kGbqScales, {DType::kFloat32, DType::kFloat16}));
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

class GatherBlockQuantizedKernel final : public Kernel {
 public:
  explicit GatherBlockQuantizedKernel(QuantizedRows q) : q_(q) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(kGbqScales).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& data = ctx.input(kGbqData);
    const Tensor& indices = ctx.input(kGbqIndices);
    const Tensor& scales = ctx.input(kGbqScales);
    const Shape& ds = data.shape();
    auto out_shape = gather_block_quantized_shape(q_, ds, indices.shape(), scales.shape(),
                                                  ctx.has_input(kGbqZeroPoints) ? &ctx.input(kGbqZeroPoints).shape()
                                                                                : nullptr);
    if (!out_shape) return std::unexpected(out_shape.error());
    const int64_t table = ds[0], elements = ds.back(), width = q_.values(elements);
    const int64_t rows_total = shape_numel(std::span(ds).first(ds.size() - 1));
    auto y = ctx.output(0, scales.dtype(), *out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t slab = table ? rows_total / table : 0;  // rows per index
    const int64_t blocks = q_.blocks(elements), zero_elements = q_.zero_elements(elements);
    const uint8_t* dd = data.data_as<uint8_t>();
    const uint8_t* zd = ctx.has_input(kGbqZeroPoints) ? ctx.input(kGbqZeroPoints).data_as<uint8_t>() : nullptr;
    const T* sd = scales.data_as<T>();
    const int32_t default_zero = q_.default_zero();
    const int64_t count = indices.numel();
    std::vector<int64_t> rows_of(static_cast<std::size_t>(count));  // each index's first row
    for (int64_t i = 0; i < count; ++i) {
      const int64_t index = indices.dtype() == DType::kInt32 ? indices.data_as<int32_t>()[i]
                                                             : indices.data_as<int64_t>()[i];
      if (index < -table || index >= table)
        return fail(ErrorCode::kRuntime,
                    fmt::format("GatherBlockQuantized: index {} (element {} of indices) is outside the table's {} "
                                "rows",
                                index, i, table),
                    fmt::format("indices select rows in [{}, {}]", -table, table - 1),
                    "give indices within the table (a token id past the vocabulary?)");
      rows_of[static_cast<std::size_t>(i)] = (index < 0 ? index + table : index) * slab;
    }
    T* out = y->template mut_as<T>();
    ctx.parallel().for_range(count * slab, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(width, 1)),
                             [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t row = rows_of[static_cast<std::size_t>(r / slab)] + r % slab;
        const uint8_t* values = dd + row * elements;
        T* dst = out + r * width;
        for (int64_t k = 0; k < width; ++k) {
          const int64_t blk = k / q_.block;
          const int32_t zero = zd ? table_value(q_, zd + row * zero_elements, blk) : default_zero;
          dst[k] = static_cast<T>(static_cast<float>(table_value(q_, values, k) - zero) *
                                  static_cast<float>(sd[row * blocks + blk]));
        }
      }
    });
    return {};
  }

  QuantizedRows q_;
};

}  // namespace

std::vector<KernelDef> gather_block_quantized_kernels() {
  return {KernelDef{{"com.microsoft", "GatherBlockQuantized", 1}, 0, check_gather_block_quantized,
                    [](const NodeContext& ctx) {
                      return make_kernel<GatherBlockQuantizedKernel>(QuantizedRows::of(ctx));
                    }}};
}

}  // namespace nxrt::cpu
