// Integer GEMM of the quantized products (MatMulInteger, QLinearMatMul, and the integer
// convolutions through im2col): C (int32) = (A - a_zero) * (B - b_zero) for uint8 or int8
// operands, exact: the int32 sums wrap as the reference loop's do.
//
// B is packed once into strips of kIntStrip columns whose depth runs in groups of four bytes,
// the layout of AVX-512 VNNI's vpdpbusd (four uint8 x int8 products summed into each int32
// lane) and of AMX's tdpbusd (whose B tiles are 16 such groups of 16 columns). Operands of
// other signs are moved there exactly: int8 A becomes A + 128, uint8 B becomes B - 128, and
// their zero points move with them; the zero points then come out of the product through the
// row sums of A and the column sums of B.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "common/aligned_buffer.h"
#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

inline constexpr int64_t kIntStrip = 32;  // columns of B per packed strip

// B (k x n, uint8 or int8) in the micro-kernel's layout, with its column sums.
class PackedIntB {
 public:
  // B is k x n with leading dimension ldb or, transposed, n x k.
  template <class TB>
  static PackedIntB pack(const TB* b, int64_t ldb, bool trans, int64_t k, int64_t n);
  // The same into this object, keeping its storage; strips are packed in parallel.
  template <class TB>
  void assign(const TB* b, int64_t ldb, bool trans, int64_t k, int64_t n, const Parallel& parallel);

  // The depth a B of depth k is stored with (quads() * 4 for it): where A's rows are laid out
  // that long, with the zero point of A past k, and B is packed with zero rows to it, the GEMM
  // reads A as it is instead of copying every row.
  static int64_t padded_depth(int64_t k);
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  // Depth in groups of four, zero-padded (to whole AMX tiles of 16 where AMX is built).
  int64_t quads() const { return quads_; }
  // How the stored values relate to B's: stored = B - 128 for uint8 B, else B.
  int32_t shift() const { return from_unsigned_ ? -128 : 0; }
  // Strip s: columns [s * kIntStrip, ...), quads() groups of kIntStrip x 4 bytes.
  const int8_t* strip(int64_t s) const { return data_.data() + s * quads() * kIntStrip * 4; }
  // Per column, the sum over the depth of the stored values.
  const int32_t* column_sums() const { return column_sums_.data(); }

 private:
  int64_t k_ = 0;
  int64_t n_ = 0;
  int64_t quads_ = 0;
  bool from_unsigned_ = false;
  AlignedBuffer<int8_t> data_;  // 64-byte rows of AMX tiles start on cache lines
  std::vector<int32_t> column_sums_;
};

// A zero point of the product: none (empty), one for every row of A (column of B), or one
// per row (column).
using IntZeroPoints = std::span<const int32_t>;

// Where the product goes: the int32 sums; floats, each sum times its column's scale, plus its
// column's bias where one is given (MatMulInteger, Cast, Mul and Add in one pass, the sums
// never stored); or uint8 or int8 values
// requantized per column (a QLinearConv's output, channels-last or, transposed, as planes).
// Exactly one of `sums`, `scaled` and `quantized` is set, with leading dimension `ld`.
// Transposed outputs put element (i, j) at [j * ld + i] (a convolution's pixels-by-channels
// product as channel planes).
struct IntGemmOutput {
  int32_t* sums = nullptr;
  float* scaled = nullptr;
  void* quantized = nullptr;  // uint8_t or int8_t, as quantized_signed says
  const float* scale = nullptr;  // scale[j] per column when per_column, else scale[0]
  bool per_column = false;
  int64_t ld = 0;
  bool transposed = false;
  bool quantized_signed = false;
  const int32_t* bias = nullptr;  // requantized: added to column j's sums first, when set
  float zero = 0;                 // requantized: the output's zero point
  const float* float_bias = nullptr;  // scaled: added to column j after the scale, when set

  static IntGemmOutput int32(int32_t* c, int64_t ld) { return {.sums = c, .ld = ld}; }
  static IntGemmOutput int32_transposed(int32_t* c, int64_t ld) { return {.sums = c, .ld = ld, .transposed = true}; }
  static IntGemmOutput scaled_float(float* y, int64_t ld, const float* scale, bool per_column,
                                    const float* bias = nullptr) {
    return {.scaled = y, .scale = scale, .per_column = per_column, .ld = ld, .float_bias = bias};
  }
  // y[i * ld + j] = saturate(round_half_even((sum(i, j) + bias[j]) * scale[j]) + zero): a
  // convolution's pixels by channels as they are (channels-last).
  template <class Q>
  static IntGemmOutput requantized(Q* y, int64_t ld, const float* scale, const int32_t* bias, float zero) {
    static_assert(sizeof(Q) == 1);
    return {.quantized = y, .scale = scale, .per_column = true, .ld = ld,
            .quantized_signed = std::is_signed_v<Q>, .bias = bias, .zero = zero};
  }
  // The same at y[j * ld + i] (channel planes).
  template <class Q>
  static IntGemmOutput requantized_transposed(Q* y, int64_t ld, const float* scale, const int32_t* bias, float zero) {
    IntGemmOutput o = requantized(y, ld, scale, bias, zero);
    o.transposed = true;
    return o;
  }
  // The same output, `elements` further on (the next matrix of a batch).
  IntGemmOutput advanced(int64_t elements) const {
    IntGemmOutput o = *this;
    if (o.sums) o.sums += elements;
    if (o.scaled) o.scaled += elements;
    if (o.quantized) o.quantized = static_cast<uint8_t*>(o.quantized) + elements;
    return o;
  }
};

// C (m x n) = (A - a_zero) * (B - b_zero); A is m x k (uint8 or int8, leading dimension
// lda). Splits the work over `parallel`.
template <class TA>
void int_gemm(int64_t m, const TA* a, int64_t lda, IntZeroPoints a_zero, const PackedIntB& b, IntZeroPoints b_zero,
              const IntGemmOutput& c, const Parallel& parallel);

// Whether int_gemm can multiply A (of TA) of depth k into a requantized channels-last output
// (IntGemmOutput::requantized) straight from its rows, k bytes long, in registers: uint8 A of a
// depth of up to 32, a multiple of 4, where AVX-512 VNNI is built. It does when A has one zero
// point and every zero point of B is zero; else it copies the rows to B's padded depth itself. A
// B of such a depth is best packed with k as it is, not PackedIntB::padded_depth(k).
template <class TA>
bool int_gemm_takes_shallow_rows(int64_t k);

// "amx", "avx512-vnni", "avx2" or "portable": the micro-kernel products of at least 16 rows
// run on here, for kernel variant names (AMX where built and the OS grants its tiles).
const char* int_gemm_isa();

}  // namespace nxrt::cpu
