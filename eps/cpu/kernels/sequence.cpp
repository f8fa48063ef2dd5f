// Sequence ops: build, edit and read sequences of tensors (SequenceEmpty, SequenceConstruct,
// SequenceInsert, SequenceAt, SequenceErase, SequenceLength), convert between a tensor and
// a sequence (SplitToSequence, ConcatFromSequence), and map a subgraph over one (SequenceMap).
#include <fmt/format.h>

#include <numeric>

#include "common/axis_range.h"
#include "common/kernel_util.h"
#include "common/subgraph.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using Kind = ValueType::Kind;

KernelMatch require_kind(const NodeContext& ctx, std::size_t i, Kind kind, std::string_view what) {
  const ValueType* t = ctx.input_type(i);
  NXRT_REQUIRE(t, "{}: input {} ({}) is missing", ctx.node().op_type, i, what);
  NXRT_REQUIRE(t->kind == kind, "{}: input {} ({}) is a {}; it must be a {}", ctx.node().op_type, i, what,
               t->to_string(), kind == Kind::kSequence ? "sequence of tensors" : "tensor");
  return KernelMatch::supported();
}

// A scalar position read from an int32 or int64 tensor.
Expected<int64_t> read_position(const Tensor& t, std::string_view op) {
  if (t.numel() != 1)
    return fail(ErrorCode::kRuntime, fmt::format("{}: position has {} elements; it must be a scalar", op, t.numel()));
  return t.dtype() == DType::kInt32 ? *t.data_as<int32_t>() : *t.data_as<int64_t>();
}

// Resolves a possibly negative position against [-size, size - 1 + extra].
Expected<std::size_t> resolve_position(int64_t position, std::size_t size, int64_t extra, std::string_view op) {
  const auto n = static_cast<int64_t>(size);
  if (position < -n || position > n - 1 + extra)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: position {} is out of range for a sequence of {} tensors", op, position, n),
                fmt::format("positions run from {} to {}", -n, n - 1 + extra), "fix the position input");
  return static_cast<std::size_t>(position < 0 ? position + n : position);
}

// Runs `fn(KernelContext&)`: for the small sequence ops that need no state.
template <class Fn>
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(Fn fn) : fn_(std::move(fn)) {}
  Expected<void> compute(KernelContext& ctx) override { return fn_(ctx); }
  std::string_view variant() const override { return "sequence"; }

 private:
  Fn fn_;
};

template <class Fn>
KernelDef fn_def(const char* op, int64_t since, KernelMatch (*check)(const NodeContext&), Fn fn) {
  return KernelDef{{"", op, since}, 0, check, [fn](const NodeContext&) { return make_kernel<FnKernel<Fn>>(fn); }};
}

// ---- SequenceEmpty, SequenceConstruct, SequenceLength -------------------------------------

KernelMatch check_sequence_empty(const NodeContext& ctx) {
  const auto dtype = dtype_from_onnx(static_cast<int32_t>(ctx.attrs().int_or("dtype", 1)));
  NXRT_REQUIRE(dtype, "SequenceEmpty: dtype {} is not a tensor element type nxrt knows",
               ctx.attrs().int_or("dtype", 1));
  return KernelMatch::supported();
}

KernelDef sequence_empty_def() {
  return KernelDef{{"", "SequenceEmpty", 11}, 0, check_sequence_empty, [](const NodeContext& ctx) {
                     const DType dtype = *dtype_from_onnx(static_cast<int32_t>(ctx.attrs().int_or("dtype", 1)));
                     auto fn = [dtype](KernelContext& k) -> Expected<void> {
                       k.set_output_value(0, RuntimeValue::sequence(dtype, {}));
                       return {};
                     };
                     return make_kernel<FnKernel<decltype(fn)>>(fn);
                   }};
}

KernelMatch check_sequence_construct(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() >= 1, "SequenceConstruct: it needs at least one input");
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE_MATCH(require_kind(ctx, i, Kind::kTensor, "a tensor"));
    NXRT_REQUIRE(ctx.input_dtype(i) == ctx.input_dtype(0), "SequenceConstruct: input {} is {}, input 0 is {}",
                 i, dtype_name(ctx.input_dtype(i)), dtype_name(ctx.input_dtype(0)));
  }
  return KernelMatch::supported();
}

Expected<void> sequence_construct(KernelContext& ctx) {
  std::vector<Tensor> items;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) items.push_back(ctx.input(i));
  const DType element = ctx.input(0).dtype();
  ctx.set_output_value(0, RuntimeValue::sequence(element, std::move(items)));
  return {};
}

KernelMatch check_sequence_length(const NodeContext& ctx) {
  return require_kind(ctx, 0, Kind::kSequence, "input_sequence");
}

Expected<void> sequence_length(KernelContext& ctx) {
  ctx.set_output(0, Tensor::from_vector<int64_t>({}, {static_cast<int64_t>(ctx.value(0).items().size())}));
  return {};
}

// ---- SequenceInsert, SequenceAt, SequenceErase --------------------------------------------

KernelMatch check_position(const NodeContext& ctx, std::size_t i) {
  if (!ctx.has_input(i)) return KernelMatch::supported();
  return require_input_dtype(ctx, i, {DType::kInt32, DType::kInt64});
}

KernelMatch check_sequence_insert(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kSequence, "input_sequence"));
  NXRT_REQUIRE_MATCH(require_kind(ctx, 1, Kind::kTensor, "tensor"));
  const DType element = ctx.input_type(0)->dtype;
  NXRT_REQUIRE(element == DType::kUndefined || ctx.input_dtype(1) == element,
               "SequenceInsert: the tensor is {} and the sequence holds {}", dtype_name(ctx.input_dtype(1)),
               dtype_name(element));
  return check_position(ctx, 2);
}

Expected<void> sequence_insert(KernelContext& ctx) {
  std::vector<Tensor> items = ctx.value(0).items();
  std::size_t at = items.size();
  if (ctx.has_input(2)) {
    auto position = read_position(ctx.input(2), "SequenceInsert");
    if (!position) return std::unexpected(position.error());
    auto resolved = resolve_position(*position, items.size(), 1, "SequenceInsert");
    if (!resolved) return std::unexpected(resolved.error());
    at = *resolved;
  }
  items.insert(items.begin() + static_cast<std::ptrdiff_t>(at), ctx.input(1));
  ctx.set_output_value(0, RuntimeValue::sequence(ctx.input(1).dtype(), std::move(items)));
  return {};
}

KernelMatch check_sequence_at(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kSequence, "input_sequence"));
  NXRT_REQUIRE(ctx.has_input(1), "SequenceAt: input 1 (position) is missing");
  return check_position(ctx, 1);
}

Expected<void> sequence_at(KernelContext& ctx) {
  const auto& items = ctx.value(0).items();
  auto position = read_position(ctx.input(1), "SequenceAt");
  if (!position) return std::unexpected(position.error());
  auto at = resolve_position(*position, items.size(), 0, "SequenceAt");
  if (!at) return std::unexpected(at.error());
  ctx.set_output(0, items[*at]);
  return {};
}

KernelMatch check_sequence_erase(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kSequence, "input_sequence"));
  return check_position(ctx, 1);
}

Expected<void> sequence_erase(KernelContext& ctx) {
  std::vector<Tensor> items = ctx.value(0).items();
  int64_t position = -1;
  if (ctx.has_input(1)) {
    auto p = read_position(ctx.input(1), "SequenceErase");
    if (!p) return std::unexpected(p.error());
    position = *p;
  }
  auto at = resolve_position(position, items.size(), 0, "SequenceErase");
  if (!at) return std::unexpected(at.error());
  items.erase(items.begin() + static_cast<std::ptrdiff_t>(*at));
  ctx.set_output_value(0, RuntimeValue::sequence(ctx.value(0).dtype(), std::move(items)));
  return {};
}

// ---- SplitToSequence, ConcatFromSequence -------------------------------------------------

KernelMatch check_split_to_sequence(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kTensor, "input"));
  if (ctx.has_input(1)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt32, DType::kInt64}));
  return KernelMatch::supported();
}

class SplitToSequenceKernel final : public Kernel {
 public:
  explicit SplitToSequenceKernel(const NodeContext& ctx)
      : axis_(ctx.attrs().int_or("axis", 0)), keepdims_(ctx.attrs().int_or("keepdims", 1) != 0) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const auto axis = normalize_axis(axis_, static_cast<int64_t>(x.shape().size()));
    if (!axis)
      return fail(ErrorCode::kRuntime, fmt::format("SplitToSequence: axis {} is out of range for rank {}", axis_,
                                                   x.shape().size()));
    const int64_t length = x.shape()[static_cast<std::size_t>(*axis)];
    auto sizes = split_sizes(ctx, length);
    if (!sizes) return std::unexpected(sizes.error());
    std::vector<Tensor> items;
    int64_t begin = 0;
    for (int64_t size : *sizes) {
      items.push_back(take_range(x, *axis, begin, size));
      begin += size;
    }
    // Without a split input, each piece is one position; keepdims=0 drops that axis.
    if (!ctx.has_input(1) && !keepdims_)
      for (Tensor& t : items) {
        Shape shape = t.shape();
        shape.erase(shape.begin() + *axis);
        t = t.reshaped(std::move(shape));
      }
    ctx.set_output_value(0, RuntimeValue::sequence(x.dtype(), std::move(items)));
    return {};
  }
  std::string_view variant() const override { return "sequence"; }

 private:
  Expected<std::vector<int64_t>> split_sizes(const KernelContext& ctx, int64_t length) const {
    if (!ctx.has_input(1)) return std::vector<int64_t>(static_cast<std::size_t>(length), 1);
    const std::vector<int64_t> split = ctx.input(1).to_int64_vector();
    if (ctx.input(1).shape().empty()) {  // a scalar: equal pieces, the last one smaller
      const int64_t piece = split.front();
      if (piece <= 0)
        return fail(ErrorCode::kRuntime, fmt::format("SplitToSequence: split {} must be positive", piece));
      std::vector<int64_t> sizes(static_cast<std::size_t>(length / piece), piece);
      if (length % piece) sizes.push_back(length % piece);
      return sizes;
    }
    const int64_t total = std::accumulate(split.begin(), split.end(), int64_t{0});
    if (total != length || std::any_of(split.begin(), split.end(), [](int64_t s) { return s < 0; }))
      return fail(ErrorCode::kRuntime,
                  fmt::format("SplitToSequence: split [{}] does not cover the axis of length {}", fmt::join(split, ","),
                              length),
                  "the sizes must be non-negative and sum to the axis length", "fix the split input");
    return split;
  }

  int64_t axis_;
  bool keepdims_;
};

KernelMatch check_concat_from_sequence(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kSequence, "input_sequence"));
  NXRT_REQUIRE(ctx.attrs().get_int("axis"), "ConcatFromSequence: attribute 'axis' is required");
  return KernelMatch::supported();
}

class ConcatFromSequenceKernel final : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const NodeContext& ctx)
      : axis_(*ctx.attrs().get_int("axis")), new_axis_(ctx.attrs().int_or("new_axis", 0) != 0) {}

  Expected<void> compute(KernelContext& ctx) override {
    const auto& items = ctx.value(0).items();
    if (items.empty())
      return fail(ErrorCode::kRuntime, "ConcatFromSequence: the sequence is empty; there is nothing to concatenate");
    const Shape& first = items.front().shape();
    const auto rank = static_cast<int64_t>(first.size());
    const auto axis = normalize_axis(axis_, rank + (new_axis_ ? 1 : 0));
    if (!axis)
      return fail(ErrorCode::kRuntime,
                  fmt::format("ConcatFromSequence: axis {} is out of range for rank {}", axis_, rank));
    if (new_axis_) {
      for (const Tensor& t : items)
        if (t.shape() != first)
          return fail(ErrorCode::kRuntime, "ConcatFromSequence: with new_axis=1 every tensor must have one shape");
      ctx.set_output(0, stack(items, *axis, items.front().dtype(), first));
      return {};
    }
    Shape shape = first;
    shape[static_cast<std::size_t>(*axis)] = 0;
    for (const Tensor& t : items) {
      for (std::size_t d = 0; d < first.size(); ++d)
        if (t.shape().size() != first.size() || (static_cast<int64_t>(d) != *axis && t.shape()[d] != first[d]))
          return fail(ErrorCode::kRuntime,
                      fmt::format("ConcatFromSequence: shapes {} and {} differ outside axis {}",
                                  shape_to_string(t.shape()), shape_to_string(first), *axis));
      shape[static_cast<std::size_t>(*axis)] += t.shape()[static_cast<std::size_t>(*axis)];
    }
    auto out = ctx.output(0, items.front().dtype(), shape);
    if (!out) return std::unexpected(out.error());
    int64_t begin = 0;
    for (const Tensor& t : items) {
      put_range(*out, *axis, begin, t);
      begin += t.shape()[static_cast<std::size_t>(*axis)];
    }
    return {};
  }
  std::string_view variant() const override { return "sequence"; }

 private:
  int64_t axis_;
  bool new_axis_;
};

// ---- SequenceMap -------------------------------------------------------------------------

KernelMatch check_sequence_map(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_kind(ctx, 0, Kind::kSequence, "input_sequence"));
  const auto body = ctx.attrs().get_graph("body");
  NXRT_REQUIRE(body, "SequenceMap: attribute 'body' (a graph) is missing");
  NXRT_REQUIRE(body->inputs.size() == ctx.input_count(), "SequenceMap: the body takes {} inputs; the node has {}",
               body->inputs.size(), ctx.input_count());
  NXRT_REQUIRE(body->outputs.size() == ctx.output_count(),
               "SequenceMap: the body returns {} values; the node has {} outputs", body->outputs.size(),
               ctx.output_count());
  return check_subgraph(*body, "SequenceMap: body");
}

class SequenceMapKernel final : public Kernel {
 public:
  explicit SequenceMapKernel(const NodeContext& ctx)
      : body_(ctx, "body") {
    for (std::size_t i = 0; i < ctx.output_count(); ++i) {
      const ValueType* t = ctx.output_type(i);
      output_dtypes_.push_back(t ? t->dtype : DType::kUndefined);
    }
  }

  Expected<void> compute(KernelContext& ctx) override {
    const std::size_t length = ctx.value(0).items().size();
    for (std::size_t i = 1; i < body_.owner_inputs(); ++i)
      if (ctx.value(i).is_sequence() && ctx.value(i).items().size() != length)
        return fail(ErrorCode::kRuntime,
                    fmt::format("SequenceMap: input {} has {} tensors, input_sequence has {}", i,
                                ctx.value(i).items().size(), length),
                    "sequences mapped together must have one length");
    std::vector<std::vector<Tensor>> outputs(ctx.output_count());
    for (std::size_t n = 0; n < length; ++n) {
      std::vector<RuntimeValue> formal;
      for (std::size_t i = 0; i < body_.owner_inputs(); ++i) {
        const RuntimeValue& v = ctx.value(i);
        formal.push_back(v.is_sequence() ? RuntimeValue(v.items()[n]) : v);
      }
      auto results = body_.run(std::move(formal), ctx);
      if (!results) return forward_error(std::move(results), fmt::format("SequenceMap item {}", n));
      for (std::size_t o = 0; o < results->size(); ++o) {
        if (!(*results)[o].is_tensor())
          return fail(ErrorCode::kRuntime, fmt::format("SequenceMap: body output {} is not a tensor", o));
        outputs[o].push_back((*results)[o].tensor());
      }
    }
    for (std::size_t o = 0; o < outputs.size(); ++o) {
      const DType dtype = outputs[o].empty() ? output_dtypes_[o] : outputs[o].front().dtype();
      ctx.set_output_value(o, RuntimeValue::sequence(dtype, std::move(outputs[o])));
    }
    return {};
  }
  std::string_view variant() const override { return "subgraph"; }

 private:
  SubgraphRunner body_;
  std::vector<DType> output_dtypes_;
};

template <class K>
KernelDef def(const char* op, int64_t since, KernelMatch (*check)(const NodeContext&)) {
  return KernelDef{{"", op, since}, 0, check, [](const NodeContext& ctx) { return make_kernel<K>(ctx); }};
}

}  // namespace

std::vector<KernelDef> sequence_kernels() {
  return {
      sequence_empty_def(),
      fn_def("SequenceConstruct", 11, check_sequence_construct, sequence_construct),
      fn_def("SequenceLength", 11, check_sequence_length, sequence_length),
      fn_def("SequenceInsert", 11, check_sequence_insert, sequence_insert),
      fn_def("SequenceAt", 11, check_sequence_at, sequence_at),
      fn_def("SequenceErase", 11, check_sequence_erase, sequence_erase),
      def<SplitToSequenceKernel>("SplitToSequence", 11, check_split_to_sequence),
      def<ConcatFromSequenceKernel>("ConcatFromSequence", 11, check_concat_from_sequence),
      def<SequenceMapKernel>("SequenceMap", 17, check_sequence_map),
  };
}

}  // namespace nxrt::cpu
