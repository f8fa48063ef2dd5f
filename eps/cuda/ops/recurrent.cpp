// RNN, GRU and LSTM (float, float16): every direction, sequence_lens, initial states, the
// activations and clip, peepholes, input_forget, linear_before_reset, layout 0 and 1.
// Per direction, one cuBLASLt product projects every step's input at once; then each step
// runs the recurrent product H·R^T and one generated kernel that applies the gates (GRU
// without linear_before_reset takes a second product and kernel for the reset gate).
#include <fmt/format.h>

#include <array>
#include <utility>

#include "blas.h"
#include "nxrt/ep/recurrent.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

// Inputs X, W, R, B, sequence_lens, initial_h, initial_c, P.
constexpr std::size_t kB = 3, kSequenceLens = 4, kInitialH = 5, kInitialC = 6, kPeepholes = 7;

KernelMatch check_recurrent(const NodeContext& ctx, RecurrentCell cell) {
  NXRT_REQUIRE_MATCH(require_float(ctx, {0, 1, 2, kB, kInitialH, kInitialC, kPeepholes}));
  if (ctx.has_input(kSequenceLens))
    NXRT_REQUIRE(ctx.input_dtype(kSequenceLens) == DType::kInt32, "{}: sequence_lens is {}; ONNX defines it as int32",
                 ctx.node().op_type, dtype_name(ctx.input_dtype(kSequenceLens)));
  return check_recurrent_node(ctx, cell);
}

// CUDA C of activation `a` of float `v`.
std::string activation_body(const RnnActivation& a) {
  const std::string alpha = float_literal(a.alpha), beta = float_literal(a.beta);
  using Kind = RnnActivation::Kind;
  switch (a.kind) {
    case Kind::kRelu: return "fmaxf(v, 0.f)";
    case Kind::kTanh: return "tanhf(v)";
    case Kind::kSigmoid: return "1.f / (1.f + expf(-v))";
    case Kind::kAffine: return fmt::format("{} * v + {}", alpha, beta);
    case Kind::kLeakyRelu: return fmt::format("v >= 0.f ? v : {} * v", alpha);
    case Kind::kThresholdedRelu: return fmt::format("v > {} ? v : 0.f", alpha);
    case Kind::kScaledTanh: return fmt::format("{} * tanhf({} * v)", alpha, beta);
    case Kind::kHardSigmoid: return fmt::format("fminf(fmaxf({} * v + {}, 0.f), 1.f)", alpha, beta);
    case Kind::kElu: return fmt::format("v >= 0.f ? v : {} * (expf(v) - 1.f)", alpha);
    case Kind::kSoftsign: return "v / (1.f + fabsf(v))";
    case Kind::kSoftplus: return "v > 20.f ? v : log1pf(expf(v))";
  }
  return "v";
}

// The generated functions of one direction: its activations (clip applied to their input) and
// the kernels of one step.
std::string direction_code(const RecurrentAttrs& attrs, int64_t dir, const std::string& name, std::string_view t) {
  const RnnActivation* act = attrs.activations_of(dir);
  const std::string clip =
      attrs.clip ? fmt::format("  v = fminf(fmaxf(v, -{0}), {0});\n", float_literal(*attrs.clip)) : std::string();
  std::string code;
  const char* roles[] = {"f", "g", "h"};
  for (std::size_t i = 0; i < recurrent_activation_count(attrs.cell); ++i)
    code += fmt::format("__device__ __forceinline__ float {}_{}(float v) {{\n{}  return {};\n}}\n", name, roles[i], clip,
                        activation_body(act[i]));
  // Each kernel takes one thread per (batch row b, element j). Gate k's parts: the input
  // projection x(k), the recurrent product r(k), W's bias wb(k) and R's rb(k).
  const std::string loop =
      "  const i64 gh = gates * hidden;\n"
      "  for (i64 i = global_index(); i < batch * hidden; i += global_stride()) {\n"
      "    const i64 b = i / hidden, j = i % hidden;\n"
      "    const float hp = ld(h_prev, i);\n"
      "    auto x = [&](int k) { return ld(xw, (xw_row + b * xw_row_step) * gh + k * hidden + j); };\n"
      "    auto r = [&](int k) { return ld(hr, b * hr_width + k * hidden + j); };\n"
      "    auto wb = [&](int k) { return bias ? ld(bias, k * hidden + j) : 0.f; };\n"
      "    auto rb = [&](int k) { return bias ? ld(bias, gh + k * hidden + j) : 0.f; };\n"
      "    auto gate = [&](int k) { return x(k) + wb(k) + r(k) + rb(k); };\n";
  const std::string rows = fmt::format(
      "i64 batch, i64 hidden, i64 gates, const {0}* xw, i64 xw_row, i64 xw_row_step, const {0}* hr, i64 hr_width, "
      "const {0}* bias, const {0}* h_prev",
      t);
  if (attrs.cell == RecurrentCell::kGru && !attrs.linear_before_reset)
    code += fmt::format("extern \"C\" __global__ void {0}_reset({1}, {2}* reset_h) {{\n{3}"
                        "    st(reset_h, i, {0}_f(gate(1)) * hp);\n  }}\n}}\n",
                        name, rows, t, loop);
  std::string body;
  switch (attrs.cell) {
    case RecurrentCell::kRnn: body = fmt::format("    const float hn = {}_f(gate(0));\n", name); break;
    case RecurrentCell::kGru:
      body = fmt::format("    const float z = {}_f(gate(0));\n", name);
      body += attrs.linear_before_reset
                  ? fmt::format("    const float reset = {0}_f(gate(1));\n"
                                "    const float n = {0}_g(x(2) + wb(2) + reset * (r(2) + rb(2)));\n",
                                name)
                  : fmt::format("    const float n = {}_g(x(2) + wb(2) + ld(reset_hr, i) + rb(2));\n", name);
      body += "    const float hn = (1.f - z) * n + z * hp;\n";
      break;
    case RecurrentCell::kLstm:
      body = fmt::format(
          "    const float cp = ld(c, i);\n"
          "    const float ig = {0}_f(gate(0) + (peep ? ld(peep, j) * cp : 0.f));\n"
          "    const float fg = {1};\n"
          "    const float cg = {0}_g(gate(3));\n"
          "    const float cn = fg * cp + ig * cg;\n"
          "    st(c, i, cn);\n"
          "    const float og = {0}_f(gate(1) + (peep ? ld(peep, hidden + j) * cn : 0.f));\n"
          "    const float hn = og * {0}_h(cn);\n",
          name,
          attrs.input_forget ? "1.f - ig" : fmt::format("{}_f(gate(2) + (peep ? ld(peep, 2 * hidden + j) * cp : 0.f))", name));
      break;
  }
  code += fmt::format(
      "extern \"C\" __global__ void {0}_step({1}, const {2}* reset_hr, const {2}* peep, const int* lens, i64 t, "
      "{2}* h_next, {2}* c, {2}* y, i64 y_off, i64 y_row) {{\n{3}"
      "    if (lens && t >= (i64)lens[b]) {{\n"
      "      st(h_next, i, hp);\n"
      "      if (y) st(y, y_off + b * y_row + j, 0.f);\n"
      "      continue;\n"
      "    }}\n{4}"
      "    st(h_next, i, hn);\n"
      "    if (y) st(y, y_off + b * y_row + j, hn);\n"
      "  }}\n}}\n",
      name, rows, t, loop, body);
  return code;
}

Expected<void> build_recurrent(PlanBuilder& b, const Node& node, RecurrentCell cell) {
  auto read = read_recurrent_attrs(node.attributes, cell);
  if (!read) return fail(ErrorCode::kInvalidInput, fmt::format("{}: {}", node.describe(), read.error()));
  const RecurrentAttrs attrs = std::move(*read);
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(float_type(dtype));
  std::array<std::string, 2> kernels;  // per direction: the stem of its generated functions
  for (int64_t dir = 0; dir < attrs.directions(); ++dir) {
    kernels[static_cast<std::size_t>(dir)] = b.unique_name(fmt::format("{}_dir{}", recurrent_cell_name(cell), dir));
    b.add_code(direction_code(attrs, dir, kernels[static_cast<std::size_t>(dir)], t));
  }
  const std::string copy = strided_copy_kernel(b, dtype);
  const bool separate_reset = cell == RecurrentCell::kGru && !attrs.linear_before_reset;
  b.add_step(make_step(node, fmt::format("cublasLt+nvrtc:{}", kernels[0]), [=](StepContext& ctx) -> Expected<void> {
    auto numel = [&](std::size_t i) {
      return ctx.has_input(i) ? std::optional<int64_t>(ctx.input(i).numel()) : std::nullopt;
    };
    auto dims = recurrent_dims(attrs, {ctx.input(0).shape(), ctx.input(1).shape(), ctx.input(2).shape(), numel(kB),
                                       numel(kSequenceLens), numel(kInitialH), numel(kInitialC), numel(kPeepholes)});
    if (!dims) return forward_error(std::move(dims), ctx.where());
    const RecurrentDims& d = *dims;
    const int64_t H = d.hidden, gh = d.gate_rows();
    const std::size_t elem = dtype_size(dtype);
    void* y = nullptr;
    std::array<void*, 2> final_state{nullptr, nullptr};  // Y_h, Y_c
    if (ctx.wants_output(0)) {
      auto out = ctx.output(0, dtype, recurrent_y_shape(attrs, d));
      if (!out) return std::unexpected(out.error());
      y = dev_mut(*out);
    }
    for (std::size_t i = 1; i <= (cell == RecurrentCell::kLstm ? 2u : 1u); ++i)
      if (ctx.wants_output(i)) {
        auto out = ctx.output(i, dtype, recurrent_state_shape(attrs, d));
        if (!out) return std::unexpected(out.error());
        final_state[i - 1] = dev_mut(*out);
      }
    if (d.batch == 0 || H == 0) return {};  // every output is empty
    // One block per buffer: the input projections of every step, the recurrent products, the
    // hidden state (two, one read while the other is written), and where the cell has them the
    // cell state (LSTM) and the reset-gated state and its product (GRU); an empty tensor (a null
    // pointer for the kernels) where it has not.
    const bool lstm = cell == RecurrentCell::kLstm;
    const int64_t hr_width = separate_reset ? 2 * H : gh;
    auto block = [&](int64_t elements, bool needed = true) -> Expected<Tensor> {
      if (!needed) return Tensor();
      return ctx.scratch(static_cast<std::size_t>(std::max<int64_t>(elements, 1)) * elem);
    };
    auto xw = block(d.seq * d.batch * gh), hr = block(d.batch * hr_width), h0 = block(d.batch * H),
         h1 = block(d.batch * H), c = block(d.batch * H, lstm), reset_h = block(d.batch * H, separate_reset),
         reset_hr = block(d.batch * H, separate_reset);
    for (auto* s : {&xw, &hr, &h0, &h1, &c, &reset_h, &reset_hr})
      if (!*s) return std::unexpected(s->error());
    auto pointer = [](const Tensor& t) { return t.defined() ? dev_mut(t) : nullptr; };
    const Shape rows{d.batch, H};
    const Shape packed = contiguous_strides(rows);
    const Shape state_strides{recurrent_state_row_stride(attrs, d), 1};
    // The state of direction `dir` from an initial-state input (zeros when absent) into `to`.
    auto load_state = [&](std::size_t input, int64_t dir, void* to) -> Expected<void> {
      if (!ctx.has_input(input)) return ctx.zero(to, static_cast<std::size_t>(d.batch * H) * elem);
      return strided_copy(ctx, copy, rows, state_strides, recurrent_state_offset(attrs, d, dir, 0), dev(ctx.input(input)),
                          packed, 0, to);
    };
    const int* lens = ctx.has_input(kSequenceLens) ? static_cast<const int*>(dev(ctx.input(kSequenceLens))) : nullptr;
    for (int64_t dir = 0; dir < d.dirs; ++dir) {
      const std::string& stem = kernels[static_cast<std::size_t>(dir)];
      const void* w = advance(dev(ctx.input(1)), dir * gh * d.input, dtype);
      const void* r = advance(dev(ctx.input(2)), dir * gh * H, dtype);
      const void* bias = ctx.has_input(kB) ? advance(dev(ctx.input(kB)), dir * 2 * gh, dtype) : nullptr;
      const void* peep = ctx.has_input(kPeepholes) ? advance(dev(ctx.input(kPeepholes)), dir * 3 * H, dtype) : nullptr;
      // xw = X · W^T for every step: rows in X's order, (t, b) in layout 0, (b, t) in layout 1.
      MatmulProblem input_product;
      input_product.dtype = dtype;
      input_product.trans_b = true;
      input_product.m = d.seq * d.batch, input_product.n = gh, input_product.k = d.input;
      input_product.a = dev(ctx.input(0)), input_product.b = w, input_product.d = dev_mut(*xw);
      if (auto s = run_matmul(ctx, input_product); !s) return s;
      std::array<void*, 2> h{dev_mut(*h0), dev_mut(*h1)};
      if (auto s = load_state(kInitialH, dir, h[0]); !s) return s;
      if (lstm)
        if (auto s = load_state(kInitialC, dir, dev_mut(*c)); !s) return s;
      for (int64_t step = 0; step < d.seq; ++step) {
        const int64_t time = attrs.reversed(dir) ? d.seq - 1 - step : step;
        MatmulProblem recurrent_product;
        recurrent_product.dtype = dtype;
        recurrent_product.trans_b = true;
        recurrent_product.m = d.batch, recurrent_product.n = hr_width, recurrent_product.k = H;
        recurrent_product.a = h[0], recurrent_product.b = r, recurrent_product.d = dev_mut(*hr);
        if (auto s = run_matmul(ctx, recurrent_product); !s) return s;
        const int64_t xw_row = attrs.batch_first ? time : time * d.batch, xw_row_step = attrs.batch_first ? d.seq : 1;
        auto gate_args = [&](KernelArgs& args) {
          args.add(d.batch).add(H).add(d.gates).ptr(dev(*xw)).add(xw_row).add(xw_row_step).ptr(dev(*hr)).add(hr_width);
          args.ptr(bias).ptr(h[0]);
        };
        if (separate_reset) {  // (r ⊙ H)·Rh^T needs the reset gate first
          KernelArgs args;
          gate_args(args);
          args.ptr(dev_mut(*reset_h));
          if (auto s = ctx.launch(stem + "_reset", d.batch * H, args); !s) return s;
          MatmulProblem reset_product = recurrent_product;
          reset_product.n = H;
          reset_product.a = dev(*reset_h), reset_product.b = advance(r, 2 * H * H, dtype), reset_product.d = dev_mut(*reset_hr);
          if (auto s = run_matmul(ctx, reset_product); !s) return s;
        }
        KernelArgs args;
        gate_args(args);
        args.ptr(pointer(*reset_hr)).ptr(peep).ptr(lens).add(time).ptr(h[1]).ptr(pointer(*c));
        args.ptr(y).add(y ? recurrent_y_offset(attrs, d, time, dir, 0) : int64_t{0}).add(recurrent_y_row_stride(attrs, d));
        if (auto s = ctx.launch(stem + "_step", d.batch * H, args); !s) return s;
        std::swap(h[0], h[1]);
      }
      const std::array<const void*, 2> last{h[0], pointer(*c)};
      for (std::size_t i = 0; i < 2; ++i)
        if (final_state[i])
          if (auto s = strided_copy(ctx, copy, rows, packed, 0, last[i], state_strides,
                                    recurrent_state_offset(attrs, d, dir, 0), final_state[i]);
              !s)
            return s;
    }
    return {};
  }));
  return {};
}

std::vector<CudaOpDef> recurrent_versions(const char* op, RecurrentCell cell, std::initializer_list<int64_t> versions) {
  return make_op_versions(
      op, versions, [cell](const NodeContext& ctx) { return check_recurrent(ctx, cell); },
      [cell](PlanBuilder& b, const Node& node) { return build_recurrent(b, node, cell); });
}

}  // namespace

std::vector<CudaOpDef> recurrent_ops() {
  std::vector<CudaOpDef> ops = recurrent_versions("RNN", RecurrentCell::kRnn, {1, 7, 14});
  for (auto& op : recurrent_versions("GRU", RecurrentCell::kGru, {1, 3, 7, 14})) ops.push_back(std::move(op));
  for (auto& op : recurrent_versions("LSTM", RecurrentCell::kLstm, {1, 7, 14})) ops.push_back(std::move(op));
  return ops;
}

}  // namespace nxrt::cuda
