// Recurrent layers RNN, GRU and LSTM (float, double): every direction, sequence_lens, initial
// states, activations, clip, layout 0 and 1; the input projections run as one GEMM.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "common/gemm.h"
#include "common/kernel_util.h"
#include "common/rnn_activation.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// Gates per cell (the row blocks of W and R): RNN i; GRU z, r, h; LSTM i, o, f, c.
constexpr int64_t gate_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
// Activations per direction: RNN f; GRU f, g; LSTM f, g, h.
constexpr std::size_t activation_count(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }

std::vector<std::string> default_activations(Cell cell) {
  if (cell == Cell::kRnn) return {"Tanh"};
  if (cell == Cell::kGru) return {"Sigmoid", "Tanh"};
  return {"Sigmoid", "Tanh", "Tanh"};
}

// The attributes of a node, validated by check_recurrent.
struct RecurrentAttrs {
  Cell cell = Cell::kRnn;
  std::string direction = "forward";
  int64_t hidden = 0;  // 0: taken from R at run time
  std::vector<RnnActivation> activations;  // activation_count per direction, per direction
  std::optional<float> clip;
  bool linear_before_reset = false;
  bool input_forget = false;
  bool batch_first = false;  // layout 1

  int64_t directions() const { return direction == "bidirectional" ? 2 : 1; }
};

std::expected<RecurrentAttrs, std::string> read_recurrent_attrs(const NodeContext& ctx, Cell cell) {
  const AttributeMap& a = ctx.attrs();
  RecurrentAttrs r;
  r.cell = cell;
  r.direction = a.string_or("direction", "forward");
  if (r.direction != "forward" && r.direction != "reverse" && r.direction != "bidirectional")
    return std::unexpected(
        fmt::format("direction '{}' is not an ONNX value; use forward, reverse or bidirectional", r.direction));
  r.hidden = a.int_or("hidden_size", 0);
  auto names = a.get_strings("activations").value_or(default_activations(cell));
  const std::size_t per_direction = activation_count(cell);
  // One direction's list serves both directions of a bidirectional layer.
  if (r.directions() == 2 && names.size() == per_direction) {
    const std::vector<std::string> one = names;
    names.insert(names.end(), one.begin(), one.end());
  }
  if (names.size() != per_direction * static_cast<std::size_t>(r.directions()))
    return std::unexpected(fmt::format("activations has {} names; {} direction(s) need {}", names.size(),
                                       r.directions(), per_direction * static_cast<std::size_t>(r.directions())));
  auto acts = parse_rnn_activations(names, a.get_floats("activation_alpha").value_or(std::vector<float>{}),
                                    a.get_floats("activation_beta").value_or(std::vector<float>{}));
  if (!acts) return std::unexpected(acts.error());
  r.activations = std::move(*acts);
  r.clip = a.get_float("clip");
  r.linear_before_reset = a.int_or("linear_before_reset", 0) != 0;
  r.input_forget = a.int_or("input_forget", 0) != 0;
  r.batch_first = a.int_or("layout", 0) != 0;
  return r;
}

// Inputs X, W, R, B, sequence_lens, initial_h, initial_c, P; outputs Y, Y_h, Y_c.
KernelMatch check_recurrent(const NodeContext& ctx, Cell cell) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kFloat32, DType::kFloat64}));
  for (std::size_t i : {1, 2, 3, 5, 6, 7}) {
    if (i >= ctx.input_count() || !ctx.has_input(i)) continue;
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "{}: input {} has type {} and X {}; they must match", op,
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  if (ctx.input_count() > 4 && ctx.has_input(4)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 4, {DType::kInt32}));
  NXRT_REQUIRE(ctx.input_rank(0).value_or(3) == 3, "{}: X has rank {}; it must be 3", op, *ctx.input_rank(0));
  NXRT_REQUIRE(ctx.input_rank(1).value_or(3) == 3 && ctx.input_rank(2).value_or(3) == 3,
               "{}: W and R must have rank 3, got {} and {}", op, ctx.input_rank(1).value_or(3),
               ctx.input_rank(2).value_or(3));
  NXRT_REQUIRE(ctx.opset() >= 14 || ctx.attrs().int_or("layout", 0) == 0,
               "{}: the layout attribute needs opset 14, the node has opset {}", op, ctx.opset());
  const int64_t layout = ctx.attrs().int_or("layout", 0);
  NXRT_REQUIRE(layout == 0 || layout == 1, "{}: layout {} is not 0 or 1", op, layout);
  auto attrs = read_recurrent_attrs(ctx, cell);
  NXRT_REQUIRE(attrs.has_value(), "{}: {}", op, attrs.error());
  NXRT_REQUIRE(!attrs->clip || *attrs->clip > 0, "{}: clip {} must be positive", op, attrs->clip.value_or(0));
  auto w = ctx.input_static_shape(1);
  if (!w) return KernelMatch::supported();
  const int64_t gates = gate_count(cell);
  NXRT_REQUIRE((*w)[0] == attrs->directions(), "{}: W {} has {} directions; direction '{}' needs {}", op,
               shape_to_string(*w), (*w)[0], attrs->direction, attrs->directions());
  NXRT_REQUIRE(attrs->hidden == 0 || (*w)[1] == gates * attrs->hidden,
               "{}: W {} has {} rows; hidden_size {} needs {}", op, shape_to_string(*w), (*w)[1], attrs->hidden,
               gates * attrs->hidden);
  auto x = ctx.input_static_shape(0);
  if (!x) return KernelMatch::supported();
  Cost cost;
  // Per step and batch row: the input and recurrent products of every gate.
  const int64_t hidden = (*w)[1] / gates;
  cost.flops = 2.0 * static_cast<double>(attrs->directions() * (*x)[0] * (*x)[1] * gates * hidden *
                                         ((*w)[2] + hidden));
  return KernelMatch::supported(cost);
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
  // Sizes of one run.
  struct Dims {
    int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1, gates = 1;
  };

  const Tensor* optional_input(const KernelContext& ctx, std::size_t i) const {
    return i < ctx.input_count() && ctx.has_input(i) ? &ctx.input(i) : nullptr;
  }

  Expected<Dims> plan(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    const Tensor& r = ctx.input(2);
    if (x.shape().size() != 3 || r.shape().size() != 3)
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: X is {} and R {}; both must have rank 3", cell_name(), shape_to_string(x.shape()),
                              shape_to_string(r.shape())),
                  "the model's shapes are inconsistent", "check X and R");
    Dims d;
    d.gates = gate_count(attrs_.cell);
    d.dirs = attrs_.directions();
    d.seq = attrs_.batch_first ? x.shape()[1] : x.shape()[0];
    d.batch = attrs_.batch_first ? x.shape()[0] : x.shape()[1];
    d.input = x.shape()[2];
    d.hidden = attrs_.hidden ? attrs_.hidden : r.shape()[2];
    auto bad = [&](std::string what) {
      return fail(ErrorCode::kRuntime, fmt::format("{}: {}", cell_name(), what),
                  "the shapes of the inputs disagree with each other or with the attributes",
                  "check X, W, R, B, initial_h and the hidden_size and direction attributes");
    };
    if (w.shape() != Shape{d.dirs, d.gates * d.hidden, d.input})
      return bad(fmt::format("W is {}, expected {}", shape_to_string(w.shape()),
                             shape_to_string(Shape{d.dirs, d.gates * d.hidden, d.input})));
    if (r.shape() != Shape{d.dirs, d.gates * d.hidden, d.hidden})
      return bad(fmt::format("R is {}, expected {}", shape_to_string(r.shape()),
                             shape_to_string(Shape{d.dirs, d.gates * d.hidden, d.hidden})));
    if (auto* b = optional_input(ctx, 3); b && b->numel() != d.dirs * 2 * d.gates * d.hidden)
      return bad(fmt::format("B is {}, expected [{},{}]", shape_to_string(b->shape()), d.dirs, 2 * d.gates * d.hidden));
    if (auto* s = optional_input(ctx, 4); s && s->numel() != d.batch)
      return bad(fmt::format("sequence_lens has {} values for batch {}", s->numel(), d.batch));
    for (std::size_t i : {5, 6})
      if (auto* h = optional_input(ctx, i); h && h->numel() != d.dirs * d.batch * d.hidden)
        return bad(fmt::format("input {} is {}; expected {} values (directions x batch x hidden)", i,
                               shape_to_string(h->shape()), d.dirs * d.batch * d.hidden));
    if (auto* p = optional_input(ctx, 7); p && p->numel() != d.dirs * 3 * d.hidden)
      return bad(fmt::format("P is {}, expected [{},{}]", shape_to_string(p->shape()), d.dirs, 3 * d.hidden));
    return d;
  }

  const char* cell_name() const {
    return attrs_.cell == Cell::kRnn ? "RNN" : attrs_.cell == Cell::kGru ? "GRU" : "LSTM";
  }

  template <class T>
  Expected<void> run(KernelContext& ctx) {
    auto dims = plan(ctx);
    if (!dims) return std::unexpected(dims.error());
    const Dims& d = *dims;
    // Outputs in layout 0 (Y [seq, dirs, batch, hidden]) or 1 (Y [batch, seq, dirs, hidden]).
    const Shape y_shape = attrs_.batch_first ? Shape{d.batch, d.seq, d.dirs, d.hidden}
                                             : Shape{d.seq, d.dirs, d.batch, d.hidden};
    const Shape state_shape = attrs_.batch_first ? Shape{d.batch, d.dirs, d.hidden} : Shape{d.dirs, d.batch, d.hidden};
    T* y = nullptr;
    std::array<T*, 2> final_state{nullptr, nullptr};  // Y_h, Y_c
    if (ctx.output_count() > 0 && ctx.wants_output(0)) {
      auto t = ctx.output(0, dtype_of<T>(), y_shape);
      if (!t) return std::unexpected(t.error());
      y = t->template mut_as<T>();
    }
    for (std::size_t i = 1; i < std::min<std::size_t>(ctx.output_count(), attrs_.cell == Cell::kLstm ? 3 : 2); ++i) {
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
  void run_direction(KernelContext& ctx, const Dims& d, int64_t dir, const T* x, const std::vector<int64_t>& lengths,
                     T* y, const std::array<T*, 2>& final_state) {
    const int64_t gh = d.gates * d.hidden, H = d.hidden;
    const bool reverse = attrs_.direction == "reverse" || dir == 1;
    const bool lstm = attrs_.cell == Cell::kLstm, gru = attrs_.cell == Cell::kGru;
    const T* w = ctx.input(1).data_as<T>() + dir * gh * d.input;
    const T* r = ctx.input(2).data_as<T>() + dir * gh * H;
    const T* bias = optional_input(ctx, 3) ? ctx.input(3).data_as<T>() + dir * 2 * gh : nullptr;
    const T* peep = optional_input(ctx, 7) ? ctx.input(7).data_as<T>() + dir * 3 * H : nullptr;
    const RnnActivation* act = attrs_.activations.data() + dir * static_cast<int64_t>(activation_count(attrs_.cell));
    auto clipped = [&](T v) { return attrs_.clip ? std::clamp(v, T(-*attrs_.clip), T(*attrs_.clip)) : v; };
    auto f = [&](T v) { return act[0](clipped(v)); };
    auto g = [&](T v) { return act[attrs_.cell == Cell::kRnn ? 0 : 1](clipped(v)); };
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
      if (auto* t = optional_input(ctx, i)) std::copy_n(t->data_as<T>() + dir * d.batch * H, d.batch * H, state.data());
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
          if (attrs_.cell == Cell::kRnn) {
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
        if (y && active) {
          const int64_t offset =
              attrs_.batch_first ? ((b * d.seq + t) * d.dirs + dir) * H : ((t * d.dirs + dir) * d.batch + b) * H;
          std::copy_n(hn, H, y + offset);
        }
      }
      h.swap(h_next);
    }
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t offset = attrs_.batch_first ? (b * d.dirs + dir) * H : (dir * d.batch + b) * H;
      if (final_state[0]) std::copy_n(h.data() + b * H, H, final_state[0] + offset);
      if (final_state[1]) std::copy_n(c.data() + b * H, H, final_state[1] + offset);
    }
  }

  RecurrentAttrs attrs_;
};

KernelMatch check_rnn(const NodeContext& ctx) { return check_recurrent(ctx, Cell::kRnn); }
KernelMatch check_gru(const NodeContext& ctx) { return check_recurrent(ctx, Cell::kGru); }
KernelMatch check_lstm(const NodeContext& ctx) { return check_recurrent(ctx, Cell::kLstm); }

KernelDef recurrent_def(const char* op, Cell cell, int64_t since, int64_t until, KernelCheck check) {
  return KernelDef{{"", op, since}, until, std::move(check), [cell](const NodeContext& ctx) {
                     return make_kernel<RecurrentKernel>(*read_recurrent_attrs(ctx, cell));
                   }};
}

}  // namespace

std::vector<KernelDef> rnn_kernels() {
  return {
      recurrent_def("RNN", Cell::kRnn, 1, 6, check_rnn),
      recurrent_def("RNN", Cell::kRnn, 7, 13, check_rnn),
      recurrent_def("RNN", Cell::kRnn, 14, 0, check_rnn),
      recurrent_def("GRU", Cell::kGru, 1, 2, check_gru),
      recurrent_def("GRU", Cell::kGru, 3, 6, check_gru),
      recurrent_def("GRU", Cell::kGru, 7, 13, check_gru),
      recurrent_def("GRU", Cell::kGru, 14, 0, check_gru),
      recurrent_def("LSTM", Cell::kLstm, 1, 6, check_lstm),
      recurrent_def("LSTM", Cell::kLstm, 7, 13, check_lstm),
      recurrent_def("LSTM", Cell::kLstm, 14, 0, check_lstm),
  };
}

}  // namespace nxrt::cpu
