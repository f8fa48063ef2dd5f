// Checks and helpers the cuda EP's op families share: dtypes, ranks, constant inputs.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "blas.h"
#include "kernel_library.h"
#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ir/window.h"
#include "runtime.h"

namespace nxrt::cuda {

// The floats the cuda EP computes in float: float, float16 and bfloat16 (both loaded to float
// and stored rounded to nearest even).
inline bool is_cuda_float(DType t) { return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16; }
inline constexpr std::string_view kCudaFloats = "float, float16 and bfloat16";
// Those and double, which kernels that take it compute in double.
inline bool is_cuda_float_or_double(DType t) { return is_cuda_float(t) || t == DType::kFloat64; }
inline constexpr std::string_view kCudaFloatsOrDouble = "float, float16, bfloat16 and double";
// The numbers the cuda EP's exact kernels (sums, products, comparisons, copies) compute in
// their own type: float, float16 and bfloat16 (in float), double, int32 and int64.
inline bool is_cuda_number(DType t) {
  return is_cuda_float(t) || t == DType::kFloat64 || t == DType::kInt32 || t == DType::kInt64;
}
inline constexpr std::string_view kCudaNumbers = "float, float16, bfloat16, double, int32 and int64";
// 8- to 64-bit integers, signed or unsigned (not the 4- and 2-bit ones).
inline bool is_whole_byte_integer(DType t) { return is_integer(t) && !is_subbyte(t); }

// Declines unless the present inputs among `inputs` have dtypes `allowed` accepts (`kinds`
// names them in the reason: kCudaFloats), all one dtype when `same` is set.
KernelMatch require_dtypes(const NodeContext& ctx, const std::vector<std::size_t>& inputs, bool (*allowed)(DType),
                           std::string_view kinds, bool same = true);
// Declines unless inputs `inputs` (present ones) and output 0 are cuda floats (is_cuda_float),
// and of one dtype when `same` is set.
KernelMatch require_float(const NodeContext& ctx, const std::vector<std::size_t>& inputs, bool same = true);
inline KernelMatch require_float(const NodeContext& ctx, std::initializer_list<std::size_t> inputs, bool same = true) {
  return require_float(ctx, std::vector<std::size_t>(inputs), same);
}
// Declines a dtype the data-movement kernels cannot copy (strings, unknown).
KernelMatch require_fixed_size(const NodeContext& ctx, std::size_t input);
// Declines ranks above kMaxRank when the rank is known.
KernelMatch require_max_rank(const NodeContext& ctx, std::size_t input);
// Declines unless output `i` is unused (optional outputs the EP does not compute).
KernelMatch require_output_unused(const NodeContext& ctx, std::size_t i, std::string_view what);
// Declines unless input `i` is absent, a constant initializer, or int32/int64 (read when the
// step runs, with IntsInput), saying what it is for.
KernelMatch require_ints(const NodeContext& ctx, std::size_t i, std::string_view what);

// Quantized tensors: the CUDA C type of int8 ("signed char") and uint8 ("unsigned char"), ""
// for any other dtype.
std::string_view quantized_type(DType t);
// Declines unless input `i` (`what`) is int8 or uint8.
KernelMatch require_quantized(const NodeContext& ctx, std::size_t i, std::string_view what);
// Declines unless input `i` (`what`: a zero point or scale), when present, is of `dtype` and a
// scalar or 1-D (one value per tensor, or one per row, column or output channel).
KernelMatch require_scalar_or_vector(const NodeContext& ctx, std::size_t i, std::string_view what, DType dtype);

// An optional zero point or scale given per tensor or per index of what it covers (rows,
// columns, output channels): its device data (null when the node lacks it) and its count.
struct ScalarOrVector {
  const void* data = nullptr;
  int64_t count = 1;
};
// Input `i` (`what`) as a ScalarOrVector; a count other than 1 or `covers` is a step error
// whose fix says what it covers (`how`: "give one value, or one per output channel").
Expected<ScalarOrVector> scalar_or_vector(const StepContext& ctx, std::size_t i, int64_t covers, std::string_view what,
                                          std::string_view how);

// The integer values of a constant input (nullopt when absent).
std::optional<std::vector<int64_t>> constant_ints(const Graph& graph, const Node& node, std::size_t i);
// The first value of a constant float input (nullopt when absent).
std::optional<float> constant_float(const Graph& graph, const Node& node, std::size_t i);

// Rank of the node's input i as known before running (nullopt when unknown).
std::optional<int64_t> static_rank(const Graph& graph, const Node& node, std::size_t i);
// The element count of dims [from, to) of `s` (1 when the range is empty).
inline int64_t dims_product(const Shape& s, std::size_t from, std::size_t to) {
  return shape_numel(std::span<const int64_t>(s).subspan(from, to - from));
}
// A device pointer `elements` elements of `dtype` past `p`.
inline const void* advance(const void* p, int64_t elements, DType dtype) {
  return static_cast<const char*>(p) + elements * static_cast<int64_t>(dtype_size(dtype));
}
inline void* advance(void* p, int64_t elements, DType dtype) {
  return static_cast<char*>(p) + elements * static_cast<int64_t>(dtype_size(dtype));
}
// axis in [-rank, rank) -> [0, rank).
inline int64_t normalize_axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// A window's geometry as the windowed kernels take it (pool, conv_integer): depth, height and
// width in d[0..2] of each.
struct WindowKernelDims {
  KernelDims in, out, kernel, stride, pad_begin, dilation;
};
WindowKernelDims window_kernel_dims(const Window3& window);

// An exact float literal in CUDA C ("__int_as_float(0x3f800000)"), also for inf and nan.
std::string float_literal(float v);

}  // namespace nxrt::cuda

namespace nxrt::cuda {

class PlanBuilder;

// An integer input a step reads on the host (Reshape's shape, Slice's bounds, axes): its
// values when it is a constant initializer, else the tensor's when the step runs.
class IntsInput {
 public:
  IntsInput(const Graph& graph, const Node& node, std::size_t i);
  bool present() const { return present_; }
  // The values; nullopt when the node does not have the input.
  Expected<std::optional<std::vector<int64_t>>> read(StepContext& ctx) const;
  // Its one value (`what` names it in errors), or `absent` when the node does not have it; a
  // count other than one, or a missing input without `absent`, is an error of the step.
  Expected<int64_t> read_one(StepContext& ctx, std::string_view what, std::optional<int64_t> absent = {}) const;

 private:
  std::size_t index_;
  bool present_;
  std::optional<std::vector<int64_t>> constant_;
};

// `axis` (negative: counted from the end) as an index into a tensor of `shape`; out of range,
// an error of the step naming the axis and the shape.
Expected<std::size_t> axis_index(const StepContext& ctx, int64_t axis, const Shape& shape);

// The pad kernel for `dtype`'s element size (Pad, and Conv's uneven pads).
std::string pad_kernel(PlanBuilder& builder, DType dtype);

// The strided_copy kernel for `dtype`'s element size (Transpose, Slice, Concat, Expand).
std::string strided_copy_kernel(PlanBuilder& builder, DType dtype);
// out[out_off + i·out_strides] = in[in_off + i·in_strides] over `shape` (offsets in elements).
Expected<void> strided_copy(StepContext& ctx, const std::string& kernel, const Shape& shape, const Shape& in_strides,
                            int64_t in_off, const void* in, const Shape& out_strides, int64_t out_off, void* out);

// Each of `rows` rows of `cols` elements at `out` a copy of the row at `row` (a bias that a
// product then adds to, beta 1); `copy_kernel` is strided_copy_kernel's for the element size.
Expected<void> broadcast_rows(StepContext& ctx, const std::string& copy_kernel, const void* row, int64_t rows,
                              int64_t cols, void* out);

// The operands `a` (of `a_type`) and `b` of `shape`'s product where MatmulShape marks one whose
// batch dims broadcast only partly (expand_a / expand_b): copied into scratch with the output's
// batch dims, each matrix repeated where its own batch has a 1, and the pointer moved to the
// copy; `keep` holds the copies until the product is on the stream. `copy_kernel` is
// strided_copy_kernel's for the operands' element size. An empty product copies nothing.
Expected<void> expand_partial_batches(StepContext& ctx, const std::string& copy_kernel, const MatmulShape& shape,
                                      DType a_type, const void*& a, DType b_type, const void*& b,
                                      std::vector<Tensor>& keep);

// The attention kernels' scores (floats) of at most this many (row, key) pairs per launch: 64 MiB
// of scratch; longer runs go in chunks of rows.
inline constexpr int64_t kAttentionScoresPerChunk = int64_t{1} << 24;

// Output `i` when it is asked for, else scratch of its size (a step that needs the values either
// way: an attention op's present key and value).
Expected<Tensor> output_or_scratch(StepContext& ctx, std::size_t i, DType dtype, const Shape& shape);

// DynamicQuantizeLinear of `n` floats at `x` on the device (quantize.cpp): one block finds their
// range and writes the uint8 scale and zero point, a second kernel quantizes `x` into `y` with
// them, read on the device (no sync).
struct DynamicQuantizeKernels {
  std::string range, quantize;
};
DynamicQuantizeKernels dynamic_quantize_kernels(PlanBuilder& builder);
Expected<void> dynamic_quantize(StepContext& ctx, const DynamicQuantizeKernels& kernels, int64_t n, const void* x,
                                void* scale, void* zero_point, void* y);

// The kernel of MatMulIntegerToFloat, DynamicQuantizeMatMul and QAttention's projection
// (integer_matmul.cpp) for operands of int8 or uint8 `a` and `w`: int32 sums of
// zero-point-shifted products scaled to float, plus a bias per column.
std::string integer_to_float_kernel(PlanBuilder& builder, DType a, DType w);

// Softmax (mode 0), LogSoftmax (1) or Hardmax (2) of each (outer, inner) row of `axis`
// elements with stride `inner`: a thread per row for short axes, a block per row for long ones
// (normalization.cpp). Both kernels are instantiated when the plan is built.
struct SoftmaxKernels {
  std::string per_thread, per_block;
};
SoftmaxKernels softmax_kernels(PlanBuilder& builder, DType dtype);
Expected<void> launch_softmax(StepContext& ctx, const SoftmaxKernels& kernels, int64_t outer, int64_t axis, int64_t inner,
                              const void* x, void* y, int mode);

// BatchNormalization with training_mode=1 (opset 14 on): normalized with the batch's own
// statistics, in a kernel of its own (normalization.cpp); in inference it fuses into chains.
inline bool is_batch_norm_training(int64_t opset, const AttributeMap& attributes) {
  return opset >= 14 && attributes.int_or("training_mode", 0) != 0;
}
Expected<void> build_batch_norm_training(PlanBuilder& builder, const Node& node);

}  // namespace nxrt::cuda
