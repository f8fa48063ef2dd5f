// ONNX Runtime's com.microsoft GroupQueryAttention, the attention of its GenAI language models:
// causal attention of num_heads query heads over kv_num_heads key/value heads with a KV cache.
// Inputs: query [B, S, num_heads * H] (or Q, K and V packed along the last dim, key and value
// then absent), key and value [B, S, kv_num_heads * H], past_key and past_value [B, kv_num_heads,
// P, H] (the cache, P rows of which each entry uses its first ones), seqlens_k [B] int32 (each
// entry's total length - 1), total_sequence_length int32 (the longest total), cos_cache and
// sin_cache [positions, rotary_dim / 2] (with do_rotary). Outputs: output [B, S, num_heads * H],
// present_key and present_value [B, kv_num_heads, max(total_sequence_length, P), H].
//
// An entry b of total length L = seqlens_k[b] + 1 holds L - S cached rows (none in a first
// prompt, where S equals total_sequence_length), which present takes from past; the new keys and
// values follow them, the rest of present is zeros. With do_rotary the new queries and keys are
// rotated at positions L - S + s (0 + s in a first prompt), pairs (i, i + rotary_dim / 2) or,
// rotary_interleaved, (2i, 2i + 1), and stored rotated. Query s sees the keys up to its own
// position, L - S + s, and with local_window_size W > 0 only the last W of them (its own included,
// as ONNX Runtime 1.30 counts); scores are scale (1 / sqrt(H) by default) * q.k, softcap *
// tanh(score / softcap) with softcap > 0, then softmax (smooth_softmax: one more logit of 0 in the
// denominator). Float and float16 (computed in float; rotated values rounded to float16 as they are
// stored). Declined: position_ids, attention_bias, head_sink, a quantized cache, q/k norm weights,
// output_qk, causal 0 and sliding_window_cache. From 16 new tokens on (a prompt) each head's
// scores and weighted values are products on the packed GEMM; fewer go query by query.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>

#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// New tokens from which a run multiplies on the GEMM (a prompt) rather than query by query.
constexpr int64_t kGemmQueries = 16;

constexpr std::size_t kQuery = 0, kKey = 1, kValue = 2, kPastKey = 3, kPastValue = 4, kSeqlensK = 5, kTotal = 6,
                      kCos = 7, kSin = 8;

struct GqaAttrs {
  int64_t heads = 0, kv_heads = 0, local_window = -1;
  float scale = 0, softcap = 0;
  bool rotary = false, interleaved = false, smooth_softmax = false;

  static GqaAttrs of(const AttributeMap& a) {
    return {a.int_or("num_heads", 0),
            a.int_or("kv_num_heads", 0),
            a.int_or("local_window_size", -1),
            a.float_or("scale", 0.f),
            a.float_or("softcap", 0.f),
            a.int_or("do_rotary", 0) == 1,
            a.int_or("rotary_interleaved", 0) == 1,
            a.int_or("smooth_softmax", 0) == 1};
  }
};

KernelMatch check_group_query_attention(const NodeContext& ctx) {
  const GqaAttrs at = GqaAttrs::of(ctx.attrs());
  const DType t = ctx.input_dtype(kQuery);
  NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16,
               "GroupQueryAttention: query is {}; the cpu EP implements float and float16 (bfloat16 is not "
               "implemented)",
               dtype_name(t));
  for (std::size_t i : {kKey, kValue, kPastKey, kPastValue, kCos, kSin})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == t,
                 "GroupQueryAttention: input {} is {} and query {}; the cpu EP implements a cache and rotary caches "
                 "of query's type (not quantized)",
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(t));
  NXRT_REQUIRE(at.heads > 0 && at.kv_heads > 0 && at.heads % at.kv_heads == 0,
               "GroupQueryAttention: num_heads {} must be a positive multiple of kv_num_heads {}", at.heads,
               at.kv_heads);
  NXRT_REQUIRE(ctx.has_input(kKey) == ctx.has_input(kValue),
               "GroupQueryAttention: key and value must be both given or both absent (packed QKV)");
  NXRT_REQUIRE(ctx.has_input(kPastKey) == ctx.has_input(kPastValue),
               "GroupQueryAttention: past_key and past_value must be both given or both absent");
  NXRT_REQUIRE(ctx.has_input(kSeqlensK) && ctx.input_dtype(kSeqlensK) == DType::kInt32 && ctx.has_input(kTotal) &&
                   ctx.input_dtype(kTotal) == DType::kInt32,
               "GroupQueryAttention: seqlens_k (input 5) and total_sequence_length (input 6) are required, int32");
  NXRT_REQUIRE(ctx.has_input(kCos) == ctx.has_input(kSin) && (!at.rotary || ctx.has_input(kCos)),
               "GroupQueryAttention: cos_cache and sin_cache must be both given or both absent, and given with "
               "do_rotary 1");
  static constexpr const char* kDeclinedInputs[] = {"position_ids", "attention_bias", "head_sink", "k_scale",
                                                   "v_scale",      "q_norm_weight",  "k_norm_weight"};
  for (std::size_t i = 9; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(!ctx.has_input(i) || i - 9 >= std::size(kDeclinedInputs),
                 "GroupQueryAttention: {} (input {}) is not implemented by the cpu EP", kDeclinedInputs[i - 9], i);
  NXRT_REQUIRE(!ctx.has_output(3), "GroupQueryAttention: output_qk (output 3) is not implemented by the cpu EP");
  NXRT_REQUIRE(ctx.attrs().int_or("causal", 1) == 1,
               "GroupQueryAttention: causal {}; the cpu EP implements causal attention (1)",
               ctx.attrs().int_or("causal", 1));
  NXRT_REQUIRE(ctx.attrs().int_or("sliding_window_cache", 0) == 0 && ctx.attrs().int_or("qk_output", 0) == 0 &&
                   ctx.attrs().string_or("k_quant_type", "NONE") == "NONE" &&
                   ctx.attrs().string_or("v_quant_type", "NONE") == "NONE",
               "GroupQueryAttention: sliding_window_cache, qk_output and a quantized cache are not implemented by the "
               "cpu EP");
  NXRT_REQUIRE(at.softcap >= 0, "GroupQueryAttention: softcap {} must not be negative", at.softcap);
  NXRT_REQUIRE(ctx.input_rank(kQuery).value_or(3) == 3, "GroupQueryAttention: query has rank {}; it must be 3",
               ctx.input_rank(kQuery).value_or(3));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

// The geometry of one run.
struct GqaPlan {
  int64_t batch = 0, seq = 0, head_size = 0, past_rows = 0, total = 0, present_rows = 0, rotary_dim = 0;
  bool packed = false, first_prompt = false;
  std::vector<int64_t> lengths;  // each entry's total length, seqlens_k + 1
  std::vector<int64_t> cached;   // each entry's cached rows (its length - seq, or 0 in a first prompt)
};

std::unexpected<Error> gqa_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("GroupQueryAttention: {}", what), std::move(why),
              "give inputs of the shapes and lengths ONNX Runtime's definition of the op states");
}

class GroupQueryAttentionKernel final : public Kernel {
 public:
  explicit GroupQueryAttentionKernel(GqaAttrs attrs) : at_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(kQuery).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  Expected<GqaPlan> plan(KernelContext& ctx) const {
    GqaPlan p;
    const Shape& q = ctx.input(kQuery).shape();
    if (q.size() != 3) return gqa_error(fmt::format("query has shape {}", shape_to_string(q)),
                                                        "query is [batch, sequence, hidden]");
    p.batch = q[0];
    p.seq = q[1];
    p.packed = !ctx.has_input(kKey);
    const int64_t columns = p.packed ? at_.heads + 2 * at_.kv_heads : at_.heads;
    if (q[2] % columns != 0)
      return gqa_error(fmt::format("query's last dim {} is not a multiple of {} heads", q[2], columns),
                                       "query holds num_heads heads (and, packed, 2 * kv_num_heads more)");
    p.head_size = q[2] / columns;
    const Shape kv_shape{p.batch, p.seq, at_.kv_heads * p.head_size};
    if (!p.packed)
      for (std::size_t i : {kKey, kValue})
        if (ctx.input(i).shape() != kv_shape)
          return gqa_error(fmt::format("input {} has shape {}", i, shape_to_string(ctx.input(i).shape())),
                                           fmt::format("key and value must be {}", shape_to_string(kv_shape)));
    if (ctx.has_input(kPastKey)) {
      p.past_rows = ctx.input(kPastKey).shape().size() == 4 ? ctx.input(kPastKey).shape()[2] : -1;
      const Shape past{p.batch, at_.kv_heads, p.past_rows, p.head_size};
      for (std::size_t i : {kPastKey, kPastValue})
        if (ctx.input(i).shape() != past)
          return gqa_error(fmt::format("input {} has shape {}", i, shape_to_string(ctx.input(i).shape())),
                                           "past_key and past_value must be [batch, kv_num_heads, rows, head_size], "
                                           "both of one shape");
    }
    if (ctx.input(kTotal).numel() != 1 || ctx.input(kSeqlensK).numel() != p.batch)
      return gqa_error("total_sequence_length or seqlens_k has the wrong size",
                                       "total_sequence_length holds one value and seqlens_k one per batch entry");
    p.total = *ctx.input(kTotal).data_as<int32_t>();
    p.present_rows = std::max(p.total, p.past_rows);
    p.first_prompt = p.seq == p.total;
    if (!p.first_prompt && p.seq > 1 && p.batch != 1)
      return gqa_error(fmt::format("{} new tokens after a cache, in a batch of {}", p.seq, p.batch),
                                       "several new tokens after a cache (a later prompt) need a batch of one");
    const int32_t* seqlens = ctx.input(kSeqlensK).data_as<int32_t>();
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t length = int64_t{seqlens[b]} + 1;
      const int64_t cached = p.first_prompt ? 0 : length - p.seq;
      if (length < 1 || length > p.present_rows || cached < 0 || cached > std::max<int64_t>(p.past_rows, 0) ||
          (p.first_prompt && length > p.seq))
        return gqa_error(fmt::format("seqlens_k[{}] is {} with {} new tokens, a cache of {} rows and "
                                                     "total_sequence_length {}",
                                                     b, seqlens[b], p.seq, std::max<int64_t>(p.past_rows, 0), p.total),
                                         "each entry's length (seqlens_k + 1) must cover its new tokens, its cached "
                                         "rows fit in past_key, and no length exceed total_sequence_length");
      p.lengths.push_back(length);
      p.cached.push_back(cached);
    }
    if (at_.rotary) {
      const Shape& cos = ctx.input(kCos).shape();
      p.rotary_dim = cos.size() == 2 ? 2 * cos[1] : -1;
      const int64_t positions = *std::max_element(p.lengths.begin(), p.lengths.end());
      if (cos.size() != 2 || ctx.input(kSin).shape() != cos || p.rotary_dim > p.head_size || cos[0] < positions)
        return gqa_error(fmt::format("cos_cache has shape {} and sin_cache {}", shape_to_string(cos),
                                                     shape_to_string(ctx.input(kSin).shape())),
                                         fmt::format("both must be [positions >= {}, rotary_dim / 2 <= {}]", positions,
                                                     p.head_size / 2));
    }
    return p;
  }

  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    auto planned = plan(ctx);
    if (!planned) return std::unexpected(planned.error());
    const GqaPlan& p = *planned;
    const int64_t hs = p.head_size, q_width = p.packed ? (at_.heads + 2 * at_.kv_heads) * hs : at_.heads * hs;
    const int64_t kv_width = p.packed ? q_width : at_.kv_heads * hs;
    auto out = ctx.output(0, ctx.input(kQuery).dtype(), {p.batch, p.seq, at_.heads * hs});
    if (!out) return std::unexpected(out.error());
    const Shape present_shape{p.batch, at_.kv_heads, p.present_rows, hs};
    // Present key and value: outputs when asked for, else scratch.
    std::vector<T> scratch[2];
    T* present[2];
    for (int i = 0; i < 2; ++i) {
      if (ctx.wants_output(1 + static_cast<std::size_t>(i))) {
        auto t = ctx.output(1 + static_cast<std::size_t>(i), ctx.input(kQuery).dtype(), present_shape);
        if (!t) return std::unexpected(t.error());
        present[i] = t->template mut_as<T>();
      } else {
        scratch[i].resize(static_cast<std::size_t>(shape_numel(present_shape)));
        present[i] = scratch[i].data();
      }
    }
    const T* query = ctx.input(kQuery).data_as<T>();
    const T* new_kv[2] = {p.packed ? query + at_.heads * hs : ctx.input(kKey).data_as<T>(),
                          p.packed ? query + (at_.heads + at_.kv_heads) * hs : ctx.input(kValue).data_as<T>()};
    const T* past[2] = {ctx.has_input(kPastKey) ? ctx.input(kPastKey).data_as<T>() : nullptr,
                        ctx.has_input(kPastValue) ? ctx.input(kPastValue).data_as<T>() : nullptr};
    const T* cos = at_.rotary ? ctx.input(kCos).data_as<T>() : nullptr;
    const T* sin = at_.rotary ? ctx.input(kSin).data_as<T>() : nullptr;
    // Present: the cached rows, the new ones (keys rotated), zeros after.
    for (int i = 0; i < 2; ++i)
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < at_.kv_heads; ++h) {
          T* dst = present[i] + ((b * at_.kv_heads + h) * p.present_rows) * hs;
          const int64_t cached = p.cached[static_cast<std::size_t>(b)];
          if (cached > 0) std::copy_n(past[i] + ((b * at_.kv_heads + h) * p.past_rows) * hs, cached * hs, dst);
          for (int64_t s = 0; s < p.seq; ++s) {
            const T* src = new_kv[i] + (b * p.seq + s) * kv_width + h * hs;
            T* row = dst + (cached + s) * hs;
            if (i == 0 && at_.rotary) rotate(src, cached + s, p.rotary_dim, hs, cos, sin, row);
            else std::copy_n(src, hs, row);
          }
          std::fill(dst + (cached + p.seq) * hs, dst + p.present_rows * hs, T(0.f));
        }
    const float scale = at_.scale != 0.f ? at_.scale : 1.f / std::sqrt(static_cast<float>(hs));
    // The cache in float (float16 converted once, not per use).
    std::vector<float> wide[2];
    const float* keys_values[2];
    for (int i = 0; i < 2; ++i) {
      if constexpr (std::is_same_v<T, float>) {
        keys_values[i] = present[i];
      } else {
        wide[i].resize(static_cast<std::size_t>(shape_numel(present_shape)));
        halves_to_floats(reinterpret_cast<const uint16_t*>(present[i]), wide[i].data(), shape_numel(present_shape));
        keys_values[i] = wide[i].data();
      }
    }
    T* y = out->template mut_as<T>();
    if (p.seq >= kGemmQueries) {
      attend_on_gemm<T>(p, query, q_width, cos, sin, keys_values, y, ctx.parallel());
      return {};
    }
    ctx.parallel().for_range(p.batch * at_.heads * p.seq, 1, [&](int64_t i0, int64_t i1) {
      std::vector<float> q(static_cast<std::size_t>(hs)), acc(static_cast<std::size_t>(hs));
      std::vector<float> scores(static_cast<std::size_t>(p.present_rows));
      std::vector<T> rotated(static_cast<std::size_t>(hs));
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t s = i % p.seq, h = i / p.seq % at_.heads, b = i / p.seq / at_.heads;
        const int64_t kv = h / (at_.heads / at_.kv_heads), cached = p.cached[static_cast<std::size_t>(b)];
        const T* src = query + (b * p.seq + s) * q_width + h * hs;
        if (at_.rotary) {
          rotate(src, cached + s, p.rotary_dim, hs, cos, sin, rotated.data());
          src = rotated.data();
        }
        for (int64_t d = 0; d < hs; ++d) q[static_cast<std::size_t>(d)] = static_cast<float>(src[d]);
        const auto [begin, end] = visible_keys(p, b, s);
        const float* keys = keys_values[0] + ((b * at_.kv_heads + kv) * p.present_rows) * hs;
        const float* values = keys_values[1] + ((b * at_.kv_heads + kv) * p.present_rows) * hs;
        float top = at_.smooth_softmax ? 0.f : -std::numeric_limits<float>::infinity();
        for (int64_t j = begin; j < end; ++j) {
          float score = dot(q.data(), keys + j * hs, hs) * scale;
          if (at_.softcap > 0.f) score = at_.softcap * std::tanh(score / at_.softcap);
          scores[static_cast<std::size_t>(j)] = score;
          top = std::max(top, score);
        }
        double total = at_.smooth_softmax ? std::exp(static_cast<double>(-top)) : 0.0;
        std::fill(acc.begin(), acc.end(), 0.f);
        for (int64_t j = begin; j < end; ++j) {
          const float e = std::exp(scores[static_cast<std::size_t>(j)] - top);
          total += e;
          add_scaled(acc.data(), values + j * hs, e, hs);
        }
        T* yr = y + (b * p.seq + s) * at_.heads * hs + h * hs;
        const auto inv = static_cast<float>(total > 0 ? 1.0 / total : 0.0);
        for (int64_t d = 0; d < hs; ++d) yr[d] = static_cast<T>(acc[static_cast<std::size_t>(d)] * inv);
      }
    });
    return {};
  }

  // Many new tokens (a prompt): per batch entry and query head, the scores of all its queries
  // on the GEMM (Q K^T), each row masked and normalized, then multiplied by V on the GEMM.
  template <class T>
  void attend_on_gemm(const GqaPlan& p, const T* query, int64_t q_width, const T* cos, const T* sin,
                      const float* const* keys_values, T* y, const Parallel& par) const {
    const int64_t hs = p.head_size, width = at_.heads * hs;
    const float scale = at_.scale != 0.f ? at_.scale : 1.f / std::sqrt(static_cast<float>(hs));
    // Q rotated, in float: [batch, seq, heads, head_size].
    std::vector<float> q(static_cast<std::size_t>(p.batch * p.seq * width));
    par.for_range(p.batch * p.seq * at_.heads, 16, [&](int64_t i0, int64_t i1) {
      std::vector<T> rotated(static_cast<std::size_t>(hs));
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t h = i % at_.heads, s = i / at_.heads % p.seq, b = i / at_.heads / p.seq;
        const T* src = query + (b * p.seq + s) * q_width + h * hs;
        if (at_.rotary) {
          rotate(src, p.cached[static_cast<std::size_t>(b)] + s, p.rotary_dim, hs, cos, sin, rotated.data());
          src = rotated.data();
        }
        for (int64_t d = 0; d < hs; ++d) q[static_cast<std::size_t>(i * hs + d)] = static_cast<float>(src[d]);
      }
    });
    std::vector<float> wide_out;
    float* out = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      out = y;
    } else {
      wide_out.resize(q.size());
      out = wide_out.data();
    }
    par.for_range(p.batch * at_.heads, 1, [&](int64_t i0, int64_t i1) {
      const SerialParallel serial;
      std::vector<float> scores;
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / at_.heads, h = i % at_.heads, kv = h / (at_.heads / at_.kv_heads);
        const int64_t cached = p.cached[static_cast<std::size_t>(b)], length = p.lengths[static_cast<std::size_t>(b)];
        const int64_t cols = std::min(length, cached + p.seq);
        const int64_t cache_at = ((b * at_.kv_heads + kv) * p.present_rows) * hs;
        scores.resize(static_cast<std::size_t>(p.seq * cols));
        gemm(p.seq, cols, hs, scale, GemmOperand::matrix(q.data() + (b * p.seq * at_.heads + h) * hs, width),
             GemmOperand::matrix(keys_values[0] + cache_at, hs, true), 0.f, scores.data(), cols, serial);
        for (int64_t s = 0; s < p.seq; ++s) {
          float* row = scores.data() + s * cols;
          const auto [begin, end] = visible_keys(p, b, s);
          normalize_row(row + begin, std::max<int64_t>(end - begin, 0));
          std::fill(row, row + std::min(begin, cols), 0.f);
          std::fill(row + std::max(end, begin), row + cols, 0.f);
        }
        gemm(p.seq, hs, cols, 1.f, GemmOperand::matrix(scores.data(), cols),
             GemmOperand::matrix(keys_values[1] + cache_at, hs), 0.f, out + (b * p.seq * at_.heads + h) * hs, width,
             serial);
      }
    });
    if constexpr (!std::is_same_v<T, float>)
      floats_to_halves(wide_out.data(), reinterpret_cast<uint16_t*>(y), static_cast<int64_t>(wide_out.size()));
  }

  // Scores of one query's visible keys to probabilities: softcap, then softmax (smooth: with one
  // more logit of 0).
  void normalize_row(float* row, int64_t n) const {
    if (n == 0) return;
    if (at_.softcap > 0.f)
      for (int64_t j = 0; j < n; ++j) row[j] = at_.softcap * std::tanh(row[j] / at_.softcap);
    float top = std::max(lane_max(row, n), at_.smooth_softmax ? 0.f : -std::numeric_limits<float>::infinity());
    exp_shifted(row, top, row, n);
    const double total = lane_sum<double>(row, n) + (at_.smooth_softmax ? std::exp(static_cast<double>(-top)) : 0.0);
    const auto inv = static_cast<float>(1.0 / total);
    for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  }

  // a . b over n floats, in independent lanes (vectorized).
  static float dot(const float* __restrict a, const float* __restrict b, int64_t n) {
    float lanes[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
      for (int64_t j = 0; j < kLanes; ++j) lanes[j] += a[i + j] * b[i + j];
    float sum = 0.f;
    for (float l : lanes) sum += l;
    for (; i < n; ++i) sum += a[i] * b[i];
    return sum;
  }
  // acc += e * v over n floats.
  static void add_scaled(float* __restrict acc, const float* __restrict v, float e, int64_t n) {
    for (int64_t d = 0; d < n; ++d) acc[d] += e * v[d];
  }

  // The keys query s of entry b sees, [begin, end): up to its own position, the last local_window
  // of them.
  std::pair<int64_t, int64_t> visible_keys(const GqaPlan& p, int64_t b, int64_t s) const {
    const auto at = static_cast<std::size_t>(b);
    const int64_t end = std::min(p.cached[at] + s + 1, p.lengths[at]);
    return {at_.local_window > 0 ? std::max<int64_t>(0, end - at_.local_window) : 0, end};
  }

  // One head's `hs` values rotated at `position`: the first rotary_dim in pairs, the rest copied.
  template <class T>
  void rotate(const T* x, int64_t position, int64_t rotary_dim, int64_t hs, const T* cos, const T* sin, T* out) const {
    const int64_t half = rotary_dim / 2;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t a = at_.interleaved ? 2 * i : i, b = at_.interleaved ? 2 * i + 1 : i + half;
      const float c = static_cast<float>(cos[position * half + i]), s = static_cast<float>(sin[position * half + i]);
      const float x1 = static_cast<float>(x[a]), x2 = static_cast<float>(x[b]);
      out[a] = static_cast<T>(x1 * c - x2 * s);
      out[b] = static_cast<T>(x2 * c + x1 * s);
    }
    for (int64_t d = rotary_dim; d < hs; ++d) out[d] = x[d];
  }

  GqaAttrs at_;
};

}  // namespace

std::vector<KernelDef> group_query_attention_kernels() {
  return {KernelDef{{"com.microsoft", "GroupQueryAttention", 1}, 0, check_group_query_attention,
                    [](const NodeContext& ctx) {
                      return make_kernel<GroupQueryAttentionKernel>(GqaAttrs::of(ctx.attrs()));
                    }}};
}

}  // namespace nxrt::cpu
