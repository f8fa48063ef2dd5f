// Recurrent layers RNN, GRU and LSTM (float, double): every direction, sequence_lens, initial
// states, activations, clip, layout 0 and 1; the input projections run as one GEMM.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/recurrent.h"

namespace nxrt::cpu {
namespace {

// The shared checks (nxrt/ep/recurrent.h), and the cpu EP's dtypes: float and double, every
// float input of one type, sequence_lens int32.
KernelMatch check_recurrent(const NodeContext& ctx, RecurrentCell cell) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  for (std::size_t i : {1, 2, 3, 5, 6, 7}) {
    if (i >= ctx.input_count() || !ctx.has_input(i)) continue;
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "{}: input {} has type {} and X {}; they must match", op,
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  if (ctx.input_count() > 4 && ctx.has_input(4)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 4, {DType::kInt32}));
  return check_recurrent_node(ctx, cell);
}

// C (m x n) = A (m x k, row stride lda) * B^T, with B n x k contiguous; adds to C when
// `accumulate`. Float runs on the packed GEMM.
template <class T>
void multiply_bt(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b, T* c, bool accumulate,
                 const Parallel& parallel) {
  if (m == 0 || n == 0) return;
  if constexpr (std::is_same_v<T, float>) {
    gemm(m, n, k, 1.f, GemmOperand::matrix(a, lda), GemmOperand::matrix(b, k, true), accumulate ? 1.f : 0.f, c, n,
         parallel);
  } else {
    parallel.for_range(m, 1, [&](int64_t r0, int64_t r1) {
      for (int64_t i = r0; i < r1; ++i)
        for (int64_t j = 0; j < n; ++j) {
          T sum = accumulate ? c[i * n + j] : T(0);
          for (int64_t p = 0; p < k; ++p) sum += a[i * lda + p] * b[j * k + p];
          c[i * n + j] = sum;
        }
    });
  }
}

class RecurrentKernel final : public Kernel {
 public:
  explicit RecurrentKernel(RecurrentAttrs attrs) : attrs_(std::move(attrs)) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(FloatTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }
  std::string_view variant() const override { return "recurrent-gemm"; }

 private:
  const Tensor* optional_input(const KernelContext& ctx, std::size_t i) const {
    return i < ctx.input_count() && ctx.has_input(i) ? &ctx.input(i) : nullptr;
  }
  std::optional<int64_t> optional_numel(const KernelContext& ctx, std::size_t i) const {
    const Tensor* t = optional_input(ctx, i);
    return t ? std::optional<int64_t>(t->numel()) : std::nullopt;
  }

  template <class T>
  Expected<void> run(KernelContext& ctx) {
    auto dims = recurrent_dims(attrs_, {ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(),
                                        optional_numel(ctx, 3), optional_numel(ctx, 4), optional_numel(ctx, 5),
                                        optional_numel(ctx, 6), optional_numel(ctx, 7)});
    if (!dims) return std::unexpected(dims.error());
    const RecurrentDims& d = *dims;
    const Shape y_shape = recurrent_y_shape(attrs_, d);
    const Shape state_shape = recurrent_state_shape(attrs_, d);
    T* y = nullptr;
    std::array<T*, 2> final_state{nullptr, nullptr};  // Y_h, Y_c
    if (ctx.output_count() > 0 && ctx.wants_output(0)) {
      auto t = ctx.output(0, dtype_of<T>(), y_shape);
      if (!t) return std::unexpected(t.error());
      y = t->template mut_as<T>();
    }
    for (std::size_t i = 1; i < std::min<std::size_t>(ctx.output_count(), attrs_.cell == RecurrentCell::kLstm ? 3 : 2);
         ++i) {
      if (!ctx.wants_output(i)) continue;
      auto t = ctx.output(i, dtype_of<T>(), state_shape);
      if (!t) return std::unexpected(t.error());
      final_state[i - 1] = t->template mut_as<T>();
    }
    // The batch-major input as sequence-major rows.
    const T* x = ctx.input(0).data_as<T>();
    std::vector<T> x_seq;
    if (attrs_.batch_first) {
      x_seq.resize(static_cast<std::size_t>(d.seq * d.batch * d.input));
      for (int64_t b = 0; b < d.batch; ++b)
        for (int64_t t = 0; t < d.seq; ++t)
          std::copy_n(x + (b * d.seq + t) * d.input, d.input, x_seq.data() + (t * d.batch + b) * d.input);
      x = x_seq.data();
    }
    std::vector<int64_t> lengths(static_cast<std::size_t>(d.batch), d.seq);
    if (auto* s = optional_input(ctx, 4))
      for (int64_t b = 0; b < d.batch; ++b)
        lengths[static_cast<std::size_t>(b)] = std::clamp<int64_t>(s->data_as<int32_t>()[b], 0, d.seq);
    if (y) std::fill_n(y, shape_numel(y_shape), T(0));
    for (int64_t dir = 0; dir < d.dirs; ++dir) run_direction<T>(ctx, d, dir, x, lengths, y, final_state);
    return {};
  }

  template <class T>
  void run_direction(KernelContext& ctx, const RecurrentDims& d, int64_t dir, const T* x, const std::vector<int64_t>& lengths,
                     T* y, const std::array<T*, 2>& final_state) {
    const int64_t gh = d.gates * d.hidden, H = d.hidden;
    const bool reverse = attrs_.reversed(dir);
    const bool lstm = attrs_.cell == RecurrentCell::kLstm, gru = attrs_.cell == RecurrentCell::kGru;
    const T* w = ctx.input(1).data_as<T>() + dir * gh * d.input;
    const T* r = ctx.input(2).data_as<T>() + dir * gh * H;
    const T* bias = optional_input(ctx, 3) ? ctx.input(3).data_as<T>() + dir * 2 * gh : nullptr;
    const T* peep = optional_input(ctx, 7) ? ctx.input(7).data_as<T>() + dir * 3 * H : nullptr;
    const RnnActivation* act = attrs_.activations_of(dir);
    auto clipped = [&](T v) { return attrs_.clip ? std::clamp(v, T(-*attrs_.clip), T(*attrs_.clip)) : v; };
    auto f = [&](T v) { return act[0](clipped(v)); };
    auto g = [&](T v) { return act[attrs_.cell == RecurrentCell::kRnn ? 0 : 1](clipped(v)); };
    auto h_act = [&](T v) { return act[lstm ? 2 : 0](clipped(v)); };

    // Input projections of every step at once, with both biases except GRU's recurrent
    // h bias under linear_before_reset (it goes inside the reset product).
    std::vector<T> xw(static_cast<std::size_t>(d.seq * d.batch * gh));
    multiply_bt<T>(d.seq * d.batch, gh, d.input, x, d.input, w, xw.data(), false, ctx.parallel());
    if (bias) {
      std::vector<T> b(static_cast<std::size_t>(gh));
      for (int64_t j = 0; j < gh; ++j) {
        const bool recurrent_inside = gru && attrs_.linear_before_reset && j >= 2 * H;
        b[static_cast<std::size_t>(j)] = bias[j] + (recurrent_inside ? T(0) : bias[gh + j]);
      }
      for (int64_t row = 0; row < d.seq * d.batch; ++row)
        for (int64_t j = 0; j < gh; ++j) xw[static_cast<std::size_t>(row * gh + j)] += b[static_cast<std::size_t>(j)];
    }
    auto initial = [&](std::size_t i, std::vector<T>& state) {
      state.assign(static_cast<std::size_t>(d.batch * H), T(0));
      if (auto* t = optional_input(ctx, i))
        for (int64_t b = 0; b < d.batch; ++b)
          std::copy_n(t->data_as<T>() + recurrent_state_offset(attrs_, d, dir, b), H, state.data() + b * H);
    };
    std::vector<T> h, c, hr(static_cast<std::size_t>(d.batch * gh)), reset_h, reset_hr;
    initial(5, h);
    if (lstm) initial(6, c);
    if (gru && !attrs_.linear_before_reset) {
      reset_h.resize(static_cast<std::size_t>(d.batch * H));
      reset_hr.resize(static_cast<std::size_t>(d.batch * H));
    }
    std::vector<T> h_next(h.size());

    for (int64_t step = 0; step < d.seq; ++step) {
      const int64_t t = reverse ? d.seq - 1 - step : step;
      multiply_bt<T>(d.batch, gh, H, h.data(), H, r, hr.data(), false, ctx.parallel());
      if (gru && attrs_.linear_before_reset && bias)
        for (int64_t b = 0; b < d.batch; ++b)
          for (int64_t j = 0; j < H; ++j) hr[static_cast<std::size_t>(b * gh + 2 * H + j)] += bias[gh + 2 * H + j];
      if (gru && !attrs_.linear_before_reset) {
        // (r . H) * Rh^T needs the reset gate first.
        for (int64_t b = 0; b < d.batch; ++b)
          for (int64_t j = 0; j < H; ++j) {
            const auto k = static_cast<std::size_t>(b * gh + H + j);
            const T rg = f(xw[static_cast<std::size_t>(t * d.batch * gh) + k] + hr[k]);
            reset_h[static_cast<std::size_t>(b * H + j)] = rg * h[static_cast<std::size_t>(b * H + j)];
          }
        multiply_bt<T>(d.batch, H, H, reset_h.data(), H, r + 2 * H * H, reset_hr.data(), false, ctx.parallel());
      }
      for (int64_t b = 0; b < d.batch; ++b) {
        const bool active = t < lengths[static_cast<std::size_t>(b)];
        const T* xg = xw.data() + (t * d.batch + b) * gh;
        const T* hg = hr.data() + b * gh;
        T* hp = h.data() + b * H;
        T* hn = h_next.data() + b * H;
        for (int64_t j = 0; j < H; ++j) {
          if (!active) {
            hn[j] = hp[j];
            continue;
          }
          if (attrs_.cell == RecurrentCell::kRnn) {
            hn[j] = f(xg[j] + hg[j]);
          } else if (gru) {
            const T z = f(xg[j] + hg[j]);
            T pre;
            if (attrs_.linear_before_reset) pre = xg[2 * H + j] + f(xg[H + j] + hg[H + j]) * hg[2 * H + j];
            else pre = xg[2 * H + j] + reset_hr[static_cast<std::size_t>(b * H + j)];
            hn[j] = (T(1) - z) * g(pre) + z * hp[j];
          } else {
            T& cell = c[static_cast<std::size_t>(b * H + j)];
            const T i_gate = f(xg[j] + hg[j] + (peep ? peep[j] * cell : T(0)));
            const T f_gate = attrs_.input_forget
                                 ? T(1) - i_gate
                                 : f(xg[2 * H + j] + hg[2 * H + j] + (peep ? peep[2 * H + j] * cell : T(0)));
            const T c_gate = g(xg[3 * H + j] + hg[3 * H + j]);
            cell = f_gate * cell + i_gate * c_gate;
            const T o_gate = f(xg[H + j] + hg[H + j] + (peep ? peep[H + j] * cell : T(0)));
            hn[j] = o_gate * h_act(cell);
          }
        }
        if (y && active) std::copy_n(hn, H, y + recurrent_y_offset(attrs_, d, t, dir, b));
      }
      h.swap(h_next);
    }
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t offset = recurrent_state_offset(attrs_, d, dir, b);
      if (final_state[0]) std::copy_n(h.data() + b * H, H, final_state[0] + offset);
      if (final_state[1]) std::copy_n(c.data() + b * H, H, final_state[1] + offset);
    }
  }

  RecurrentAttrs attrs_;
};

KernelMatch check_rnn(const NodeContext& ctx) { return check_recurrent(ctx, RecurrentCell::kRnn); }
KernelMatch check_gru(const NodeContext& ctx) { return check_recurrent(ctx, RecurrentCell::kGru); }
KernelMatch check_lstm(const NodeContext& ctx) { return check_recurrent(ctx, RecurrentCell::kLstm); }

KernelDef recurrent_def(const char* op, RecurrentCell cell, int64_t since, int64_t until, KernelCheck check) {
  return KernelDef{{"", op, since}, until, std::move(check), [cell](const NodeContext& ctx) {
                     return make_kernel<RecurrentKernel>(*read_recurrent_attrs(ctx.attrs(), cell));
                   }};
}

}  // namespace

std::vector<KernelDef> rnn_kernels() {
  return {
      recurrent_def("RNN", RecurrentCell::kRnn, 1, 6, check_rnn),
      recurrent_def("RNN", RecurrentCell::kRnn, 7, 13, check_rnn),
      recurrent_def("RNN", RecurrentCell::kRnn, 14, 0, check_rnn),
      recurrent_def("GRU", RecurrentCell::kGru, 1, 2, check_gru),
      recurrent_def("GRU", RecurrentCell::kGru, 3, 6, check_gru),
      recurrent_def("GRU", RecurrentCell::kGru, 7, 13, check_gru),
      recurrent_def("GRU", RecurrentCell::kGru, 14, 0, check_gru),
      recurrent_def("LSTM", RecurrentCell::kLstm, 1, 6, check_lstm),
      recurrent_def("LSTM", RecurrentCell::kLstm, 7, 13, check_lstm),
      recurrent_def("LSTM", RecurrentCell::kLstm, 14, 0, check_lstm),
  };
}

}  // namespace nxrt::cpu
