// Single-precision GEMM (C = alpha*op(A)*op(B) + beta*C): cache-blocked, packed, threaded,
// with operands that can be packed once (constant weights) and saved as bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/aligned_buffer.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/weight.h"

namespace nxrt::cpu {

using AlignedFloats = AlignedBuffer<float>;

// Which operand of the product a packed matrix is: A (rows x depth) or B (depth x cols).
enum class GemmSide : uint32_t { kA = 0, kB = 1 };

// An operand rearranged into the micro-kernel's panels: A as strips of its register-tile
// rows, B as strips of its register-tile columns (strip_width() of them), each strip
// depth-major and zero-padded. Packed once, used by every call; its byte form goes into
// EPContext blobs.
class PackedMatrix {
 public:
  // op(A) is m x k: A is m x k (row-major, leading dimension lda) or, transposed, k x m.
  static PackedMatrix pack_a(const float* a, int64_t lda, bool trans, int64_t m, int64_t k);
  // op(B) is k x n: B is k x n (leading dimension ldb) or, transposed, n x k.
  static PackedMatrix pack_b(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n);

  // pack_b into this matrix's memory, grown only where it is too small: for operands packed in
  // every run (an Attention's keys and values), which would otherwise be fresh pages each time.
  void repack_b(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n);

  // Room for a packed operand whose producer writes the strips itself (im2col does);
  // the lanes past `outer` in the last strip must be written as zeros too.
  static PackedMatrix allocate(GemmSide side, int64_t outer, int64_t depth);

  GemmSide side() const { return side_; }
  int64_t outer() const { return outer_; }  // m for A, n for B
  int64_t depth() const { return depth_; }  // k
  int64_t strip_width() const;              // the micro-kernel's rows (A) or columns (B)
  // Start of the strip holding rows (A) or columns (B) [s * strip_width, ...).
  const float* strip(int64_t s) const { return data_.data() + s * strip_width() * depth_; }
  float* mutable_strip(int64_t s) { return data_.data() + s * strip_width() * depth_; }

 private:
  PackedMatrix(GemmSide side, int64_t outer, int64_t depth);
  friend std::optional<std::vector<PackedMatrix>> load_packed_matrices(std::span<const std::byte>, GemmSide,
                                                                       std::size_t, int64_t, int64_t);
  GemmSide side_;
  int64_t outer_;
  int64_t depth_;
  AlignedFloats data_;
};

// The form of one operand: a strided matrix (optionally transposed) or a packed one.
struct GemmOperand {
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const PackedMatrix* packed = nullptr;

  static GemmOperand matrix(const float* data, int64_t ld, bool trans = false) {
    return GemmOperand{data, ld, trans, nullptr};
  }
  static GemmOperand of(const PackedMatrix& p) { return GemmOperand{nullptr, 0, false, &p}; }
};

// Below this many multiply-adds (m * n * k) a product gains little from splitting across
// threads; callers with a batch of such products run the batch in parallel instead.
inline constexpr double kSmallGemm = 1 << 18;

// C (m x n, leading dimension ldc) = alpha * op(A) * op(B) + beta * C. With beta == 0, C
// is only written (it may hold garbage or NaN). A packed operand must have been packed for
// the same side, with at least m (A) or n (B) rows or columns and at least depth k: the product
// reads its first ones (attention packs each head's keys once, and each block of queries
// multiplies by the keys it sees). Splits the work over `parallel`.
void gemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b, float beta,
          float* c, int64_t ldc, const Parallel& parallel);

// Byte form of a kernel's packed operands (for Kernel::save_packed).
std::vector<std::byte> save_packed_matrices(std::span<const PackedMatrix> packed);
// Restores `count` operands of `side` with the given outer dimension and depth; nullopt
// when the bytes were made for other shapes or another micro-kernel (then pack again).
std::optional<std::vector<PackedMatrix>> load_packed_matrices(std::span<const std::byte> bytes, GemmSide side,
                                                              std::size_t count, int64_t outer, int64_t depth);

// The A operands of `groups` products held back to back in a constant float weight (Conv,
// ConvTranspose): group g's op(A) is m x k, starting g * m * k floats in, transposed or
// not as for pack_a. Restored from the node's EPContext blob when it matches, else packed.
Expected<std::vector<PackedMatrix>> pack_weight_groups(const NodeContext& ctx, const WeightHandle& weight,
                                                       int64_t groups, int64_t m, int64_t k, bool trans);

// Every matrix of input `input` as B operands (op(B) is the matrix, transposed or not) when it
// is a constant float initializer: packed, or restored from the node's EPContext blob; none
// when the input is computed at run time or not float.
Expected<std::vector<PackedMatrix>> pack_constant_b(const NodeContext& ctx, std::size_t input, bool trans);

// C (m x n, leading dimension n) = alpha * op(A) * op(B) + beta * C for types without a
// packed GEMM (double, integers); beta == 0 never reads C. Serial.
template <class T>
void reference_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, bool trans_a, const T* b, bool trans_b,
                    T beta, T* c) {
  for (int64_t i = 0; i < m; ++i) {
    T* row = c + i * n;
    for (int64_t j = 0; j < n; ++j) row[j] = beta == T(0) ? T(0) : beta * row[j];
    for (int64_t p = 0; p < k; ++p) {
      const T av = alpha * (trans_a ? a[p * m + i] : a[i * k + p]);
      if (trans_b) {
        for (int64_t j = 0; j < n; ++j) row[j] += av * b[j * k + p];
      } else {
        const T* brow = b + p * n;
        for (int64_t j = 0; j < n; ++j) row[j] += av * brow[j];
      }
    }
  }
}

// "avx512", "avx2" or "generic": the micro-kernel compiled in, for kernel variant names.
const char* gemm_isa();

}  // namespace nxrt::cpu
