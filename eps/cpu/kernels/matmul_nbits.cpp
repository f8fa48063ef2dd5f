// ONNX Runtime's com.microsoft MatMulNBits (inputs and semantics in nxrt/ep/matmul_nbits.h), for
// A of float or float16. Computed in float, except at accuracy_level 4 with packed or no zero
// points, where A is quantized to int8 per block as ONNX Runtime does there (see quantizes_a).
//
// At creation (or at each run, for a computed B) the weight is regrouped: sixteen columns side by
// side, so that one 16-byte load holds a byte of a block for each of them, and likewise their
// scales and offsets (-zero * scale). A byte's values are taken field by field (every byte's low
// bits, then the next bits...), so A's rows are permuted the same way within each block once per
// run, which leaves every dot product unchanged. Up to eight rows (a language model's decode
// step) multiply each group's weights into the rows' sums as they are unpacked, sixteen columns
// to a vector; more rows unpack a panel of columns into the packed GEMM's layout and multiply that.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <optional>
#include <utility>

#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"
#include "nxrt/ep/matmul_nbits.h"

#if defined(__AVX2__)
#include <immintrin.h>
#endif

namespace nxrt::cpu {
namespace {

using NBitsGeometry = MatMulNBitsGeometry;

KernelMatch check_matmul_nbits(const NodeContext& ctx) {
  const NBitsGeometry g = NBitsGeometry::of(ctx.attrs());
  const DType t = ctx.input_dtype(kNbitsA);
  NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16,
               "MatMulNBits: A is {}; the cpu EP implements float and float16 (bfloat16 is not implemented)",
               dtype_name(t));
  NXRT_REQUIRE_MATCH(check_matmul_nbits_node(ctx, "cpu"));
  const auto a = ctx.input_static_shape(kNbitsA);
  Cost cost;
  if (const auto rows = a ? std::optional<int64_t>(shape_numel(*a) / g.k) : std::nullopt) {
    cost.flops = 2.0 * static_cast<double>(*rows) * static_cast<double>(g.n * g.k);
    cost.bytes_moved = static_cast<double>(g.n * g.blocks() * g.block_bytes()) +
                       static_cast<double>((*rows) * (g.k + g.n) * static_cast<int64_t>(dtype_size(t)));
  }
  return KernelMatch::supported(cost);
}

// Sixteen lanes of floats or int32s: one AVX-512 register, two AVX2 ones.
constexpr int64_t kGroup = 16;
using Floats16 = float __attribute__((vector_size(kGroup * sizeof(float))));
using Ints16 = int32_t __attribute__((vector_size(kGroup * sizeof(int32_t))));

Floats16 load16(const float* p) {
  Floats16 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
void store16(float* p, Floats16 v) { std::memcpy(p, &v, sizeof v); }
// Sixteen bytes zero-extended (GCC 12 extracts a byte at a time from __builtin_convertvector of
// bytes, so the vector units' own widening is asked for).
Ints16 widen16(const uint8_t* p) {
  Ints16 v;
#if defined(__AVX512F__)
  const __m512i wide = _mm512_maskz_cvtepu8_epi32(0xffff, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  std::memcpy(&v, &wide, sizeof v);
#elif defined(__AVX2__)
  const __m256i low = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
  const __m256i high = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p + 8)));
  std::memcpy(&v, &low, sizeof low);
  std::memcpy(reinterpret_cast<char*>(&v) + sizeof low, &high, sizeof high);
#else
  for (int64_t i = 0; i < kGroup; ++i) v[i] = p[i];
#endif
  return v;
}

// The quantized weight regrouped: columns in groups of kGroup, a group's blocks one after the
// other, each byte position of a block holding the group's kGroup bytes side by side; likewise
// each block's kGroup scales, and offsets -zero * scale, so that a weight is one fused
// multiply-add, value * scale + offset. Columns past N (the last group's padding) have bytes,
// scales and offsets 0, so their weights are 0.
struct NBitsWeights {
  int64_t groups = 0;
  std::vector<uint8_t> bytes;   // [group][block][byte][kGroup]
  std::vector<float> scales;    // [group][block][kGroup]
  std::vector<float> offsets;   // [group][block][kGroup]

  static Expected<NBitsWeights> read(const NBitsGeometry& g, const Tensor& b, const Tensor& scales,
                                     const Tensor* zeros) {
    const bool packed_zeros = zeros && zeros->dtype() == DType::kUInt8;
    if (auto sizes = check_matmul_nbits_inputs(
            g, {.a = nullptr,
                .b = b.numel(),
                .scales = scales.numel(),
                .zero_points = zeros ? std::optional<int64_t>(zeros->numel()) : std::nullopt,
                .packed_zero_points = packed_zeros,
                .bias = std::nullopt});
        !sizes)
      return std::unexpected(sizes.error());
    const int64_t blocks = g.blocks(), count = g.block_bytes();
    const std::vector<float> scale_values = float_or_half_as_floats(scales);
    const std::vector<float> zero_values =
        zeros && !packed_zeros ? float_or_half_as_floats(*zeros) : std::vector<float>{};
    const unsigned mask = (1u << g.bits) - 1;
    auto zero_of = [&](int64_t col, int64_t blk) {
      if (!zeros) return static_cast<float>(1 << (g.bits - 1));
      if (!packed_zeros) return zero_values[static_cast<std::size_t>(col * blocks + blk)];
      const uint8_t byte = zeros->data_as<uint8_t>()[col * g.zero_bytes() + blk / g.fields()];
      return static_cast<float>((byte >> ((blk % g.fields()) * g.bits)) & mask);
    };
    NBitsWeights w;
    w.groups = (g.n + kGroup - 1) / kGroup;
    w.bytes.assign(static_cast<std::size_t>(w.groups * blocks * count * kGroup), 0);
    w.scales.assign(static_cast<std::size_t>(w.groups * blocks * kGroup), 0.f);
    w.offsets.assign(w.scales.size(), 0.f);
    const uint8_t* src = b.data_as<uint8_t>();
    for (int64_t col = 0; col < g.n; ++col) {
      const int64_t group = col / kGroup, lane = col % kGroup;
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const auto at = static_cast<std::size_t>((group * blocks + blk) * kGroup + lane);
        w.scales[at] = scale_values[static_cast<std::size_t>(col * blocks + blk)];
        w.offsets[at] = -zero_of(col, blk) * w.scales[at];
        uint8_t* dst = w.bytes.data() + ((group * blocks + blk) * count) * kGroup + lane;
        for (int64_t i = 0; i < count; ++i) dst[i * kGroup] = src[(col * blocks + blk) * count + i];
      }
    }
    return w;
  }

  const uint8_t* block_bytes(const NBitsGeometry& g, int64_t group, int64_t blk) const {
    return bytes.data() + (group * g.blocks() + blk) * g.block_bytes() * kGroup;
  }
  std::size_t block_at(const NBitsGeometry& g, int64_t group, int64_t blk) const {
    return static_cast<std::size_t>((group * g.blocks() + blk) * kGroup);
  }

  // Group `group`'s block `blk` as weights, depth-major in unpacked order: out[p * stride + c] is
  // column c's weight at position p = f * block_bytes + i (field f of byte i, value i * fields + f
  // of the block), value * scale + offset.
  void unpack_block(const NBitsGeometry& g, int64_t group, int64_t blk, float* out, int64_t stride) const {
    const int64_t count = g.block_bytes();
    const uint8_t* src = block_bytes(g, group, blk);
    const Floats16 scale = load16(scales.data() + block_at(g, group, blk));
    const Floats16 offset = load16(offsets.data() + block_at(g, group, blk));
    const auto bits = static_cast<int>(g.bits), mask = (1 << bits) - 1;
    for (int64_t i = 0; i < count; ++i) {
      const Ints16 v = widen16(src + i * kGroup);
      for (int f = 0; f < 8 / bits; ++f) {
        const Floats16 q = __builtin_convertvector((v >> (f * bits)) & mask, Floats16);
        store16(out + (f * count + i) * stride, q * scale + offset);
      }
    }
  }
};

// A's rows (rows x K) as floats with each block's values in unpack_block's order, zero past K.
template <class T>
void permute_rows(const NBitsGeometry& g, const T* a, int64_t rows, float* out) {
  const int64_t kp = g.padded_k(), fields = g.fields(), count = g.block_bytes();
  for (int64_t r = 0; r < rows; ++r) {
    const T* src = a + r * g.k;
    float* dst = out + r * kp;
    for (int64_t blk = 0; blk < g.blocks(); ++blk)
      for (int64_t f = 0; f < fields; ++f)
        for (int64_t i = 0; i < count; ++i) {
          const int64_t k = blk * g.block + i * fields + f;
          dst[blk * g.block + f * count + i] = k < g.k ? static_cast<float>(src[k]) : 0.f;
        }
  }
}

// Rows up to which each column's blocks are multiplied into the rows' sums as they are unpacked;
// past it, columns are unpacked into GEMM panels (each unpacked value then serves every row).
constexpr int64_t kDirectRows = 8;
// Columns unpacked into one GEMM panel.
constexpr int64_t kPanelColumns = 64;

class MatMulNBitsKernel final : public Kernel {
 public:
  MatMulNBitsKernel(NBitsGeometry g, std::optional<NBitsWeights> weights, bool int8_allowed)
      : g_(g), weights_(std::move(weights)), int8_allowed_(int8_allowed) {}

  // The path the last run took: "nbits:direct" for few rows ("nbits:direct-int8" where they
  // multiply as int8), "nbits:gemm:<isa>" otherwise.
  std::string_view variant() const override {
    switch (last_path_.load()) {
      case Path::kDirect: return "nbits:direct";
      case Path::kDirectInt8: return "nbits:direct-int8";
      default: return gemm_variant_;
    }
  }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(kNbitsA);
    auto optional = [&](std::size_t i) { return ctx.has_input(i) ? &ctx.input(i) : nullptr; };
    const MatMulNBitsSizes sizes = matmul_nbits_sizes(a, ctx.input(kNbitsB), ctx.input(kNbitsScales),
                                                      optional(kNbitsZeroPoints), optional(kNbitsBias));
    if (auto checked = check_matmul_nbits_inputs(g_, sizes); !checked)
      return std::unexpected(checked.error());
    std::optional<NBitsWeights> now;
    if (!weights_) {
      auto w = NBitsWeights::read(g_, ctx.input(kNbitsB), ctx.input(kNbitsScales),
                                  ctx.has_input(kNbitsZeroPoints) ? &ctx.input(kNbitsZeroPoints) : nullptr);
      if (!w) return std::unexpected(w.error());
      now = std::move(*w);
    }
    const NBitsWeights& w = weights_ ? *weights_ : *now;
    std::vector<float> bias;
    if (ctx.has_input(kNbitsBias)) bias = float_or_half_as_floats(ctx.input(kNbitsBias));
    Shape out_shape = a.shape();
    out_shape.back() = g_.n;
    auto y = ctx.output(0, a.dtype(), out_shape);
    if (!y) return std::unexpected(y.error());
    const int64_t rows = a.numel() / g_.k;
    std::vector<float> ap(static_cast<std::size_t>(rows * g_.padded_k()));
    if (a.dtype() == DType::kFloat32) permute_rows(g_, a.data_as<float>(), rows, ap.data());
    else permute_rows(g_, a.data_as<Half>(), rows, ap.data());
    std::vector<float> half_out;
    float* out = y->dtype() == DType::kFloat32 ? y->mut_as<float>() : nullptr;
    if (!out) {
      half_out.resize(static_cast<std::size_t>(rows * g_.n));
      out = half_out.data();
    }
    std::optional<Int8Rows> a8;
    if (quantizes_a()) a8 = quantize_rows(ap.data(), rows, rows > kDirectRows || !takes_int8(), ctx.parallel());
    if (rows > kDirectRows) {
      last_path_.store(Path::kGemm);
      multiply_panels(w, ap.data(), rows, out, ctx.parallel());
    } else if (takes_int8()) {
      last_path_.store(Path::kDirectInt8);
      multiply_direct_int8(w, *a8, rows, out, ctx.parallel());
    } else {
      last_path_.store(Path::kDirect);
      multiply_direct(w, ap.data(), rows, out, ctx.parallel());
    }
    if (!bias.empty())
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < g_.n; ++j) out[r * g_.n + j] += bias[static_cast<std::size_t>(j)];
    if (!half_out.empty()) floats_to_halves(out, y->mut_as<uint16_t>(), rows * g_.n);
    return {};
  }

 private:
  // fn.template operator()<rows>() for a run's row count, 1 to kDirectRows: the direct paths keep
  // each row's sums in registers, so the count is a template argument.
  template <class Fn>
  static void with_rows(int64_t rows, Fn&& fn) {
    [&]<int64_t... R>(std::integer_sequence<int64_t, R...>) {
      ((rows == R + 1 ? fn.template operator()<R + 1>() : void()), ...);
    }(std::make_integer_sequence<int64_t, kDirectRows>{});
  }

  // Each group's weights unpacked and multiplied into every row's sums, sixteen columns to a
  // vector.
  void multiply_direct(const NBitsWeights& w, const float* ap, int64_t rows, float* y, const Parallel& par) const {
    par.for_range(w.groups, 1, [&](int64_t g0, int64_t g1) {
      auto run = [&]<int Bits>() {
        with_rows(rows, [&]<int64_t Rows>() { direct_groups<Rows, Bits>(w, ap, g0, g1, y); });
      };
      if (g_.bits == 2) run.template operator()<2>();
      else if (g_.bits == 4) run.template operator()<4>();
      else run.template operator()<8>();
    });
  }

  // Rows and the bit width are template arguments, so the sums stay in registers and the fields
  // of a byte unroll. Each row sums into kChains vectors in turn (a fused multiply-add's latency
  // is several of its issue slots), added together at the end.
  template <int64_t Rows, int Bits>
  void direct_groups(const NBitsWeights& w, const float* ap, int64_t g0, int64_t g1, float* y) const {
    static_assert(Rows <= kDirectRows);
    constexpr int kFields = 8 / Bits, kMask = (1 << Bits) - 1;
    constexpr int kChains = std::max<int>(2, 8 / Rows);
    constexpr int kUnroll = std::max(1, kChains / kFields);  // bytes per step; block_bytes is a multiple
    const int64_t kp = g_.padded_k(), count = g_.block_bytes();
    for (int64_t group = g0; group < g1; ++group) {
      Floats16 sum[Rows][kChains] = {};
      for (int64_t blk = 0; blk < g_.blocks(); ++blk) {
        const uint8_t* src = w.block_bytes(g_, group, blk);
        const Floats16 scale = load16(w.scales.data() + w.block_at(g_, group, blk));
        const Floats16 offset = load16(w.offsets.data() + w.block_at(g_, group, blk));
        const float* x = ap + blk * g_.block;
        for (int64_t i = 0; i < count; i += kUnroll)
          for (int u = 0; u < kUnroll; ++u) {
            const Ints16 v = widen16(src + (i + u) * kGroup);
            for (int f = 0; f < kFields; ++f) {
              const Floats16 weight = __builtin_convertvector((v >> (f * Bits)) & kMask, Floats16) * scale + offset;
              for (int64_t r = 0; r < Rows; ++r)
                sum[r][(u * kFields + f) % kChains] += weight * x[r * kp + f * count + i + u];
            }
          }
      }
      const int64_t c0 = group * kGroup, valid = std::min(kGroup, g_.n - c0);
      for (int64_t r = 0; r < Rows; ++r) {
        Floats16 total = sum[r][0];
        for (int c = 1; c < kChains; ++c) total += sum[r][c];
        if (valid == kGroup) {
          store16(y + r * g_.n + c0, total);
        } else {
          for (int64_t c = 0; c < valid; ++c) y[r * g_.n + c0 + c] = total[c];
        }
      }
    }
  }

  // At accuracy_level 4 ONNX Runtime 1.30 (x86) quantizes A to int8 where its int8 kernels exist:
  // zero points packed or absent (with float ones it computes in float), 4 and 8 bits with blocks
  // of 16 to 256, 2 bits with blocks of 32 to 128 (measured against its outputs). Each block of a
  // row gets a step of max|a| / 127 (rounded to nearest even), and so in nxrt: up to 8 rows of
  // 4-bit weights then multiply as int8 where the CPU has AVX-512 VNNI and VBMI (four weights and
  // four values of A per multiply-add); otherwise A's quantized values enter the float products.
  bool quantizes_a() const {
    const bool blocks_ok = g_.bits == 2 ? g_.block >= 32 && g_.block <= 128 : g_.block <= 256;
    return int8_allowed_ && blocks_ok;
  }
  bool takes_int8() const {
#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
    return quantizes_a() && g_.bits == 4 && g_.block_bytes() % 4 == 0;
#else
    return false;
#endif
  }

  // A's rows (in unpacked order) quantized per block: values, each block's scale and value sum.
  struct Int8Rows {
    std::vector<int8_t> values;  // [rows][padded K]
    std::vector<float> scales;   // [rows][blocks]
    std::vector<int32_t> sums;   // [rows][blocks]
  };

  // max |x[i]| over n floats.
  static float abs_max(const float* x, int64_t n) {
    int64_t i = 0;
    float top = 0.f;
#if defined(__AVX512F__)
    __m512 lanes = _mm512_setzero_ps();
    for (; i + kGroup <= n; i += kGroup)
      lanes = _mm512_maskz_max_ps(0xffff, lanes, _mm512_abs_ps(_mm512_loadu_ps(x + i)));
    alignas(64) float each[kGroup];
    _mm512_store_ps(each, lanes);
    for (float v : each) top = std::max(top, v);
#endif
    for (; i < n; ++i) top = std::max(top, std::abs(x[i]));
    return top;
  }

  // Each block of A's rows quantized, in parallel over blocks; with `restore`, A's values replaced
  // by their quantized values times the step (for the float paths).
  Int8Rows quantize_rows(float* ap, int64_t rows, bool restore, const Parallel& par) const {
    const int64_t kp = g_.padded_k(), blocks = g_.blocks(), block = g_.block;
    Int8Rows q{std::vector<int8_t>(static_cast<std::size_t>(rows * kp)),
               std::vector<float>(static_cast<std::size_t>(rows * blocks)),
               std::vector<int32_t>(static_cast<std::size_t>(rows * blocks))};
    par.for_range(rows * blocks, std::max<int64_t>(1, 4096 / block), [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        float* x = ap + b / blocks * kp + b % blocks * block;  // blocks of 16 floats or more
        int8_t* values = q.values.data() + (x - ap);
        const float top = abs_max(x, block);
        const float inverse = top > 0.f ? 127.f / top : 0.f, step = top / 127.f;
        int32_t sum = 0;
        int64_t i = 0;
#if defined(__AVX512F__)
        const __m512 scale_in = _mm512_set1_ps(inverse), scale_out = _mm512_set1_ps(step);
        __m512i sums = _mm512_setzero_si512();
        for (; i < block; i += kGroup) {
          const __m512 v = _mm512_maskz_roundscale_ps(0xffff, _mm512_mul_ps(_mm512_loadu_ps(x + i), scale_in),
                                                      _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
          const __m512i integers = _mm512_maskz_cvtps_epi32(0xffff, v);
          _mm_storeu_si128(reinterpret_cast<__m128i*>(values + i), _mm512_maskz_cvtepi32_epi8(0xffff, integers));
          sums = _mm512_add_epi32(sums, integers);
          if (restore) _mm512_storeu_ps(x + i, _mm512_mul_ps(v, scale_out));
        }
        alignas(64) int32_t lanes[kGroup];
        _mm512_store_si512(lanes, sums);
        for (int32_t l : lanes) sum += l;
#endif
        for (; i < block; ++i) {
          const float v = std::nearbyint(x[i] * inverse);
          values[i] = static_cast<int8_t>(v);
          sum += static_cast<int32_t>(v);
          if (restore) x[i] = v * step;
        }
        q.scales[static_cast<std::size_t>(b)] = step;
        q.sums[static_cast<std::size_t>(b)] = sum;
      }
    });
    return q;
  }

#if defined(__AVX512VNNI__) && defined(__AVX512VBMI__)
  void multiply_direct_int8(const NBitsWeights& w, const Int8Rows& a, int64_t rows, float* y,
                            const Parallel& par) const {
    par.for_range(w.groups, 1, [&](int64_t g0, int64_t g1) {
      with_rows(rows, [&]<int64_t Rows>() { int8_groups<Rows>(w, a, g0, g1, y); });
    });
  }

  // Per group and block: 64 bytes (byte positions i..i+3 of sixteen columns) turned so that each
  // column's four bytes share a 32-bit lane; their low nibbles are the weights at unpacked
  // positions i..i+3, their high ones at block_bytes + i.., each quad multiplied by A's four int8
  // values there. The block's int32 sums scale into the totals: sum * scale * a_scale +
  // offset * a_scale * a_sum, which is (q - zero) * scale summed against A's quantized values.
  template <int64_t Rows>
  void int8_groups(const NBitsWeights& w, const Int8Rows& a, int64_t g0, int64_t g1, float* y) const {
    const int64_t kp = g_.padded_k(), count = g_.block_bytes(), blocks = g_.blocks();
    alignas(64) uint8_t order[64];
    for (int o = 0; o < 64; ++o) order[o] = static_cast<uint8_t>(o % 4 * 16 + o / 4);  // byte o <- (o % 4, o / 4)
    const __m512i turn = _mm512_load_si512(order);
    const __m512i low = _mm512_set1_epi8(0x0f);
    for (int64_t group = g0; group < g1; ++group) {
      __m512 total[Rows];
      for (int64_t r = 0; r < Rows; ++r) total[r] = _mm512_setzero_ps();
      for (int64_t blk = 0; blk < blocks; ++blk) {
        const uint8_t* src = w.block_bytes(g_, group, blk);
        __m512i sum[Rows];
        for (int64_t r = 0; r < Rows; ++r) sum[r] = _mm512_setzero_si512();
        for (int64_t i = 0; i < count; i += 4) {
          const __m512i v = _mm512_maskz_permutexvar_epi8(~__mmask64{0}, turn, _mm512_loadu_si512(src + i * kGroup));
          const __m512i lo = _mm512_and_si512(v, low);
          const __m512i hi = _mm512_and_si512(_mm512_maskz_srli_epi16(~__mmask32{0}, v, 4), low);
          for (int64_t r = 0; r < Rows; ++r) {
            const int8_t* x = a.values.data() + r * kp + blk * g_.block;
            int32_t lo_quad, hi_quad;
            std::memcpy(&lo_quad, x + i, 4);
            std::memcpy(&hi_quad, x + count + i, 4);
            sum[r] = _mm512_dpbusd_epi32(sum[r], lo, _mm512_set1_epi32(lo_quad));
            sum[r] = _mm512_dpbusd_epi32(sum[r], hi, _mm512_set1_epi32(hi_quad));
          }
        }
        const Floats16 scale = load16(w.scales.data() + w.block_at(g_, group, blk));
        const Floats16 offset = load16(w.offsets.data() + w.block_at(g_, group, blk));
        __m512 sv, ov;
        std::memcpy(&sv, &scale, sizeof sv);
        std::memcpy(&ov, &offset, sizeof ov);
        for (int64_t r = 0; r < Rows; ++r) {
          const auto at = static_cast<std::size_t>(r * blocks + blk);
          const float a_scale = a.scales[at];
          const __m512 sums = _mm512_maskz_cvtepi32_ps(0xffff, sum[r]);
          total[r] = _mm512_fmadd_ps(sums, _mm512_mul_ps(sv, _mm512_set1_ps(a_scale)), total[r]);
          total[r] = _mm512_fmadd_ps(ov, _mm512_set1_ps(a_scale * static_cast<float>(a.sums[at])), total[r]);
        }
      }
      const int64_t c0 = group * kGroup, valid = std::min(kGroup, g_.n - c0);
      for (int64_t r = 0; r < Rows; ++r)
        _mm512_mask_storeu_ps(y + r * g_.n + c0, static_cast<__mmask16>((1u << valid) - 1), total[r]);
    }
  }
#else
  // Never called: takes_int8() is false without AVX-512 VNNI and VBMI.
  void multiply_direct_int8(const NBitsWeights&, const Int8Rows&, int64_t, float*, const Parallel&) const {}
#endif

  // Columns unpacked kPanelColumns at a time into the GEMM's packed layout for B (strips of its
  // register tile's columns, depth-major) and multiplied by all of A's rows, A packed once for
  // every panel; a thread reuses its panel for each full one.
  void multiply_panels(const NBitsWeights& w, const float* ap, int64_t rows, float* y, const Parallel& par) const {
    const int64_t kp = g_.padded_k();
    const int64_t panels = (g_.n + kPanelColumns - 1) / kPanelColumns;
    const PackedMatrix a = PackedMatrix::pack_a(ap, kp, false, rows, kp);
    par.for_range(panels, 1, [&](int64_t p0, int64_t p1) {
      const SerialParallel serial;
      std::optional<PackedMatrix> full;
      std::vector<float> unpacked;
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c0 = p * kPanelColumns, width = std::min(kPanelColumns, g_.n - c0);
        std::optional<PackedMatrix> partial;
        if (width == kPanelColumns && !full) full = PackedMatrix::allocate(GemmSide::kB, width, kp);
        if (width < kPanelColumns) partial = PackedMatrix::allocate(GemmSide::kB, width, kp);
        PackedMatrix& panel = partial ? *partial : *full;
        fill_panel(w, c0, width, panel, unpacked);
        gemm(rows, width, kp, 1.f, GemmOperand::of(a), GemmOperand::of(panel), 0.f, y + c0, g_.n, serial);
      }
    });
  }

  // Columns [c0, c0 + width) of W (c0 a multiple of kPanelColumns) into `panel`, every lane of its
  // strips written (zeros past the last column).
  void fill_panel(const NBitsWeights& w, int64_t c0, int64_t width, PackedMatrix& panel,
                  std::vector<float>& unpacked) const {
    const int64_t kp = g_.padded_k(), sw = panel.strip_width();
    const int64_t groups = (width + kGroup - 1) / kGroup, strips = (width + sw - 1) / sw;
    for (int64_t gi = 0; gi < groups; ++gi) {
      const int64_t group = c0 / kGroup + gi, first = gi * kGroup;  // the group's first lane in the panel
      for (int64_t blk = 0; blk < g_.blocks(); ++blk) {
        if (sw % kGroup == 0) {  // the group lies in one strip: unpacked in place
          w.unpack_block(g_, group, blk, panel.mutable_strip(first / sw) + blk * g_.block * sw + first % sw, sw);
          continue;
        }
        unpacked.resize(static_cast<std::size_t>(g_.block * kGroup));
        w.unpack_block(g_, group, blk, unpacked.data(), kGroup);
        for (int64_t lane = 0; lane < kGroup && first + lane < strips * sw; ++lane) {
          float* dst = panel.mutable_strip((first + lane) / sw) + blk * g_.block * sw + (first + lane) % sw;
          for (int64_t d = 0; d < g_.block; ++d) dst[d * sw] = unpacked[static_cast<std::size_t>(d * kGroup + lane)];
        }
      }
    }
    for (int64_t lane = groups * kGroup; lane < strips * sw; ++lane) {  // the last strip's lanes past the groups
      float* dst = panel.mutable_strip(lane / sw) + lane % sw;
      for (int64_t d = 0; d < kp; ++d) dst[d * sw] = 0.f;
    }
  }

  enum class Path { kDirect, kDirectInt8, kGemm };

  NBitsGeometry g_;
  std::optional<NBitsWeights> weights_;  // read at creation when B, scales and zero points are constant
  bool int8_allowed_;  // accuracy_level 4 without float zero points: A is quantized to int8
  std::string gemm_variant_ = fmt::format("nbits:gemm:{}", gemm_isa());
  std::atomic<Path> last_path_{Path::kDirect};
};

// B, scales and zero points read once when all are constants (else at every run).
std::optional<NBitsWeights> constant_weights(const NodeContext& ctx, const NBitsGeometry& g) {
  std::optional<Tensor> inputs[3];
  const std::size_t which[3] = {kNbitsB, kNbitsScales, kNbitsZeroPoints};
  for (int i = 0; i < 3; ++i) {
    if (which[i] == kNbitsZeroPoints && !ctx.has_input(kNbitsZeroPoints)) continue;
    const WeightHandle* handle = ctx.constant_input(which[i]);
    if (!handle) return std::nullopt;
    auto t = handle->materialize();
    if (!t) return std::nullopt;  // read at run time instead, where the error reaches the user
    inputs[i] = std::move(*t);
  }
  auto w = NBitsWeights::read(g, std::move(*inputs[0]), *inputs[1], inputs[2] ? &*inputs[2] : nullptr);
  if (!w) return std::nullopt;
  return std::move(*w);
}

}  // namespace

std::vector<KernelDef> matmul_nbits_kernels() {
  return {
      KernelDef{{"com.microsoft", "MatMulNBits", 1},
                0,
                check_matmul_nbits,
                [](const NodeContext& ctx) {
                  const NBitsGeometry g = NBitsGeometry::of(ctx.attrs());
                  // ONNX Runtime quantizes A at accuracy level 4 for packed or default zero points only.
                  const bool int8_allowed =
                      ctx.attrs().int_or("accuracy_level", 0) == 4 &&
                      (!ctx.has_input(kNbitsZeroPoints) || ctx.input_dtype(kNbitsZeroPoints) == DType::kUInt8);
                  return make_kernel<MatMulNBitsKernel>(g, constant_weights(ctx, g), int8_allowed);
                }},
  };
}

}  // namespace nxrt::cpu
