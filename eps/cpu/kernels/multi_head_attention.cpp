// ONNX Runtime's com.microsoft MultiHeadAttention, the attention its transformer optimizer fuses
// once Q, K and V are projected (self- and cross-attention, encoder-decoder models): query
// [batch, seq, D], key and value [batch, kv_seq, D] and [batch, kv_seq, Dv] (bias' three parts
// added), or key and value already split into heads [batch, heads, kv_seq, head_size] (a cross-
// attention cache: only bias' Q part is added, as ONNX Runtime reads it); past_key and past_value
// [batch, heads, past, head_size] before the new keys; then the attention of
// common/bert_attention.h. Outputs: output [batch, seq, Dv], present_key and present_value (past
// and new), qk (the scores before softmax). key_padding_mask: key lengths [batch] (or
// [3 * batch + 2]), raw masks [batch, total] and [batch, seq, total]. Float, as ONNX Runtime's CPU
// EP. Also the packed forms ONNX Runtime's CUDA EP reads (its CPU EP refuses them): query
// [batch, seq, heads, 3, head_size] holding Q, K and V, or key [batch, kv_seq, heads, 2,
// head_size] holding K and V (no bias with either). Declined by name: past_sequence_length,
// cache_indirection.
#include <fmt/format.h>

#include <cmath>

#include "common/bert_attention.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr std::size_t kMhaQuery = 0, kMhaKey = 1, kMhaValue = 2, kMhaBias = 3, kMhaMask = 4, kMhaAttentionBias = 5,
                      kMhaPastKey = 6, kMhaPastValue = 7, kMhaPastSequenceLength = 8, kMhaCacheIndirection = 9;

struct MhaAttrs {
  int64_t heads = 0;
  bool causal = false;
  float scale = 0.f;  // 0: 1 / sqrt(head_size)
  float mask_filter_value = -10000.f;

  static MhaAttrs of(const AttributeMap& a) {
    return {a.int_or("num_heads", 0), a.int_or("unidirectional", 0) != 0, a.float_or("scale", 0.f),
            a.float_or("mask_filter_value", -10000.f)};
  }
};

KernelMatch check_multi_head_attention(const NodeContext& ctx) {
  const MhaAttrs at = MhaAttrs::of(ctx.attrs());
  NXRT_REQUIRE(ctx.input_dtype(kMhaQuery) == DType::kFloat32,
               "MultiHeadAttention: query is {}; the cpu EP implements float (as ONNX Runtime's CPU EP does)",
               dtype_name(ctx.input_dtype(kMhaQuery)));
  for (std::size_t i : {kMhaKey, kMhaValue, kMhaBias, kMhaAttentionBias, kMhaPastKey, kMhaPastValue})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kFloat32,
                 "MultiHeadAttention: input {} is {}; it must be float as the query", i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE(at.heads > 0, "MultiHeadAttention: num_heads is {}; it must be positive", at.heads);
  const bool packed_qkv = ctx.input_rank(kMhaQuery) == 5;
  const bool packed_kv = ctx.has_input(kMhaKey) && ctx.input_rank(kMhaKey) == 5;
  NXRT_REQUIRE(packed_qkv || ctx.input_rank(kMhaQuery).value_or(3) == 3,
               "MultiHeadAttention: query has rank {}; it must be [batch, seq, hidden] or packed QKV [batch, seq, "
               "heads, 3, head_size]", ctx.input_rank(kMhaQuery).value_or(3));
  NXRT_REQUIRE(packed_qkv ? !ctx.has_input(kMhaKey) && !ctx.has_input(kMhaValue)
                          : ctx.has_input(kMhaKey) && ctx.has_input(kMhaValue) != packed_kv,
               "MultiHeadAttention: give key and value, key alone as packed KV [batch, kv_seq, heads, 2, head_size], "
               "or neither with packed QKV");
  NXRT_REQUIRE(!(packed_qkv || packed_kv) || !ctx.has_input(kMhaBias),
               "MultiHeadAttention: a bias with packed QKV or KV is not implemented by the cpu EP");
  NXRT_REQUIRE(!ctx.has_input(kMhaPastSequenceLength) && !ctx.has_input(kMhaCacheIndirection),
               "MultiHeadAttention: past_sequence_length (input 8) and cache_indirection (input 9), a shared past and "
               "present buffer for beam search, are not implemented by the cpu EP");
  NXRT_REQUIRE(ctx.has_input(kMhaPastKey) == ctx.has_input(kMhaPastValue),
               "MultiHeadAttention: past_key and past_value must be both given or both absent");
  NXRT_REQUIRE(!ctx.has_input(kMhaMask) || ctx.input_dtype(kMhaMask) == DType::kInt32,
               "MultiHeadAttention: key_padding_mask is {}; it must be int32", dtype_name(ctx.input_dtype(kMhaMask)));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

std::unexpected<Error> mha_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("MultiHeadAttention: {}", what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

// The sizes of one run.
struct MhaPlan {
  int64_t batch = 0, seq = 0, kv_seq = 0, past = 0, hidden = 0, v_hidden = 0, head_size = 0, v_head_size = 0;
  enum class Layout {
    kSeparate,  // key and value [batch, kv_seq, hidden]
    kInHeads,   // key and value [batch, heads, kv_seq, head_size]
    kPackedKv,  // key [batch, kv_seq, heads, 2, head_size]
    kPackedQkv  // query [batch, seq, heads, 3, head_size]
  };
  Layout layout = Layout::kSeparate;
  int64_t total() const { return past + kv_seq; }
};

class MultiHeadAttentionKernel final : public Kernel {
 public:
  explicit MultiHeadAttentionKernel(MhaAttrs attrs) : at_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_run(ctx);
    if (!plan) return std::unexpected(plan.error());
    const MhaPlan& p = *plan;
    const int64_t total = p.total(), n = at_.heads;
    BertAttention a;
    a.batch = p.batch;
    a.heads = n;
    a.q_seq = p.seq;
    a.total = total;
    a.past = p.past;
    a.head_size = p.head_size;
    a.v_head_size = p.v_head_size;
    a.scale = at_.scale != 0.f ? at_.scale : 1.f / std::sqrt(static_cast<float>(p.head_size));
    a.mask_filter_value = at_.mask_filter_value;
    a.causal = at_.causal;
    if (ctx.has_input(kMhaMask))
      if (auto read = read_key_mask("MultiHeadAttention", ctx.input(kMhaMask), false, false, a); !read) return read;
    if (ctx.has_input(kMhaAttentionBias))
      if (auto read = read_attention_bias("MultiHeadAttention", ctx.input(kMhaAttentionBias), a); !read) return read;

    // Q (and, from [batch, kv_seq, hidden], K and V) with bias' part added.
    const float* bias = ctx.has_input(kMhaBias) ? ctx.input(kMhaBias).data_as<float>() : nullptr;
    std::vector<float> biased[3];
    auto with_bias = [&](std::size_t input, int64_t offset, int64_t width) -> const float* {
      const float* data = ctx.input(input).data_as<float>();
      if (!bias) return data;
      std::vector<float>& out = biased[input];
      out.resize(static_cast<std::size_t>(ctx.input(input).numel()));
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = data[i] + bias[offset + static_cast<int64_t>(i) % width];
      return out.data();
    };
    // The new Q, K and V heads where they are.
    using Layout = MhaPlan::Layout;
    const int64_t hs = p.head_size, vhs = p.v_head_size;
    switch (p.layout) {
      case Layout::kPackedQkv: {
        const float* qkv = ctx.input(kMhaQuery).data_as<float>();
        const int64_t row = n * 3 * hs;
        a.q = {qkv, p.seq * row, 3 * hs, row};
        a.k = {qkv + hs, p.seq * row, 3 * hs, row};
        a.v = {qkv + 2 * hs, p.seq * row, 3 * hs, row};
        break;
      }
      case Layout::kPackedKv: {
        const float* kv = ctx.input(kMhaKey).data_as<float>();
        const int64_t row = n * 2 * hs;
        a.q = {ctx.input(kMhaQuery).data_as<float>(), p.seq * p.hidden, hs, p.hidden};
        a.k = {kv, p.kv_seq * row, 2 * hs, row};
        a.v = {kv + hs, p.kv_seq * row, 2 * hs, row};
        break;
      }
      case Layout::kInHeads:
        a.q = {with_bias(kMhaQuery, 0, p.hidden), p.seq * p.hidden, hs, p.hidden};
        a.k = {ctx.input(kMhaKey).data_as<float>(), n * p.kv_seq * hs, p.kv_seq * hs, hs};
        a.v = {ctx.input(kMhaValue).data_as<float>(), n * p.kv_seq * vhs, p.kv_seq * vhs, vhs};
        break;
      case Layout::kSeparate:
        a.q = {with_bias(kMhaQuery, 0, p.hidden), p.seq * p.hidden, hs, p.hidden};
        a.k = {with_bias(kMhaKey, p.hidden, p.hidden), p.kv_seq * p.hidden, hs, p.hidden};
        a.v = {with_bias(kMhaValue, 2 * p.hidden, p.v_hidden), p.kv_seq * p.v_hidden, vhs, p.v_hidden};
        break;
    }
    // Present key and value: past rows then the new ones (read from there when there is a past).
    std::vector<float> scratch[2];
    for (int i = 0; i < 2; ++i) {
      const auto out = static_cast<std::size_t>(1 + i);
      if (!ctx.wants_output(out) && !ctx.has_input(kMhaPastKey)) continue;
      const int64_t size = i == 0 ? p.head_size : p.v_head_size;
      const Shape shape{p.batch, n, total, size};
      float* present;
      if (ctx.wants_output(out)) {
        auto t = ctx.output(out, DType::kFloat32, shape);
        if (!t) return std::unexpected(t.error());
        present = t->mut_as<float>();
      } else {
        scratch[i].resize(static_cast<std::size_t>(shape_numel(shape)));
        present = scratch[i].data();
      }
      const float* past =
          ctx.has_input(kMhaPastKey) ? ctx.input(i == 0 ? kMhaPastKey : kMhaPastValue).data_as<float>() : nullptr;
      const HeadMatrix fresh = i == 0 ? a.k : a.v;
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < n; ++h) {
          float* dst = present + (b * n + h) * total * size;
          if (past) std::copy_n(past + (b * n + h) * p.past * size, p.past * size, dst);
          for (int64_t s = 0; s < p.kv_seq; ++s)
            std::copy_n(fresh.at(b, h) + s * fresh.row_stride, size, dst + (p.past + s) * size);
        }
      (i == 0 ? a.k : a.v) = {present, n * total * size, total * size, size};
    }
    auto y = ctx.output(0, DType::kFloat32, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    a.y = y->mut_as<float>();
    if (ctx.wants_output(3)) {
      auto qk = ctx.output(3, DType::kFloat32, {p.batch, n, p.seq, total});
      if (!qk) return std::unexpected(qk.error());
      a.qk = qk->mut_as<float>();
    }
    attend(a, ctx.parallel());
    return {};
  }

  std::string_view variant() const override { return "gemm"; }

 private:
  Expected<MhaPlan> plan_run(const KernelContext& ctx) const {
    using Layout = MhaPlan::Layout;
    MhaPlan p;
    const int64_t n = at_.heads;
    const Shape& q = ctx.input(kMhaQuery).shape();
    if (q.size() == 5) {  // packed QKV
      if (q[2] != n || q[3] != 3)
        return mha_error(fmt::format("query has shape {} for {} heads", shape_to_string(q), n),
                         "packed QKV is [batch, sequence, num_heads, 3, head_size]");
      p.layout = Layout::kPackedQkv;
      p.batch = q[0];
      p.seq = p.kv_seq = q[1];
      p.head_size = p.v_head_size = q[4];
      p.hidden = p.v_hidden = n * q[4];
    } else {
      if (q.size() != 3 || q[2] % n != 0)
        return mha_error(fmt::format("query has shape {} for {} heads", shape_to_string(q), n),
                         "query is [batch, sequence, hidden], hidden a multiple of num_heads");
      p.batch = q[0];
      p.seq = q[1];
      p.hidden = q[2];
      p.head_size = p.hidden / n;
      const Shape& k = ctx.input(kMhaKey).shape();
      const Shape empty;
      const Shape& v = ctx.has_input(kMhaValue) ? ctx.input(kMhaValue).shape() : empty;
      p.layout = k.size() == 5 ? Layout::kPackedKv : k.size() == 4 ? Layout::kInHeads : Layout::kSeparate;
      if (p.layout == Layout::kPackedKv) {
        if (k != Shape{p.batch, k[1], n, 2, p.head_size})
          return mha_error(fmt::format("key has shape {} for query {}", shape_to_string(k), shape_to_string(q)),
                           fmt::format("packed KV is [{}, kv_sequence, {}, 2, {}]", p.batch, n, p.head_size));
        p.kv_seq = k[1];
        p.v_head_size = p.head_size;
        p.v_hidden = p.hidden;
      } else if (p.layout == Layout::kInHeads) {
        if (k != Shape{p.batch, n, k[2], p.head_size} || v.size() != 4 || v[0] != p.batch || v[1] != n || v[2] != k[2])
          return mha_error(fmt::format("key has shape {} and value {}", shape_to_string(k), shape_to_string(v)),
                           fmt::format("key and value in heads are [{}, {}, kv_sequence, {}] and [{}, {}, "
                                       "kv_sequence, v_head_size]", p.batch, n, p.head_size, p.batch, n));
        p.kv_seq = k[2];
        p.v_head_size = v[3];
        p.v_hidden = n * p.v_head_size;
        if (ctx.has_input(kMhaPastKey))
          return mha_error("past_key is given with key and value in heads",
                           "key and value of shape [batch, heads, kv_sequence, head_size] are a whole cache already");
      } else {
        if (k.size() != 3 || k[0] != p.batch || k[2] != p.hidden || v.size() != 3 || v[0] != p.batch ||
            v[1] != k[1] || v[2] % n != 0)
          return mha_error(fmt::format("query has shape {}, key {} and value {}", shape_to_string(q),
                                       shape_to_string(k), shape_to_string(v)),
                           fmt::format("key is [{}, kv_sequence, {}] and value [{}, kv_sequence, Dv], Dv a multiple "
                                       "of num_heads", p.batch, p.hidden, p.batch));
        p.kv_seq = k[1];
        p.v_hidden = v[2];
        p.v_head_size = p.v_hidden / n;
      }
    }
    if (ctx.has_input(kMhaBias) && ctx.input(kMhaBias).shape() != Shape{2 * p.hidden + p.v_hidden})
      return mha_error(fmt::format("bias has shape {}", shape_to_string(ctx.input(kMhaBias).shape())),
                       fmt::format("bias holds Q's, K's and V's, [{}]", 2 * p.hidden + p.v_hidden));
    if (ctx.has_input(kMhaPastKey)) {
      const Shape& pk = ctx.input(kMhaPastKey).shape();
      const Shape& pv = ctx.input(kMhaPastValue).shape();
      if (pk.size() != 4 || pk != Shape{p.batch, n, pk[2], p.head_size} ||
          pv != Shape{p.batch, n, pk[2], p.v_head_size})
        return mha_error(fmt::format("past_key has shape {} and past_value {}", shape_to_string(pk),
                                     shape_to_string(pv)),
                         fmt::format("they are [{}, {}, past, {}] and [{}, {}, past, {}]", p.batch, n, p.head_size,
                                     p.batch, n, p.v_head_size));
      p.past = pk[2];
    }
    if (at_.causal && p.seq > 1 && p.kv_seq != p.seq)
      return mha_error(fmt::format("unidirectional attention of {} queries over {} new keys", p.seq, p.kv_seq),
                       "causal attention needs as many new keys as queries (self-attention)");
    return p;
  }

  MhaAttrs at_;
};

}  // namespace

std::vector<KernelDef> multi_head_attention_kernels() {
  return {KernelDef{{"com.microsoft", "MultiHeadAttention", 1}, 0, check_multi_head_attention,
                    [](const NodeContext& ctx) {
                      return make_kernel<MultiHeadAttentionKernel>(MhaAttrs::of(ctx.attrs()));
                    }}};
}

}  // namespace nxrt::cpu
