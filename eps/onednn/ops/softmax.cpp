// Softmax and LogSoftmax on oneDNN's softmax: opset 1..12 over the input coerced to 2-D at
// `axis`, opset 13+ along one axis, in the input's own layout and in place when the input dies.
#include <optional>
#include <span>

#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::algorithm;

// oneDNN's limit on the rank of a tensor (DNNL_MAX_NDIMS).
constexpr int64_t kMaxRank = DNNL_MAX_NDIMS;

// Opset 1..12 flatten [0, axis) x [axis, rank) and default to axis 1; 13+ take one axis, default -1.
bool coerces_2d(const NodeContext& ctx) { return ctx.opset() < 13; }

int64_t softmax_axis(const NodeContext& ctx) { return ctx.attrs().int_or("axis", coerces_2d(ctx) ? 1 : -1); }

KernelMatch check_softmax(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 1, kMaxRank));
  const int64_t rank = *ctx.input_rank(0);
  const int64_t axis = softmax_axis(ctx);
  NXRT_REQUIRE(normalize_axis(axis, rank).has_value(),
               "{}: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", op, axis, rank, -rank,
               rank - 1);
  // Per element: the max, exp, sum and scale passes; one read and one write.
  const auto x = ctx.input_static_shape(0);
  const double n = x ? static_cast<double>(shape_numel(*x)) : 0.0;
  return KernelMatch::supported(Cost{4.0 * n, 8.0 * n, {}});
}

// The one dim a softmax over dims [from, rank) runs along when every other dim there is 1 (opset
// 1..12 at the last axis, say), so that it needs no 2-D view; nullopt when several are not 1.
std::optional<int> single_axis(const Dims& dims, std::size_t from) {
  std::optional<int> found;
  for (std::size_t i = from; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (found) return std::nullopt;
    found = static_cast<int>(i);
  }
  return found.value_or(static_cast<int>(from));
}

Expected<void> lower_softmax(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const ValueId x = ctx.node().inputs[0];
  auto dims = b.dims(x);
  if (!dims) return std::unexpected(std::move(dims.error()));
  const auto axis = static_cast<std::size_t>(*normalize_axis(softmax_axis(ctx), static_cast<int64_t>(dims->size())));
  const algorithm alg = ctx.node().op_type == "LogSoftmax" ? algorithm::softmax_log : algorithm::softmax_accurate;
  auto add = [&](const memory::desc& md, int along, int src, int dst) {
    return emit(b, f.anchor, [&] {
      dnnl::softmax_v2_forward::primitive_desc pd(
          dnnl::softmax_v2_forward::desc(dnnl::prop_kind::forward_inference, alg, md, md, along),
          PlanBuilder::base_attr(), b.engine());
      b.add_step(dnnl::softmax_v2_forward(pd), pd, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}}, f);
    });
  };
  if (auto along = coerces_2d(ctx) ? single_axis(*dims, axis) : static_cast<int>(axis)) {
    // One axis, in the input's own layout, in place when the input dies.
    const memory::desc md = b.md(x);
    auto src = b.use(x, md);
    if (!src) return std::unexpected(std::move(src.error()));
    const int dst = b.can_overwrite(x, *src) ? b.define_in_place(f.output, md, *src) : b.define(f.output, md);
    return add(md, *along, *src, dst);
  }
  // Opset 1..12 over several dims: plain [outer, inner] views of input and output, softmax over dim 1.
  const std::span<const int64_t> all(*dims);
  const memory::desc md = plain_md({shape_numel(all.first(axis)), shape_numel(all.subspan(axis))});
  auto src = b.use(x, md);
  if (!src) return std::unexpected(std::move(src.error()));
  if (b.can_overwrite(x, *src))
    b.define_in_place(f.output, plain_md(*dims), *src);
  else
    b.define(f.output, plain_md(*dims));
  auto dst = b.use(f.output, md);
  if (!dst) return std::unexpected(std::move(dst.error()));
  return add(md, 1, *src, *dst);
}

OnednnOpDef softmax(const char* op, int64_t since, int64_t until) {
  return {{{"", op, since}, until, check_softmax, {}}, lower_softmax};
}

}  // namespace

std::vector<OnednnOpDef> softmax_ops() {
  return {softmax("Softmax", 1, 12), softmax("Softmax", 13, 0), softmax("LogSoftmax", 1, 12),
          softmax("LogSoftmax", 13, 0)};
}

}  // namespace nxrt::onednn
