// Transposes a matrix of bytes: what turns planes of 8-bit values (one per channel) into
// channels-last rows, 16 x 16 bytes at a time in SSE registers where the CPU has them.
#pragma once

#include <cstdint>

namespace nxrt::cpu {

// dst[j * dst_ld + i] = src[i * src_ld + j] for i in [0, rows), j in [0, cols).
void transpose_bytes(const uint8_t* src, int64_t src_ld, int64_t rows, int64_t cols, uint8_t* dst, int64_t dst_ld);

}  // namespace nxrt::cpu
