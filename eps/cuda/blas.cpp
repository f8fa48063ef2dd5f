// cuBLASLt matmul: the row-major problem as its column-major transpose, with the heuristic's
// algorithm, set up once per shape (MatmulPlans).
#include "blas.h"

#include <cublasLt.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace nxrt::cuda {
namespace {

constexpr std::size_t kWorkspaceBytes = 32u << 20;

using MatmulDesc = ApiHandle<cublasLtMatmulDesc_t, cublasStatus_t>;
using Layout = ApiHandle<cublasLtMatrixLayout_t, cublasStatus_t>;
using Preference = ApiHandle<cublasLtMatmulPreference_t, cublasStatus_t>;

std::unexpected<Error> lt_error(const BlasApi& lt, StepContext& ctx, cublasStatus_t s, std::string_view call) {
  return fail(ErrorCode::kRuntime, fmt::format("{}: cuBLASLt failed", ctx.where()),
              fmt::format("{} returned {} ({})", call, static_cast<int>(s), lt.get_status_string(s)));
}

// A column-major rows x cols matrix with leading dimension ld, batched.
Expected<Layout> make_layout(const BlasApi& lt, StepContext& ctx, cudaDataType type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                             int64_t stride) {
  cublasLtMatrixLayout_t raw = nullptr;
  if (auto s = lt.matrix_layout_create(&raw, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld);
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatrixLayoutCreate");
  Layout layout(raw, {lt.matrix_layout_destroy});
  const int32_t count = static_cast<int32_t>(batch);
  if (auto s = lt.matrix_layout_set_attribute(raw, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "lt.matrix_layout_set_attribute(BATCH_COUNT)");
  if (auto s = lt.matrix_layout_set_attribute(raw, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "lt.matrix_layout_set_attribute(STRIDED_BATCH_OFFSET)");
  return layout;
}

// The alignment of an operand, up to 256 bytes. cuBLASLt's heuristic assumes 256-byte aligned
// operands unless told less, and the kernels it picks may then fault on a view at an offset
// (one direction's weights, a block of rows).
uint32_t alignment_of(const void* p) {
  const auto address = reinterpret_cast<uintptr_t>(p);
  return address == 0 ? 256u : static_cast<uint32_t>(std::min<uintptr_t>(256, address & (~address + 1)));
}

}  // namespace

// The descriptors, in cuBLASLt's operand order (see make_plan), and the chosen algorithm.
struct MatmulPlans::Plan {
  MatmulDesc desc;
  Layout first, second, out;
  cublasLtMatmulAlgo_t algo;
  std::size_t workspace;
};

MatmulPlans::MatmulPlans() = default;
MatmulPlans::~MatmulPlans() = default;

namespace {

// Describes p to cuBLASLt and asks its heuristic for an algorithm; null when it has none.
Expected<std::unique_ptr<MatmulPlans::Plan>> make_plan(const BlasLibrary& library, StepContext& ctx, const MatmulProblem& p,
                                                       const MatmulKey& key) {
  const BlasApi& lt = library.api;
  const cudaDataType type = p.dtype == DType::kFloat16 ? CUDA_R_16F : p.dtype == DType::kBFloat16 ? CUDA_R_16BF : CUDA_R_32F;
  // Row-major D = op(A)·op(B) is column-major D^T = op(B)^T·op(A)^T: B's buffer is the first
  // operand, A's the second, and no data moves.
  cublasLtMatmulDesc_t raw_desc = nullptr;
  if (auto s = lt.matmul_desc_create(&raw_desc, CUBLAS_COMPUTE_32F, CUDA_R_32F); s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatmulDescCreate");
  MatmulDesc desc(raw_desc, {lt.matmul_desc_destroy});
  const cublasOperation_t op_first = p.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_second = p.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (auto s = lt.matmul_desc_set_attribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first));
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "lt.matmul_desc_set_attribute(TRANSA)");
  if (auto s = lt.matmul_desc_set_attribute(raw_desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second));
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "lt.matmul_desc_set_attribute(TRANSB)");
  // Stored shapes, column-major: B is [N, K] (ld N), or [K, N] (ld K) when transposed; A likewise.
  auto first = p.trans_b ? make_layout(lt, ctx, type, p.k, p.n, p.k, p.batch, p.stride_b)
                         : make_layout(lt, ctx, type, p.n, p.k, p.n, p.batch, p.stride_b);
  if (!first) return std::unexpected(first.error());
  auto second = p.trans_a ? make_layout(lt, ctx, type, p.m, p.k, p.m, p.batch, p.stride_a)
                          : make_layout(lt, ctx, type, p.k, p.m, p.k, p.batch, p.stride_a);
  if (!second) return std::unexpected(second.error());
  auto out = make_layout(lt, ctx, type, p.n, p.m, p.n, p.batch, p.m * p.n);
  if (!out) return std::unexpected(out.error());

  cublasLtMatmulPreference_t raw_pref = nullptr;
  if (auto s = lt.matmul_preference_create(&raw_pref); s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatmulPreferenceCreate");
  Preference pref(raw_pref, {lt.matmul_preference_destroy});
  const std::size_t workspace_bytes = kWorkspaceBytes;
  if (auto s = lt.matmul_preference_set_attribute(raw_pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes,
                                                    sizeof(workspace_bytes));
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatmulPreferenceSetAttribute");
  // cuBLASLt's A is our B, and its B our A (see above); C and D are our D.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> alignments[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, key.align_b},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, key.align_a},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, key.align_d},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, key.align_d},
  };
  for (const auto& [attribute, alignment] : alignments)
    if (auto s = lt.matmul_preference_set_attribute(raw_pref, attribute, &alignment, sizeof(alignment));
        s != CUBLAS_STATUS_SUCCESS)
      return lt_error(lt, ctx, s, "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  if (auto s = lt.matmul_algo_get_heuristic(library.handle, raw_desc, first->get(), second->get(), out->get(), out->get(),
                                              raw_pref, 1, &heuristic, &found);
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0) return nullptr;
  return std::make_unique<MatmulPlans::Plan>(MatmulPlans::Plan{std::move(desc), std::move(*first), std::move(*second),
                                                               std::move(*out), heuristic.algo, heuristic.workspaceSize});
}

// The plan for p's shape and operand alignments (null: cuBLASLt has no algorithm for them).
Expected<const MatmulPlans::Plan*> plan_for(const BlasLibrary& library, StepContext& ctx, const MatmulProblem& p) {
  const MatmulKey key{p.dtype,    p.trans_a, p.trans_b, p.m, p.n, p.k, p.batch, p.stride_a, p.stride_b,
                      alignment_of(p.a), alignment_of(p.b), alignment_of(p.d)};
  return library.plans.find_or_make(key, [&] { return make_plan(library, ctx, p, key); });
}

Expected<void> launch(const BlasLibrary& library, StepContext& ctx, const MatmulProblem& p, const MatmulPlans::Plan& plan) {
  auto workspace = ctx.scratch(plan.workspace);
  if (!workspace) return std::unexpected(workspace.error());
  const BlasApi& lt = library.api;
  if (auto s = lt.matmul(library.handle, plan.desc.get(), &p.alpha, p.b, plan.first.get(), p.a, plan.second.get(), &p.beta,
                         p.d, plan.out.get(), p.d, plan.out.get(), &plan.algo, dev_mut(*workspace), plan.workspace,
                         library.stream);
      s != CUBLAS_STATUS_SUCCESS)
    return lt_error(lt, ctx, s, "cublasLtMatmul");
  return {};
}

// The bytes an operand spans: `elements` per batch, batches `stride` elements apart (0: one
// matrix for every batch).
std::size_t operand_bytes(int64_t elements, int64_t batch, int64_t stride, DType dtype) {
  const int64_t span = (stride == 0 ? 0 : (batch - 1) * stride) + elements;
  return static_cast<std::size_t>(span) * dtype_size(dtype);
}

// cuBLASLt has no algorithm for p's operands at their alignment (a view at an odd offset, such
// as a recurrent layer's weight slice, may be 2-byte aligned): p runs on copies of the
// misaligned operands in 256-byte aligned scratch, and a misaligned D is copied back after.
Expected<void> run_realigned(const BlasLibrary& library, StepContext& ctx, const MatmulProblem& p) {
  std::vector<Tensor> copies;  // scratch lives until the product is on the stream
  auto aligned = [&](const void* data, std::size_t bytes, bool copy_in) -> Expected<void*> {
    if (alignment_of(data) == 256) return const_cast<void*>(data);
    auto scratch = ctx.scratch(bytes);
    if (!scratch) return std::unexpected(scratch.error());
    if (copy_in)
      if (auto r = ctx.copy_on_device(dev_mut(*scratch), data, bytes); !r) return std::unexpected(r.error());
    copies.push_back(std::move(*scratch));
    return dev_mut(copies.back());
  };
  MatmulProblem q = p;
  auto a = aligned(p.a, operand_bytes(p.m * p.k, p.batch, p.stride_a, p.dtype), true);
  if (!a) return std::unexpected(a.error());
  auto b = aligned(p.b, operand_bytes(p.k * p.n, p.batch, p.stride_b, p.dtype), true);
  if (!b) return std::unexpected(b.error());
  const std::size_t d_bytes = operand_bytes(p.m * p.n, p.batch, p.m * p.n, p.dtype);
  auto d = aligned(p.d, d_bytes, p.beta != 0);
  if (!d) return std::unexpected(d.error());
  q.a = *a, q.b = *b, q.d = *d;
  auto plan = plan_for(library, ctx, q);
  if (!plan) return std::unexpected(plan.error());
  if (!*plan)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: cuBLASLt has no algorithm for [{}x{}]·[{}x{}] x{} in {}", ctx.where(), p.m, p.k, p.k, p.n,
                            p.batch, dtype_name(p.dtype)),
                "not even for operands copied to 256-byte aligned memory", "use the cpu EP for this node");
  if (auto r = launch(library, ctx, q, **plan); !r) return r;
  if (q.d != p.d) return ctx.copy_on_device(p.d, q.d, d_bytes);
  return {};
}

}  // namespace

Expected<void> run_matmul(StepContext& ctx, const MatmulProblem& p) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return {};
  if (p.k == 0) {  // cuBLASLt takes no empty inner dim; D = beta·D
    if (p.beta == 1) return {};
    if (p.beta != 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: an empty product (K = 0) with beta {} is not supported by the cuda EP",
                                                   ctx.where(), p.beta),
                  {}, "use the cpu EP for this node");
    return ctx.zero(p.d, static_cast<std::size_t>(p.batch * p.m * p.n) * dtype_size(p.dtype));
  }
  auto library = ctx.blas();
  if (!library) return std::unexpected(library.error());
  auto plan = plan_for(*library, ctx, p);
  if (!plan) return std::unexpected(plan.error());
  if (*plan) return launch(*library, ctx, p, **plan);
  return run_realigned(*library, ctx, p);
}

Expected<MatmulShape> matmul_shape(const Shape& a_in, const Shape& b_in) {
  if (a_in.empty() || b_in.empty()) return fail(ErrorCode::kRuntime, "MatMul of a scalar");
  // 1-D operands are promoted ([K] -> [1,K] and [K] -> [K,1]) and the added dim dropped after.
  Shape a = a_in, b = b_in;
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  MatmulShape r;
  MatmulProblem& p = r.problem;
  p.m = a[a.size() - 2], p.k = a.back(), p.n = b.back();
  if (b[b.size() - 2] != p.k)
    return fail(ErrorCode::kRuntime, fmt::format("{} and {} do not multiply", shape_to_string(a_in), shape_to_string(b_in)));
  // Batch dims, left-padded with 1s to one rank, broadcast numpy-style.
  const std::size_t rank = std::max(a.size(), b.size()) - 2;
  Shape batch_a(rank - (a.size() - 2), 1), batch_b(rank - (b.size() - 2), 1);
  batch_a.insert(batch_a.end(), a.begin(), a.end() - 2);
  batch_b.insert(batch_b.end(), b.begin(), b.end() - 2);
  for (std::size_t i = 0; i < rank; ++i) {
    if (batch_a[i] != batch_b[i] && batch_a[i] != 1 && batch_b[i] != 1)
      return fail(ErrorCode::kRuntime, fmt::format("the batch dims of {} and {} do not broadcast", shape_to_string(a_in),
                                                   shape_to_string(b_in)));
    r.output.push_back(batch_a[i] == 1 ? batch_b[i] : batch_a[i]);
  }
  const int64_t count_a = shape_numel(batch_a), count_b = shape_numel(batch_b);
  r.expand_a = count_a != 1 && batch_a != r.output;
  r.expand_b = count_b != 1 && batch_b != r.output;
  r.batch = r.output, r.batch_a = std::move(batch_a), r.batch_b = std::move(batch_b);
  p.batch = shape_numel(r.output);
  p.stride_a = count_a == 1 ? 0 : p.m * p.k;
  p.stride_b = count_b == 1 ? 0 : p.k * p.n;
  if (!a_vec) r.output.push_back(p.m);
  if (!b_vec) r.output.push_back(p.n);
  return r;
}

}  // namespace nxrt::cuda
