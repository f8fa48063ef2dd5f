// Gradient (ai.onnx.preview.training): reverse-mode differentiation of the part of the
// graph that computes `y` from `xs` (and the constant inputs `zs`), for float elementwise
// ops. The forward part runs on CPU kernels; the backward pass seeds dy with ones.
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/subgraph.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr const char* kTraining = "ai.onnx.preview.training";

// Ops whose derivative the backward pass knows.
const std::set<std::string> kDifferentiable = {"Add", "Sub", "Mul", "Div", "Neg", "Identity",
                                               "Relu", "Sigmoid", "Tanh", "Exp", "Log"};

// The nodes between the named inputs and y, in graph order; a decline when y depends on
// something that is neither an input nor a constant, or on an op without a derivative.
struct ForwardSlice {
  std::vector<NodeId> nodes;
  std::vector<ValueId> inputs;  // xs then zs, as values of the graph
  ValueId y = kNoValue;
};

Expected<ForwardSlice> forward_slice(const NodeContext& ctx) {
  const Graph& g = ctx.graph();
  ForwardSlice slice;
  const auto xs = ctx.attrs().get_strings("xs").value_or(std::vector<std::string>{});
  const auto zs = ctx.attrs().get_strings("zs").value_or(std::vector<std::string>{});
  std::set<ValueId> given;
  for (const auto* names : {&xs, &zs})
    for (const auto& name : *names) {
      auto id = g.find_value(name);
      if (!id) return fail(ErrorCode::kUnclaimed, fmt::format("Gradient: '{}' is not a value of the graph", name));
      slice.inputs.push_back(*id);
      given.insert(*id);
    }
  const auto y = g.find_value(ctx.attrs().string_or("y", ""));
  if (!y) return fail(ErrorCode::kUnclaimed, "Gradient: attribute 'y' does not name a value of the graph");
  slice.y = *y;
  std::set<NodeId> members;
  std::vector<ValueId> pending{*y};
  while (!pending.empty()) {
    const ValueId v = pending.back();
    pending.pop_back();
    const Value& val = g.value(v);
    if (given.contains(v) || val.initializer) continue;
    if (val.producer < 0)
      return fail(ErrorCode::kUnclaimed,
                  fmt::format("Gradient: y depends on '{}', which is neither in xs nor in zs", val.name));
    const Node& node = g.node(val.producer);
    if (!kDifferentiable.contains(node.op_type) || !node.domain.empty())
      return fail(ErrorCode::kUnclaimed,
                  fmt::format("Gradient: y depends on {}, whose derivative the cpu EP does not know (it knows {})",
                              node.describe(), fmt::join(kDifferentiable, ", ")));
    if (members.insert(node.id).second)
      for (ValueId in : node.inputs)
        if (in != kNoValue) pending.push_back(in);
  }
  slice.nodes.assign(members.begin(), members.end());
  return slice;
}

KernelMatch check_gradient(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.attrs().get_strings("xs") && !ctx.attrs().get_strings("xs")->empty(),
               "Gradient: attribute 'xs' (the inputs to differentiate by) is missing or empty");
  auto slice = forward_slice(ctx);
  NXRT_REQUIRE(slice, "{}", slice ? std::string() : slice.error().what);
  NXRT_REQUIRE(slice->inputs.size() == ctx.input_count(), "Gradient: xs and zs name {} values, the node has {} inputs",
               slice->inputs.size(), ctx.input_count());
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, i, {DType::kFloat32}));
  return KernelMatch::supported();
}

// Adds into `ga` (shaped like a) the gradient flowing to a from an elementwise op over
// a and b: ga += g * da(a, b, out) where out = op(a, b), broadcasting reduced by summing.
template <class Partial>
Expected<void> accumulate(std::vector<float>& ga, const Tensor& a, const Tensor& b, const Tensor& out,
                          const std::vector<float>& g, Partial partial) {
  auto bc = Broadcast<2>::make("Gradient", {&a.shape(), &b.shape()});
  if (!bc) return std::unexpected(bc.error());
  const float* pa = a.data_as<float>();
  const float* pb = b.data_as<float>();
  const float* po = out.data_as<float>();
  bc->for_each_run(0, bc->numel(), [&](int64_t o, const auto& in, const auto& step, int64_t count) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t ia = in[0] + i * step[0], ib = in[1] + i * step[1];
      ga[static_cast<std::size_t>(ia)] += g[static_cast<std::size_t>(o + i)] * partial(pa[ia], pb[ib], po[o + i]);
    }
  });
  return {};
}

class GradientKernel final : public Kernel {
 public:
  GradientKernel(const NodeContext& ctx, ForwardSlice slice) : graph_(ctx.graph()), slice_(std::move(slice)) {
    for (NodeId id : slice_.nodes)
      for (ValueId v : graph_.node(id).outputs)
        if (v != kNoValue) forward_outputs_.push_back(v);
    xs_count_ = ctx.attrs().get_strings("xs")->size();
  }

  Expected<void> compute(KernelContext& ctx) override {
    if (auto r = build_forward(ctx); !r) return r;
    std::vector<RuntimeValue> inputs;
    for (std::size_t i = 0; i < ctx.input_count(); ++i) inputs.push_back(ctx.value(i));
    auto outputs = forward_->run(inputs);
    if (!outputs) return forward_error(std::move(outputs), "Gradient: running the forward part");
    std::map<ValueId, Tensor> value;
    for (std::size_t i = 0; i < slice_.inputs.size(); ++i) value[slice_.inputs[i]] = ctx.input(i);
    for (std::size_t i = 0; i < forward_outputs_.size(); ++i) value[forward_outputs_[i]] = (*outputs)[i].tensor();
    auto lookup = [&](ValueId v) -> Expected<Tensor> {
      if (auto it = value.find(v); it != value.end()) return it->second;
      auto t = graph_.value(v).initializer->materialize();
      if (t) value[v] = *t;
      return t;
    };

    // dy = 1; then each node, last first, passes its output's gradient to its inputs.
    std::map<ValueId, std::vector<float>> grad;
    auto y = lookup(slice_.y);
    if (!y) return std::unexpected(y.error());
    grad[slice_.y].assign(static_cast<std::size_t>(y->numel()), 1.0f);
    for (auto it = slice_.nodes.rbegin(); it != slice_.nodes.rend(); ++it) {
      const Node& node = graph_.node(*it);
      const ValueId out_id = node.outputs[0];
      if (!grad.contains(out_id)) continue;
      const std::vector<float> g = grad[out_id];
      const Tensor& out = value[out_id];
      std::vector<Tensor> ins;
      for (ValueId v : node.inputs) {
        auto t = lookup(v);
        if (!t) return std::unexpected(t.error());
        ins.push_back(*t);
      }
      auto slot = [&](std::size_t i) -> std::vector<float>& {
        auto& buffer = grad[node.inputs[i]];
        buffer.resize(static_cast<std::size_t>(ins[i].numel()), 0.0f);
        return buffer;
      };
      if (auto r = backward(node.op_type, ins, out, g, slot); !r) return r;
    }
    for (std::size_t i = 0; i < xs_count_; ++i) {
      const Tensor& x = ctx.input(i);
      auto out = ctx.output(i, DType::kFloat32, x.shape());
      if (!out) return std::unexpected(out.error());
      const auto it = grad.find(slice_.inputs[i]);
      for (int64_t k = 0; k < x.numel(); ++k)
        out->mut_as<float>()[k] = it == grad.end() ? 0.0f : it->second[static_cast<std::size_t>(k)];
    }
    return {};
  }
  std::string_view variant() const override { return "reverse-mode"; }

 private:
  // Compiles the forward part on first use (runs of the session may arrive together).
  Expected<void> build_forward(const KernelContext& ctx) {
    std::lock_guard lock(build_mutex_);
    if (forward_) return {};
    Partition p;
    p.graph = &graph_;
    p.ep = "cpu";
    p.name = "gradient_forward";
    p.nodes = slice_.nodes;
    p.inputs = slice_.inputs;
    p.outputs = forward_outputs_;
    auto kp = KernelPartition::build(p, cpu_kernel_registry(), "cpu", ctx.shared_parallel());
    if (!kp) return std::unexpected(kp.error());
    forward_ = std::move(*kp);
    return {};
  }

  template <class Slot>
  static Expected<void> backward(const std::string& op, const std::vector<Tensor>& in, const Tensor& out,
                                 const std::vector<float>& g, Slot&& slot) {
    if (in.size() == 2) {
      const Tensor &a = in[0], &b = in[1];
      auto both = [&](auto da, auto db) -> Expected<void> {
        if (auto r = accumulate(slot(0), a, b, out, g, da); !r) return r;
        return accumulate(slot(1), b, a, out, g, db);
      };
      if (op == "Add") return both([](float, float, float) { return 1.0f; }, [](float, float, float) { return 1.0f; });
      if (op == "Sub") return both([](float, float, float) { return 1.0f; }, [](float, float, float) { return -1.0f; });
      if (op == "Mul") return both([](float, float b, float) { return b; }, [](float, float a, float) { return a; });
      if (op == "Div")
        return both([](float, float b, float) { return 1.0f / b; },
                    [](float b, float a, float) { return -a / (b * b); });
    }
    // Unary: the output's gradient times the derivative at input x (output y).
    float (*derivative)(float x, float y) = [](float, float) { return 1.0f; };  // Identity
    if (op == "Neg") derivative = [](float, float) { return -1.0f; };
    else if (op == "Relu") derivative = [](float x, float) { return x > 0 ? 1.0f : 0.0f; };
    else if (op == "Sigmoid") derivative = [](float, float y) { return y * (1.0f - y); };
    else if (op == "Tanh") derivative = [](float, float y) { return 1.0f - y * y; };
    else if (op == "Exp") derivative = [](float, float y) { return y; };
    else if (op == "Log") derivative = [](float x, float) { return 1.0f / x; };
    std::vector<float>& ga = slot(0);
    const float* x = in[0].data_as<float>();
    const float* y = out.data_as<float>();
    for (std::size_t i = 0; i < ga.size(); ++i) ga[i] += g[i] * derivative(x[i], y[i]);
    return {};
  }

  const Graph& graph_;
  ForwardSlice slice_;
  std::vector<ValueId> forward_outputs_;
  std::size_t xs_count_ = 0;
  std::mutex build_mutex_;
  std::unique_ptr<KernelPartition> forward_;
};

}  // namespace

std::vector<KernelDef> gradient_kernels() {
  return {KernelDef{{kTraining, "Gradient", 1}, 0, check_gradient, [](const NodeContext& ctx) {
                      auto slice = forward_slice(ctx);
                      if (!slice) return Expected<std::unique_ptr<Kernel>>(std::unexpected(slice.error()));
                      return make_kernel<GradientKernel>(ctx, std::move(*slice));
                    }}};
}

}  // namespace nxrt::cpu
