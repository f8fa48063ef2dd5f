// transpose_bytes and transpose_words against the definition, for sizes around their blocks
// (16 x 16 and 16 x 64 bytes, 4 x 4 words) and with leading dimensions wider than the matrices.
#include "common/block_transpose.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

TEST_CASE("transpose_bytes swaps rows and columns of every size", "[cpu][block_transpose]") {
  for (int64_t rows : {1, 5, 12, 15, 16, 17, 33, 64})
    for (int64_t cols : {1, 7, 16, 31, 48, 64, 79, 128, 150}) {
      const int64_t src_ld = cols + 5, dst_ld = rows + 3;
      std::vector<uint8_t> src(static_cast<std::size_t>(rows * src_ld));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 31 + 7);
      std::vector<uint8_t> dst(static_cast<std::size_t>(cols * dst_ld), 0xEE);
      nxrt::cpu::transpose_bytes(src.data(), src_ld, rows, cols, dst.data(), dst_ld);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < dst_ld; ++i) {
          INFO(fmt::format("{} x {}, dst[{}][{}]", rows, cols, j, i));
          const uint8_t want = i < rows ? src[static_cast<std::size_t>(i * src_ld + j)] : uint8_t{0xEE};
          REQUIRE(dst[static_cast<std::size_t>(j * dst_ld + i)] == want);
        }
    }
}

TEST_CASE("transpose_bytes turns up to four planes into dense pixels", "[cpu][block_transpose]") {
  for (int64_t rows : {1, 2, 3, 4})
    for (int64_t cols : {1, 15, 16, 37, 64}) {
      const int64_t src_ld = cols + 2;
      std::vector<uint8_t> src(static_cast<std::size_t>(rows * src_ld));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 29 + 3);
      std::vector<uint8_t> dst(static_cast<std::size_t>(cols * rows + 8), 0xEE);  // 8 bytes that stay
      nxrt::cpu::transpose_bytes(src.data(), src_ld, rows, cols, dst.data(), rows);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < rows; ++i) {
          INFO(fmt::format("{} x {}, dst[{}][{}]", rows, cols, j, i));
          REQUIRE(dst[static_cast<std::size_t>(j * rows + i)] == src[static_cast<std::size_t>(i * src_ld + j)]);
        }
      for (std::size_t k = static_cast<std::size_t>(cols * rows); k < dst.size(); ++k) REQUIRE(dst[k] == 0xEE);
    }
}

TEST_CASE("transpose_words swaps rows and columns of every size", "[cpu][block_transpose]") {
  for (int64_t rows : {1, 3, 4, 5, 32, 33})
    for (int64_t cols : {1, 4, 7, 16, 30}) {
      const int64_t src_ld = cols + 3, dst_ld = rows + 2;
      std::vector<uint32_t> src(static_cast<std::size_t>(rows * src_ld));
      for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint32_t>(i * 2654435761u + 7);
      std::vector<uint32_t> dst(static_cast<std::size_t>(cols * dst_ld), 0xEEEEEEEE);
      nxrt::cpu::transpose_words(src.data(), src_ld, rows, cols, dst.data(), dst_ld);
      for (int64_t j = 0; j < cols; ++j)
        for (int64_t i = 0; i < dst_ld; ++i) {
          INFO(fmt::format("{} x {}, dst[{}][{}]", rows, cols, j, i));
          const uint32_t want = i < rows ? src[static_cast<std::size_t>(i * src_ld + j)] : 0xEEEEEEEE;
          REQUIRE(dst[static_cast<std::size_t>(j * dst_ld + i)] == want);
        }
    }
}
