// ONNX Runtime's com.microsoft GatherBlockQuantized (nxrt/ep/gather_block_quantized.h checks the
// node and gives the output's shape): a thread per output element unpacks and dequantizes its
// value (kernel_library's gather_block_quantized). Scales of float, float16 or bfloat16. An index
// outside the table gives zeros (the cpu EP reports it; checking indices here would read them
// back and wait for the stream).
#include <fmt/format.h>

#include "nxrt/ep/gather_block_quantized.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_cuda_gather_block_quantized(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_gather_block_quantized_node(ctx, "cuda"));
  return require_dtypes(ctx, {kGbqScales}, is_cuda_float, kCudaFloats);
}

// How the kernel reads a table's values (gbq_value's kind).
int table_kind(DType t) { return t == DType::kInt4 ? 1 : t == DType::kUInt4 ? 2 : 0; }

Expected<void> build_gather_block_quantized(PlanBuilder& b, const Node& node) {
  const Graph& g = b.graph();
  const DType dtype = g.value(node.inputs[kGbqScales]).type.dtype;
  const bool wide_indices = g.value(node.inputs[kGbqIndices]).type.dtype == DType::kInt64;
  const std::string t(float_type(dtype)), index_type = wide_indices ? "i64" : "int";
  const std::string kernel = b.instantiate(
      "gather_block_quantized", fmt::format("{}, {}", t, index_type),
      fmt::format("i64 n, i64 width, i64 slab, i64 table, i64 elements, i64 blocks, i64 zero_elements, i64 block, "
                  "int bits, int kind, int default_zero, const unsigned char* data, const {1}* indices, "
                  "const {0}* scales, const unsigned char* zeros, {0}* y",
                  t, index_type),
      "n, width, slab, table, elements, blocks, zero_elements, block, bits, kind, default_zero, data, indices, "
      "scales, zeros, y");
  QuantizedRows q;
  q.type = g.value(node.inputs[kGbqData]).type.dtype;
  q.bits = node.attributes.int_or("bits", 4);
  q.block = node.attributes.int_or("block_size", 128);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    const Shape& ds = ctx.input(kGbqData).shape();
    const bool with_zeros = ctx.has_input(kGbqZeroPoints);
    auto out_shape = gather_block_quantized_shape(q, ds, ctx.input(kGbqIndices).shape(),
                                                  ctx.input(kGbqScales).shape(),
                                                  with_zeros ? &ctx.input(kGbqZeroPoints).shape() : nullptr);
    if (!out_shape) return forward_error(std::move(out_shape), ctx.where());
    auto y = ctx.output(0, dtype, *out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    const int64_t table = ds[0], elements = ds.back(), rows = dims_product(ds, 0, ds.size() - 1);
    KernelArgs args;
    args.add(n).add(q.values(elements)).add(rows / table).add(table).add(elements).add(q.blocks(elements));
    args.add(q.zero_elements(elements)).add(q.block).add(static_cast<int>(q.bits)).add(table_kind(q.type));
    args.add(q.default_zero()).ptr(dev(ctx.input(kGbqData))).ptr(dev(ctx.input(kGbqIndices)));
    args.ptr(dev(ctx.input(kGbqScales))).ptr(with_zeros ? dev(ctx.input(kGbqZeroPoints)) : nullptr).ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> gather_block_quantized_ops() {
  return {make_microsoft_op("GatherBlockQuantized", check_cuda_gather_block_quantized, build_gather_block_quantized)};
}

}  // namespace nxrt::cuda
