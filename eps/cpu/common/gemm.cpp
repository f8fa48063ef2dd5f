// The packed, blocked SGEMM: BLIS loop order (NC, KC, MC, NR, MR) around a register-tiled
// micro-kernel written with GCC vector types and FMA intrinsics.
#include "common/gemm.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <new>
#include <utility>

#if defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__))
#include <immintrin.h>
#endif

namespace nxrt::cpu {
namespace {

// Register tile: kMr rows x kNr (two vectors) columns of accumulators, sized to leave
// registers for two B vectors and one broadcast A value.
#if defined(__AVX512F__)
constexpr int kW = 16;
constexpr int kMr = 12;
#elif defined(__AVX__)
constexpr int kW = 8;
constexpr int kMr = 6;
#else
constexpr int kW = 4;
constexpr int kMr = 6;
#endif
constexpr int kNr = 2 * kW;
// Cache blocks: a kKc x kNr strip of B stays in L1 while the kMc x kKc block of A streams
// from L2; the kKc x kNc block of B lives in L3.
constexpr int64_t kKc = 256;
constexpr int64_t kMc = 24 * kMr;
constexpr int64_t kNc = 2048;
static_assert(kNc % kNr == 0 && kMc % kMr == 0);

using Vec = float __attribute__((vector_size(kW * sizeof(float))));

inline Vec load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

inline Vec broadcast(float x) {
#if defined(__AVX512F__)
  return _mm512_set1_ps(x);
#elif defined(__AVX2__) && defined(__FMA__)
  return _mm256_set1_ps(x);
#else
  Vec v;
  for (int l = 0; l < kW; ++l) v[l] = x;
  return v;
#endif
}

inline Vec fma(Vec a, Vec b, Vec c) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(a, b, c);
#elif defined(__AVX2__) && defined(__FMA__)
  return _mm256_fmadd_ps(a, b, c);
#else
  return a * b + c;
#endif
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// C tile (mr x nr valid) = alpha * a_strip * b_strip + beta * C over R rows and V vectors
// of columns, the smallest register tile that covers mr x nr; beta == 0 never reads C.
template <int R, int V>
void micro_kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, float alpha, float beta,
                  int64_t mr, int64_t nr) {
  Vec acc[R][V] = {};
  // C is touched once per kc steps; fetching it early hides the miss behind the loop.
  for (int i = 0; i < R; ++i) {
    __builtin_prefetch(c + i * ldc, 1);
    __builtin_prefetch(c + i * ldc + V * kW - 1, 1);
  }
  for (int64_t p = 0; p < kc; ++p) {
    Vec bv[V];
#pragma GCC unroll 2
    for (int v = 0; v < V; ++v) bv[v] = load(b + v * kW);
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      const Vec ai = broadcast(a[i]);
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) acc[i][v] = fma(ai, bv[v], acc[i][v]);
    }
    a += kMr;
    b += kNr;
  }
  if (mr == R && nr == V * kW) {
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i) {
      float* row = c + i * ldc;
#pragma GCC unroll 2
      for (int v = 0; v < V; ++v) {
        Vec r = acc[i][v] * alpha;
        if (beta != 0) r += load(row + v * kW) * beta;
        store(row + v * kW, r);
      }
    }
    return;
  }
  alignas(64) float tile[R][V * kW];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) store(&tile[i][v * kW], acc[i][v] * alpha);
  for (int64_t i = 0; i < mr; ++i) {
    float* row = c + i * ldc;
    for (int64_t j = 0; j < nr; ++j) row[j] = beta != 0 ? tile[i][j] + beta * row[j] : tile[i][j];
  }
}

using MicroKernel = void (*)(int64_t, const float*, const float*, float*, int64_t, float, float, int64_t, int64_t);

template <int... I>
constexpr std::array<MicroKernel, 2 * kMr> micro_kernel_table(std::integer_sequence<int, I...>) {
  return {micro_kernel<I / 2 + 1, I % 2 + 1>...};
}
// Indexed by (rows - 1) * 2 + (vectors - 1): edge tiles do no arithmetic for padding.
constexpr auto kMicroKernels = micro_kernel_table(std::make_integer_sequence<int, 2 * kMr>());

MicroKernel micro_kernel_for(int64_t mr, int64_t nr) {
  return kMicroKernels[static_cast<std::size_t>((mr - 1) * 2 + (nr > kW ? 1 : 0))];
}

// Packs strips [s0, s1) of `width` lanes: strip s covers outer indices (rows of A, columns
// of B) from o_base + s * width, clipped to outer_end and zero-padded, over depth
// [p0, p0 + kc); it lands at dst + (s - s0) * width * kc, depth-major. Element (outer o,
// depth p) is src[p*ld + o] when depth_major, else src[o*ld + p].
void pack_strips(const float* src, int64_t ld, bool depth_major, int64_t o_base, int64_t outer_end, int64_t s0,
                 int64_t s1, int64_t p0, int64_t kc, int width, float* dst) {
  if (!depth_major) {
    for (int64_t s = s0; s < s1; ++s) {
      const int64_t o0 = o_base + s * width, valid = std::min<int64_t>(width, outer_end - o0);
      float* d = dst + (s - s0) * width * kc;
      for (int64_t o = 0; o < valid; ++o) {
        const float* col = src + (o0 + o) * ld + p0;
        for (int64_t p = 0; p < kc; ++p) d[p * width + o] = col[p];
      }
      for (int64_t o = valid; o < width; ++o)
        for (int64_t p = 0; p < kc; ++p) d[p * width + o] = 0;
    }
    return;
  }
  // A few strips per pass over the rows: each source row is read as one contiguous run
  // (prefetch-friendly) while only that many destination streams are open.
  constexpr int64_t kStripsPerPass = 8;
  for (int64_t g = s0; g < s1; g += kStripsPerPass) {
    const int64_t g_end = std::min(s1, g + kStripsPerPass);
    for (int64_t p = 0; p < kc; ++p) {
      const float* row = src + (p0 + p) * ld;
      for (int64_t s = g; s < g_end; ++s) {
        const int64_t o0 = o_base + s * width, valid = std::min<int64_t>(width, outer_end - o0);
        float* d = dst + (s - s0) * width * kc + p * width;
        for (int64_t o = 0; o < valid; ++o) d[o] = row[o0 + o];
        for (int64_t o = valid; o < width; ++o) d[o] = 0;
      }
    }
  }
}

// Element layout of an unpacked operand: A(i, p) and B(p, j) as pack_strips sees them.
bool depth_major(GemmSide side, bool trans) { return side == GemmSide::kA ? trans : !trans; }

float* thread_buffer(AlignedFloats& buffer, std::size_t count) {
  buffer.resize(count);
  return buffer.data();
}

// How one KC x NC step is split into tasks: blocks of A rows times chunks of B strips.
struct TaskGrid {
  int64_t strips_per_block;  // A strips (kMr rows) per task
  int64_t m_blocks;
  int64_t strips_per_chunk;  // B strips (kNr columns) per task
  int64_t n_chunks;
};

TaskGrid plan_tasks(int64_t m, int64_t nc, int threads) {
  const int64_t m_strips = ceil_div(m, kMr);
  const int64_t n_strips = ceil_div(nc, kNr);
  int64_t m_blocks = ceil_div(m_strips, kMc / kMr);
  // At least two blocks per thread, a multiple of the threads: a worker that wakes late
  // still gets a share.
  if (threads > 1) m_blocks = std::min(m_strips, ceil_div(std::max<int64_t>(m_blocks, 2 * threads), threads) * threads);
  const int64_t spb = ceil_div(m_strips, m_blocks);
  m_blocks = ceil_div(m_strips, spb);
  // Too few row blocks for the threads: split the columns too; each chunk repacks its A
  // block, which costs 1/(2*chunk width) of the chunk's arithmetic.
  int64_t n_chunks = 1;
  if (m_blocks < threads) n_chunks = std::min(n_strips, ceil_div(2 * threads, m_blocks));
  const int64_t spc = ceil_div(n_strips, n_chunks);
  return TaskGrid{spb, m_blocks, spc, ceil_div(n_strips, spc)};
}

// Scales C by beta (k == 0: the product contributes nothing).
void scale_c(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0 ? 0.f : beta * c[i * ldc + j];
}

}  // namespace

PackedMatrix::PackedMatrix(GemmSide side, int64_t outer, int64_t depth) : side_(side), outer_(outer), depth_(depth) {
  data_.resize(static_cast<std::size_t>(ceil_div(outer, strip_width()) * strip_width() * depth));
}

PackedMatrix PackedMatrix::allocate(GemmSide side, int64_t outer, int64_t depth) {
  return PackedMatrix(side, outer, depth);
}

int64_t PackedMatrix::strip_width() const { return side_ == GemmSide::kA ? kMr : kNr; }

PackedMatrix PackedMatrix::pack_a(const float* a, int64_t lda, bool trans, int64_t m, int64_t k) {
  PackedMatrix p(GemmSide::kA, m, k);
  pack_strips(a, lda, depth_major(GemmSide::kA, trans), 0, m, 0, ceil_div(m, kMr), 0, k, kMr, p.data_.data());
  return p;
}

PackedMatrix PackedMatrix::pack_b(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n) {
  PackedMatrix p(GemmSide::kB, 0, 0);
  p.repack_b(b, ldb, trans, k, n);
  return p;
}

void PackedMatrix::repack_b(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n) {
  side_ = GemmSide::kB;
  outer_ = n;
  depth_ = k;
  data_.resize(static_cast<std::size_t>(ceil_div(n, kNr) * kNr * k));
  pack_strips(b, ldb, depth_major(GemmSide::kB, trans), 0, n, 0, ceil_div(n, kNr), 0, k, kNr, data_.data());
}

void gemm(int64_t m, int64_t n, int64_t k, float alpha, const GemmOperand& a, const GemmOperand& b, float beta,
          float* c, int64_t ldc, const Parallel& parallel) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || alpha == 0) {
    scale_c(m, n, beta, c, ldc);
    return;
  }
  static thread_local AlignedFloats b_block_buffer;
  const int threads = parallel.threads();
  for (int64_t jc = 0; jc < n; jc += kNc) {
    const int64_t nc = std::min(kNc, n - jc);
    const int64_t nc_strips = ceil_div(nc, kNr);
    const TaskGrid grid = plan_tasks(m, nc, threads);
    for (int64_t pc = 0; pc < k; pc += kKc) {
      const int64_t kc = std::min(kKc, k - pc);
      // B strips of this block: inside the packed operand, or packed now (in parallel).
      const float* b_base;
      int64_t b_stride;
      if (b.packed) {
        b_base = b.packed->strip(jc / kNr) + pc * kNr;
        b_stride = b.packed->depth() * kNr;
      } else {
        float* buf = thread_buffer(b_block_buffer, static_cast<std::size_t>(nc_strips * kNr * kc));
        parallel.for_range(nc_strips, 8, [&](int64_t s0, int64_t s1) {
          pack_strips(b.data, b.ld, depth_major(GemmSide::kB, b.trans), jc, n, s0, s1, pc, kc, kNr,
                      buf + s0 * kNr * kc);
        });
        b_base = buf;
        b_stride = kc * kNr;
      }
      const float step_beta = pc == 0 ? beta : 1.f;
      parallel.for_range(grid.m_blocks * grid.n_chunks, 1, [&](int64_t t0, int64_t t1) {
        static thread_local AlignedFloats a_block_buffer;
        for (int64_t t = t0; t < t1; ++t) {
          const int64_t s_begin = (t / grid.n_chunks) * grid.strips_per_block;
          const int64_t s_end = std::min(ceil_div(m, kMr), s_begin + grid.strips_per_block);
          const int64_t j_begin = (t % grid.n_chunks) * grid.strips_per_chunk;
          const int64_t j_end = std::min(nc_strips, j_begin + grid.strips_per_chunk);
          const float* a_base;
          int64_t a_stride;
          if (a.packed) {
            a_base = a.packed->strip(s_begin) + pc * kMr;
            a_stride = a.packed->depth() * kMr;
          } else {
            float* buf = thread_buffer(a_block_buffer, static_cast<std::size_t>((s_end - s_begin) * kMr * kc));
            pack_strips(a.data, a.ld, depth_major(GemmSide::kA, a.trans), 0, m, s_begin, s_end, pc, kc, kMr, buf);
            a_base = buf;
            a_stride = kc * kMr;
          }
          for (int64_t j = j_begin; j < j_end; ++j) {
            const int64_t col = jc + j * kNr;
            const int64_t nr = std::min<int64_t>(kNr, n - col);
            for (int64_t s = s_begin; s < s_end; ++s) {
              const int64_t row = s * kMr;
              const int64_t mr = std::min<int64_t>(kMr, m - row);
              micro_kernel_for(mr, nr)(kc, a_base + (s - s_begin) * a_stride, b_base + j * b_stride,
                                       c + row * ldc + col, ldc, alpha, step_beta, mr, nr);
            }
          }
        }
      });
    }
  }
}

namespace {
constexpr uint32_t kPackedMagic = 0x4b50584e;  // "NXPK"
constexpr uint32_t kPackedFormat = 1;

struct PackedHeader {
  uint32_t magic;
  uint32_t format;
  uint32_t side;
  uint32_t strip_width;
  uint64_t count;
  int64_t outer;
  int64_t depth;
};
}  // namespace

std::vector<std::byte> save_packed_matrices(std::span<const PackedMatrix> packed) {
  if (packed.empty()) return {};
  const PackedMatrix& first = packed.front();
  const PackedHeader h{kPackedMagic,
                       kPackedFormat,
                       static_cast<uint32_t>(first.side()),
                       static_cast<uint32_t>(first.strip_width()),
                       packed.size(),
                       first.outer(),
                       first.depth()};
  const std::size_t floats_each =
      static_cast<std::size_t>(ceil_div(first.outer(), first.strip_width()) * first.strip_width() * first.depth());
  std::vector<std::byte> out(sizeof h + packed.size() * floats_each * sizeof(float));
  std::memcpy(out.data(), &h, sizeof h);
  std::byte* dst = out.data() + sizeof h;
  for (const PackedMatrix& p : packed) {
    std::memcpy(dst, p.strip(0), floats_each * sizeof(float));
    dst += floats_each * sizeof(float);
  }
  return out;
}

std::optional<std::vector<PackedMatrix>> load_packed_matrices(std::span<const std::byte> bytes, GemmSide side,
                                                              std::size_t count, int64_t outer, int64_t depth) {
  PackedHeader h{};
  if (bytes.size() < sizeof h) return std::nullopt;
  std::memcpy(&h, bytes.data(), sizeof h);
  const int64_t width = side == GemmSide::kA ? kMr : kNr;
  if (h.magic != kPackedMagic || h.format != kPackedFormat || h.side != static_cast<uint32_t>(side) ||
      h.strip_width != static_cast<uint32_t>(width) || h.count != count || h.outer != outer || h.depth != depth)
    return std::nullopt;
  const std::size_t floats_each = static_cast<std::size_t>(ceil_div(outer, width) * width * depth);
  if (bytes.size() != sizeof h + count * floats_each * sizeof(float)) return std::nullopt;
  std::vector<PackedMatrix> out;
  out.reserve(count);
  const std::byte* src = bytes.data() + sizeof h;
  for (std::size_t i = 0; i < count; ++i) {
    PackedMatrix p(side, outer, depth);
    std::memcpy(p.data_.data(), src, floats_each * sizeof(float));
    src += floats_each * sizeof(float);
    out.push_back(std::move(p));
  }
  return out;
}

Expected<std::vector<PackedMatrix>> pack_weight_groups(const NodeContext& ctx, const WeightHandle& weight,
                                                       int64_t groups, int64_t m, int64_t k, bool trans) {
  if (auto restored = load_packed_matrices(ctx.packed_state(), GemmSide::kA, static_cast<std::size_t>(groups), m, k))
    return std::move(*restored);
  auto t = weight.materialize();
  if (!t) return forward_error(std::move(t), fmt::format("packing the weights of {}", ctx.node().describe()));
  std::vector<PackedMatrix> packed;
  for (int64_t g = 0; g < groups; ++g)
    packed.push_back(PackedMatrix::pack_a(t->data_as<float>() + g * m * k, trans ? m : k, trans, m, k));
  return packed;
}

Expected<std::vector<PackedMatrix>> pack_constant_b(const NodeContext& ctx, std::size_t input, bool trans) {
  const WeightHandle* w = ctx.constant_input(input);
  if (!w || w->dtype() != DType::kFloat32) return std::vector<PackedMatrix>{};
  const Shape& s = w->shape();
  const int64_t rows = s.size() == 1 ? s[0] : s[s.size() - 2];
  const int64_t cols = s.size() == 1 ? 1 : s.back();
  const int64_t k = trans ? cols : rows, n = trans ? rows : cols;
  const int64_t count = rows * cols == 0 ? 0 : shape_numel(s) / (rows * cols);
  if (count == 0) return std::vector<PackedMatrix>{};
  if (auto restored = load_packed_matrices(ctx.packed_state(), GemmSide::kB, static_cast<std::size_t>(count), n, k))
    return std::move(*restored);
  auto t = w->materialize();
  if (!t) return forward_error(std::move(t), fmt::format("packing input {} of {}", input, ctx.node().describe()));
  std::vector<PackedMatrix> packed;
  for (int64_t i = 0; i < count; ++i)
    packed.push_back(PackedMatrix::pack_b(t->data_as<float>() + i * rows * cols, cols, trans, k, n));
  return packed;
}

const char* gemm_isa() {
#if defined(__AVX512F__)
  return "avx512";
#elif defined(__AVX2__) && defined(__FMA__)
  return "avx2";
#else
  return "generic";
#endif
}

}  // namespace nxrt::cpu
