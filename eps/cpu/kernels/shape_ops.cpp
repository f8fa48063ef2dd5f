// Shape ops: Reshape, Flatten, Squeeze, Unsqueeze and Identity return their input under a
// new shape (a view, no copy); Shape and Size read the input's dimensions into int64 tensors.
#include <algorithm>
#include <functional>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// The output is input 0 under the shape `shape_of` computes from the inputs: no copy.
class ViewKernel final : public Kernel {
 public:
  using ShapeOf = std::function<Expected<Shape>(const KernelContext&)>;
  explicit ViewKernel(ShapeOf shape_of) : shape_of_(std::move(shape_of)) {}
  Expected<void> compute(KernelContext& ctx) override {
    auto shape = shape_of_(ctx);
    if (!shape) return std::unexpected(std::move(shape.error()));
    ctx.set_output(0, ctx.input(0).reshaped(std::move(*shape)));
    return {};
  }
  std::string_view variant() const override { return "view"; }

 private:
  ShapeOf shape_of_;
};

KernelMatch require_data_input(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "{}: input 0 (data) is missing; it is required",
               ctx.node().op_type);
  return KernelMatch::supported();
}

// Declines axes attributes that are negative where the opset predates negative axes.
KernelMatch require_nonnegative_axes(const NodeContext& ctx, std::span<const int64_t> axes) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.opset() >= 11 || std::all_of(axes.begin(), axes.end(), [](int64_t a) { return a >= 0; }),
               "{}: axes [{}] has a negative axis; {} accepts negative axes from opset 11 on and "
               "this node has opset {}", op, fmt::join(axes, ","), op, ctx.opset());
  return KernelMatch::supported();
}

// Rejects shape inputs that no input could satisfy: more than one -1, sizes below -1, and
// with allowzero=1 a 0 beside a -1 (nothing to infer it from).
Expected<void> check_reshape_spec(std::span<const int64_t> spec, bool allow_zero) {
  const std::string text = shape_to_string(spec);
  const auto inferred = std::count(spec.begin(), spec.end(), int64_t{-1});
  if (inferred > 1)
    return fail(ErrorCode::kRuntime, fmt::format("Reshape: shape {} has {} dimensions of -1", text, inferred),
                "at most one dimension can be inferred", "give the actual size for all but one -1");
  for (std::size_t i = 0; i < spec.size(); ++i)
    if (spec[i] < -1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Reshape: shape {} has size {} at index {}", text, spec[i], i),
                  "sizes are >= 0, or -1 to infer one dimension", "fix the shape input");
  if (allow_zero && inferred == 1 && std::count(spec.begin(), spec.end(), int64_t{0}) > 0)
    return fail(ErrorCode::kRuntime, fmt::format("Reshape: shape {} has both 0 and -1 with allowzero=1", text),
                "with allowzero=1 a 0 is a size, so the -1 cannot be inferred",
                "use allowzero=0 or give the size instead of -1");
  return {};
}

// The ONNX Reshape rule: 0 copies the input's dimension (unless allowzero), -1 is inferred
// from the element count, which must be preserved.
Expected<Shape> reshape_target(const Shape& in, std::span<const int64_t> spec, bool allow_zero) {
  if (auto ok = check_reshape_spec(spec, allow_zero); !ok) return std::unexpected(std::move(ok.error()));
  Shape out(spec.begin(), spec.end());
  std::optional<std::size_t> inferred;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      inferred = i;
      out[i] = 1;
      continue;
    }
    if (out[i] != 0 || allow_zero) continue;
    if (i >= in.size())
      return fail(ErrorCode::kRuntime,
                  fmt::format("Reshape: shape {} copies dimension {} of the input, whose shape {} has "
                              "rank {}", shape_to_string(spec), i, shape_to_string(in), in.size()),
                  "with allowzero=0 a 0 means the input's size at the same index",
                  "give that size explicitly in the shape input");
    out[i] = in[i];
  }
  const int64_t numel = shape_numel(in);
  const int64_t known = shape_numel(out);
  const bool inferable = !inferred || (known > 0 && numel % known == 0);
  if (inferred && inferable) out[*inferred] = numel / known;
  if (!inferable || shape_numel(out) != numel)
    return fail(ErrorCode::kRuntime,
                fmt::format("Reshape: cannot reshape a tensor of shape {} ({} elements) to {}",
                            shape_to_string(in), numel, shape_to_string(spec)),
                inferred ? fmt::format("the other dimensions multiply to {}, which does not divide {}", known, numel)
                         : fmt::format("the requested shape has {} elements", shape_numel(out)),
                "fix the shape input so that it keeps the element count (one dimension may be -1)");
  return out;
}

KernelMatch check_reshape(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  const int64_t allow_zero = ctx.opset() >= 14 ? ctx.attrs().int_or("allowzero", 0) : 0;
  NXRT_REQUIRE(allow_zero == 0 || allow_zero == 1, "Reshape: allowzero={} is invalid; it must be 0 or 1",
               allow_zero);
  auto spec = ctx.constant_ints(1);
  if (!spec) return KernelMatch::supported();
  if (auto shape = ctx.input_static_shape(0)) {
    if (auto t = reshape_target(*shape, *spec, allow_zero == 1); !t) return declined_by(t.error());
  } else if (auto ok = check_reshape_spec(*spec, allow_zero == 1); !ok) {
    return declined_by(ok.error());
  }
  return KernelMatch::supported();
}

// Reshape-1 takes the target shape as the `shape` attribute (consumed_inputs is ignored).
KernelMatch check_reshape_1(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  const auto spec = ctx.attrs().get_ints("shape");
  NXRT_REQUIRE(spec.has_value(), "Reshape: the shape attribute (ints) is missing; Reshape-1 requires it");
  if (auto shape = ctx.input_static_shape(0)) {
    if (auto t = reshape_target(*shape, *spec, false); !t) return declined_by(t.error());
  } else if (auto ok = check_reshape_spec(*spec, false); !ok) {
    return declined_by(ok.error());
  }
  return KernelMatch::supported();
}

KernelDef reshape_1_def() {
  return KernelDef{{"", "Reshape", 1}, 4, check_reshape_1, [](const NodeContext& ctx) {
                     const std::vector<int64_t> spec = ctx.attrs().ints_or("shape", {});
                     return make_kernel<ViewKernel>([spec](const KernelContext& k) {
                       return reshape_target(k.input(0).shape(), spec, false);
                     });
                   }};
}

KernelDef reshape_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Reshape", since}, until, check_reshape, [](const NodeContext& ctx) {
                     const bool allow_zero = ctx.opset() >= 14 && ctx.attrs().int_or("allowzero", 0) == 1;
                     return make_kernel<ViewKernel>([allow_zero](const KernelContext& k) {
                       return reshape_target(k.input(0).shape(), k.input(1).to_int64_vector(), allow_zero);
                     });
                   }};
}

// Flatten: [d0..d(axis-1)] and [d(axis)..] become the two dimensions of a matrix.
Expected<Shape> flattened_shape(const Shape& in, int64_t axis) {
  const auto rank = static_cast<int64_t>(in.size());
  if (axis < -rank || axis > rank)
    return fail(ErrorCode::kRuntime,
                fmt::format("Flatten: axis {} is out of range for an input of shape {}", axis, shape_to_string(in)),
                fmt::format("valid axes are [{}, {}]", -rank, rank), "fix the axis attribute");
  const auto a = static_cast<std::size_t>(axis < 0 ? axis + rank : axis);
  return Shape{dims_product(in, 0, a), dims_product(in, a, in.size())};
}

KernelMatch check_flatten(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  const int64_t axis = ctx.attrs().int_or("axis", 1);
  NXRT_REQUIRE(axis >= 0 || ctx.opset() >= 11,
               "Flatten: axis {} is negative; Flatten accepts negative axes from opset 11 on and "
               "this node has opset {}", axis, ctx.opset());
  if (auto rank = ctx.input_rank(0))
    NXRT_REQUIRE(axis >= -*rank && axis <= *rank,
                 "Flatten: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", axis,
                 *rank, ctx.opset() >= 11 ? -*rank : 0, *rank);
  return KernelMatch::supported();
}

KernelDef flatten_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Flatten", since}, until, check_flatten, [](const NodeContext& ctx) {
                     const int64_t axis = ctx.attrs().int_or("axis", 1);
                     return make_kernel<ViewKernel>([axis](const KernelContext& k) {
                       return flattened_shape(k.input(0).shape(), axis);
                     });
                   }};
}

// Squeeze: drops the listed axes, which must have size 1, or every size-1 axis.
Expected<Shape> squeezed_shape(const Shape& in, const std::optional<std::vector<int64_t>>& axes) {
  const auto rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (!axes) {
    for (std::size_t d = 0; d < in.size(); ++d) drop[d] = in[d] == 1;
  } else {
    auto resolved = normalize_axes("Squeeze", *axes, rank, true);
    if (!resolved) return std::unexpected(std::move(resolved.error()));
    for (int64_t a : *resolved) {
      const auto d = static_cast<std::size_t>(a);
      if (in[d] != 1)
        return fail(ErrorCode::kRuntime,
                    fmt::format("Squeeze: axis {} has size {} in input shape {}", a, in[d], shape_to_string(in)),
                    "only axes of size 1 can be squeezed", "remove the axis from axes");
      drop[d] = true;
    }
  }
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d)
    if (!drop[d]) out.push_back(in[d]);
  return out;
}

// The axes of a Squeeze or Unsqueeze when known before running: the attribute before
// opset 13, a constant input 1 from opset 13 on.
std::optional<std::vector<int64_t>> static_axes(const NodeContext& ctx) {
  if (ctx.opset() >= 13) return ctx.constant_ints(1);
  return ctx.attrs().get_ints("axes");
}

KernelMatch check_squeeze(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  if (ctx.opset() >= 13 && ctx.has_input(1)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  auto axes = static_axes(ctx);
  if (!axes) return KernelMatch::supported();
  NXRT_REQUIRE_MATCH(require_nonnegative_axes(ctx, *axes));
  if (auto shape = ctx.input_static_shape(0)) {
    if (auto s = squeezed_shape(*shape, axes); !s) return declined_by(s.error());
  } else if (auto rank = ctx.input_rank(0)) {
    if (auto a = normalize_axes("Squeeze", *axes, *rank, true); !a) return declined_by(a.error());
  }
  return KernelMatch::supported();
}

KernelDef squeeze_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Squeeze", since}, until, check_squeeze, [](const NodeContext& ctx) {
                     const bool from_input = ctx.opset() >= 13;
                     const auto attr_axes = ctx.attrs().get_ints("axes");
                     return make_kernel<ViewKernel>([from_input, attr_axes](const KernelContext& k) {
                       if (!from_input) return squeezed_shape(k.input(0).shape(), attr_axes);
                       if (!k.has_input(1)) return squeezed_shape(k.input(0).shape(), std::nullopt);
                       return squeezed_shape(k.input(0).shape(), k.input(1).to_int64_vector());
                     });
                   }};
}

// Unsqueeze: inserts size-1 axes at the listed positions of the output.
Expected<Shape> unsqueezed_shape(const Shape& in, std::span<const int64_t> axes) {
  const auto out_rank = static_cast<int64_t>(in.size() + axes.size());
  auto resolved = normalize_axes("Unsqueeze", axes, out_rank, true);
  if (!resolved) return std::unexpected(std::move(resolved.error()));
  Shape out(static_cast<std::size_t>(out_rank), 1);
  std::vector<bool> inserted(out.size(), false);
  for (int64_t a : *resolved) inserted[static_cast<std::size_t>(a)] = true;
  std::size_t next = 0;
  for (std::size_t d = 0; d < out.size(); ++d)
    if (!inserted[d]) out[d] = in[next++];
  return out;
}

KernelMatch check_unsqueeze(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  if (ctx.opset() >= 13) {
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  } else {
    NXRT_REQUIRE(ctx.attrs().get_ints("axes").has_value(),
                 "Unsqueeze: the axes attribute (ints) is missing; Unsqueeze-{} requires it", ctx.opset());
  }
  auto axes = static_axes(ctx);
  if (!axes) return KernelMatch::supported();
  NXRT_REQUIRE_MATCH(require_nonnegative_axes(ctx, *axes));
  // Only the rank matters for the axes' validity, so dims of 1 stand in for symbolic ones.
  if (auto rank = ctx.input_rank(0))
    if (auto s = unsqueezed_shape(Shape(static_cast<std::size_t>(*rank), 1), *axes); !s) return declined_by(s.error());
  return KernelMatch::supported();
}

KernelDef unsqueeze_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Unsqueeze", since}, until, check_unsqueeze, [](const NodeContext& ctx) {
                     const bool from_input = ctx.opset() >= 13;
                     const auto attr_axes = ctx.attrs().ints_or("axes", {});
                     return make_kernel<ViewKernel>([from_input, attr_axes](const KernelContext& k) {
                       if (!from_input) return unsqueezed_shape(k.input(0).shape(), attr_axes);
                       return unsqueezed_shape(k.input(0).shape(), k.input(1).to_int64_vector());
                     });
                   }};
}

// Identity passes any value through: tensors always, sequences from opset 14, optionals
// from opset 16.
class PassThroughKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    ctx.set_output_value(0, ctx.value(0));
    return {};
  }
  std::string_view variant() const override { return "view"; }
};

KernelMatch check_identity(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  const ValueType* type = ctx.input_type(0);
  if (!type) return KernelMatch::supported();
  NXRT_REQUIRE(type->kind != ValueType::Kind::kSequence || ctx.opset() >= 14,
               "Identity: input 0 is a {}; Identity takes sequences from opset 14 on and this node has opset {}",
               type->to_string(), ctx.opset());
  NXRT_REQUIRE(type->kind != ValueType::Kind::kOptional || ctx.opset() >= 16,
               "Identity: input 0 is a {}; Identity takes optionals from opset 16 on and this node has opset {}",
               type->to_string(), ctx.opset());
  NXRT_REQUIRE(type->kind != ValueType::Kind::kMap, "Identity: input 0 is a map; the cpu EP has no map values");
  return KernelMatch::supported();
}

KernelDef identity_def() {
  return KernelDef{{"", "Identity", 1}, 0, check_identity,
                   [](const NodeContext&) { return make_kernel<PassThroughKernel>(); }};
}

// Shape-15 takes dims [start, end) with negative values counted from the back and both
// clamped to [0, rank]; Shape-1 takes them all.
class ShapeKernel final : public Kernel {
 public:
  ShapeKernel(int64_t start, std::optional<int64_t> end) : start_(start), end_(end) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Shape& in = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(in.size());
    const int64_t begin = clamp_index(start_, rank);
    const int64_t end = end_ ? clamp_index(*end_, rank) : rank;
    const int64_t n = std::max<int64_t>(end - begin, 0);
    auto out = ctx.output(0, DType::kInt64, {n});
    if (!out) return std::unexpected(std::move(out.error()));
    std::copy_n(in.begin() + begin, n, out->mut_as<int64_t>());
    return {};
  }

 private:
  static int64_t clamp_index(int64_t i, int64_t rank) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); }
  int64_t start_;
  std::optional<int64_t> end_;
};

KernelMatch check_shape(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_data_input(ctx));
  return KernelMatch::supported();
}

KernelDef shape_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Shape", since}, until, check_shape, [](const NodeContext& ctx) {
                     if (ctx.opset() < 15) return make_kernel<ShapeKernel>(0, std::nullopt);
                     return make_kernel<ShapeKernel>(ctx.attrs().int_or("start", 0), ctx.attrs().get_int("end"));
                   }};
}

// Size: the input's element count as an int64 scalar.
class SizeKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    auto out = ctx.output(0, DType::kInt64, {});
    if (!out) return std::unexpected(std::move(out.error()));
    *out->mut_as<int64_t>() = ctx.input(0).numel();
    return {};
  }
};

KernelDef size_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Size", since}, until, check_shape,
                   [](const NodeContext&) { return make_kernel<SizeKernel>(); }};
}

}  // namespace

std::vector<KernelDef> shape_ops_kernels() {
  return {
      reshape_def(5, 13),    reshape_def(14, 0),   flatten_def(1, 8),     flatten_def(9, 10),
      flatten_def(11, 0),    squeeze_def(1, 10),   squeeze_def(11, 12),   squeeze_def(13, 0),
      unsqueeze_def(1, 10),  unsqueeze_def(11, 12), unsqueeze_def(13, 0), identity_def(),
      shape_def(1, 14),      shape_def(15, 0),     reshape_1_def(),       size_def(1, 12),
      size_def(13, 0),
  };
}

}  // namespace nxrt::cpu
