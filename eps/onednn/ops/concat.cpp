// Concat on oneDNN's concat primitive: the inputs in their own layout when they share one
// (blocked after Convs), else plain; oneDNN picks the output's layout.
#include <algorithm>
#include <numeric>
#include <optional>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

constexpr int64_t kMaxRank = 6;

// Concat-1's axis defaults to 1; from Concat-4 on the attribute is required.
std::optional<int64_t> concat_axis(const NodeContext& ctx) {
  if (ctx.opset() < 4) return ctx.attrs().int_or("axis", 1);
  return ctx.attrs().get_int("axis");
}

KernelMatch check_concat(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() > 0, "Concat: the node has no inputs; it needs at least one");
  for (std::size_t i = 0; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(ctx.has_input(i), "Concat: input {} is omitted; every input of Concat is required", i);
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  for (std::size_t i = 0; i < ctx.input_count(); ++i) NXRT_REQUIRE_MATCH(require_rank(ctx, i, 1, kMaxRank));
  const int64_t rank = *ctx.input_rank(0);
  const auto axis = concat_axis(ctx);
  NXRT_REQUIRE(axis.has_value(), "Concat: the axis attribute (int) is missing; Concat-{} requires it", ctx.opset());
  const auto a = normalize_axis(*axis, rank);
  NXRT_REQUIRE(a.has_value(), "Concat: axis {} is out of range for inputs of rank {}; valid axes are [{}, {}]", *axis,
               rank, -rank, rank - 1);
  double bytes = 0;
  const auto first = ctx.input_static_shape(0);
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE(*ctx.input_rank(i) == rank, "Concat: input {} has rank {} but input 0 has rank {}", i,
                 *ctx.input_rank(i), rank);
    const auto s = ctx.input_static_shape(i);
    if (!s || !first) continue;
    for (std::size_t d = 0; d < s->size(); ++d)
      NXRT_REQUIRE(static_cast<int64_t>(d) == *a || (*s)[d] == (*first)[d],
                   "Concat: input {} has shape {}, which does not match input 0's shape {} outside axis {}", i,
                   shape_to_string(*s), shape_to_string(*first), *a);
    bytes += 8.0 * static_cast<double>(shape_numel(*s));
  }
  return KernelMatch::supported(Cost{0, bytes, {}});
}

// The order of a blocked descriptor's dims from outermost to innermost stride.
std::vector<int> stride_order(const memory::desc& md) {
  const auto& strides = md.data.format_desc.blocking.strides;
  std::vector<int> order(static_cast<std::size_t>(md.data.ndims));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  return order;
}

// Whether two descriptors of possibly different dims lay out their elements alike.
bool same_layout(const memory::desc& a, const memory::desc& b) {
  if (a.data.format_kind != dnnl_blocked || b.data.format_kind != dnnl_blocked || a.data.ndims != b.data.ndims)
    return false;
  const auto& x = a.data.format_desc.blocking;
  const auto& y = b.data.format_desc.blocking;
  return x.inner_nblks == y.inner_nblks && std::equal(x.inner_blks, x.inner_blks + x.inner_nblks, y.inner_blks) &&
         std::equal(x.inner_idxs, x.inner_idxs + x.inner_nblks, y.inner_idxs) && stride_order(a) == stride_order(b);
}

Expected<void> lower_concat(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  std::vector<memory::desc> current, plain;
  for (ValueId v : node.inputs) {
    auto dims = b.dims(v);
    if (!dims) return std::unexpected(std::move(dims.error()));
    current.push_back(b.md(v));
    plain.push_back(plain_md(*dims));
  }
  const int axis = static_cast<int>(*normalize_axis(*concat_axis(ctx), static_cast<int64_t>(plain[0].dims().size())));
  using Pd = dnnl::concat::primitive_desc;
  Pd pd;
  const bool shared = std::ranges::all_of(current, [&](const memory::desc& md) { return same_layout(current[0], md); });
  if (shared && current != plain) {
    try {
      pd = Pd(axis, current, b.engine(), PlanBuilder::base_attr());
    } catch (const dnnl::error&) {
      // No implementation concatenates this blocked layout along `axis`: plain inputs below.
    }
  }
  if (!pd) {
    auto made = emit(b, f.anchor, [&] { pd = Pd(axis, plain, b.engine(), PlanBuilder::base_attr()); });
    if (!made) return made;
  }
  // Inputs that die here and tile the output densely are written in place by their producers.
  if (b.concat_in_place(f.output, node.inputs, axis, pd.dst_desc())) return {};
  std::vector<std::pair<int, int>> args;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    auto src = b.use(node.inputs[i], pd.src_desc(static_cast<int>(i)));
    if (!src) return std::unexpected(std::move(src.error()));
    args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), *src);
  }
  args.emplace_back(DNNL_ARG_DST, b.define(f.output, pd.dst_desc()));
  return emit(b, f.anchor, [&] { b.add_step(dnnl::concat(pd), pd, args, f); });
}

OnednnOpDef concat(int64_t since, int64_t until) {
  return {{{"", "Concat", since}, until, check_concat, {}}, lower_concat};
}

}  // namespace

std::vector<OnednnOpDef> concat_ops() {
  // Concat-1 defaults axis to 1, 4 requires it, 11 allows negative axes; 13 adds types only.
  return {concat(1, 3), concat(4, 10), concat(11, 12), concat(13, 0)};
}

}  // namespace nxrt::onednn
