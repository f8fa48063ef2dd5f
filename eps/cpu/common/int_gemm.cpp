// The integer GEMM: A rewritten as unsigned bytes with its row sums, then register tiles of
// up to kIntMr rows (or AMX steps of 32 rows) x one packed strip of B, each summed over the
// whole depth, then the zero points taken out while the tile is stored.
#include "common/int_gemm.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "common/block_transpose.h"
#include "common/requantize.h"

#if defined(__AVX512VNNI__) && defined(__AVX512BW__)
#include <immintrin.h>
#define NXRT_INT_GEMM_VNNI 1
#if defined(__AMX_TILE__) && defined(__AMX_INT8__) && defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#define NXRT_INT_GEMM_AMX 1
#endif
#elif defined(__AVX2__)
#include <immintrin.h>
#define NXRT_INT_GEMM_AVX2 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nxrt::cpu {
namespace {

// Rows of a register tile: with VNNI, 12 x 2 vectors of accumulators leave registers for the
// strip's two vectors of B and the broadcast A values.
#if defined(NXRT_INT_GEMM_VNNI)
constexpr int kIntMr = 12;
#else
constexpr int kIntMr = 8;
#endif
constexpr int64_t kIntRowBlock = 8 * kIntMr;    // rows of A per task, over one strip of B
constexpr int64_t kStripBytes = kIntStrip * 4;  // one quad of depth across a strip
#if defined(NXRT_INT_GEMM_AMX)
constexpr int64_t kQuadAlign = 16;  // an AMX tile's depth: 16 quads (64 bytes a row)
constexpr int64_t kRowAlign = 32;   // rows of A per AMX step (two tiles)
#else
constexpr int64_t kQuadAlign = 1;
constexpr int64_t kRowAlign = 1;
#endif
static_assert(kIntRowBlock % kRowAlign == 0);

using IntTile = int32_t[kIntMr][kIntStrip];

}  // namespace

template <class TA>
bool int_gemm_takes_shallow_rows(int64_t k) {
#if defined(NXRT_INT_GEMM_VNNI)
  return std::is_same_v<TA, uint8_t> && k > 0 && k % 4 == 0 && k <= 32;
#else
  (void)k;
  return false;
#endif
}

template bool int_gemm_takes_shallow_rows<uint8_t>(int64_t);
template bool int_gemm_takes_shallow_rows<int8_t>(int64_t);

namespace {

#if defined(NXRT_INT_GEMM_VNNI)
// tile (R x kIntStrip) = A rows (unsigned, `quads` groups of four) . B strip (signed), with
// vpdpbusd: kVectors vectors of 16 columns per row.
constexpr int kVectors = kIntStrip / 16;

// Every loop over the accumulators is unrolled: only then do they stay in registers (g++ left
// a loop of 12 x 2 in memory, loading and storing each accumulator around every vpdpbusd).
template <int R>
void dot_tile(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, IntTile& tile) {
  __m512i acc[R][kVectors];
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_setzero_si512();
  for (int64_t q = 0; q < quads; ++q) {
    __m512i bv[kVectors];
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) bv[v] = _mm512_loadu_si512(b + 64 * v);
    b += kStripBytes;
#pragma GCC unroll 12
    for (int r = 0; r < R; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * lda + q * 4, sizeof quad);
      const __m512i av = _mm512_set1_epi32(quad);
#pragma GCC unroll 2
      for (int v = 0; v < kVectors; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 12
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < kVectors; ++v) _mm512_storeu_si512(&tile[r][16 * v], acc[r][v]);
}

#if defined(NXRT_INT_GEMM_AMX)
// Linux hands AMX's tile registers only to processes that ask for them (arch_prctl).
bool amx_granted() {
  static const bool granted = [] {
    constexpr int kRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
    constexpr int kTileData = 18;               // XFEATURE_XTILEDATA
    return syscall(SYS_arch_prctl, kRequestPermission, kTileData) == 0;
  }();
  return granted;
}

// Tiles 0-3: C, 16 rows x 16 int32 each (a 32 x 32 block); 4-5: A, 16 rows x 64 bytes;
// 6-7: B, 16 quads x 16 columns (64 bytes a row).
struct alignas(64) AmxConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {64, 64, 64, 64, 64, 64, 64, 64};
  uint8_t rows[16] = {16, 16, 16, 16, 16, 16, 16, 16};
};

// c (32 x kIntStrip, leading dimension kIntStrip) = 32 rows of A (unsigned, lda bytes apart)
// . a strip of B, over `chunks` tiles of depth. The tiles must be configured (AmxConfig).
void amx_block(int64_t chunks, const uint8_t* a, int64_t lda, const int8_t* b, int32_t* c) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (int64_t t = 0; t < chunks; ++t) {
    const uint8_t* at = a + t * 64;
    const int8_t* bt = b + t * kQuadAlign * kStripBytes;
    _tile_loadd(4, at, lda);
    _tile_loadd(5, at + 16 * lda, lda);
    _tile_loadd(6, bt, kStripBytes);
    _tile_loadd(7, bt + 64, kStripBytes);
    _tile_dpbusd(0, 4, 6);
    _tile_dpbusd(1, 4, 7);
    _tile_dpbusd(2, 5, 6);
    _tile_dpbusd(3, 5, 7);
  }
  constexpr int64_t kLd = kIntStrip * sizeof(int32_t);
  _tile_stored(0, c, kLd);
  _tile_stored(1, c + 16, kLd);
  _tile_stored(2, c + 16 * kIntStrip, kLd);
  _tile_stored(3, c + 16 * kIntStrip + 16, kLd);
}
#endif
#elif defined(NXRT_INT_GEMM_AVX2)
// Up to two rows x 16 columns (a part of the strip) of the tile, with vpmaddwd: each 16-byte chunk
// of a quad (4 columns x 4 depths) widens to int16 and multiplies a row's quad repeated;
// each int32 lane gets one column's sum over two depths (exact: no int16 sum saturates).
// `raw` holds the two partial sums of each column side by side.
template <int Rows>
void dot_part(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, int32_t (*raw)[kIntStrip * 2]) {
  __m256i acc[Rows][4];
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_setzero_si256();
  for (int64_t q = 0; q < quads; ++q) {
    __m256i bw[4];
    for (int c = 0; c < 4; ++c)
      bw[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + q * kStripBytes + 16 * c)));
    for (int r = 0; r < Rows; ++r) {
      int32_t quad;
      std::memcpy(&quad, a + r * lda + q * 4, sizeof quad);
      const __m256i av = _mm256_broadcastq_epi64(_mm_cvtepu8_epi16(_mm_cvtsi32_si128(quad)));
      for (int c = 0; c < 4; ++c) acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(av, bw[c]));
    }
  }
  for (int r = 0; r < Rows; ++r)
    for (int c = 0; c < 4; ++c) _mm256_storeu_si256(reinterpret_cast<__m256i*>(&raw[r][8 * c]), acc[r][c]);
}

template <int R>
void dot_tile(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, IntTile& tile) {
  alignas(32) int32_t raw[R][kIntStrip * 2];
  for (int part = 0; part < kIntStrip / 16; ++part)
    for (int r = 0; r < R; r += 2) {
      int32_t(*out)[kIntStrip * 2] = reinterpret_cast<int32_t(*)[kIntStrip * 2]>(&raw[r][part * 32]);
      if (r + 1 < R) {
        dot_part<2>(quads, a + r * lda, lda, b + part * 64, out);
      } else {
        dot_part<1>(quads, a + r * lda, lda, b + part * 64, out);
      }
    }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kIntStrip; ++j) tile[r][j] = raw[r][2 * j] + raw[r][2 * j + 1];
}
#else
// The same sums in plain C++ for machines without AVX2 (the compiler vectorizes the columns).
// Unsigned accumulators wrap, as the int32 sums of the reference loop do.
template <int R>
void dot_tile(int64_t quads, const uint8_t* a, int64_t lda, const int8_t* b, IntTile& tile) {
  uint32_t acc[R][kIntStrip] = {};
  for (int64_t q = 0; q < quads; ++q) {
    for (int r = 0; r < R; ++r) {
      const uint8_t* aq = a + r * lda + q * 4;
      const int32_t a0 = aq[0], a1 = aq[1], a2 = aq[2], a3 = aq[3];
      for (int j = 0; j < kIntStrip; ++j) {
        const int8_t* bq = b + j * 4;
        acc[r][j] += static_cast<uint32_t>(a0 * bq[0] + a1 * bq[1] + a2 * bq[2] + a3 * bq[3]);
      }
    }
    b += kStripBytes;
  }
  for (int r = 0; r < R; ++r)
    for (int j = 0; j < kIntStrip; ++j) tile[r][j] = static_cast<int32_t>(acc[r][j]);
}
#endif

using DotTile = void (*)(int64_t, const uint8_t*, int64_t, const int8_t*, IntTile&);

template <int... I>
constexpr std::array<DotTile, kIntMr> dot_tile_table(std::integer_sequence<int, I...>) {
  return {dot_tile<I + 1>...};
}
// Indexed by rows - 1: edge tiles do no arithmetic for missing rows.
constexpr auto kDotTiles = dot_tile_table(std::make_integer_sequence<int, kIntMr>());

// A's rows as unsigned bytes (int8 moved up by 128), depth zero-padded to whole quads, and
// the sum of each row; reused by the calling thread's later products. Row i is at data + i *
// ld: in `bytes`, or A itself where A is uint8 that needs no padding. AMX steps read whole
// blocks of kRowAlign rows: where A is read as it is, a last partial block is copied into
// `bytes` (zero rows after it), from row `tail_from` on.
struct UnsignedRows {
  AlignedBuffer<uint8_t> bytes;
  std::vector<int32_t> sums;
  const uint8_t* data = nullptr;
  int64_t ld = 0;
  int64_t tail_from = -1;  // the first row of the copied block; -1: none

  // The block of rows from row i0 on (i0 a multiple of kRowAlign), for an AMX step.
  const uint8_t* block(int64_t i0) const {
    return tail_from >= 0 && i0 >= tail_from ? bytes.data() + (i0 - tail_from) * ld : data + i0 * ld;
  }
};

// The sum of a row of bytes, 16 at a time with psadbw (sums of absolute differences from 0)
// where the CPU has SSE2.
uint32_t byte_sum(const uint8_t* row, int64_t count) {
  uint32_t sum = 0;
  int64_t p = 0;
#if defined(__SSE2__) && defined(__x86_64__)
  __m128i acc = _mm_setzero_si128();
  for (; p + 16 <= count; p += 16)
    acc = _mm_add_epi64(acc,
                        _mm_sad_epu8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + p)), _mm_setzero_si128()));
  sum = static_cast<uint32_t>(_mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc)));
#endif
  for (; p < count; ++p) sum += row[p];
  return sum;
}

// dst = src as unsigned bytes (+128 for int8), zeros up to `depth`; returns their sum. (Loops
// that store bytes sit in functions of their own: in a lambda, a byte store may alias any
// captured variable, and the loop would not vectorize.)
template <class TA>
uint32_t unsigned_row(const TA* src, int64_t k, int64_t depth, uint8_t* dst) {
  uint32_t sum = 0;
  for (int64_t p = 0; p < k; ++p) {
    const auto v = static_cast<uint8_t>(std::is_signed_v<TA> ? static_cast<int32_t>(src[p]) + 128 : src[p]);
    dst[p] = v;
    sum += v;
  }
  std::fill(dst + k, dst + depth, uint8_t{0});
  return sum;
}

// Without `need_sums`, the sums of rows that need no rewriting are left unset: the caller's
// zero points do not read them (every zero point of B is zero).
template <class TA>
const UnsignedRows& unsigned_rows(int64_t m, const TA* a, int64_t lda, int64_t k, int64_t depth, bool need_sums,
                                  const Parallel& parallel) {
  thread_local UnsignedRows mine;
  UnsignedRows& rows = mine;  // the caller's: inside the loop, `mine` would name each worker's own
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(depth, 1));
  rows.sums.resize(static_cast<std::size_t>(m));
  rows.tail_from = -1;
  if constexpr (std::is_unsigned_v<TA>) {
    if (k == depth) {  // A as it is: only the sums to find, and a last partial block to copy
      if (need_sums) {
        parallel.for_range(m, grain, [&](int64_t r0, int64_t r1) {
          for (int64_t i = r0; i < r1; ++i)
            rows.sums[static_cast<std::size_t>(i)] = static_cast<int32_t>(byte_sum(a + i * lda, k));
        });
      }
      rows.data = a;
      rows.ld = lda;
      if (m % kRowAlign != 0) {
        rows.tail_from = m / kRowAlign * kRowAlign;
        rows.bytes.resize(static_cast<std::size_t>(kRowAlign * lda));
        const int64_t copied = (m - rows.tail_from) * lda;
        std::copy(a + rows.tail_from * lda, a + m * lda, rows.bytes.data());
        std::fill(rows.bytes.data() + copied, rows.bytes.data() + kRowAlign * lda, uint8_t{0});
      }
      return rows;
    }
  }
  // Whole AMX steps of rows: the rows past m are zeros, their sums never read.
  const int64_t padded = (m + kRowAlign - 1) / kRowAlign * kRowAlign;
  rows.ld = depth;
  rows.bytes.resize(static_cast<std::size_t>(padded * depth));
  std::fill(rows.bytes.begin() + m * depth, rows.bytes.end(), uint8_t{0});
  parallel.for_range(m, grain, [&](int64_t r0, int64_t r1) {
    for (int64_t i = r0; i < r1; ++i)
      rows.sums[static_cast<std::size_t>(i)] =
          static_cast<int32_t>(unsigned_row(a + i * lda, k, depth, rows.bytes.data() + i * depth));
  });
  rows.data = rows.bytes.data();
  return rows;
}

// out[4 * j + t] = rows[t][j]: four rows of a strip into its quads of depth.
void interleave_quads(const uint8_t (&rows)[4][kIntStrip], uint8_t* out) {
#if defined(__SSE2__)
  for (int64_t j = 0; j < kIntStrip; j += 16) {
    const auto load = [&](int t) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(&rows[t][j])); };
    const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
    const __m128i low01 = _mm_unpacklo_epi8(r0, r1), high01 = _mm_unpackhi_epi8(r0, r1);
    const __m128i low23 = _mm_unpacklo_epi8(r2, r3), high23 = _mm_unpackhi_epi8(r2, r3);
    auto* o = reinterpret_cast<__m128i*>(out + 4 * j);
    _mm_storeu_si128(o + 0, _mm_unpacklo_epi16(low01, low23));
    _mm_storeu_si128(o + 1, _mm_unpackhi_epi16(low01, low23));
    _mm_storeu_si128(o + 2, _mm_unpacklo_epi16(high01, high23));
    _mm_storeu_si128(o + 3, _mm_unpackhi_epi16(high01, high23));
  }
#else
  for (int64_t j = 0; j < kIntStrip; ++j)
    for (int t = 0; t < 4; ++t) out[4 * j + t] = rows[t][j];
#endif
}

// One strip of B: columns [j0, j0 + width) as `quads` quads of depth (B - 128 for uint8, zeros
// past k and the width) at dst, and their column sums.
template <class TB>
void pack_strip(const TB* b, int64_t ldb, bool trans, int64_t k, int64_t quads, int64_t j0, int64_t width, int8_t* dst,
                int32_t* column_sums) {
  const uint8_t flip = std::is_unsigned_v<TB> ? 0x80 : 0;  // v - 128 as int8, for uint8 v
  uint8_t rows[4][kIntStrip];
  uint32_t sums[kIntStrip] = {};
  for (int64_t q = 0; q < quads; ++q) {
    for (int t = 0; t < 4; ++t) {
      const int64_t d = q * 4 + t;
      uint8_t* row = rows[t];
      if (d >= k) {
        std::fill(row, row + kIntStrip, uint8_t{0});
        continue;
      }
      if (!trans && width == kIntStrip) {  // the common case, in vector loops
        const TB* src = b + d * ldb + j0;
        for (int64_t j = 0; j < kIntStrip; ++j) row[j] = static_cast<uint8_t>(src[j]) ^ flip;
      } else {
        for (int64_t j = 0; j < kIntStrip; ++j)
          row[j] = j < width ? static_cast<uint8_t>(
                                   static_cast<uint8_t>(trans ? b[(j0 + j) * ldb + d] : b[d * ldb + j0 + j]) ^ flip)
                             : uint8_t{0};
      }
      for (int64_t j = 0; j < kIntStrip; ++j) sums[j] += static_cast<uint32_t>(static_cast<int8_t>(row[j]));
    }
    interleave_quads(rows, reinterpret_cast<uint8_t*>(dst + q * kStripBytes));
  }
  for (int64_t j = 0; j < width; ++j) column_sums[j] = static_cast<int32_t>(sums[j]);
}

// A sum of the tile with the zero points taken out: dot - b_zero * row_sum + a_zero *
// column_term, in wrapping arithmetic (see int_gemm).
inline int32_t without_zero_points(int32_t dot, uint32_t b_zero, uint32_t row_sum, uint32_t a_zero,
                                   uint32_t column_term) {
  return static_cast<int32_t>(static_cast<uint32_t>(dot) - b_zero * row_sum + a_zero * column_term);
}

// The per-column terms of the zero point correction (see int_gemm), found once per product.
// With one zero point of A for all rows, a_zero * column_term is one column offset; with every
// zero point of B zero (symmetric weights, as quantize_dynamic writes them), the row term
// vanishes and a sum is the dot product plus its column's offset.
struct ZeroPointTerms {
  const uint32_t* b_zeros = nullptr;         // per column, with B's shift
  const uint32_t* column_terms = nullptr;    // k * b_zero - column sum of B as stored
  const uint32_t* column_offsets = nullptr;  // a_zero * column_terms when A has one zero point
  bool b_zeros_all_zero = false;
  // Requantized output where a sum is the dot product plus its column's offset: the offset plus
  // the column's bias, added with the bias while requantizing (no pass of its own).
  const int32_t* biased_offsets = nullptr;
};

// Calls store(j, sum) for the sums of one row of a tile, columns [j0, j0 + count), through the
// cheapest form of the correction the terms allow.
template <class Store>
inline void for_each_sum(const int32_t* dot, int64_t count, int64_t j0, uint32_t row_sum, uint32_t a_zero,
                         const ZeroPointTerms& z, Store store) {
  const uint32_t* offsets = z.column_offsets ? z.column_offsets + j0 : nullptr;
  const uint32_t* b_zeros = z.b_zeros + j0;
  if (offsets && z.b_zeros_all_zero) {
    for (int64_t j = 0; j < count; ++j) store(j, static_cast<int32_t>(static_cast<uint32_t>(dot[j]) + offsets[j]));
  } else if (offsets) {
    for (int64_t j = 0; j < count; ++j)
      store(j, static_cast<int32_t>(static_cast<uint32_t>(dot[j]) - b_zeros[j] * row_sum + offsets[j]));
  } else {
    const uint32_t* terms = z.column_terms + j0;
    for (int64_t j = 0; j < count; ++j) store(j, without_zero_points(dot[j], b_zeros[j], row_sum, a_zero, terms[j]));
  }
}

// One row of a tile as int32 sums. (The row stores are inlined into the tile's loop over its
// rows, where a call per row cost a tenth of a small product's time.)
[[gnu::always_inline]] inline void store_int_row(const int32_t* dot, int64_t count, int64_t j0, uint32_t row_sum,
                                                 uint32_t a_zero, const ZeroPointTerms& z, int32_t* out) {
  for_each_sum(dot, count, j0, row_sum, a_zero, z, [out](int64_t j, int32_t sum) { out[j] = sum; });
}

// The same sums as floats times their column's scale (`scale` per column, else `scale[0]`),
// plus their column's bias when `bias` is set.
[[gnu::always_inline]] inline void store_scaled_row(const int32_t* dot, int64_t count, int64_t j0, uint32_t row_sum,
                                                    uint32_t a_zero, const ZeroPointTerms& z, const float* scale,
                                                    bool per_column, const float* bias, float* out) {
  if (bias && per_column) {
    for_each_sum(dot, count, j0, row_sum, a_zero, z, [out, scale, bias](int64_t j, int32_t sum) {
      out[j] = static_cast<float>(sum) * scale[j] + bias[j];
    });
    return;
  }
  if (per_column) {
    for_each_sum(dot, count, j0, row_sum, a_zero, z,
                 [out, scale](int64_t j, int32_t sum) { out[j] = static_cast<float>(sum) * scale[j]; });
    return;
  }
  const float s = scale[0];
  if (bias) {
    for_each_sum(dot, count, j0, row_sum, a_zero, z,
                 [out, s, bias](int64_t j, int32_t sum) { out[j] = static_cast<float>(sum) * s + bias[j]; });
    return;
  }
  for_each_sum(dot, count, j0, row_sum, a_zero, z,
               [out, s](int64_t j, int32_t sum) { out[j] = static_cast<float>(sum) * s; });
}

// Row i, columns [j0, j0 + count), of the output from a row of a tile.
[[gnu::always_inline]] inline void store_row(const IntGemmOutput& c, int64_t i, int64_t j0, const int32_t* dot,
                                             int64_t count, uint32_t row_sum, uint32_t a_zero,
                                             const ZeroPointTerms& z) {
  if (c.sums) {
    store_int_row(dot, count, j0, row_sum, a_zero, z, c.sums + i * c.ld + j0);
    return;
  }
  store_scaled_row(dot, count, j0, row_sum, a_zero, z, c.per_column ? c.scale + j0 : c.scale, c.per_column,
                   c.float_bias ? c.float_bias + j0 : nullptr, c.scaled + i * c.ld + j0);
}

int32_t zero_point_at(IntZeroPoints zero, int64_t i) {
  if (zero.empty()) return 0;
  return zero[zero.size() == 1 ? 0 : static_cast<std::size_t>(i)];
}

constexpr int64_t kMaxTileRows = kRowAlign > kIntMr ? kRowAlign : kIntMr;

// Rows [i0, i0 + rows) x columns [j0, j0 + count) of a requantized output (of Q) from a tile,
// its rows' sums and zero points of A in `row_sums` and `a_zeros`. Where the correction is one
// offset per column, it is added with the bias. Channels-last output goes from the tile's rows
// straight to Y's rows; planes are requantized into a tile of bytes, then turned.
template <class Q>
void store_requantized(const IntGemmOutput& c, int64_t i0, int64_t rows, int64_t j0, int64_t count, const int32_t* tile,
                       const uint32_t* row_sums, const uint32_t* a_zeros, const ZeroPointTerms& z) {
  const auto* sums = reinterpret_cast<const int32_t(*)[kIntStrip]>(tile);
  const int32_t* bias = c.bias ? c.bias + j0 : nullptr;
  alignas(64) int32_t corrected[kMaxTileRows][kIntStrip];
  if (z.biased_offsets) {
    bias = z.biased_offsets + j0;
  } else {
    for (int64_t r = 0; r < rows; ++r)
      store_int_row(tile + r * kIntStrip, count, j0, row_sums[r], a_zeros[r], z, corrected[r]);
    sums = corrected;
  }
  auto* y = static_cast<uint8_t*>(c.quantized);
  const float* scale = c.scale + j0;
  if (!c.transposed) {
    requantize_rows(sums[0], kIntStrip, rows, bias, scale, c.zero, count, reinterpret_cast<Q*>(y + i0 * c.ld + j0),
                    c.ld);
    return;
  }
  alignas(64) uint8_t bytes[kMaxTileRows][kIntStrip];
  requantize_rows(sums[0], kIntStrip, rows, bias, scale, c.zero, count, reinterpret_cast<Q*>(bytes[0]), kIntStrip);
  transpose_bytes(&bytes[0][0], kIntStrip, rows, count, y + j0 * c.ld + i0, c.ld);
}

// Rows [i0, i0 + rows) x columns [j0, j0 + count) of the output from a tile (row r at
// tile + r * kIntStrip), with the zero points taken out (see int_gemm).
void store_tile(const IntGemmOutput& c, int64_t i0, int64_t rows, int64_t j0, int64_t count, const int32_t* tile,
                const int32_t* row_sums, IntZeroPoints a_zero, uint32_t a_shift, const ZeroPointTerms& z) {
  uint32_t sums[kMaxTileRows], zeros[kMaxTileRows];
  for (int64_t r = 0; r < rows; ++r) {
    sums[r] = static_cast<uint32_t>(row_sums[i0 + r]);
    zeros[r] = static_cast<uint32_t>(zero_point_at(a_zero, i0 + r)) + a_shift;
  }
  if (c.quantized) {
    if (c.quantized_signed) {
      store_requantized<int8_t>(c, i0, rows, j0, count, tile, sums, zeros, z);
    } else {
      store_requantized<uint8_t>(c, i0, rows, j0, count, tile, sums, zeros, z);
    }
    return;
  }
  if (c.transposed) {
    alignas(64) int32_t corrected[kMaxTileRows][kIntStrip];
    for (int64_t r = 0; r < rows; ++r)
      store_int_row(tile + r * kIntStrip, count, j0, sums[r], zeros[r], z, corrected[r]);
    transpose_words(reinterpret_cast<const uint32_t*>(&corrected[0][0]), kIntStrip, rows, count,
                    reinterpret_cast<uint32_t*>(c.sums + j0 * c.ld + i0), c.ld);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) store_row(c, i0 + r, j0, tile + r * kIntStrip, count, sums[r], zeros[r], z);
}

// C = A'.B' corrected (store_tile), over the threads: task t multiplies B's strip
// t / row_blocks by A's block of rows t % row_blocks, so neighbouring tasks share a strip of B,
// which stays in cache while A's blocks stream.
void multiply_tiles(int64_t m, int64_t quads, const UnsignedRows& rows, const PackedIntB& b, const IntGemmOutput& c,
                    IntZeroPoints a_zero, uint32_t a_shift, const ZeroPointTerms& z, const Parallel& parallel) {
  const int64_t n = b.n(), strips = (n + kIntStrip - 1) / kIntStrip;
  const int64_t row_blocks = (m + kIntRowBlock - 1) / kIntRowBlock;
  parallel.for_range(strips * row_blocks, 1, [&](int64_t t0, int64_t t1) {
    alignas(64) IntTile tile;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t s = t / row_blocks, block = t % row_blocks;
      const int64_t j0 = s * kIntStrip, nr = std::min(kIntStrip, n - j0);
      const int64_t block_end = std::min(m, (block + 1) * kIntRowBlock);
      for (int64_t i0 = block * kIntRowBlock; i0 < block_end; i0 += kIntMr) {
        const int64_t mr = std::min<int64_t>(kIntMr, block_end - i0);
        kDotTiles[static_cast<std::size_t>(mr - 1)](quads, rows.data + i0 * rows.ld, rows.ld, b.strip(s), tile);
        store_tile(c, i0, mr, j0, nr, &tile[0][0], rows.sums.data(), a_zero, a_shift, z);
      }
    }
  });
}

#if defined(NXRT_INT_GEMM_AMX)
// multiply_tiles with AMX's tile products, for at least 16 rows.
void multiply_tiles_amx(int64_t m, int64_t quads, const UnsignedRows& rows, const PackedIntB& b, const IntGemmOutput& c,
                        IntZeroPoints a_zero, uint32_t a_shift, const ZeroPointTerms& z, const Parallel& parallel) {
  const int64_t n = b.n(), strips = (n + kIntStrip - 1) / kIntStrip;
  const int64_t row_blocks = (m + kIntRowBlock - 1) / kIntRowBlock;
  static_assert(kIntStrip == 32, "an AMX step covers a strip with two B tiles");
  parallel.for_range(strips * row_blocks, 1, [&](int64_t t0, int64_t t1) {
    // The tiles are this thread's until released; another library may configure them
    // differently between our tasks.
    static const AmxConfig config;
    _tile_loadconfig(&config);
    alignas(64) int32_t block[kRowAlign][kIntStrip];
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t s = t / row_blocks, row_block = t % row_blocks;
      const int64_t j0 = s * kIntStrip, nr = std::min(kIntStrip, n - j0);
      const int64_t block_end = std::min(m, (row_block + 1) * kIntRowBlock);
      for (int64_t i0 = row_block * kIntRowBlock; i0 < block_end; i0 += kRowAlign) {
        amx_block(quads / kQuadAlign, rows.block(i0), rows.ld, b.strip(s), &block[0][0]);
        store_tile(c, i0, std::min(kRowAlign, block_end - i0), j0, nr, &block[0][0], rows.sums.data(), a_zero,
                   a_shift, z);
      }
    }
    _tile_release();
  });
}
#endif

}  // namespace

template <class TB>
PackedIntB PackedIntB::pack(const TB* b, int64_t ldb, bool trans, int64_t k, int64_t n) {
  PackedIntB p;
  p.assign(b, ldb, trans, k, n, SerialParallel());
  return p;
}

template <class TB>
void PackedIntB::assign(const TB* b, int64_t ldb, bool trans, int64_t k, int64_t n, const Parallel& parallel) {
  k_ = k;
  n_ = n;
  from_unsigned_ = std::is_unsigned_v<TB>;
  quads_ = padded_depth(k) / 4;
  const int64_t quads = quads_, strips = (n + kIntStrip - 1) / kIntStrip;
  data_.resize(static_cast<std::size_t>(strips * quads * kStripBytes));
  column_sums_.resize(static_cast<std::size_t>(n));
  parallel.for_range(strips, std::max<int64_t>(1, 4096 / std::max<int64_t>(k, 1)), [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s)
      pack_strip(b, ldb, trans, k, quads, s * kIntStrip, std::min(kIntStrip, n - s * kIntStrip),
                 data_.data() + s * quads * kStripBytes, column_sums_.data() + s * kIntStrip);
  });
}

int64_t PackedIntB::padded_depth(int64_t k) { return ((k + 3) / 4 + kQuadAlign - 1) / kQuadAlign * kQuadAlign * 4; }

#if defined(NXRT_INT_GEMM_VNNI)
// Depth of the products int_gemm multiplies without a tile in memory: at most this many quads.
constexpr int64_t kShallowQuads = 8;  // int_gemm_takes_shallow_rows's 32 bytes

// Rows [r0, r1) of shallow_requantized with Quads quads of depth. A count known when compiling,
// every loop over the quads unrolled, and Y's address and the constants in locals (read through
// references, g++ loads them again after every byte store, which may alias anything) keep the
// strip in registers: with a run-time count g++ kept it on the stack and compared the count
// after every quad (MobileNetV2's 16 -> 96 channels at 112x112: 0.21 ms in the run before, 0.17
// in the run after).
template <class Q, int Quads>
void shallow_rows(int64_t r0, int64_t r1, const uint8_t* a, int64_t lda, const PackedIntB& b, const IntGemmOutput& c,
                  const int32_t* biased_offsets) {
  const int64_t n = b.n(), strips = (n + kIntStrip - 1) / kIntStrip;
  const RequantizeVectors<Q> requantize(c.zero);
  Q* const y = static_cast<Q*>(c.quantized);
  const int64_t ldy = c.ld;
  for (int64_t s = 0; s < strips; ++s) {
    const int64_t j0 = s * kIntStrip, count = std::min(kIntStrip, n - j0);
    const __mmask16 low = first_lanes(count), high = first_lanes(count - 16);
    const __m512i start0 = _mm512_maskz_loadu_epi32(low, biased_offsets + j0);
    const __m512i start1 = _mm512_maskz_loadu_epi32(high, biased_offsets + j0 + 16);
    const __m512 scale0 = _mm512_maskz_loadu_ps(low, c.scale + j0);
    const __m512 scale1 = _mm512_maskz_loadu_ps(high, c.scale + j0 + 16);
    __m512i strip[Quads][2];
#pragma GCC unroll 8
    for (int q = 0; q < Quads; ++q)
      for (int v = 0; v < 2; ++v) strip[q][v] = _mm512_loadu_si512(b.strip(s) + q * kStripBytes + 64 * v);
    for (int64_t i = r0; i < r1; ++i) {
      const uint8_t* row = a + i * lda;
      __m512i sum0 = start0, sum1 = start1;
#pragma GCC unroll 8
      for (int q = 0; q < Quads; ++q) {
        int32_t four;
        std::memcpy(&four, row + 4 * q, sizeof four);
        const __m512i x = _mm512_set1_epi32(four);
        sum0 = _mm512_dpbusd_epi32(sum0, x, strip[q][0]);
        sum1 = _mm512_dpbusd_epi32(sum1, x, strip[q][1]);
      }
      Q* row_y = y + i * ldy + j0;
      requantize.store(sum0, scale0, row_y, low);
      if (high) requantize.store(sum1, scale1, row_y + 16, high);
    }
  }
}

// A shallow product into a requantized channels-last output (int_gemm_takes_shallow_rows): per
// strip of B, its quads in registers; per row of A (uint8, read as it is, `quads` quads), the
// sums of 32 columns in two vectors, started from the columns' biased offsets (the zero points'
// correction and the bias, ZeroPointTerms) and requantized straight into Y. A pointwise
// convolution of 16 to 32 input channels is mostly this requantization: AMX's 64-byte depth, and
// a tile stored and read back, cost more than the products.
template <class Q>
void shallow_requantized(int64_t m, const uint8_t* a, int64_t lda, int64_t quads, const PackedIntB& b,
                         const IntGemmOutput& c, const int32_t* biased_offsets, const Parallel& parallel) {
  using Rows = void (*)(int64_t, int64_t, const uint8_t*, int64_t, const PackedIntB&, const IntGemmOutput&,
                        const int32_t*);
  static constexpr Rows kByQuads[kShallowQuads] = {shallow_rows<Q, 1>, shallow_rows<Q, 2>, shallow_rows<Q, 3>,
                                                   shallow_rows<Q, 4>, shallow_rows<Q, 5>, shallow_rows<Q, 6>,
                                                   shallow_rows<Q, 7>, shallow_rows<Q, 8>};
  const Rows rows = kByQuads[quads - 1];
  parallel.for_range(m, 64, [&](int64_t r0, int64_t r1) { rows(r0, r1, a, lda, b, c, biased_offsets); });
}
#endif

template <class TA>
void int_gemm(int64_t m, const TA* a, int64_t lda, IntZeroPoints a_zero, const PackedIntB& b, IntZeroPoints b_zero,
              const IntGemmOutput& c, const Parallel& parallel) {
  const int64_t n = b.n(), k = b.k(), quads = b.quads();
  if (m == 0 || n == 0) return;
  // (A - az)(B - bz) = (A' - az')(B' - bz') with A' = A (+128 when signed), B' as stored:
  // = A'.B' - bz' * rowsum(A') + az' * (k * bz' - colsum(B')), in wrapping arithmetic. The
  // last factor and bz' are per column, computed once here.
  const uint32_t a_shift = std::is_signed_v<TA> ? 128u : 0u;
  thread_local std::vector<uint32_t> columns;
  std::vector<uint32_t>& terms = columns;  // the caller's: inside the loop, `columns` would name each worker's own
  terms.resize(static_cast<std::size_t>(4 * n));
  uint32_t* b_zeros = terms.data();
  uint32_t* column_terms = b_zeros + n;
  ZeroPointTerms z{b_zeros, column_terms, nullptr, true};
  for (int64_t j = 0; j < n; ++j) {
    b_zeros[j] = static_cast<uint32_t>(zero_point_at(b_zero, j) + b.shift());
    column_terms[j] = static_cast<uint32_t>(k) * b_zeros[j] - static_cast<uint32_t>(b.column_sums()[j]);
    z.b_zeros_all_zero = z.b_zeros_all_zero && b_zeros[j] == 0;
  }
  if (a_zero.size() <= 1) {
    uint32_t* offsets = column_terms + n;
    const uint32_t a_zero_all = static_cast<uint32_t>(zero_point_at(a_zero, 0)) + a_shift;
    for (int64_t j = 0; j < n; ++j) offsets[j] = a_zero_all * column_terms[j];
    z.column_offsets = offsets;
    if (c.quantized && z.b_zeros_all_zero) {
      auto* biased = reinterpret_cast<int32_t*>(offsets + n);
      for (int64_t j = 0; j < n; ++j)
        biased[j] = static_cast<int32_t>(offsets[j] + static_cast<uint32_t>(c.bias ? c.bias[j] : 0));
      z.biased_offsets = biased;
    }
  }
#if defined(NXRT_INT_GEMM_VNNI)
  if constexpr (std::is_same_v<TA, uint8_t>) {
    if (c.quantized && !c.transposed && z.biased_offsets && int_gemm_takes_shallow_rows<TA>(k)) {
      if (c.quantized_signed) shallow_requantized<int8_t>(m, a, lda, k / 4, b, c, z.biased_offsets, parallel);
      else shallow_requantized<uint8_t>(m, a, lda, k / 4, b, c, z.biased_offsets, parallel);
      return;
    }
  }
#endif
  // A's row sums meet only B's zero points.
  const UnsignedRows& rows = unsigned_rows(m, a, lda, k, quads * 4, !z.b_zeros_all_zero, parallel);
#if defined(NXRT_INT_GEMM_AMX)
  if (m >= 16 && amx_granted()) return multiply_tiles_amx(m, quads, rows, b, c, a_zero, a_shift, z, parallel);
#endif
  multiply_tiles(m, quads, rows, b, c, a_zero, a_shift, z, parallel);
}

template PackedIntB PackedIntB::pack<uint8_t>(const uint8_t*, int64_t, bool, int64_t, int64_t);
template PackedIntB PackedIntB::pack<int8_t>(const int8_t*, int64_t, bool, int64_t, int64_t);
template void PackedIntB::assign<uint8_t>(const uint8_t*, int64_t, bool, int64_t, int64_t, const Parallel&);
template void PackedIntB::assign<int8_t>(const int8_t*, int64_t, bool, int64_t, int64_t, const Parallel&);
template void int_gemm<uint8_t>(int64_t, const uint8_t*, int64_t, IntZeroPoints, const PackedIntB&, IntZeroPoints,
                                const IntGemmOutput&, const Parallel&);
template void int_gemm<int8_t>(int64_t, const int8_t*, int64_t, IntZeroPoints, const PackedIntB&, IntZeroPoints,
                               const IntGemmOutput&, const Parallel&);

const char* int_gemm_isa() {
#if defined(NXRT_INT_GEMM_AMX)
  return amx_granted() ? "amx" : "avx512-vnni";
#elif defined(NXRT_INT_GEMM_VNNI)
  return "avx512-vnni";
#elif defined(NXRT_INT_GEMM_AVX2)
  return "avx2";
#else
  return "portable";
#endif
}

}  // namespace nxrt::cpu
