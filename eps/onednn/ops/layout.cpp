// Ops that only change how elements are indexed: Reshape, Flatten, Squeeze, Unsqueeze and
// Identity are views of their input's buffer (no copy); Transpose is one reorder. Claiming
// them keeps attention and classifier heads in one oneDNN partition.
#include <numeric>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

KernelMatch require_float_data(const NodeContext& ctx) {
  const ValueType* t = ctx.input_type(0);
  NXRT_REQUIRE(t && t->kind == ValueType::Kind::kTensor && t->dtype == DType::kFloat32,
               "{}: the data input is {}; the onednn EP moves float32 tensors only", ctx.node().op_type,
               t ? dtype_name(t->dtype) : "absent");
  NXRT_REQUIRE(ctx.input_rank(0).has_value() && *ctx.input_rank(0) <= 6,
               "{}: the data input's rank is unknown or above 6; the onednn EP needs it (give --shape)",
               ctx.node().op_type);
  return KernelMatch::supported();
}

// Axes from the attribute (before `input_since`) or the constant input 1.
std::optional<std::vector<int64_t>> axes_of(const NodeContext& ctx, int64_t input_since) {
  if (ctx.opset() < input_since) return ctx.attrs().get_ints("axes");
  if (!ctx.has_input(1)) return std::nullopt;
  return ctx.constant_ints(1);
}

// The output dims of a view op for concrete input dims, or an error naming the node.
Expected<Dims> view_dims(const NodeContext& ctx, const Dims& in) {
  const std::string& op = ctx.node().op_type;
  auto bad = [&](std::string why) {
    return fail(ErrorCode::kRuntime, fmt::format("{}: cannot view input {} as requested", ctx.node().describe(),
                                                 shape_to_string(in)),
                std::move(why), "check the node's shape, axes or axis against its input");
  };
  const auto rank = static_cast<int64_t>(in.size());
  if (op == "Identity") return in;
  if (op == "Flatten") {
    int64_t axis = ctx.attrs().int_or("axis", 1);
    if (axis < 0) axis += rank;
    if (axis < 0 || axis > rank) return bad("axis out of range");
    const auto split = in.begin() + axis;
    return Dims{std::accumulate(in.begin(), split, int64_t{1}, std::multiplies<>()),
                std::accumulate(split, in.end(), int64_t{1}, std::multiplies<>())};
  }
  if (op == "Reshape") {
    auto shape = ctx.constant_ints(1);
    if (!shape) return bad("the shape is not a constant int64 tensor");
    const bool allow_zero = ctx.opset() >= 14 && ctx.attrs().int_or("allowzero", 0) != 0;
    Dims out;
    int64_t known = 1, infer = -1;
    for (std::size_t i = 0; i < shape->size(); ++i) {
      int64_t d = (*shape)[i];
      if (d == 0 && !allow_zero) {
        if (i >= in.size()) return bad("a 0 in the shape copies a dim the input does not have");
        d = in[i];
      }
      if (d == -1) {
        if (infer >= 0) return bad("the shape has two -1");
        infer = static_cast<int64_t>(i);
      } else if (d < 0) {
        return bad(fmt::format("the shape has a negative dim {}", d));
      } else {
        known *= d;
      }
      out.push_back(d);
    }
    const int64_t total = shape_numel(in);
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return bad(fmt::format("{} elements cannot fill the shape", total));
      out[static_cast<std::size_t>(infer)] = total / known;
    }
    if (shape_numel(out) != total) return bad(fmt::format("the shape holds {} elements, the input {}", shape_numel(out), total));
    return out;
  }
  if (op == "Squeeze") {
    auto axes = axes_of(ctx, 13);
    std::vector<bool> drop(in.size(), false);
    if (!axes) {
      for (std::size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
    } else {
      for (int64_t a : *axes) {
        auto axis = normalize_axis(a, rank);
        if (!axis || in[static_cast<std::size_t>(*axis)] != 1) return bad(fmt::format("axis {} is not a dim of size 1", a));
        drop[static_cast<std::size_t>(*axis)] = true;
      }
    }
    Dims out;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (!drop[i]) out.push_back(in[i]);
    return out;
  }
  // Unsqueeze
  auto axes = axes_of(ctx, 13);
  if (!axes) return bad("the axes are not constant");
  const int64_t out_rank = rank + static_cast<int64_t>(axes->size());
  std::vector<bool> inserted(static_cast<std::size_t>(out_rank), false);
  for (int64_t a : *axes) {
    auto axis = normalize_axis(a, out_rank);
    if (!axis || inserted[static_cast<std::size_t>(*axis)]) return bad(fmt::format("axis {} is out of range or repeated", a));
    inserted[static_cast<std::size_t>(*axis)] = true;
  }
  Dims out;
  auto next = in.begin();
  for (bool one : inserted) out.push_back(one ? 1 : *next++);
  return out;
}

KernelMatch check_view(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float_data(ctx));
  if (op == "Reshape")
    NXRT_REQUIRE(ctx.constant_ints(1).has_value(),
                 "Reshape: the shape must be a constant int64 initializer for the onednn EP; the cpu EP takes "
                 "computed shapes");
  if (op == "Squeeze" && ctx.opset() >= 13 && ctx.has_input(1))
    NXRT_REQUIRE(ctx.constant_ints(1).has_value(), "Squeeze: the axes must be a constant int64 initializer for the onednn EP");
  if (op == "Unsqueeze")
    NXRT_REQUIRE(axes_of(ctx, 13).has_value(), "Unsqueeze: the axes must be constant for the onednn EP");
  if (auto shape = ctx.input_static_shape(0)) {
    auto out = view_dims(ctx, to_dims(*shape));
    NXRT_REQUIRE(out.has_value(), "{}: {}", op, out ? std::string() : out.error().why);
    NXRT_REQUIRE(!out->empty() && out->size() <= 6, "{}: the output has rank {}; the onednn EP supports ranks 1 to 6",
                 op, out->size());
  }
  return KernelMatch::supported();
}

// The output shares the input's buffer (read plain): no step runs.
Expected<void> lower_view(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  auto in = b.dims(x);
  if (!in) return std::unexpected(std::move(in.error()));
  auto out = view_dims(ctx, *in);
  if (!out) return std::unexpected(std::move(out.error()));
  auto src = b.use(x, plain_md(*in));
  if (!src) return std::unexpected(std::move(src.error()));
  b.define_in_place(f.output, plain_md(*out), *src);
  return {};
}

std::vector<int64_t> perm_of(const NodeContext& ctx, std::size_t rank) {
  std::vector<int64_t> reversed(rank);
  for (std::size_t i = 0; i < rank; ++i) reversed[i] = static_cast<int64_t>(rank - 1 - i);
  return ctx.attrs().ints_or("perm", reversed);
}

KernelMatch check_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_data(ctx));
  const auto rank = static_cast<std::size_t>(*ctx.input_rank(0));
  NXRT_REQUIRE(rank >= 1, "Transpose: a scalar has nothing to transpose");
  auto perm = perm_of(ctx, rank);
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> iota(rank);
  std::iota(iota.begin(), iota.end(), 0);
  NXRT_REQUIRE(sorted == iota, "Transpose: perm {} is not a permutation of 0..{}", perm, rank - 1);
  return KernelMatch::supported();
}

// One reorder from the input read through permuted strides into a plain output.
Expected<void> lower_transpose(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  auto in = b.dims(x);
  if (!in) return std::unexpected(std::move(in.error()));
  const auto perm = perm_of(ctx, in->size());
  const memory::desc plain_in = plain_md(*in);
  Dims in_strides(in->size(), 1);
  for (std::size_t i = in->size(); i-- > 1;) in_strides[i - 1] = in_strides[i] * (*in)[i];
  Dims out, strides;
  for (int64_t p : perm) {
    out.push_back((*in)[static_cast<std::size_t>(p)]);
    strides.push_back(in_strides[static_cast<std::size_t>(p)]);
  }
  auto src = b.use(x, plain_in);
  if (!src) return std::unexpected(std::move(src.error()));
  const memory::desc permuted(out, memory::data_type::f32, strides);
  const int from = b.alias(*src, permuted);
  const int to = b.define(f.output, plain_md(out));
  return emit(b, f.anchor, [&] {
    dnnl::reorder::primitive_desc pd(b.engine(), permuted, b.engine(), plain_md(out), PlanBuilder::base_attr());
    b.add_step(dnnl::reorder(pd), pd, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, f);
  });
}

OnednnOpDef view(const char* op, int64_t since, int64_t until = 0) {
  return {{{"", op, since}, until, check_view, {}}, lower_view};
}

}  // namespace

std::vector<OnednnOpDef> layout_ops() {
  // Opsets 19, 21 and 23 only add types (float8, int4, float4) to these ops: open-ended ranges.
  return {view("Reshape", 5, 0),    view("Flatten", 1, 0),   view("Squeeze", 1, 0), view("Unsqueeze", 1, 0),
          view("Identity", 1, 0),   {{{"", "Transpose", 1}, 0, check_transpose, {}}, lower_transpose}};
}

}  // namespace nxrt::onednn
