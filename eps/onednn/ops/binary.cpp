// Add, Sub, Mul, Div, Max, Min with NumPy broadcasting on oneDNN's binary primitive, and
// Sum on its sum primitive (same shapes) or a chain of binary adds (broadcasting).
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/post_ops.h"

namespace nxrt::onednn {
namespace {

using dnnl::algorithm;

algorithm binary_algorithm(const std::string& op) {
  if (op == "Add" || op == "Sum") return algorithm::binary_add;
  if (op == "Sub") return algorithm::binary_sub;
  if (op == "Mul") return algorithm::binary_mul;
  if (op == "Div") return algorithm::binary_div;
  if (op == "Max") return algorithm::binary_max;
  return algorithm::binary_min;
}

bool commutative(const std::string& op) { return op != "Sub" && op != "Div"; }

// Static shape of every input, when all are known.
std::optional<std::vector<Shape>> static_shapes(const NodeContext& ctx) {
  std::vector<Shape> out;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    auto s = ctx.input_static_shape(i);
    if (!s) return std::nullopt;
    out.push_back(*s);
  }
  return out;
}

Shape broadcast_shape(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const Shape& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const Shape& s : shapes)
    for (std::size_t i = 0; i < s.size(); ++i) {
      int64_t& d = out[rank - s.size() + i];
      if (s[i] != 1) d = s[i];
    }
  return out;
}

KernelMatch check_binary(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE(ctx.input_count() == 2, "{}: {} inputs; the onednn EP takes exactly 2 (the cpu EP takes any number)", op,
               ctx.input_count());
  const auto shapes = static_shapes(ctx);
  NXRT_REQUIRE(shapes.has_value(),
               "{}: the input shapes are not known statically; the onednn EP needs them to plan broadcasting (give "
               "--shape)",
               op);
  const Shape out = broadcast_shape(*shapes);
  NXRT_REQUIRE(!out.empty() && out.size() <= 6, "{}: the output has rank {}; the onednn EP supports ranks 1 to 6", op,
               out.size());
  NXRT_REQUIRE(shape_numel(out) > 0, "{}: the output {} is empty; the onednn EP needs non-empty tensors", op,
               shape_to_string(out));
  const bool first_full = pad_leading(to_dims((*shapes)[0]), out.size()) == to_dims(out);
  const bool second_full = pad_leading(to_dims((*shapes)[1]), out.size()) == to_dims(out);
  NXRT_REQUIRE(first_full || (second_full && commutative(op)),
               "{}: the first input {} broadcasts to {}; oneDNN broadcasts only the second input of {} (the cpu EP "
               "takes both)",
               op, shape_to_string((*shapes)[0]), shape_to_string(out), op);
  for (const Shape& s : *shapes)
    NXRT_REQUIRE(broadcasts_to(pad_leading(to_dims(s), out.size()), to_dims(out)),
                 "{}: input shape {} does not broadcast to {}", op, shape_to_string(s), shape_to_string(out));
  return KernelMatch::supported(Cost{static_cast<double>(shape_numel(out)), 12.0 * static_cast<double>(shape_numel(out)), {}});
}

Expected<void> lower_binary(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  ValueId a = node.inputs[0], c = node.inputs[1];
  auto ad = b.dims(a), cd = b.dims(c);
  if (!ad || !cd) return std::unexpected(std::move((!ad ? ad : cd).error()));
  const Dims out = to_dims(broadcast_shape({Shape(ad->begin(), ad->end()), Shape(cd->begin(), cd->end())}));
  if (pad_leading(*ad, out.size()) != out) {
    std::swap(a, c);
    std::swap(ad, cd);
  }
  // src0 keeps its layout (blocked is fine) when src1 has the same dims, and src1 follows it;
  // a broadcast src1 is read plain, and so is src0 then.
  const Dims c_padded = pad_leading(*cd, out.size());
  const bool keep_layout = !b.is_constant(a) && *ad == out && c_padded == out;
  const memory::desc a_md = keep_layout ? b.md(a) : plain_md(out);
  const memory::desc c_md = c_padded == out ? a_md : plain_md(c_padded);
  auto post = plan_post_ops(b, f, out);
  if (!post) return std::unexpected(std::move(post.error()));
  const dnnl::binary::desc desc(binary_algorithm(node.op_type), a_md, c_md, a_md);
  auto made = pd_with_post_ops<dnnl::binary::primitive_desc>(b, f, desc, *post);
  if (!made) return std::unexpected(std::move(made.error()));
  const auto& [pd, fused] = *made;
  auto src0 = b.use(a, a_md);
  auto src1 = b.use(c, c_md);
  if (!src0 || !src1) return std::unexpected(std::move((!src0 ? src0 : src1).error()));
  std::vector<std::pair<int, int>> args = {{DNNL_ARG_SRC_0, *src0}, {DNNL_ARG_SRC_1, *src1}};
  int dst = -1;
  if (fused) {
    auto d = bind_fused_output(b, f, *post, a_md, args);
    if (!d) return std::unexpected(std::move(d.error()));
    dst = *d;
  } else {
    const bool in_place = b.can_overwrite(a, *src0) && b.buffer_of(*src0) != b.buffer_of(*src1);
    dst = in_place ? b.define_in_place(f.output, a_md, *src0) : b.define(f.output, a_md);
  }
  args.emplace_back(DNNL_ARG_DST, dst);
  if (auto r = emit(b, f.anchor, [&] { b.add_step(dnnl::binary(pd), pd, args, f); }); !r) return r;
  return fused ? Expected<void>{} : emit_unfused_post_ops(b, f, dst);
}

KernelMatch check_sum(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE(ctx.input_count() >= 1, "Sum: no inputs");
  const auto shapes = static_shapes(ctx);
  NXRT_REQUIRE(shapes.has_value(), "Sum: the input shapes are not known statically; the onednn EP needs them");
  for (const Shape& s : *shapes)
    NXRT_REQUIRE(s == shapes->front() && !s.empty() && shape_numel(s) > 0,
                 "Sum: inputs {} and {} differ (or are empty or scalars); the onednn EP sums equal shapes only (the "
                 "cpu EP broadcasts)",
                 shape_to_string(shapes->front()), shape_to_string(s));
  return KernelMatch::supported();
}

Expected<void> lower_sum(PlanBuilder& b, const FusedOp& f) {
  const Node& node = b.graph().node(f.anchor);
  const memory::desc md = b.md(node.inputs[0]);
  std::vector<memory::desc> mds;
  std::vector<std::pair<int, int>> args;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    auto v = b.use(node.inputs[i], md);
    if (!v) return std::unexpected(std::move(v.error()));
    mds.push_back(md);
    args.emplace_back(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(i), *v);
  }
  return emit(b, f.anchor, [&] {
    dnnl::sum::primitive_desc pd(md, std::vector<float>(mds.size(), 1.0f), mds, b.engine(), PlanBuilder::base_attr());
    args.emplace_back(DNNL_ARG_DST, b.define(f.output, md));
    b.add_step(dnnl::sum(pd), pd, args, f);
  });
}

OnednnOpDef binary(const char* op, int64_t since) {
  return {{{"", op, since}, 0, check_binary, {}}, lower_binary};
}

}  // namespace

std::vector<OnednnOpDef> binary_ops() {
  // Before opset 7 (Add, Sub, Mul, Div) and 8 (Max, Min) these ops broadcast differently.
  return {binary("Add", 7), binary("Sub", 7), binary("Mul", 7), binary("Div", 7), binary("Max", 8), binary("Min", 8),
          {{{"", "Sum", 6}, 0, check_sum, {}}, lower_sum}};
}

}  // namespace nxrt::onednn
