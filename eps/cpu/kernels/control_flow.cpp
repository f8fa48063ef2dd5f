// Control flow: If runs one of two branches, Loop repeats a body while a trip count and a
// condition allow, Scan runs a body over slices of its inputs. Bodies run on CPU kernels.
#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "common/axis_range.h"
#include "common/kernel_util.h"
#include "common/subgraph.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

KernelMatch require_graph(const NodeContext& ctx, const std::string& name) {
  const auto graph = ctx.attrs().get_graph(name);
  NXRT_REQUIRE(graph, "{}: attribute '{}' (a graph) is missing", ctx.node().op_type, name);
  return check_subgraph(*graph, fmt::format("{}: {}", ctx.node().op_type, name));
}

// A boolean scalar read from a one-element tensor.
Expected<bool> read_condition(const Tensor& t, std::string_view what) {
  if (t.numel() != 1)
    return fail(ErrorCode::kRuntime, fmt::format("{} has {} elements; it must hold exactly one", what, t.numel()));
  return *t.data_as<uint8_t>() != 0;
}

Tensor bool_scalar(bool value) {
  Tensor t = Tensor::empty(DType::kBool, {});
  *t.mut_as<uint8_t>() = value ? 1 : 0;
  return t;
}

// What stacking zero per-step values of `type` gives (a Loop or Scan that ran no step):
// [0, dims...] when the body declares the dims, else [0].
Tensor empty_stack(const ValueType& type) {
  Shape shape{0};
  if (auto s = type.static_shape()) shape.insert(shape.end(), s->begin(), s->end());
  return Tensor::empty(type.dtype == DType::kUndefined ? DType::kFloat32 : type.dtype, shape);
}

// ---- If ----------------------------------------------------------------------------

KernelMatch check_if(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kBool}));
  NXRT_REQUIRE_MATCH(require_graph(ctx, "then_branch"));
  NXRT_REQUIRE_MATCH(require_graph(ctx, "else_branch"));
  return KernelMatch::supported();
}

class IfKernel final : public Kernel {
 public:
  explicit IfKernel(const NodeContext& ctx)
      : then_(ctx, "then_branch"), else_(ctx, "else_branch") {}

  Expected<void> compute(KernelContext& ctx) override {
    auto cond = read_condition(ctx.input(0), "If's condition");
    if (!cond) return std::unexpected(cond.error());
    SubgraphRunner& branch = *cond ? then_ : else_;
    auto outputs = branch.run({}, ctx);
    if (!outputs) return std::unexpected(outputs.error());
    if (outputs->size() != ctx.output_count())
      return fail(ErrorCode::kRuntime, fmt::format("If: the {} branch returned {} values; the node has {} outputs",
                                                   *cond ? "then" : "else", outputs->size(), ctx.output_count()));
    for (std::size_t i = 0; i < outputs->size(); ++i) ctx.set_output_value(i, std::move((*outputs)[i]));
    return {};
  }
  std::string_view variant() const override { return "subgraph"; }

 private:
  SubgraphRunner then_, else_;
};

// ---- Loop ----------------------------------------------------------------------------

KernelMatch check_loop(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0) || ctx.has_input(1),
               "Loop: neither the trip count M nor the condition is given, so the loop never ends; "
               "give at least one of them");
  if (ctx.has_input(0)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kInt64}));
  if (ctx.has_input(1)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kBool}));
  NXRT_REQUIRE_MATCH(require_graph(ctx, "body"));
  const auto body = ctx.attrs().get_graph("body");
  const std::size_t carried = ctx.input_count() - 2;
  NXRT_REQUIRE(body->inputs.size() == carried + 2,
               "Loop: the body takes {} inputs; it must take 2 + the {} loop-carried values", body->inputs.size(),
               carried);
  NXRT_REQUIRE(body->outputs.size() >= carried + 1,
               "Loop: the body returns {} values; it must return the condition and {} loop-carried values",
               body->outputs.size(), carried);
  return KernelMatch::supported();
}

class LoopKernel final : public Kernel {
 public:
  explicit LoopKernel(const NodeContext& ctx)
      : body_(ctx, "body") {
    // A scan output's element shape when the body declares it: what zero iterations return.
    const Graph& g = body_.body();
    for (std::size_t k = g.inputs.size() - 1; k < g.outputs.size(); ++k) {
      const ValueType& type = g.value(g.outputs[k]).type;
      scan_types_.push_back(type);
    }
  }

  Expected<void> compute(KernelContext& ctx) override {
    const std::size_t carried_count = body_.owner_inputs() - 2;
    std::optional<int64_t> trip_count;
    if (ctx.has_input(0)) {
      if (ctx.input(0).numel() != 1)
        return fail(ErrorCode::kRuntime, "Loop: the trip count M must hold exactly one value");
      trip_count = *ctx.input(0).data_as<int64_t>();
    }
    bool cond = true;
    if (ctx.has_input(1)) {
      auto c = read_condition(ctx.input(1), "Loop's initial condition");
      if (!c) return std::unexpected(c.error());
      cond = *c;
    }
    std::vector<RuntimeValue> carried;
    for (std::size_t i = 0; i < carried_count; ++i) carried.push_back(ctx.value(2 + i));
    std::vector<std::vector<Tensor>> scans(scan_types_.size());

    for (int64_t iter = 0; (!trip_count || iter < *trip_count) && cond; ++iter) {
      std::vector<RuntimeValue> formal;
      formal.reserve(carried_count + 2);
      formal.emplace_back(Tensor::from_vector<int64_t>({}, {iter}));
      formal.emplace_back(bool_scalar(cond));
      for (auto& v : carried) formal.push_back(std::move(v));
      auto outputs = body_.run(std::move(formal), ctx);
      if (!outputs) return forward_error(std::move(outputs), fmt::format("Loop iteration {}", iter));
      if (ctx.has_input(1)) {
        const RuntimeValue& c = (*outputs)[0];
        if (!c.is_tensor() || c.dtype() != DType::kBool)
          return fail(ErrorCode::kRuntime, fmt::format("Loop: the body's condition output is a {}", c.describe()));
        auto next = read_condition(c.tensor(), "Loop's body condition");
        if (!next) return std::unexpected(next.error());
        cond = *next;
      }
      carried.assign(outputs->begin() + 1, outputs->begin() + 1 + static_cast<std::ptrdiff_t>(carried_count));
      for (std::size_t k = 0; k < scans.size(); ++k) {
        const RuntimeValue& v = (*outputs)[1 + carried_count + k];
        if (!v.is_tensor())
          return fail(ErrorCode::kRuntime, fmt::format("Loop: scan output {} is a {}; scan outputs are tensors", k,
                                                       v.describe()));
        if (!scans[k].empty() && v.tensor().shape() != scans[k].front().shape())
          return fail(ErrorCode::kRuntime,
                      fmt::format("Loop: scan output {} has shape {} in iteration {} and {} before", k,
                                  shape_to_string(v.tensor().shape()), iter, shape_to_string(scans[k].front().shape())),
                      "the values stacked into a scan output must all have one shape");
        scans[k].push_back(v.tensor());
      }
    }
    for (std::size_t i = 0; i < carried_count; ++i) ctx.set_output_value(i, std::move(carried[i]));
    for (std::size_t k = 0; k < scans.size(); ++k) {
      if (!ctx.wants_output(carried_count + k)) continue;
      ctx.set_output(carried_count + k, stacked(scans[k], scan_types_[k]));
    }
    return {};
  }
  std::string_view variant() const override { return "subgraph"; }

 private:
  // The per-iteration values stacked on a new axis 0.
  static Tensor stacked(const std::vector<Tensor>& items, const ValueType& type) {
    if (items.empty()) return empty_stack(type);
    return stack(items, 0, items.front().dtype(), items.front().shape());
  }

  SubgraphRunner body_;
  std::vector<ValueType> scan_types_;
};

// ---- Scan ----------------------------------------------------------------------------

// Scan's attributes, resolved: which axis each scan input/output runs along and in which
// direction. Scan-8 puts a batch axis first and scans axis 1 of every input.
struct ScanLayout {
  int64_t state_count = 0;
  int64_t scan_inputs = 0;
  std::vector<int64_t> input_axes, input_reverse;
  std::vector<int64_t> output_axes, output_reverse;
};

KernelMatch check_scan(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_graph(ctx, "body"));
  const auto m = ctx.attrs().get_int("num_scan_inputs");
  NXRT_REQUIRE(m && *m >= 1, "Scan: attribute num_scan_inputs is missing or below 1");
  const std::size_t first = ctx.opset() < 9 ? 1 : 0;  // Scan-8's sequence_lens
  NXRT_REQUIRE(ctx.opset() >= 9 || !ctx.has_input(0),
               "Scan: sequence_lens (Scan-8) is not supported by the cpu EP; every sequence runs its full length "
               "when it is omitted");
  NXRT_REQUIRE(static_cast<int64_t>(ctx.input_count() - first) >= *m,
               "Scan: {} scan inputs declared, but the node has {} inputs", *m, ctx.input_count());
  for (std::size_t i = first; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.input_type(i) && ctx.input_type(i)->kind == ValueType::Kind::kTensor,
                 "Scan: input {} is not a tensor; Scan runs on tensors", i);
  return KernelMatch::supported();
}

class ScanKernel final : public Kernel {
 public:
  explicit ScanKernel(const NodeContext& ctx)
      : batched_(ctx.opset() < 9), body_(ctx, "body") {
    const int64_t first = batched_ ? 1 : 0;
    layout_.scan_inputs = ctx.attrs().int_or("num_scan_inputs", 1);
    layout_.state_count = static_cast<int64_t>(ctx.input_count()) - first - layout_.scan_inputs;
    const int64_t scan_outputs = static_cast<int64_t>(ctx.output_count()) - layout_.state_count;
    const auto sized = [](std::vector<int64_t> v, int64_t n) {
      v.resize(static_cast<std::size_t>(n), 0);
      return v;
    };
    layout_.input_axes = sized(ctx.attrs().ints_or("scan_input_axes", {}), layout_.scan_inputs);
    layout_.input_reverse =
        sized(ctx.attrs().ints_or(batched_ ? "directions" : "scan_input_directions", {}), layout_.scan_inputs);
    layout_.output_axes = sized(ctx.attrs().ints_or("scan_output_axes", {}), scan_outputs);
    layout_.output_reverse = sized(ctx.attrs().ints_or("scan_output_directions", {}), scan_outputs);
  }

  Expected<void> compute(KernelContext& ctx) override {
    const std::size_t first = batched_ ? 1 : 0;
    std::vector<Tensor> inputs;
    for (std::size_t i = first; i < body_.owner_inputs(); ++i) inputs.push_back(ctx.input(i));
    if (!batched_) {
      auto outputs = scan_once(ctx, inputs);
      if (!outputs) return std::unexpected(outputs.error());
      for (std::size_t i = 0; i < outputs->size(); ++i) ctx.set_output(i, std::move((*outputs)[i]));
      return {};
    }
    // Scan-8: every input has a batch axis 0; scan each batch entry, then stack them.
    const int64_t batch = inputs.empty() ? 0 : inputs.front().shape().empty() ? 0 : inputs.front().shape()[0];
    std::vector<std::vector<Tensor>> per_output(ctx.output_count());
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<Tensor> entry;
      for (const Tensor& t : inputs) entry.push_back(take_slice(t, 0, b));
      auto outputs = scan_once(ctx, entry);
      if (!outputs) return forward_error(std::move(outputs), fmt::format("Scan batch entry {}", b));
      for (std::size_t i = 0; i < outputs->size(); ++i) per_output[i].push_back(std::move((*outputs)[i]));
    }
    for (std::size_t i = 0; i < per_output.size() && batch > 0; ++i)
      ctx.set_output(i, stack(per_output[i], 0, per_output[i].front().dtype(), per_output[i].front().shape()));
    return {};
  }
  std::string_view variant() const override { return "subgraph"; }

 private:
  // One scan over unbatched inputs: states then scan inputs; returns states then scan outputs.
  Expected<std::vector<Tensor>> scan_once(const KernelContext& ctx, const std::vector<Tensor>& inputs) {
    const auto states = static_cast<std::size_t>(layout_.state_count);
    const auto m = static_cast<std::size_t>(layout_.scan_inputs);
    std::vector<int64_t> axes(m);
    int64_t length = -1;
    for (std::size_t j = 0; j < m; ++j) {
      const Tensor& x = inputs[states + j];
      const int64_t rank = static_cast<int64_t>(x.shape().size());
      const int64_t a = layout_.input_axes[j] < 0 ? layout_.input_axes[j] + rank : layout_.input_axes[j];
      if (a < 0 || a >= rank)
        return fail(ErrorCode::kRuntime, fmt::format("Scan: scan_input_axes[{}] = {} is out of range for rank {}", j,
                                                     layout_.input_axes[j], rank));
      axes[j] = a;
      if (length >= 0 && x.shape()[static_cast<std::size_t>(a)] != length)
        return fail(ErrorCode::kRuntime, fmt::format("Scan: scan input {} has {} steps, input 0 has {}", j,
                                                     x.shape()[static_cast<std::size_t>(a)], length));
      length = x.shape()[static_cast<std::size_t>(a)];
    }
    std::vector<RuntimeValue> state(inputs.begin(), inputs.begin() + static_cast<std::ptrdiff_t>(states));
    std::vector<std::vector<Tensor>> scans(layout_.output_axes.size());
    for (int64_t step = 0; step < length; ++step) {
      std::vector<RuntimeValue> formal = std::move(state);
      for (std::size_t j = 0; j < m; ++j) {
        const int64_t at = layout_.input_reverse[j] ? length - 1 - step : step;
        formal.emplace_back(take_slice(inputs[states + j], axes[j], at));
      }
      auto outputs = body_.run(std::move(formal), ctx);
      if (!outputs) return forward_error(std::move(outputs), fmt::format("Scan step {}", step));
      state.assign(outputs->begin(), outputs->begin() + static_cast<std::ptrdiff_t>(states));
      for (std::size_t k = 0; k < scans.size(); ++k) {
        const RuntimeValue& v = (*outputs)[states + k];
        if (!v.is_tensor()) return fail(ErrorCode::kRuntime, fmt::format("Scan: scan output {} is not a tensor", k));
        scans[k].push_back(v.tensor());
      }
    }
    std::vector<Tensor> result;
    for (auto& s : state) {
      if (!s.is_tensor()) return fail(ErrorCode::kRuntime, "Scan: a state output is not a tensor");
      result.push_back(s.tensor());
    }
    for (std::size_t k = 0; k < scans.size(); ++k) {
      auto& items = scans[k];
      if (layout_.output_reverse[k]) std::reverse(items.begin(), items.end());
      const ValueType& type = body_.body().value(body_.body().outputs[states + k]).type;
      if (items.empty()) {
        result.push_back(empty_stack(type));
        continue;
      }
      const int64_t rank = static_cast<int64_t>(items.front().shape().size()) + 1;
      const int64_t a = layout_.output_axes[k] < 0 ? layout_.output_axes[k] + rank : layout_.output_axes[k];
      if (a < 0 || a >= rank)
        return fail(ErrorCode::kRuntime, fmt::format("Scan: scan_output_axes[{}] = {} is out of range for rank {}", k,
                                                     layout_.output_axes[k], rank));
      for (const Tensor& t : items)
        if (t.shape() != items.front().shape())
          return fail(ErrorCode::kRuntime, fmt::format("Scan: scan output {} changes shape between steps", k));
      result.push_back(stack(items, a, items.front().dtype(), items.front().shape()));
    }
    return result;
  }

  bool batched_;
  SubgraphRunner body_;
  ScanLayout layout_;
};

template <class K>
KernelDef def(const char* op, int64_t since, int64_t until, KernelMatch (*check)(const NodeContext&)) {
  return KernelDef{{"", op, since}, until, check, [](const NodeContext& ctx) { return make_kernel<K>(ctx); }};
}

}  // namespace

std::vector<KernelDef> control_flow_kernels() {
  return {
      def<IfKernel>("If", 1, 0, check_if),
      def<LoopKernel>("Loop", 1, 0, check_loop),
      def<ScanKernel>("Scan", 8, 0, check_scan),
  };
}

}  // namespace nxrt::cpu
