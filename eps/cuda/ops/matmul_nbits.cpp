// ONNX Runtime's com.microsoft MatMulNBits (inputs and semantics in nxrt/ep/matmul_nbits.h): up to
// kNbitsGemvRows rows of A (a language model's decoding step) multiply the quantized weights as
// they are unpacked, one block per output column (kernel_library's nbits_gemv); more rows
// dequantize W into scratch in A's type and multiply on cuBLASLt (A · Wᵀ, the bias broadcast into
// Y first). Float, float16 and bfloat16, accumulated in float; accuracy_level is not read (as ONNX
// Runtime's CUDA EP: it computes in A's type at every level).
#include <fmt/format.h>

#include "blas.h"
#include "nxrt/ep/matmul_nbits.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {


// Rows of A from which a run dequantizes W and multiplies on cuBLASLt.
constexpr int64_t kNbitsGemvRows = 8;

KernelMatch check_cuda_matmul_nbits(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {kNbitsA}));
  return check_matmul_nbits_node(ctx, "cuda");
}

Expected<void> build_matmul_nbits(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[kNbitsA]).type.dtype;
  const std::string t(float_type(dtype));
  const std::string weights = "const unsigned char* b, const {0}* scales, const unsigned char* packed_zeros, "
                              "const {0}* zeros";
  const std::string gemv = b.instantiate(
      "nbits_gemv", t,
      fmt::format(fmt::runtime("i64 rows, i64 n_cols, i64 k, i64 blocks, i64 block, int bits, const {0}* a, " +
                               weights + ", const {0}* bias, {0}* y"),
                  t),
      "rows, n_cols, k, blocks, block, bits, a, b, scales, packed_zeros, zeros, bias, y");
  const std::string dequantize = b.instantiate(
      "nbits_dequantize", t,
      fmt::format(fmt::runtime("i64 n_cols, i64 k, i64 blocks, i64 block, int bits, " + weights + ", {0}* w"), t),
      "n_cols, k, blocks, block, bits, b, scales, packed_zeros, zeros, w");
  const std::string expand = strided_copy_kernel(b, dtype);
  const MatMulNBitsGeometry g = MatMulNBitsGeometry::of(node.attributes);
  b.add_step(make_step(node, "nvrtc:" + gemv, [=](StepContext& ctx) -> Expected<void> {
    auto optional = [&](std::size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
    const Tensor& a = ctx.input(kNbitsA);
    const MatMulNBitsSizes sizes = matmul_nbits_sizes(a, ctx.input(kNbitsB), ctx.input(kNbitsScales),
                                                      optional(kNbitsZeroPoints), optional(kNbitsBias));
    if (auto checked = check_matmul_nbits_inputs(g, sizes); !checked)
      return forward_error(std::move(checked), ctx.where());
    Shape out_shape = a.shape();
    out_shape.back() = g.n;
    auto y = ctx.output(0, dtype, out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t rows = a.numel() / g.k;
    if (rows == 0) return {};
    const bool typed_zeros = ctx.has_input(kNbitsZeroPoints) && ctx.input(kNbitsZeroPoints).dtype() != DType::kUInt8;
    const bool packed = ctx.has_input(kNbitsZeroPoints) && !typed_zeros;
    const void* packed_zeros = packed ? dev(ctx.input(kNbitsZeroPoints)) : nullptr;
    const void* zeros = typed_zeros ? dev(ctx.input(kNbitsZeroPoints)) : nullptr;
    const void* bias = ctx.has_input(kNbitsBias) ? dev(ctx.input(kNbitsBias)) : nullptr;
    auto add_weights = [&](KernelArgs& args) {
      args.ptr(dev(ctx.input(kNbitsB))).ptr(dev(ctx.input(kNbitsScales))).ptr(packed_zeros).ptr(zeros);
    };
    if (rows <= kNbitsGemvRows) {
      KernelArgs args;
      args.add(rows).add(g.n).add(g.k).add(g.blocks()).add(g.block).add(static_cast<int>(g.bits)).ptr(dev(a));
      add_weights(args);
      args.ptr(bias).ptr(dev_mut(*y));
      return ctx.launch_rows(gemv, g.n, kRowBlockThreads, args);
    }
    auto w = ctx.scratch(static_cast<std::size_t>(g.n * g.k) * dtype_size(dtype));
    if (!w) return std::unexpected(w.error());
    KernelArgs args;
    args.add(g.n).add(g.k).add(g.blocks()).add(g.block).add(static_cast<int>(g.bits));
    add_weights(args);
    args.ptr(dev_mut(*w));
    if (auto r = ctx.launch(dequantize, g.n * g.k, args); !r) return r;
    if (bias)  // the bias in every row of Y, which the product then adds to (beta 1)
      if (auto r = broadcast_rows(ctx, expand, bias, rows, g.n, dev_mut(*y)); !r) return r;
    MatmulProblem p;
    p.dtype = dtype;
    p.trans_b = true;
    p.m = rows, p.n = g.n, p.k = g.k;
    p.beta = bias ? 1.f : 0.f;
    p.a = dev(a), p.b = dev(*w), p.d = dev_mut(*y);
    return run_matmul(ctx, p);
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> matmul_nbits_ops() {
  return {make_microsoft_op("MatMulNBits", check_cuda_matmul_nbits, build_matmul_nbits)};
}

}  // namespace nxrt::cuda
