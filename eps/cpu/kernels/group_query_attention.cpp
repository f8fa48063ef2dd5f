// ONNX Runtime's com.microsoft GroupQueryAttention, the attention of its GenAI language models
// (inputs, outputs and semantics in nxrt/ep/group_query_attention.h, which plans a run). Float and
// float16 (computed in float; rotated values rounded to float16 as they are stored). From 16 new
// tokens on (a prompt) each head's scores and weighted values are products on the packed GEMM;
// fewer go query by query.
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
#include "nxrt/ep/group_query_attention.h"

namespace nxrt::cpu {
namespace {

// New tokens from which a run multiplies on the GEMM (a prompt) rather than query by query.
constexpr int64_t kGemmQueries = 16;

using GqaAttrs = GroupQueryAttentionAttrs;
using GqaPlan = GroupQueryAttentionPlan;

KernelMatch check_group_query_attention(const NodeContext& ctx) {
  const DType t = ctx.input_dtype(kGqaQuery);
  NXRT_REQUIRE(t == DType::kFloat32 || t == DType::kFloat16,
               "GroupQueryAttention: query is {}; the cpu EP implements float and float16 (bfloat16 is not "
               "implemented)",
               dtype_name(t));
  NXRT_REQUIRE_MATCH(check_group_query_attention_node(ctx, "cpu"));
  return KernelMatch::supported(elementwise_cost(ctx, 4));
}

class GroupQueryAttentionKernel final : public Kernel {
 public:
  explicit GroupQueryAttentionKernel(GqaAttrs attrs) : at_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    if (ctx.input(kGqaQuery).dtype() == DType::kFloat16) return run<Half>(ctx);
    return run<float>(ctx);
  }
  std::string_view variant() const override { return "rows"; }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) const {
    auto planned = plan_group_query_attention(at_, GroupQueryAttentionShapes::of(ctx), ctx.input(kGqaSeqlensK),
                                              ctx.input(kGqaTotal));
    if (!planned) return std::unexpected(planned.error());
    const GqaPlan& p = *planned;
    const int64_t hs = p.head_size, q_width = p.query_width(at_);
    const int64_t kv_width = p.packed ? q_width : at_.kv_heads * hs;
    auto out = ctx.output(0, ctx.input(kGqaQuery).dtype(), {p.batch, p.seq, at_.heads * hs});
    if (!out) return std::unexpected(out.error());
    const Shape present_shape{p.batch, at_.kv_heads, p.present_rows, hs};
    // Present key and value: outputs when asked for, else scratch.
    std::vector<T> scratch[2];
    T* present[2];
    for (int i = 0; i < 2; ++i) {
      if (ctx.wants_output(1 + static_cast<std::size_t>(i))) {
        auto t = ctx.output(1 + static_cast<std::size_t>(i), ctx.input(kGqaQuery).dtype(), present_shape);
        if (!t) return std::unexpected(t.error());
        present[i] = t->template mut_as<T>();
      } else {
        scratch[i].resize(static_cast<std::size_t>(shape_numel(present_shape)));
        present[i] = scratch[i].data();
      }
    }
    const T* query = ctx.input(kGqaQuery).data_as<T>();
    const T* new_kv[2] = {p.packed ? query + at_.heads * hs : ctx.input(kGqaKey).data_as<T>(),
                          p.packed ? query + (at_.heads + at_.kv_heads) * hs : ctx.input(kGqaValue).data_as<T>()};
    const T* past[2] = {ctx.has_input(kGqaPastKey) ? ctx.input(kGqaPastKey).data_as<T>() : nullptr,
                        ctx.has_input(kGqaPastValue) ? ctx.input(kGqaPastValue).data_as<T>() : nullptr};
    const T* cos = at_.rotary ? ctx.input(kGqaCos).data_as<T>() : nullptr;
    const T* sin = at_.rotary ? ctx.input(kGqaSin).data_as<T>() : nullptr;
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
    const float scale = at_.scale_for(hs);
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
        const auto [begin, end] = p.visible_keys(at_, b, s);
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
    const float scale = at_.scale_for(hs);
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
          const auto [begin, end] = p.visible_keys(at_, b, s);
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
