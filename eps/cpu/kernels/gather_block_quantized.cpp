// ONNX Runtime's com.microsoft GatherBlockQuantized: Gather of rows of a table quantized in blocks
// along its last axis, dequantized as they are gathered (the int4 embedding tables of ONNX Runtime
// GenAI's models). data: uint8 holding `bits` (2, 4 or 8; 4 by default) values per element packed
// along the last axis, low bits first, or int4 / uint4 (one value each); scales (float or
// float16, the output's type) one per block of block_size values (128 by default) of a row;
// zero_points (optional) packed as data is, else 2^(bits - 1) for uint8 and 0 for int4 / uint4.
// output = indices' shape + data's dims after the first (its last one unpacked):
//   output[i..., j] = (q[idx, j] - zero[idx, j / block_size]) * scale[idx, j / block_size],
// a negative index counting from the end; an index out of range is an error (as in ONNX Runtime
// 1.30; later versions' documentation gives zeros instead). The cpu EP implements gather_axis 0 and quantize_axis the last one (what an embedding
// table needs); float8 and float4 tables are declined.
#include <fmt/format.h>

#include <bit>
#include <optional>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr std::size_t kData = 0, kIndices = 1, kScales = 2, kZeroPoints = 3;

// The layout of data's rows: how many values a row holds and how they are stored.
struct QuantizedRows {
  DType type = DType::kUInt8;
  int64_t bits = 4, block = 128;
  int64_t per_element() const { return type == DType::kUInt8 ? 8 / bits : 1; }
  // Values of a row stored in `elements` elements of the last axis; blocks of them; elements of
  // zero points a row needs.
  int64_t values(int64_t elements) const { return elements * per_element(); }
  int64_t blocks(int64_t elements) const { return (values(elements) + block - 1) / block; }
  int64_t zero_elements(int64_t elements) const { return (blocks(elements) + per_element() - 1) / per_element(); }
  // Value k of a row stored in `row` (one value per element for int4 and uint4, sign-extended).
  int32_t value(const uint8_t* row, int64_t k) const {
    if (type == DType::kInt4) return static_cast<int8_t>(row[k]);
    if (type == DType::kUInt4 || bits == 8) return row[k];
    const auto shift = static_cast<unsigned>(k % per_element() * bits);
    return (row[k / per_element()] >> shift) & ((1 << bits) - 1);
  }

  static QuantizedRows of(const NodeContext& ctx) {
    return {ctx.input_dtype(kData), ctx.attrs().int_or("bits", 4), ctx.attrs().int_or("block_size", 128)};
  }
};

KernelMatch check_gather_block_quantized(const NodeContext& ctx) {
  const QuantizedRows q = QuantizedRows::of(ctx);
  NXRT_REQUIRE(q.type == DType::kUInt8 || q.type == DType::kInt4 || q.type == DType::kUInt4,
               "GatherBlockQuantized: data is {}; the cpu EP implements uint8, int4 and uint4 tables (not float8 or "
               "float4)",
               dtype_name(q.type));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, kIndices, {DType::kInt32, DType::kInt64}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, kScales, {DType::kFloat32, DType::kFloat16}));
  NXRT_REQUIRE(!ctx.has_input(kZeroPoints) || ctx.input_dtype(kZeroPoints) == q.type,
               "GatherBlockQuantized: zero_points are {} and data {}; they must be one type",
               dtype_name(ctx.input_dtype(kZeroPoints)), dtype_name(q.type));
  NXRT_REQUIRE(q.type != DType::kUInt8 || q.bits == 2 || q.bits == 4 || q.bits == 8,
               "GatherBlockQuantized: bits {}; uint8 tables hold 2, 4 or 8 bits per value", q.bits);
  NXRT_REQUIRE(q.block >= 16 && std::has_single_bit(static_cast<uint64_t>(q.block)),
               "GatherBlockQuantized: block_size {} must be a power of two of at least 16", q.block);
  const int64_t rank = ctx.input_rank(kData).value_or(2);
  const auto gather = normalize_axis(ctx.attrs().int_or("gather_axis", 0), rank);
  const auto quantize = normalize_axis(ctx.attrs().int_or("quantize_axis", 1), rank);
  NXRT_REQUIRE(rank >= 2 && gather == 0 && quantize == rank - 1,
               "GatherBlockQuantized: gather_axis {} and quantize_axis {} of data of rank {}; the cpu EP implements "
               "gathering along the first axis of a table quantized along its last (rank 2 or more)",
               ctx.attrs().int_or("gather_axis", 0), ctx.attrs().int_or("quantize_axis", 1), rank);
  return KernelMatch::supported(elementwise_cost(ctx, 2));
}

class GatherBlockQuantizedKernel final : public Kernel {
 public:
  explicit GatherBlockQuantizedKernel(QuantizedRows q) : q_(q) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(kScales).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    const Tensor& data = ctx.input(kData);
    const Tensor& indices = ctx.input(kIndices);
    const Tensor& scales = ctx.input(kScales);
    const Shape& ds = data.shape();
    const int64_t table = ds[0], elements = ds.back(), width = q_.values(elements);
    Shape per_row(ds.begin(), ds.end() - 1);  // data's dims but the last: one row each
    Shape scale_shape = per_row, zero_shape = per_row;
    scale_shape.push_back(q_.blocks(elements));
    zero_shape.push_back(q_.zero_elements(elements));
    if (scales.shape() != scale_shape || (ctx.has_input(kZeroPoints) && ctx.input(kZeroPoints).shape() != zero_shape))
      return fail(ErrorCode::kRuntime,
                  fmt::format("GatherBlockQuantized: data {} has scales {}{}", shape_to_string(ds),
                              shape_to_string(scales.shape()),
                              ctx.has_input(kZeroPoints)
                                  ? fmt::format(" and zero_points {}", shape_to_string(ctx.input(kZeroPoints).shape()))
                                  : ""),
                  fmt::format("rows of {} values in blocks of {} need scales {} and zero_points {}", width, q_.block,
                              shape_to_string(scale_shape), shape_to_string(zero_shape)),
                  "give scales and zero points of those shapes, or the block_size and bits they were made with");
    Shape out_shape = indices.shape();
    out_shape.insert(out_shape.end(), ds.begin() + 1, ds.end() - 1);
    out_shape.push_back(width);
    auto y = ctx.output(0, scales.dtype(), out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t slab = table ? shape_numel(per_row) / table : 0;  // rows per index
    const int64_t blocks = q_.blocks(elements), zero_elements = q_.zero_elements(elements);
    const uint8_t* dd = data.data_as<uint8_t>();
    const uint8_t* zd = ctx.has_input(kZeroPoints) ? ctx.input(kZeroPoints).data_as<uint8_t>() : nullptr;
    const T* sd = scales.data_as<T>();
    const int32_t default_zero = q_.type == DType::kUInt8 ? 1 << (q_.bits - 1) : 0;
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
          const int32_t zero = zd ? q_.value(zd + row * zero_elements, blk) : default_zero;
          dst[k] = static_cast<T>(static_cast<float>(q_.value(values, k) - zero) *
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
