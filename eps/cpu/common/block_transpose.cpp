// transpose_bytes: 16 x 16 blocks through four rounds of SSE2 unpacks (bytes, then pairs,
// quads and halves), the edges one byte at a time; where AVX-512 VBMI is built, 16 x 64 blocks
// through the same rounds on 512-bit vectors (four 16 x 16 blocks side by side, one per 128-bit
// lane), up to four rows into dense columns by one permute per 16 columns, and other counts of
// rows below 16 through the 16 x 16 rounds with zeros for the missing rows. transpose_words:
// 4 x 4 blocks through two rounds (words, then pairs), the edges one word at a time.
#include "common/block_transpose.h"

#if defined(__AVX512VBMI__) && defined(__AVX512BW__) && defined(__AVX512VL__)
#include <immintrin.h>
#define NXRT_TRANSPOSE_AVX512 1
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace nxrt::cpu {
namespace {

template <class T>
void transpose_scalar(const T* src, int64_t src_ld, int64_t i0, int64_t i1, int64_t j0, int64_t j1, T* dst,
                      int64_t dst_ld) {
  for (int64_t j = j0; j < j1; ++j)
    for (int64_t i = i0; i < i1; ++i) dst[j * dst_ld + i] = src[i * src_ld + j];
}

#if defined(__SSE2__)
// The unpacks of 128-bit vectors, for transpose_rounds.
struct SseUnpacks {
  using V = __m128i;
  static V lo8(V a, V b) { return _mm_unpacklo_epi8(a, b); }
  static V hi8(V a, V b) { return _mm_unpackhi_epi8(a, b); }
  static V lo16(V a, V b) { return _mm_unpacklo_epi16(a, b); }
  static V hi16(V a, V b) { return _mm_unpackhi_epi16(a, b); }
  static V lo32(V a, V b) { return _mm_unpacklo_epi32(a, b); }
  static V hi32(V a, V b) { return _mm_unpackhi_epi32(a, b); }
  static V lo64(V a, V b) { return _mm_unpacklo_epi64(a, b); }
  static V hi64(V a, V b) { return _mm_unpackhi_epi64(a, b); }
};

// 16 x 16 blocks of bytes, one in each 128-bit lane of the vectors r[0..15] (row i in r[i]).
// After round 1 each 16-bit lane holds column j of two rows, after round 2 each 32-bit lane
// column j of four, after round 3 each 64-bit lane column j of eight; round 4 joins rows 0-7 and
// 8-15 of each column, and `store(j, v)` gets the vector of columns j.
template <class U, class Store>
[[gnu::always_inline]] inline void transpose_rounds(const typename U::V (&r)[16], Store store) {
  using V = typename U::V;
  V pairs[16];  // [2a]: columns 0-7 of rows 2a, 2a+1; [2a + 1]: columns 8-15
  for (int a = 0; a < 8; ++a) {
    pairs[2 * a] = U::lo8(r[2 * a], r[2 * a + 1]);
    pairs[2 * a + 1] = U::hi8(r[2 * a], r[2 * a + 1]);
  }
  V quads[16];  // [4b + q]: columns 4q to 4q + 3 of rows 4b to 4b + 3
  for (int b = 0; b < 4; ++b) {
    const V low0 = pairs[4 * b], high0 = pairs[4 * b + 1], low1 = pairs[4 * b + 2], high1 = pairs[4 * b + 3];
    quads[4 * b] = U::lo16(low0, low1);
    quads[4 * b + 1] = U::hi16(low0, low1);
    quads[4 * b + 2] = U::lo16(high0, high1);
    quads[4 * b + 3] = U::hi16(high0, high1);
  }
  V halves[16];  // [8c + m]: columns 2m and 2m + 1 of rows 8c to 8c + 7
  for (int c = 0; c < 2; ++c)
    for (int q = 0; q < 4; ++q) {
      halves[8 * c + 2 * q] = U::lo32(quads[8 * c + q], quads[8 * c + 4 + q]);
      halves[8 * c + 2 * q + 1] = U::hi32(quads[8 * c + q], quads[8 * c + 4 + q]);
    }
  for (int m = 0; m < 8; ++m) {
    store(2 * m, U::lo64(halves[m], halves[8 + m]));
    store(2 * m + 1, U::hi64(halves[m], halves[8 + m]));
  }
}

void transpose_16x16(const uint8_t* src, int64_t src_ld, uint8_t* dst, int64_t dst_ld) {
  __m128i r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_ld));
  transpose_rounds<SseUnpacks>(r, [&](int j, __m128i v) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * dst_ld), v);
  });
}

// One 4 x 4 block of words: after round 1 each 64-bit lane holds column j of two rows; round 2
// joins rows 0-1 and 2-3 of each column.
void transpose_4x4(const uint32_t* src, int64_t src_ld, uint32_t* dst, int64_t dst_ld) {
  const auto load = [&](int i) { return _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_ld)); };
  const __m128i r0 = load(0), r1 = load(1), r2 = load(2), r3 = load(3);
  const __m128i low01 = _mm_unpacklo_epi32(r0, r1), low23 = _mm_unpacklo_epi32(r2, r3);    // columns 0, 1
  const __m128i high01 = _mm_unpackhi_epi32(r0, r1), high23 = _mm_unpackhi_epi32(r2, r3);  // columns 2, 3
  const auto store = [&](int j, __m128i v) { _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + j * dst_ld), v); };
  store(0, _mm_unpacklo_epi64(low01, low23));
  store(1, _mm_unpackhi_epi64(low01, low23));
  store(2, _mm_unpacklo_epi64(high01, high23));
  store(3, _mm_unpackhi_epi64(high01, high23));
}
#endif

// Full blocks of `block` x `block` elements by `move`, then the edges one element at a time.
template <class T, class Move>
void transpose_blocks(const T* src, int64_t src_ld, int64_t rows, int64_t cols, T* dst, int64_t dst_ld, int64_t block,
                      Move move) {
  const int64_t full_rows = rows / block * block, full_cols = cols / block * block;
  for (int64_t j = 0; j < full_cols; j += block)
    for (int64_t i = 0; i < full_rows; i += block) move(src + i * src_ld + j, src_ld, dst + j * dst_ld + i, dst_ld);
  transpose_scalar(src, src_ld, full_rows, rows, 0, cols, dst, dst_ld);
  transpose_scalar(src, src_ld, 0, full_rows, full_cols, cols, dst, dst_ld);
}

#if defined(NXRT_TRANSPOSE_AVX512)
// Fewer than 16 rows (a register tile of the int8 GEMM turned into planes), 16 columns at a
// time: the missing rows are zeros in the vectors, and each column is stored `rows` bytes long;
// the last columns one by one.
void transpose_short_rows(const uint8_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint8_t* dst,
                          int64_t dst_ld) {
  const auto stored = static_cast<__mmask16>((1u << rows) - 1);
  int64_t j = 0;
  for (; j + 16 <= cols; j += 16) {
    __m128i r[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_ld + j)) : _mm_setzero_si128();
    transpose_rounds<SseUnpacks>(r, [&](int c, __m128i v) { _mm_mask_storeu_epi8(dst + (j + c) * dst_ld, stored, v); });
  }
  transpose_scalar(src, src_ld, 0, rows, j, cols, dst, dst_ld);
}

// The unpacks of 512-bit vectors, which work within 128-bit lanes: four 16 x 16 blocks at once.
// (The 32- and 64-bit ones are the zero-masked forms: GCC 12 warns of the plain forms' undefined
// start.)
struct Avx512Unpacks {
  using V = __m512i;
  static V lo8(V a, V b) { return _mm512_unpacklo_epi8(a, b); }
  static V hi8(V a, V b) { return _mm512_unpackhi_epi8(a, b); }
  static V lo16(V a, V b) { return _mm512_unpacklo_epi16(a, b); }
  static V hi16(V a, V b) { return _mm512_unpackhi_epi16(a, b); }
  static V lo32(V a, V b) { return _mm512_maskz_unpacklo_epi32(0xffff, a, b); }
  static V hi32(V a, V b) { return _mm512_maskz_unpackhi_epi32(0xffff, a, b); }
  static V lo64(V a, V b) { return _mm512_maskz_unpacklo_epi64(0xff, a, b); }
  static V hi64(V a, V b) { return _mm512_maskz_unpackhi_epi64(0xff, a, b); }
};

// One block of 16 rows x 64 columns: the rounds on four 16 x 16 blocks side by side, then lane
// l of the vector of columns m stored as column 16 l + m.
void transpose_16x64(const uint8_t* src, int64_t src_ld, uint8_t* dst, int64_t dst_ld) {
  __m512i r[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_si512(src + i * src_ld);
  transpose_rounds<Avx512Unpacks>(r, [&](int m, __m512i v) {
    const auto column = [&](int j) { return reinterpret_cast<__m128i*>(dst + j * dst_ld); };
    _mm_storeu_si128(column(m), _mm512_maskz_extracti32x4_epi32(0xf, v, 0));
    _mm_storeu_si128(column(16 + m), _mm512_maskz_extracti32x4_epi32(0xf, v, 1));
    _mm_storeu_si128(column(32 + m), _mm512_maskz_extracti32x4_epi32(0xf, v, 2));
    _mm_storeu_si128(column(48 + m), _mm512_maskz_extracti32x4_epi32(0xf, v, 3));
  });
}

// Up to four rows into dense columns (dst_ld == rows: a few planes of 8-bit values into
// channels-last pixels, as an image's three colour planes): sixteen columns at a time, each
// row's 16 bytes in a lane of one vector, interleaved by vpermb; the last columns one by one.
void interleave_few_rows(const uint8_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint8_t* dst) {
  alignas(64) uint8_t index[64] = {};
  for (int64_t j = 0; j < 16; ++j)
    for (int64_t i = 0; i < rows; ++i) index[j * rows + i] = static_cast<uint8_t>(16 * i + j);
  const __m512i interleave = _mm512_load_si512(index);
  const __mmask64 stored = rows == 4 ? ~__mmask64{0} : (__mmask64{1} << (16 * rows)) - 1;
  int64_t j = 0;
  for (; j + 16 <= cols; j += 16) {
    __m512i lanes = _mm512_setzero_si512();
    for (int64_t i = 0; i < rows; ++i)
      lanes = _mm512_mask_broadcast_i32x4(lanes, static_cast<__mmask16>(0xf << (4 * i)),
                                          _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i * src_ld + j)));
    // (zero-masked: GCC 12 warns of the plain form's undefined start)
    _mm512_mask_storeu_epi8(dst + j * rows, stored, _mm512_maskz_permutexvar_epi8(~__mmask64{0}, interleave, lanes));
  }
  transpose_scalar(src, src_ld, 0, rows, j, cols, dst, rows);
}
#endif

}  // namespace

void transpose_bytes(const uint8_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint8_t* dst, int64_t dst_ld) {
#if defined(NXRT_TRANSPOSE_AVX512)
  if (rows <= 4 && dst_ld == rows) {
    interleave_few_rows(src, src_ld, rows, cols, dst);
    return;
  }
  // Whole 16-row bands: 16 x 64 blocks, then 16 x 16 blocks and the last columns; then the rows
  // past the last band.
  const int64_t full_rows = rows / 16 * 16, wide_cols = cols / 64 * 64;
  for (int64_t j = 0; j < wide_cols; j += 64)
    for (int64_t i = 0; i < full_rows; i += 16)
      transpose_16x64(src + i * src_ld + j, src_ld, dst + j * dst_ld + i, dst_ld);
  transpose_blocks(src + wide_cols, src_ld, full_rows, cols - wide_cols, dst + wide_cols * dst_ld, dst_ld, 16,
                   transpose_16x16);
  if (rows > full_rows)
    transpose_short_rows(src + full_rows * src_ld, src_ld, rows - full_rows, cols, dst + full_rows, dst_ld);
#elif defined(__SSE2__)
  transpose_blocks(src, src_ld, rows, cols, dst, dst_ld, 16, transpose_16x16);
#else
  transpose_scalar(src, src_ld, 0, rows, 0, cols, dst, dst_ld);
#endif
}

void transpose_words(const uint32_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint32_t* dst, int64_t dst_ld) {
#if defined(__SSE2__)
  transpose_blocks(src, src_ld, rows, cols, dst, dst_ld, 4, transpose_4x4);
#else
  transpose_scalar(src, src_ld, 0, rows, 0, cols, dst, dst_ld);
#endif
}

}  // namespace nxrt::cpu
