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
// QAttention (what ONNX Runtime's quantize_dynamic makes of Attention) projects on the int8 GEMM:
// QKV = (input - input_zero_point)(weight - weight_zero_point) * input_scale * weight_scale +
// bias, input uint8 or int8 [batch, seq, in], weight uint8 or int8 with one scale and zero point
// or one per column; then the same attention (it has no attention_bias).
#include <fmt/format.h>

#include <cmath>

#include "common/bert_attention.h"
#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/int_gemm.h"
#include "common/kernel_util.h"
#include "common/scratch_pool.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr std::size_t kAttnInput = 0, kAttnWeights = 1, kAttnBias = 2;

// Where an op of the family has its other inputs.
struct MsAttentionForm {
  std::string_view op;
  std::size_t mask, past;
  std::optional<std::size_t> attention_bias, past_sequence_length;
};
constexpr MsAttentionForm kAttention{"Attention", 3, 4, 5, 6};
constexpr MsAttentionForm kQAttention{"QAttention", 5, 8, std::nullopt, std::nullopt};
constexpr std::size_t kInputScale = 3, kWeightScale = 4, kInputZero = 6, kWeightZero = 7;  // QAttention's

using MsAttentionAttrs = MicrosoftAttentionAttrs;
using MsAttentionPlan = MicrosoftAttentionPlan;

// What both ops check: lib's family check, and bias and past in float.
KernelMatch check_attention_family(const NodeContext& ctx, const MsAttentionForm& f) {
  for (std::size_t i : {kAttnBias, f.past})
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == DType::kFloat32,
                 "{}: input {} is {}; bias and past are float (as ONNX Runtime's CPU EP has them)", f.op, i,
                 dtype_name(ctx.input_dtype(i)));
  NXRT_REQUIRE_MATCH(check_microsoft_attention_family(ctx, {f.op, f.mask, f.past, f.past_sequence_length}, "cpu"));
  return KernelMatch::supported(elementwise_cost(ctx, 8));
}

KernelMatch check_microsoft_attention(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(kAttnInput) == DType::kFloat32 && ctx.input_dtype(kAttnWeights) == DType::kFloat32,
               "Attention: input is {} and weights {}; the cpu EP implements float (as ONNX Runtime's CPU EP does)",
               dtype_name(ctx.input_dtype(kAttnInput)), dtype_name(ctx.input_dtype(kAttnWeights)));
  NXRT_REQUIRE(!ctx.has_input(*kAttention.attention_bias) ||
                   ctx.input_dtype(*kAttention.attention_bias) == DType::kFloat32,
               "Attention: attention_bias is {}; it must be float", dtype_name(ctx.input_dtype(5)));
  return check_attention_family(ctx, kAttention);
}

KernelMatch check_qattention(const NodeContext& ctx) {
  for (std::size_t i : {kAttnInput, kAttnWeights})
    NXRT_REQUIRE(ctx.input_dtype(i) == DType::kUInt8 || ctx.input_dtype(i) == DType::kInt8,
                 "QAttention: input {} is {}; input and weight are uint8 or int8", i, dtype_name(ctx.input_dtype(i)));
  for (auto [zero, of] : {std::pair{kInputZero, kAttnInput}, std::pair{kWeightZero, kAttnWeights}})
    NXRT_REQUIRE(!ctx.has_input(zero) || ctx.input_dtype(zero) == ctx.input_dtype(of),
                 "QAttention: zero point {} is {} and its operand {}; they must be one type", zero,
                 dtype_name(ctx.input_dtype(zero)), dtype_name(ctx.input_dtype(of)));
  NXRT_REQUIRE(ctx.has_input(kInputScale) && ctx.has_input(kWeightScale) &&
                   ctx.input_dtype(kInputScale) == DType::kFloat32 && ctx.input_dtype(kWeightScale) == DType::kFloat32,
               "QAttention: input_scale (input 3) and weight_scale (input 4) are required, float");
  return check_attention_family(ctx, kQAttention);
}

std::unexpected<Error> ms_attention_error(std::string_view op, std::string what, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("{}: {}", op, what), std::move(why),
              "give tensors of the shapes ONNX Runtime's definition of the op states");
}

Expected<MsAttentionPlan> plan_attention_run(const KernelContext& ctx, const MsAttentionForm& f,
                                             const MsAttentionAttrs& at) {
  return plan_microsoft_attention(f.op, at, ctx.input(kAttnInput).shape(), ctx.input(kAttnWeights).shape(),
                                  given_shape(ctx, kAttnBias), given_shape(ctx, f.past));
}

// The attention over projected Q, K and V (`qkv`: one row of the columns per token, the bias
// added): the mask and attention_bias read, past and the new keys and values into present,
// output written.
Expected<void> attend_projected(KernelContext& ctx, const MsAttentionForm& f, const MsAttentionAttrs& at,
                                const MsAttentionPlan& p, const float* qkv) {
  const int64_t hs = p.hidden / at.heads, vhs = p.v_hidden / at.heads, total = p.past + p.seq;
  BertAttention a;
  a.batch = p.batch;
  a.heads = at.heads;
  a.q_seq = p.seq;
  a.total = total;
  a.past = p.past;
  a.head_size = hs;
  a.v_head_size = vhs;
  a.scale = p.scale(at);
  a.mask_filter_value = at.mask_filter_value;
  a.causal = at.causal;
  if (ctx.has_input(f.mask))
    if (auto read = read_key_mask(f.op, ctx.input(f.mask), true, true, a); !read) return read;
  if (f.attention_bias && ctx.has_input(*f.attention_bias))
    if (auto read = read_attention_bias(f.op, ctx.input(*f.attention_bias), a); !read) return read;
  a.q = {qkv, p.seq * p.columns, hs, p.columns};
  // Keys and values: the new ones in place, or past and new in present.
  std::vector<float> scratch;
  if (ctx.has_input(f.past) || ctx.wants_output(1)) {
    const Shape present_shape{2, p.batch, at.heads, total, hs};
    float* present = nullptr;
    if (ctx.wants_output(1)) {
      auto t = ctx.output(1, DType::kFloat32, present_shape);
      if (!t) return std::unexpected(t.error());
      present = t->mut_as<float>();
    } else {
      scratch.resize(static_cast<std::size_t>(shape_numel(present_shape)));
      present = scratch.data();
    }
    const float* past = ctx.has_input(f.past) ? ctx.input(f.past).data_as<float>() : nullptr;
    const int64_t half = p.batch * at.heads * total * hs;
    for (int64_t kv = 0; kv < 2; ++kv)
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < at.heads; ++h) {
          float* dst = present + kv * half + (b * at.heads + h) * total * hs;
          if (past) std::copy_n(past + ((kv * p.batch + b) * at.heads + h) * p.past * hs, p.past * hs, dst);
          for (int64_t s = 0; s < p.seq; ++s)
            std::copy_n(qkv + (b * p.seq + s) * p.columns + (kv + 1) * p.hidden + h * hs, hs, dst + (p.past + s) * hs);
        }
    a.k = {present, at.heads * total * hs, total * hs, hs};
    a.v = {present + half, at.heads * total * hs, total * hs, hs};
  } else {
    a.k = {qkv + p.hidden, p.seq * p.columns, hs, p.columns};
    a.v = {qkv + 2 * p.hidden, p.seq * p.columns, vhs, p.columns};
  }
  auto y = ctx.output(0, DType::kFloat32, {p.batch, p.seq, p.v_hidden});
  if (!y) return std::unexpected(y.error());
  a.y = y->mut_as<float>();
  attend(a, ctx.parallel());
  return {};
}

class MicrosoftAttentionKernel final : public Kernel {
 public:
  MicrosoftAttentionKernel(MsAttentionAttrs attrs, std::vector<PackedMatrix> packed_weights)
      : at_(std::move(attrs)), packed_weights_(std::move(packed_weights)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_attention_run(ctx, kAttention, at_);
    if (!plan) return std::unexpected(plan.error());
    const MsAttentionPlan& p = *plan;
    // QKV = input @ weights + bias, one row of columns per token (a workspace kept between runs):
    // the product added to rows of the bias.
    auto workspace = qkv_pool_.take();
    std::vector<float>& qkv = *workspace;
    qkv.resize(static_cast<std::size_t>(p.batch * p.seq * p.columns));
    const bool with_bias = ctx.has_input(kAttnBias);
    if (with_bias) {
      const float* bias = ctx.input(kAttnBias).data_as<float>();
      const int64_t grain = std::max<int64_t>(1, kElementwiseGrain / p.columns);
      ctx.parallel().for_range(p.batch * p.seq, grain, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) std::copy_n(bias, p.columns, qkv.data() + r * p.columns);
      });
    }
    const GemmOperand weights = packed_weights_.empty()
                                    ? GemmOperand::matrix(ctx.input(kAttnWeights).data_as<float>(), p.columns)
                                    : GemmOperand::of(packed_weights_.front());
    gemm(p.batch * p.seq, p.columns, p.in, 1.f, GemmOperand::matrix(ctx.input(kAttnInput).data_as<float>(), p.in),
         weights, with_bias ? 1.f : 0.f, qkv.data(), p.columns, ctx.parallel());
    return attend_projected(ctx, kAttention, at_, p, qkv.data());
  }

  std::string_view variant() const override { return packed_weights_.empty() ? "gemm" : "gemm-packed"; }
  std::vector<std::byte> save_packed() const override { return save_packed_matrices(packed_weights_); }

 private:
  MsAttentionAttrs at_;
  std::vector<PackedMatrix> packed_weights_;  // weights packed once when constant
  ScratchPool<std::vector<float>> qkv_pool_;
};

Expected<std::unique_ptr<Kernel>> create_microsoft_attention(const NodeContext& ctx) {
  auto packed = pack_constant_b(ctx, kAttnWeights, false);
  if (!packed) return std::unexpected(packed.error());
  return make_kernel<MicrosoftAttentionKernel>(MsAttentionAttrs::of(ctx.attrs()), std::move(*packed));
}

// One value, or one per column of the weights, of a scale or zero point.
Expected<void> qattention_per_column(const KernelContext& ctx, std::size_t input, int64_t columns,
                                     std::string_view name) {
  const int64_t n = ctx.input(input).numel();
  if (n == 1 || n == columns) return {};
  return ms_attention_error("QAttention", fmt::format("{} (input {}) has {} values", name, input, n),
                            fmt::format("it holds one value, or one per column of weight ({})", columns));
}

template <class T>
std::vector<int32_t> qattention_zero_points(const KernelContext& ctx, std::size_t input) {
  if (!ctx.has_input(input)) return {0};
  const Tensor& z = ctx.input(input);
  return std::vector<int32_t>(z.data_as<T>(), z.data_as<T>() + z.numel());
}

class QAttentionKernel final : public Kernel {
 public:
  QAttentionKernel(MsAttentionAttrs attrs, std::optional<PackedIntB> packed_weights)
      : at_(std::move(attrs)), packed_weights_(std::move(packed_weights)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_attention_run(ctx, kQAttention, at_);
    if (!plan) return std::unexpected(plan.error());
    const MsAttentionPlan& p = *plan;
    if (ctx.input(kInputScale).numel() != 1 || (ctx.has_input(kInputZero) && ctx.input(kInputZero).numel() != 1))
      return ms_attention_error("QAttention", "input_scale or input_zero_point has several values",
                                "the input is quantized with one scale and zero point");
    if (auto r = qattention_per_column(ctx, kWeightScale, p.columns, "weight_scale"); !r) return r;
    if (ctx.has_input(kWeightZero))
      if (auto r = qattention_per_column(ctx, kWeightZero, p.columns, "weight_zero_point"); !r) return r;
    // QKV = (input - zero)(weight - zero) * input_scale * weight_scale + bias.
    const float input_scale = *ctx.input(kInputScale).data_as<float>();
    const Tensor& w_scale = ctx.input(kWeightScale);
    std::vector<float> scales(static_cast<std::size_t>(w_scale.numel()));
    for (std::size_t j = 0; j < scales.size(); ++j) scales[j] = input_scale * w_scale.data_as<float>()[j];
    auto workspace = qkv_pool_.take();
    std::vector<float>& qkv = *workspace;
    qkv.resize(static_cast<std::size_t>(p.batch * p.seq * p.columns));
    const float* bias = ctx.has_input(kAttnBias) ? ctx.input(kAttnBias).data_as<float>() : nullptr;
    const IntGemmOutput out =
        IntGemmOutput::scaled_float(qkv.data(), p.columns, scales.data(), scales.size() > 1, bias);
    const DType wt = ctx.input(kAttnWeights).dtype();
    const std::vector<int32_t> w_zero =
        wt == DType::kUInt8 ? qattention_zero_points<uint8_t>(ctx, kWeightZero)
                            : qattention_zero_points<int8_t>(ctx, kWeightZero);
    std::optional<PackedIntB> packed_now;
    if (!packed_weights_) packed_now = pack(ctx.input(kAttnWeights));
    const PackedIntB& weights = packed_weights_ ? *packed_weights_ : *packed_now;
    if (ctx.input(kAttnInput).dtype() == DType::kUInt8)
      int_gemm<uint8_t>(p.batch * p.seq, ctx.input(kAttnInput).data_as<uint8_t>(), p.in,
                        qattention_zero_points<uint8_t>(ctx, kInputZero), weights, w_zero, out, ctx.parallel());
    else
      int_gemm<int8_t>(p.batch * p.seq, ctx.input(kAttnInput).data_as<int8_t>(), p.in,
                       qattention_zero_points<int8_t>(ctx, kInputZero), weights, w_zero, out, ctx.parallel());
    return attend_projected(ctx, kQAttention, at_, p, qkv.data());
  }

  std::string_view variant() const override { return variant_; }

  // Weights [in, columns] of uint8 or int8 in the int8 GEMM's layout.
  static PackedIntB pack(const Tensor& w) {
    const int64_t k = w.shape()[0], n = w.shape()[1];
    return w.dtype() == DType::kUInt8 ? PackedIntB::pack(w.data_as<uint8_t>(), n, false, k, n)
                                      : PackedIntB::pack(w.data_as<int8_t>(), n, false, k, n);
  }

 private:
  MsAttentionAttrs at_;
  std::optional<PackedIntB> packed_weights_;  // packed once when constant
  std::string variant_ = fmt::format("int-gemm:{}", int_gemm_isa());
  ScratchPool<std::vector<float>> qkv_pool_;
};

Expected<std::unique_ptr<Kernel>> create_qattention(const NodeContext& ctx) {
  std::optional<PackedIntB> packed;
  if (const WeightHandle* w = ctx.constant_input(kAttnWeights); w && w->shape().size() == 2) {
    auto t = w->materialize();
    if (!t) return forward_error(std::move(t), fmt::format("packing the weights of {}", ctx.node().describe()));
    packed = QAttentionKernel::pack(*t);
  }
  return make_kernel<QAttentionKernel>(MsAttentionAttrs::of(ctx.attrs()), std::move(packed));
}

}  // namespace

std::vector<KernelDef> microsoft_attention_kernels() {
  return {KernelDef{{"com.microsoft", "Attention", 1}, 0, check_microsoft_attention, create_microsoft_attention},
          KernelDef{{"com.microsoft", "QAttention", 1}, 0, check_qattention, create_qattention}};
}

}  // namespace nxrt::cpu
