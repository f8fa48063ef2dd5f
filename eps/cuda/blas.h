// Row-major (batched) matrix products through cuBLASLt, with RAII over its descriptors.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>

#include "nxrt/ep/error.h"
#include "nxrt/ep/dtype.h"
#include "runtime.h"

namespace nxrt::cuda {

// D[b] = alpha * op(A[b]) · op(B[b]) + beta * D[b], row-major, D contiguous [M, N] per batch.
// A batch stride of 0 reuses one matrix for every batch (broadcast).
struct MatmulProblem {
  DType dtype = DType::kFloat32;  // of A, B and D; accumulation is always float
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, batch = 1;
  int64_t stride_a = 0, stride_b = 0;  // elements between batches
  float alpha = 1, beta = 0;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
};

// Runs p through the device's MatmulPlans (BlasLibrary::plans): the first product of its
// shape sets up cuBLASLt, later ones only launch.
Expected<void> run_matmul(StepContext& ctx, const MatmulProblem& p);

// What cuBLASLt's set-up of a product depends on: everything in MatmulProblem but the data and
// the scalars, and each operand's alignment (up to 256 bytes), which the algorithm may assume.
struct MatmulKey {
  DType dtype;
  bool trans_a, trans_b;
  int64_t m, n, k, batch, stride_a, stride_b;
  uint32_t align_a, align_b, align_d;
  auto operator<=>(const MatmulKey&) const = default;
};

// The cuBLASLt set-up of the products a device has run, by MatmulKey: the descriptors, the
// layouts, and the algorithm the heuristic chose with its workspace size. Made on a shape's
// first product; later products of that shape (every run of a model with fixed shapes, every
// time step of a recurrent layer) skip the set-up and the heuristic query and only launch.
// A device holds one, used under its run mutex; it forgets everything when it holds
// kMaxPlans (a model whose shapes change every run does not grow it without end).
class MatmulPlans {
 public:
  static constexpr std::size_t kMaxPlans = 512;
  struct Plan;

  MatmulPlans();
  ~MatmulPlans();
  MatmulPlans(const MatmulPlans&) = delete;
  MatmulPlans& operator=(const MatmulPlans&) = delete;

  // The plan for `key`, made by `make` when there is none (an error is not remembered). A null
  // plan is remembered too: cuBLASLt has no algorithm for the key.
  template <class Make>
  Expected<const Plan*> find_or_make(const MatmulKey& key, Make make) {
    if (auto it = plans_.find(key); it != plans_.end()) return it->second.get();
    auto made = make();
    if (!made) return std::unexpected(made.error());
    if (plans_.size() >= kMaxPlans) plans_.clear();
    return plans_.emplace(key, std::move(*made)).first->second.get();
  }

 private:
  std::map<MatmulKey, std::unique_ptr<Plan>> plans_;
};

// ONNX MatMul of a and b (numpy rules: 1-D operands promoted, batch dims broadcast) as one
// batched product: m, n, k, batch and the batch strides of `problem`, and the output shape.
// One batch stride per side serves a side whose batch dims are the output's, or all 1. A side
// that broadcasts only some of them ([1,3] against [2,3], or [2,1] against [1,3]) is marked
// `expand_*`: its stride in `problem` is then that of a copy with the output's batch dims
// (expand_partial_batches, ops/op_util.h), which the caller makes before the product.
struct MatmulShape {
  MatmulProblem problem;
  Shape output;
  Shape batch, batch_a, batch_b;  // the output's batch dims, and each side's (left-padded with 1s)
  bool expand_a = false, expand_b = false;
};
Expected<MatmulShape> matmul_shape(const Shape& a, const Shape& b);

}  // namespace nxrt::cuda
