// ONNX Runtime's com.microsoft Attention, the self-attention its transformer optimizer fuses in
// BERT- and GPT-2-like models: Q, K and V from one product of the input with merged weights
//   QKV = input [batch, seq, in] @ weights [in, D + D + Dv] + bias,
// the columns Q | K | V with each head's contiguous, then per head the attention of
// common/bert_attention.h over the past keys and values ([2, batch, heads, past, head_size]) and
// the new ones, giving output [batch, seq, Dv] and present (past and new, [2, batch, heads,
// past + seq, head_size]). mask_index: key lengths [batch] (or [3 * batch + 2]), ends and starts
// [2 * batch], raw masks [batch, total] and [batch, seq, total], or [batch, 1] for none;
// unidirectional hides later keys; attention_bias is added to the scores. Float, as ONNX
// Runtime's CPU EP. Declined by name: do_rotary, past_present_share_buffer with a past, 4-D masks.
#include <fmt/format.h>

#include <cmath>

#include "common/bert_attention.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/scratch_pool.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr std::size_t kInput = 0, kWeights = 1, kBias = 2, kMask = 3, kPast = 4, kAttentionBias = 5,
                      kPastSequenceLength = 6;

struct AttentionAttrs {
  int64_t heads = 0;
  bool causal = false;
  std::vector<int64_t> hidden_sizes;  // qkv_hidden_sizes, or empty: three equal thirds
  float scale = 0.f;                  // 0: 1 / sqrt(head_size)
  float mask_filter_value = -10000.f;

  static AttentionAttrs of(const AttributeMap& a) {
    return {a.int_or("num_heads", 0), a.int_or("unidirectional", 0) != 0, a.ints_or("qkv_hidden_sizes", {}),
            a.float_or("scale", 0.f), a.float_or("mask_filter_value", -10000.f)};
  }
};

KernelMatch check_microsoft_attention(const NodeContext& ctx) {
  const AttentionAttrs at = AttentionAttrs::of(ctx.attrs());
  NXRT_REQUIRE(ctx.input_dtype(kInput) == DType::kFloat32,
               "Attention: input is {}; the cpu EP implements float (as ONNX Runtime's CPU EP does)",
               dtype_name(ctx.input_dtype(kInput)));
  for (std::size_t i : {kWeights, kBias, kPast, kAttentionBias})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kFloat32,
                 "Attention: input {} is {}; weights, bias, past and attention_bias are float as the input", i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE(ctx.has_input(kWeights), "Attention: weights (input 1) is required");
  NXRT_REQUIRE(!ctx.has_input(kMask) || ctx.input_dtype(kMask) == DType::kInt32,
               "Attention: mask_index is {}; it must be int32", dtype_name(ctx.input_dtype(kMask)));
  NXRT_REQUIRE(at.heads > 0, "Attention: num_heads is {}; it must be positive", at.heads);
  NXRT_REQUIRE(ctx.attrs().int_or("do_rotary", 0) == 0,
               "Attention: do_rotary is not implemented by the cpu EP (nor by ONNX Runtime's CPU EP); write the model "
               "with MultiHeadAttention and RotaryEmbedding");
  NXRT_REQUIRE(ctx.attrs().int_or("past_present_share_buffer", 0) == 0 ||
                   (!ctx.has_input(kPast) && !ctx.has_input(kPastSequenceLength)),
               "Attention: past_present_share_buffer (one buffer for past and present) is not implemented by the cpu "
               "EP");
  NXRT_REQUIRE(!ctx.has_input(kPastSequenceLength),
               "Attention: past_sequence_length (input 6) is not implemented by the cpu EP");
  NXRT_REQUIRE(at.hidden_sizes.empty() ||
                   (at.hidden_sizes.size() == 3 && at.hidden_sizes[0] == at.hidden_sizes[1] &&
                    std::all_of(at.hidden_sizes.begin(), at.hidden_sizes.end(),
                                [&](int64_t d) { return d > 0 && d % at.heads == 0; })),
               "Attention: qkv_hidden_sizes must be 3 positive multiples of num_heads {}, the first two equal (Q and "
               "K)", at.heads);
  NXRT_REQUIRE(at.hidden_sizes.empty() || at.hidden_sizes[0] == at.hidden_sizes[2] ||
                   (!ctx.has_input(kPast) && !ctx.has_output(1)),
               "Attention: past and present need V's hidden size equal to Q's and K's (qkv_hidden_sizes {} {} {})",
               at.hidden_sizes[0], at.hidden_sizes[1], at.hidden_sizes[2]);
  NXRT_REQUIRE(ctx.input_rank(kInput).value_or(3) == 3 && ctx.input_rank(kWeights).value_or(2) == 2,
               "Attention: input must be [batch, sequence, input_hidden] and weights [input_hidden, D + D + Dv]");
  NXRT_REQUIRE(!ctx.has_input(kMask) || ctx.input_rank(kMask).value_or(1) <= 3,
               "Attention: a mask_index of rank 4 (Megatron's [batch, 1, max, max]) is not implemented by the cpu EP "
               "(nor by ONNX Runtime's CPU EP)");
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

// The sizes of one run.
struct AttentionPlan {
  int64_t batch = 0, seq = 0, in = 0, columns = 0, hidden = 0, v_hidden = 0, past = 0;
};

std::unexpected<Error> attention_error(std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("Attention: {}", what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

class MicrosoftAttentionKernel final : public Kernel {
 public:
  MicrosoftAttentionKernel(AttentionAttrs attrs, std::vector<PackedMatrix> packed_weights)
      : at_(std::move(attrs)), packed_weights_(std::move(packed_weights)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_run(ctx);
    if (!plan) return std::unexpected(plan.error());
    const AttentionPlan& p = *plan;
    const int64_t hs = p.hidden / at_.heads, vhs = p.v_hidden / at_.heads, total = p.past + p.seq;
    BertAttention a;
    a.batch = p.batch;
    a.heads = at_.heads;
    a.q_seq = p.seq;
    a.total = total;
    a.past = p.past;
    a.head_size = hs;
    a.v_head_size = vhs;
    a.scale = at_.scale != 0.f ? at_.scale : 1.f / std::sqrt(static_cast<float>(hs));
    a.mask_filter_value = at_.mask_filter_value;
    a.causal = at_.causal;
    if (ctx.has_input(kMask)) {
      auto form = key_mask_form("Attention", ctx.input(kMask).shape(), p.batch, p.seq, total, true, true);
      if (!form) return std::unexpected(form.error());
      a.mask_form = *form;
      a.mask = ctx.input(kMask).data_as<int32_t>();
      if (auto lengths = check_key_lengths("Attention", a); !lengths) return lengths;
    }
    if (ctx.has_input(kAttentionBias)) {
      const Shape& s = ctx.input(kAttentionBias).shape();
      if (s.size() != 4 || (s[0] != p.batch && s[0] != 1) || (s[1] != at_.heads && s[1] != 1) || s[2] != p.seq ||
          s[3] != total)
        return attention_error(fmt::format("attention_bias has shape {}", shape_to_string(s)),
                               fmt::format("it must be [{} or 1, {} or 1, {}, {}]", p.batch, at_.heads, p.seq, total));
      a.bias = ctx.input(kAttentionBias).data_as<float>();
      a.bias_head_stride = s[1] == 1 ? 0 : p.seq * total;
      a.bias_batch_stride = s[0] == 1 ? 0 : s[1] * p.seq * total;
    }

    // QKV = input @ weights + bias, one row of columns per token (a workspace kept between runs).
    auto workspace = qkv_pool_.take();
    std::vector<float>& qkv = *workspace;
    qkv.resize(static_cast<std::size_t>(p.batch * p.seq * p.columns));
    const bool with_bias = ctx.has_input(kBias);
    if (with_bias)
      for (int64_t r = 0; r < p.batch * p.seq; ++r)
        std::copy_n(ctx.input(kBias).data_as<float>(), p.columns, qkv.data() + r * p.columns);
    const GemmOperand weights = packed_weights_.empty()
                                    ? GemmOperand::matrix(ctx.input(kWeights).data_as<float>(), p.columns)
                                    : GemmOperand::of(packed_weights_.front());
    gemm(p.batch * p.seq, p.columns, p.in, 1.f, GemmOperand::matrix(ctx.input(kInput).data_as<float>(), p.in), weights,
         with_bias ? 1.f : 0.f, qkv.data(), p.columns, ctx.parallel());
    a.q = {qkv.data(), p.seq * p.columns, hs, p.columns};

    // Keys and values: the new ones in place, or past and new in present.
    std::vector<float> scratch;
    float* present = nullptr;
    if (ctx.has_input(kPast) || ctx.wants_output(1)) {
      const Shape present_shape{2, p.batch, at_.heads, total, hs};
      if (ctx.wants_output(1)) {
        auto t = ctx.output(1, DType::kFloat32, present_shape);
        if (!t) return std::unexpected(t.error());
        present = t->mut_as<float>();
      } else {
        scratch.resize(static_cast<std::size_t>(shape_numel(present_shape)));
        present = scratch.data();
      }
      const float* past = ctx.has_input(kPast) ? ctx.input(kPast).data_as<float>() : nullptr;
      const int64_t half = p.batch * at_.heads * total * hs;
      for (int64_t kv = 0; kv < 2; ++kv)
        for (int64_t b = 0; b < p.batch; ++b)
          for (int64_t h = 0; h < at_.heads; ++h) {
            float* dst = present + kv * half + (b * at_.heads + h) * total * hs;
            if (past) std::copy_n(past + ((kv * p.batch + b) * at_.heads + h) * p.past * hs, p.past * hs, dst);
            for (int64_t s = 0; s < p.seq; ++s)
              std::copy_n(qkv.data() + (b * p.seq + s) * p.columns + (kv + 1) * p.hidden + h * hs, hs,
                          dst + (p.past + s) * hs);
          }
      a.k = {present, at_.heads * total * hs, total * hs, hs};
      a.v = {present + half, at_.heads * total * hs, total * hs, hs};
    } else {
      a.k = {qkv.data() + p.hidden, p.seq * p.columns, hs, p.columns};
      a.v = {qkv.data() + 2 * p.hidden, p.seq * p.columns, vhs, p.columns};
    }
    auto y = ctx.output(0, DType::kFloat32, {p.batch, p.seq, p.v_hidden});
    if (!y) return std::unexpected(y.error());
    a.y = y->mut_as<float>();
    attend(a, ctx.parallel());
    return {};
  }

  std::string_view variant() const override { return packed_weights_.empty() ? "gemm" : "gemm-packed"; }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_weights_); }

 private:
  Expected<AttentionPlan> plan_run(const KernelContext& ctx) const {
    AttentionPlan p;
    const Shape& x = ctx.input(kInput).shape();
    const Shape& w = ctx.input(kWeights).shape();
    if (x.size() != 3 || w.size() != 2 || w[0] != x[2])
      return attention_error(fmt::format("input has shape {} and weights {}", shape_to_string(x), shape_to_string(w)),
                             "input is [batch, sequence, input_hidden] and weights [input_hidden, D + D + Dv]");
    p.batch = x[0];
    p.seq = x[1];
    p.in = x[2];
    p.columns = w[1];
    if (at_.hidden_sizes.empty()) {
      p.hidden = p.v_hidden = p.columns / 3;
    } else {
      p.hidden = at_.hidden_sizes[0];
      p.v_hidden = at_.hidden_sizes[2];
    }
    if (2 * p.hidden + p.v_hidden != p.columns || p.hidden % at_.heads != 0 || p.v_hidden % at_.heads != 0)
      return attention_error(fmt::format("weights has {} columns for {} heads{}", p.columns, at_.heads,
                                         at_.hidden_sizes.empty() ? std::string()
                                                                  : fmt::format(" and qkv_hidden_sizes {} {} {}",
                                                                                p.hidden, p.hidden, p.v_hidden)),
                             "the columns are Q, K and V's hidden sizes (equal thirds without qkv_hidden_sizes), each a "
                             "multiple of num_heads");
    if (ctx.has_input(kBias) && ctx.input(kBias).shape() != Shape{p.columns})
      return attention_error(fmt::format("bias has shape {}", shape_to_string(ctx.input(kBias).shape())),
                             fmt::format("bias holds one value per column of weights, [{}]", p.columns));
    if (ctx.has_input(kPast)) {
      const Shape& past = ctx.input(kPast).shape();
      const int64_t hs = p.hidden / at_.heads;
      if (past.size() != 5 || past[0] != 2 || past[1] != p.batch || past[2] != at_.heads || past[4] != hs)
        return attention_error(fmt::format("past has shape {}", shape_to_string(past)),
                               fmt::format("past is [2, {}, {}, past_sequence, {}]", p.batch, at_.heads, hs));
      p.past = past[3];
    }
    return p;
  }

  AttentionAttrs at_;
  std::vector<PackedMatrix> packed_weights_;  // weights packed once when constant
  ScratchPool<std::vector<float>> qkv_pool_;
};

Expected<std::unique_ptr<Kernel>> create_microsoft_attention(const NodeContext& ctx) {
  auto packed = pack_constant_b(ctx, kWeights, false);
  if (!packed) return std::unexpected(packed.error());
  return make_kernel<MicrosoftAttentionKernel>(AttentionAttrs::of(ctx.attrs()), std::move(*packed));
}

}  // namespace

std::vector<KernelDef> microsoft_attention_kernels() {
  return {KernelDef{{"com.microsoft", "Attention", 1}, 0, check_microsoft_attention, create_microsoft_attention}};
}

}  // namespace nxrt::cpu
