// Attention-23 and -24: per (batch, query head), scores = scale * Q K^T, softcap, the mask,
// padding (nonpad_kv_seqlen) and is_causal, softmax over the keys, then Y = probabilities V.
// float and float16 (computed in float) take the packed GEMM for both products; double takes
// plain loops. The geometry is lib's (nxrt/ep/attention.h).
#include "nxrt/ep/attention.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "common/elementwise.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// lib checks the node and gives the cost; the cpu EP adds its element types.
KernelMatch check_attention(const NodeContext& ctx) {
  KernelMatch match = check_attention_node(ctx);
  if (!match) return match;
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  return match;
}

// Query rows scored together when the keys hidden from all of them are skipped (causal, padding).
constexpr int64_t kRowBlock = 32;

// C (m x n, leading dimension ldc) = alpha * A (m x k, lda) * op(B) (B: k x n with ldb, or
// transposed n x k), for the double path.
void plain_product(int64_t m, int64_t n, int64_t k, double alpha, const double* a, int64_t lda, const double* b,
                   int64_t ldb, bool trans_b, double* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * (trans_b ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * sum;
    }
}

// The key or value rows of one batch and key/value head as the second operand of a product: in
// float, packed once for the GEMM (keys as columns of K^T, or as the depth of V), each product
// reading the first keys it needs; in double, the rows as they are.
template <class C>
struct KeyOperand {
  const C* rows = nullptr;
  int64_t ld = 0;
  std::optional<PackedMatrix> packed;  // float only

  // C (m x n, leading dimension ldc) = alpha * A (m x k, lda) * op(this): K^T's first n columns
  // (k the head size), or V's first k rows.
  void product(int64_t m, int64_t n, int64_t k, C alpha, const C* a, int64_t lda, bool keys_as_columns, C* c,
               int64_t ldc, const Parallel& parallel) const {
    if constexpr (std::is_same_v<C, float>)
      gemm(m, n, k, alpha, GemmOperand::matrix(a, lda), GemmOperand::of(*packed), 0.f, c, ldc, parallel);
    else
      plain_product(m, n, k, alpha, a, lda, rows, ld, keys_as_columns, c, ldc);
  }
};

// `packed` = B (k x n) packed, in the memory `packed` already has where it has some.
inline void pack_into(std::optional<PackedMatrix>& packed, const float* b, int64_t ldb, bool trans, int64_t k,
                      int64_t n) {
  if (packed)
    packed->repack_b(b, ldb, trans, k, n);
  else
    packed = PackedMatrix::pack_b(b, ldb, trans, k, n);
}

// Softmax of one row in place; a row whose every score is -inf (all keys masked) becomes NaN,
// as the op's definition (softmax over no finite score) gives.
template <class C>
void softmax_row(C* row, int64_t n) {
  const C top = lane_max(row, n);
  if (!(top > -std::numeric_limits<C>::infinity())) {
    std::fill(row, row + n, std::numeric_limits<C>::quiet_NaN());
    return;
  }
  exp_shifted(row, top, row, n);
  const C inv = C(1) / lane_sum<C>(row, n);
  for (int64_t i = 0; i < n; ++i) row[i] *= inv;
}

// A tensor viewed as [batch, heads, seq, channel] in the compute type.
template <class C>
struct HeadView {
  const C* data = nullptr;
  HeadStrides strides;
  const C* at(int64_t b, int64_t h) const { return data + b * strides.batch + h * strides.head; }
};

class AttentionKernel final : public Kernel {
 public:
  explicit AttentionKernel(AttentionAttrs attrs) : attrs_(attrs) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto plan = plan_attention(attrs_, ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(),
                               given_shape(ctx, 3), given_shape(ctx, 4), given_shape(ctx, 5), given_shape(ctx, 6));
    if (!plan) return std::unexpected(std::move(plan.error()));
    if (plan->nonpad_lengths)
      if (auto valid = check_nonpad_lengths(*plan, ctx.input(6).data_as<int64_t>()); !valid) return valid;
    return dispatch_dtype(FloatHalfTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx, *plan); });
  }
  std::string_view variant() const override { return "gemm-softmax-gemm"; }

 private:
  // Present key or value ([batch, kv_heads, total_seq, size]): past's rows, then the new ones.
  template <class T>
  static void write_present(const AttentionPlan& p, const T* past, const T* cur, HeadStrides cur_strides, int64_t size,
                            T* out) {
    const HeadStrides o = p.present_strides(size);
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.kv_heads; ++h) {
        T* dst = out + b * o.batch + h * o.head;
        if (past) std::copy_n(past + (b * p.kv_heads + h) * p.past_seq * size, p.past_seq * size, dst);
        for (int64_t t = 0; t < p.kv_seq; ++t)
          std::copy_n(cur + b * cur_strides.batch + h * cur_strides.head + t * cur_strides.seq, size,
                      dst + (p.past_seq + t) * size);
      }
  }

  // Elements in the compute type: the tensor's own memory, or a converted copy in `buf`.
  template <class T, class C>
  static const C* in_compute_type(const T* data, int64_t n, std::vector<C>& buf) {
    if constexpr (std::is_same_v<T, C>) {
      return data;
    } else {
      buf.resize(static_cast<std::size_t>(n));
      for (int64_t i = 0; i < n; ++i) buf[static_cast<std::size_t>(i)] = static_cast<C>(data[i]);
      return buf.data();
    }
  }

  // Key or value heads in the compute type: K or V itself without a past, else the present
  // rows (written to `present_out` when the model asks for them).
  template <class T, class C>
  static HeadView<C> key_or_value(KernelContext& ctx, const AttentionPlan& p, std::size_t input, HeadStrides strides,
                                  int64_t size, T* present_out, std::vector<T>& present_buf, std::vector<C>& buf) {
    const Tensor& cur = ctx.input(input);
    const bool with_past = ctx.has_input(input + 3);
    if (present_out)
      write_present<T>(p, with_past ? ctx.input(input + 3).data_as<T>() : nullptr, cur.data_as<T>(), strides, size,
                       present_out);
    if (!with_past) return {in_compute_type<T, C>(cur.data_as<T>(), cur.numel(), buf), strides};
    const int64_t n = p.batch * p.kv_heads * p.total_seq * size;
    const T* present = present_out;
    if (!present) {
      present_buf.resize(static_cast<std::size_t>(n));
      write_present<T>(p, ctx.input(input + 3).data_as<T>(), cur.data_as<T>(), strides, size, present_buf.data());
      present = present_buf.data();
    }
    return {in_compute_type<T, C>(present, n, buf), p.present_strides(size)};
  }

  template <class T>
  Expected<void> run(KernelContext& ctx, const AttentionPlan& p) const {
    using C = ComputeType<T>;
    auto y = ctx.output(0, ctx.input(0).dtype(), p.y_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    T* present[2] = {nullptr, nullptr};
    for (std::size_t o : {1, 2})
      if (ctx.wants_output(o)) {
        auto t = ctx.output(o, ctx.input(0).dtype(), o == 1 ? p.present_key_shape : p.present_value_shape);
        if (!t) return std::unexpected(std::move(t.error()));
        present[o - 1] = t->mut_as<T>();
      }
    T* qk_out = nullptr;
    if (ctx.wants_output(3)) {
      auto t = ctx.output(3, ctx.input(0).dtype(), p.qk_shape);
      if (!t) return std::unexpected(std::move(t.error()));
      qk_out = t->mut_as<T>();
    }

    std::vector<C> q_buf, k_buf, v_buf, y_buf, mask_buf;
    std::vector<T> present_k_buf, present_v_buf;
    const HeadView<C> q{in_compute_type<T, C>(ctx.input(0).data_as<T>(), ctx.input(0).numel(), q_buf), p.q};
    const HeadView<C> k = key_or_value<T, C>(ctx, p, 1, p.k, p.head_size, present[0], present_k_buf, k_buf);
    const HeadView<C> v = key_or_value<T, C>(ctx, p, 2, p.v, p.v_head_size, present[1], present_v_buf, v_buf);
    // The mask as scores to add: bool true -> 0, false -> -inf.
    const C* mask = nullptr;
    if (ctx.has_input(3)) {
      const Tensor& m = ctx.input(3);
      if (m.dtype() == DType::kBool) {
        mask_buf.resize(static_cast<std::size_t>(m.numel()));
        const auto* bits = m.data_as<bool>();
        for (int64_t i = 0; i < m.numel(); ++i)
          mask_buf[static_cast<std::size_t>(i)] = bits[i] ? C(0) : -std::numeric_limits<C>::infinity();
        mask = mask_buf.data();
      } else {
        mask = in_compute_type<T, C>(m.data_as<T>(), m.numel(), mask_buf);
      }
    }
    C* y_data;
    if constexpr (std::is_same_v<T, C>) {
      y_data = y->template mut_as<C>();
    } else {
      y_buf.resize(static_cast<std::size_t>(shape_numel(p.y_shape)));
      y_data = y_buf.data();
    }

    const int64_t* nonpad = p.nonpad_lengths ? ctx.input(6).data_as<int64_t>() : nullptr;
    const int64_t pairs = p.batch * p.q_heads, rows = p.q_seq, keys = p.total_seq;
    const Parallel& parallel = ctx.parallel();
    // Every batch's and key/value head's K and V, shared by the query heads of its group and by
    // every block of query rows (packed per block and head, the packing took a third of a causal
    // Attention's time over 128 tokens). Packed into the calling thread's operands of the last
    // run, whose memory the packs reuse (new memory per run faulted its pages in every time).
    thread_local std::vector<KeyOperand<C>> k_operands, v_operands;
    std::vector<KeyOperand<C>>& k_of = k_operands;  // this thread's (in the loop, each worker's own)
    std::vector<KeyOperand<C>>& v_of = v_operands;
    k_of.resize(static_cast<std::size_t>(p.batch * p.kv_heads));
    v_of.resize(k_of.size());
    parallel.for_range(static_cast<int64_t>(k_of.size()), 1, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t b = i / p.kv_heads, kh = i % p.kv_heads;
        KeyOperand<C>& ki = k_of[static_cast<std::size_t>(i)];
        KeyOperand<C>& vi = v_of[static_cast<std::size_t>(i)];
        ki.rows = k.at(b, kh), ki.ld = k.strides.seq;
        vi.rows = v.at(b, kh), vi.ld = v.strides.seq;
        if constexpr (std::is_same_v<C, float>) {
          pack_into(ki.packed, ki.rows, ki.ld, true, p.head_size, keys);
          pack_into(vi.packed, vi.rows, vi.ld, false, keys, p.v_head_size);
        }
      }
    });
    auto one_pair = [&](int64_t pair, std::vector<C>& scores, const Parallel& par) {
      const int64_t b = pair / p.q_heads, h = pair % p.q_heads;
      const auto kv = static_cast<std::size_t>(b * p.kv_heads + p.kv_head_of(h));
      scores.resize(static_cast<std::size_t>(rows * keys));
      C* s = scores.data();
      T* snapshot = qk_out ? qk_out + pair * rows * keys : nullptr;
      C* y_pair = y_data + b * p.y.batch + h * p.y.head;
      const int64_t valid = nonpad ? nonpad[b] : keys;
      // Hidden keys are a suffix of each row. Without a qk output to fill, rows go in blocks and
      // each block scores only the keys its last row sees (causal prefill: about half of them).
      const bool skip_hidden = !snapshot && (attrs_.causal || valid < keys);
      const int64_t block = skip_hidden ? kRowBlock : std::max<int64_t>(rows, 1);
      for (int64_t r0 = 0; r0 < rows; r0 += block) {
        const int64_t r1 = std::min(rows, r0 + block);
        const int64_t cols = skip_hidden ? p.visible_keys(attrs_.causal, valid, r1 - 1) : keys;
        if (cols == 0) {  // no key for any of these queries: NaN, as softmax over nothing gives
          for (int64_t r = r0; r < r1; ++r)
            std::fill_n(y_pair + r * p.y.seq, p.v_head_size, std::numeric_limits<C>::quiet_NaN());
          continue;
        }
        // fn(score) over the block's scored keys.
        auto each = [&](auto&& fn) {
          for (int64_t r = r0; r < r1; ++r)
            for (int64_t t = 0; t < cols; ++t) fn(r, t, s[r * keys + t]);
        };
        // Each stage's scores in T, as the op's function body holds them between its nodes (a
        // no-op for float and double), and the stage qk_matmul_output_mode asks for.
        auto end_stage = [&](int64_t mode) {
          if constexpr (!std::is_same_v<T, C>)
            if (mode != 2 || !attrs_.softmax_in_float) each([](int64_t, int64_t, C& v) { v = static_cast<C>(static_cast<T>(v)); });
          if (snapshot && attrs_.qk_output_mode == mode)
            each([&](int64_t r, int64_t t, C& v) { snapshot[r * keys + t] = static_cast<T>(v); });
        };
        k_of[kv].product(r1 - r0, cols, p.head_size, static_cast<C>(p.scale), q.at(b, h) + r0 * p.q.seq, p.q.seq,
                         true, s + r0 * keys, keys, par);
        end_stage(0);
        if (attrs_.softcap > 0) {
          const C cap = static_cast<C>(attrs_.softcap);
          each([cap](int64_t, int64_t, C& v) { v = cap * std::tanh(v / cap); });
        }
        end_stage(1);
        if (mask) {
          const auto& ms = p.mask_strides;
          const C* mb = mask + b * ms[0] + h * ms[1];
          for (int64_t r = r0; r < r1; ++r) {
            C* row = s + r * keys;
            const C* mask_row = mb + r * ms[2];
            if (ms[3] == 1)
              for (int64_t t = 0; t < cols; ++t) row[t] += mask_row[t];
            else
              for (int64_t t = 0; t < cols; ++t) row[t] += mask_row[t * ms[3]];
          }
        }
        // The keys hidden from query r (causal, padding) are the suffix from visible_keys(r):
        // -inf there, and the softmax runs over the prefix only (the suffix's weights are 0).
        const bool hides = attrs_.causal || valid < keys;
        auto visible = [&](int64_t r) { return hides ? std::min(cols, p.visible_keys(attrs_.causal, valid, r)) : cols; };
        for (int64_t r = r0; r < r1; ++r)
          std::fill(s + r * keys + visible(r), s + r * keys + cols, -std::numeric_limits<C>::infinity());
        end_stage(2);
        for (int64_t r = r0; r < r1; ++r) {
          C* row = s + r * keys;
          const int64_t n = visible(r);
          if (n == 0) {  // softmax over no finite score
            std::fill(row, row + cols, std::numeric_limits<C>::quiet_NaN());
            continue;
          }
          softmax_row(row, n);
          std::fill(row + n, row + cols, C(0));
        }
        end_stage(3);
        v_of[kv].product(r1 - r0, p.v_head_size, cols, C(1), s + r0 * keys, keys, false, y_pair + r0 * p.y.seq,
                         p.y.seq, par);
      }
    };
    if (pairs >= parallel.threads()) {
      parallel.for_range(pairs, 1, [&](int64_t begin, int64_t end) {
        const SerialParallel serial;
        // Kept per thread between runs (a chunk runs no other loop meanwhile): allocated per chunk,
        // 64 KiB of scores over 128 tokens were fresh pages in some runs.
        thread_local std::vector<C> scores;
        for (int64_t pair = begin; pair < end; ++pair) one_pair(pair, scores, serial);
      });
    } else {
      std::vector<C> scores;
      for (int64_t pair = 0; pair < pairs; ++pair) one_pair(pair, scores, parallel);
    }
    if constexpr (!std::is_same_v<T, C>) {
      T* out = y->template mut_as<T>();
      for (std::size_t i = 0; i < y_buf.size(); ++i) out[i] = static_cast<T>(y_buf[i]);
    }
    return {};
  }

  AttentionAttrs attrs_;
};

// Attention-23, and -24 with its nonpad_kv_seqlen input.
KernelDef attention_def(int64_t since) {
  return KernelDef{{"", "Attention", since}, 0, check_attention, [](const NodeContext& ctx) {
                     return make_kernel<AttentionKernel>(AttentionAttrs::of(ctx.attrs()));
                   }};
}

}  // namespace

std::vector<KernelDef> attention_kernels() { return {attention_def(23), attention_def(24)}; }

}  // namespace nxrt::cpu
