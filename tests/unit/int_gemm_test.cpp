// The integer GEMM against a naive loop: every sign of A and B, zero points per tensor, row
// and column, edges of its tiles and strips, and int32 sums that wrap.
#include "common/int_gemm.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <vector>

#include "common/parallel_pool.h"

using nxrt::Parallel;
using nxrt::SerialParallel;
using nxrt::cpu::int_gemm;
using nxrt::cpu::IntGemmOutput;
using nxrt::cpu::make_parallel_pool;
using nxrt::cpu::PackedIntB;

namespace {

// (A - az)(B - bz) summed in wrapping arithmetic, as int32 sums are.
template <class TA, class TB>
std::vector<int32_t> naive(int64_t m, int64_t n, int64_t k, const std::vector<TA>& a, const std::vector<TB>& b,
                           bool trans_b, const std::vector<int32_t>& az, const std::vector<int32_t>& bz) {
  std::vector<int32_t> c(static_cast<std::size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const int32_t za = az.empty() ? 0 : az[az.size() == 1 ? 0 : static_cast<std::size_t>(i)];
      const int32_t zb = bz.empty() ? 0 : bz[bz.size() == 1 ? 0 : static_cast<std::size_t>(j)];
      uint32_t sum = 0;
      for (int64_t p = 0; p < k; ++p) {
        const int32_t bv = trans_b ? b[static_cast<std::size_t>(j * k + p)] : b[static_cast<std::size_t>(p * n + j)];
        sum += static_cast<uint32_t>((a[static_cast<std::size_t>(i * k + p)] - za) * (bv - zb));
      }
      c[static_cast<std::size_t>(i * n + j)] = static_cast<int32_t>(sum);
    }
  return c;
}

template <class T>
std::vector<T> random_values(std::size_t count, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  std::vector<T> v(count);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

// Zero points: none, one, or one per index, drawn from T's range.
template <class T>
std::vector<int32_t> zero_points(int kind, int64_t count, std::mt19937& rng) {
  if (kind == 0) return {};
  const auto v = random_values<T>(static_cast<std::size_t>(kind == 1 ? 1 : count), rng);
  return std::vector<int32_t>(v.begin(), v.end());
}

template <class TA, class TB>
void check_sizes(int64_t m, int64_t n, int64_t k, int trial, const Parallel& parallel, std::mt19937& rng) {
  const bool trans_b = trial % 2 == 1;
  const auto a = random_values<TA>(static_cast<std::size_t>(m * k), rng);
  const auto b = random_values<TB>(static_cast<std::size_t>(k * n), rng);
  const auto az = zero_points<TA>(trial % 3, m, rng);
  const auto bz = zero_points<TB>((trial / 3) % 3, n, rng);
  const PackedIntB packed = PackedIntB::pack(b.data(), trans_b ? k : n, trans_b, k, n);
  // A padded leading dimension: rows of C and A must not run into each other.
  const int64_t ldc = n + 3;
  std::vector<int32_t> c(static_cast<std::size_t>(m * ldc), -7);
  int_gemm(m, a.data(), k, az, packed, bz, IntGemmOutput::int32(c.data(), ldc), parallel);
  const auto expected = naive(m, n, k, a, b, trans_b, az, bz);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      INFO(fmt::format("{}x{}x{} trial {}, C[{}, {}]", m, n, k, trial, i, j));
      const int32_t want = j < n ? expected[static_cast<std::size_t>(i * n + j)] : -7;
      REQUIRE(c[static_cast<std::size_t>(i * ldc + j)] == want);
    }
  // The same sums transposed: column j is row j of the output.
  const int64_t ldt = m + 2;
  std::vector<int32_t> t(static_cast<std::size_t>(n * ldt), -7);
  int_gemm(m, a.data(), k, az, packed, bz, IntGemmOutput::int32_transposed(t.data(), ldt), parallel);
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < ldt; ++i) {
      INFO(fmt::format("{}x{}x{} trial {}, transposed C[{}, {}]", m, n, k, trial, i, j));
      const int32_t want = i < m ? expected[static_cast<std::size_t>(i * n + j)] : -7;
      REQUIRE(t[static_cast<std::size_t>(j * ldt + i)] == want);
    }
  // The same sums as scaled floats: one scale, or one per column.
  std::vector<float> scale(static_cast<std::size_t>(n));
  for (int64_t j = 0; j < n; ++j) scale[static_cast<std::size_t>(j)] = 0.25f + 0.125f * static_cast<float>(j % 5);
  const bool per_column = trial % 2 == 0;
  std::vector<float> y(static_cast<std::size_t>(m * ldc), -7.0f);
  int_gemm(m, a.data(), k, az, packed, bz, IntGemmOutput::scaled_float(y.data(), ldc, scale.data(), per_column),
           parallel);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < ldc; ++j) {
      INFO(fmt::format("{}x{}x{} trial {}, scaled Y[{}, {}]", m, n, k, trial, i, j));
      const float want = j < n ? static_cast<float>(expected[static_cast<std::size_t>(i * n + j)]) *
                                     scale[per_column ? static_cast<std::size_t>(j) : 0]
                               : -7.0f;
      REQUIRE(y[static_cast<std::size_t>(i * ldc + j)] == want);
    }
}

template <class TA, class TB>
void check_signs(const Parallel& parallel) {
  std::mt19937 rng(11);
  // Rows around the register tile (8 or 12) and the task block (64 or 96); columns around the strip
  // (32); depths around the quad (4), and none.
  const std::vector<int64_t> ms = {1, 7, 8, 9, 12, 13, 65, 97, 130}, ns = {1, 31, 32, 33, 70},
                             ks = {0, 1, 3, 4, 5, 67, 300};
  int trial = 0;
  for (int64_t m : ms)
    for (int64_t n : ns) {
      const int64_t k = ks[static_cast<std::size_t>(trial) % ks.size()];
      check_sizes<TA, TB>(m, n, k, trial++, parallel, rng);
    }
  // Whole AMX steps of rows and tiles of depth: uint8 A is used where it is, not copied.
  check_sizes<TA, TB>(64, 33, 128, trial++, parallel, rng);
  check_sizes<TA, TB>(96, 70, 576, trial++, parallel, rng);
}

}  // namespace

TEST_CASE("int_gemm matches a naive loop for every sign of A and B", "[cpu][int_gemm]") {
  const auto pool = make_parallel_pool(2);
  const SerialParallel serial;
  for (const Parallel* parallel : {static_cast<const Parallel*>(&serial), pool.get()}) {
    check_signs<uint8_t, int8_t>(*parallel);
    check_signs<uint8_t, uint8_t>(*parallel);
    check_signs<int8_t, int8_t>(*parallel);
    check_signs<int8_t, uint8_t>(*parallel);
  }
}

TEST_CASE("int_gemm wraps int32 sums as the reference loop does", "[cpu][int_gemm]") {
  // 255 * 127 * 70000 = 2.27e9 does not fit int32; the extremes also stress the shifts of
  // uint8 B (-128) and int8 A (+128).
  const int64_t k = 70000;
  const std::vector<uint8_t> a(k, 255);
  const std::vector<uint8_t> b(k, 0);
  const std::vector<int32_t> bz = {127};
  const SerialParallel serial;
  const PackedIntB packed = PackedIntB::pack(b.data(), 1, false, k, 1);
  int32_t c = 0;
  int_gemm(1, a.data(), k, {}, packed, bz, IntGemmOutput::int32(&c, 1), serial);
  CHECK(c == naive<uint8_t, uint8_t>(1, 1, k, a, b, false, {}, bz)[0]);
  CHECK(c == static_cast<int32_t>(static_cast<uint32_t>(255u * 127u * 70000u) * 0xFFFFFFFFu));

  const std::vector<int8_t> sa(k, -128), sb(k, -128);
  const PackedIntB packed_s = PackedIntB::pack(sb.data(), 1, false, k, 1);
  int_gemm(1, sa.data(), k, {}, packed_s, {}, IntGemmOutput::int32(&c, 1), serial);
  CHECK(c == static_cast<int32_t>(16384u * 70000u));
}
