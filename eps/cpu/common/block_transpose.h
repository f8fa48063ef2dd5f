// Transposes matrices of bytes or of 32-bit words in blocks held in vector registers: what
// turns planes of 8-bit values (one per channel) into channels-last rows, a convolution's
// pixels-by-channels sums into channel planes, and the tiles of Transpose.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// dst[j * dst_ld + i] = src[i * src_ld + j] for i in [0, rows), j in [0, cols): 16 x 16 blocks
// in SSE registers where the CPU has them.
void transpose_bytes(const uint8_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint8_t* dst, int64_t dst_ld);

// The same for 32-bit words (float, int32), 4 x 4 blocks in SSE registers where the CPU has
// them.
void transpose_words(const uint32_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint32_t* dst, int64_t dst_ld);

}  // namespace nxrt::cpu
