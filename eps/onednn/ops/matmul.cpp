// MatMul (NumPy semantics: 1-D operands, broadcast batch dims) and Gemm (transA, transB,
// alpha, beta, C) on oneDNN's matmul primitive, or a 1x1 convolution where B is constant:
// constant B packed once, fused Add and activations.
#include <algorithm>

#include "native/matmul.h"
#include "ops/op_util.h"
#include "ops/ops.h"
#include "ops/post_ops.h"

namespace nxrt::onednn {
namespace {

using Pd = dnnl::matmul::primitive_desc;
using Args = std::vector<std::pair<int, int>>;
// Adds the source, weights and bias views of a matmul step once its primitive is chosen.
using BindFn = std::function<Expected<void>(const Pd&, Args&)>;

memory::desc any_md(const Dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); }

// A {rows, cols} matrix whose bytes hold it transposed ({cols, rows} row-major).
memory::desc transposed_md(int64_t rows, int64_t cols) {
  return memory::desc({rows, cols}, memory::data_type::f32, Dims{1, rows});
}

// A contiguous copy of a constant's values, each times `factor` (Gemm's alpha and beta).
Tensor scaled_copy(const Tensor& t, float factor) {
  Tensor out = copy_to_contiguous(t.view());
  float* p = out.mut_as<float>();
  if (factor != 1.0f)
    for (int64_t i = 0; i < out.numel(); ++i) p[i] *= factor;
  return out;
}

// How a broadcast Add operand of dims `operand` is read by a result of dims `dst` (padded with
// leading 1s like plan_post_ops does): per result dim above 1 its extent and the operand's
// stride, contiguous dims merged. Equal patterns read the same elements in the same order.
std::optional<std::vector<std::pair<int64_t, int64_t>>> read_pattern(const Dims& operand, const Dims& dst) {
  Dims padded = pad_leading(operand, dst.size());
  // An operand of higher rank than the result reads it alike when its extra dims are 1s.
  while (padded.size() > dst.size() && padded.front() == 1) padded.erase(padded.begin());
  if (!broadcasts_to(padded, dst)) return std::nullopt;
  Dims strides(padded.size());
  int64_t stride = 1;
  for (std::size_t i = padded.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= padded[i];
  }
  std::vector<std::pair<int64_t, int64_t>> out;
  for (std::size_t i = 0; i < dst.size(); ++i) {
    if (dst[i] == 1) continue;
    const int64_t s = padded[i] == 1 ? 0 : strides[i];
    if (!out.empty() && out.back().second == s * dst[i])
      out.back() = {out.back().first * dst[i], s};
    else
      out.emplace_back(dst[i], s);
  }
  return out;
}

// Whether every fused Add reads the same operand elements when the primitive writes the
// result with dims `prim` instead of the ONNX dims `out` (promoted 1-D operands, flattened batch).
bool adds_survive_reshape(const PlanBuilder& b, const FusedOp& f, const Dims& prim, const Dims& out) {
  if (prim == out) return true;
  for (const PostOp& op : f.post_ops) {
    if (op.kind != PostOp::Kind::kAdd) continue;
    auto od = b.dims(op.operand);
    if (!od) return false;
    const auto want = read_pattern(*od, out);
    const auto got = read_pattern(*od, prim);
    if (!want || !got || *want != *got) return false;
  }
  return true;
}

// The matmul step of `f`, its post-ops fused when oneDNN takes them and the reshaped result
// reads their operands unchanged. The primitive writes dims `prim`; f.output then gets the
// ONNX dims `out` over the same (plain) elements.
Expected<void> emit_matmul(PlanBuilder& b, const FusedOp& f, const dnnl::matmul::desc& desc, const Dims& prim,
                           const Dims& out, const BindFn& bind) {
  auto post = plan_post_ops(b, f, prim);
  if (!post) return std::unexpected(std::move(post.error()));
  FusedOp alone = f;
  alone.post_ops.clear();
  auto made = pd_with_post_ops<Pd>(b, adds_survive_reshape(b, f, prim, out) ? f : alone, desc, *post);
  if (!made) return std::unexpected(std::move(made.error()));
  const auto& [pd, fused] = *made;
  Args args;
  if (auto r = bind(pd, args); !r) return r;
  auto dst = fused ? bind_fused_output(b, f, *post, pd.dst_desc(), args) : b.define(f.output, pd.dst_desc());
  if (!dst) return std::unexpected(std::move(dst.error()));
  args.emplace_back(DNNL_ARG_DST, *dst);
  if (auto r = emit(b, f.anchor, [&] { b.add_step(dnnl::matmul(pd), pd, args, f); }); !r) return r;
  const int result = prim == out ? *dst : b.define_in_place(f.output, plain_md(out), *dst);
  return fused ? Expected<void>{} : emit_unfused_post_ops(b, f, result);
}

// ---- MatMul ----

// The product in the primitive's terms: operands promoted to matrices and padded to one rank.
struct MatMulShape {
  Dims a, b;
  Dims prim;  // broadcast batch dims, M, N
  Dims out;   // the ONNX result: the promoted dims dropped again
  int64_t m = 0, k = 0, n = 0;
};

Expected<MatMulShape> matmul_shape(const Dims& ad, const Dims& bd) {
  MatMulShape s;
  const std::size_t rank = std::max<std::size_t>({ad.size(), bd.size(), 2});
  s.a = pad_leading(ad.size() == 1 ? Dims{1, ad[0]} : ad, rank);
  s.b = pad_leading(bd.size() == 1 ? Dims{bd[0], 1} : bd, rank);
  s.m = s.a[rank - 2];
  s.k = s.a[rank - 1];
  s.n = s.b[rank - 1];
  if (s.b[rank - 2] != s.k)
    return fail(ErrorCode::kRuntime,
                fmt::format("MatMul: A {} has {} columns but B {} has {} rows", shape_to_string(ad), s.k,
                            shape_to_string(bd), s.b[rank - 2]),
                "the inner dims of a matrix product must match", "check the shapes of the node's inputs");
  for (std::size_t i = 0; i + 2 < rank; ++i) {
    if (s.a[i] != s.b[i] && s.a[i] != 1 && s.b[i] != 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("MatMul: the batch dims of A {} and B {} do not broadcast", shape_to_string(ad),
                              shape_to_string(bd)),
                  "batch dims must be equal or 1", "check the shapes of the node's inputs");
    s.prim.push_back(s.a[i] == 1 ? s.b[i] : s.a[i]);
  }
  s.out = s.prim;
  if (ad.size() > 1) s.out.push_back(s.m);
  if (bd.size() > 1) s.out.push_back(s.n);
  s.prim.push_back(s.m);
  s.prim.push_back(s.n);
  return s;
}

KernelMatch check_matmul(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 1, 6));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 1, 1, 6));
  NXRT_REQUIRE(*ctx.input_rank(0) > 1 || *ctx.input_rank(1) > 1,
               "MatMul: A and B are both 1-D (a dot product with a scalar result); the onednn EP needs a matrix "
               "operand (the cpu EP takes it)");
  const auto a = ctx.input_static_shape(0), b = ctx.input_static_shape(1);
  if (!a || !b) return KernelMatch::supported();
  const auto s = matmul_shape(to_dims(*a), to_dims(*b));
  NXRT_REQUIRE(s.has_value(), "{}", s ? std::string() : s.error().what);
  return KernelMatch::supported(
      Cost{2.0 * static_cast<double>(shape_numel(s->prim) * s->k),
           4.0 * static_cast<double>(shape_numel(*a) + shape_numel(*b) + shape_numel(s->prim)),
           {}});
}

// The constant side of a product run as a 1x1 convolution: Y = A (alpha op(B)) + bias.
struct ConstantProduct {
  int64_t m, k, n;
  Dims out;                   // the ONNX result's dims (m x n elements)
  bool b_transposed = false;  // the initializer holds B^T, N x K (Gemm's transB)
  float alpha = 1.0f;
  ValueId bias = kNoValue;    // a constant of n values added to every row, times bias_scale
  float bias_scale = 1.0f;
  std::size_t first_post_op = 0;  // f.post_ops before this one are folded in already
};

// A MatMul's following Add of a constant of n values, which becomes the convolution's bias.
void take_bias_add(const PlanBuilder& b, const FusedOp& f, ConstantProduct& p) {
  if (f.post_ops.empty() || f.post_ops[0].kind != PostOp::Kind::kAdd || !b.is_constant(f.post_ops[0].operand)) return;
  auto od = b.dims(f.post_ops[0].operand);
  if (!od || shape_numel(*od) != p.n || od->empty() || od->back() != p.n) return;
  p.bias = f.post_ops[0].operand;
  p.first_post_op = 1;
}

// A constant-weight 2-D product Y[M,N] = A[M,K] B[K,N] run as a 1x1 convolution over M
// "pixels" in nhwc, which is A's and Y's row-major layout: oneDNN's 1x1 convolution kernels
// are faster than its matmul on this kind of problem, and are generated when the primitive
// is made, where the matmul's GEMM generates its kernels on the first run of the process
// (about 16 ms, which an EPContext model would pay at every start). A bias becomes the
// convolution's bias; activations and a residual Add are post-ops. nullopt: oneDNN has no
// such convolution here, use the matmul primitive.
std::optional<Expected<void>> lower_as_1x1_conv(PlanBuilder& b, const FusedOp& f, const ConstantProduct& p) {
  const Node& node = b.graph().node(f.anchor);
  const ValueId a = node.inputs[0], w = node.inputs[1];
  const int64_t m = p.m, k = p.k, n = p.n;
  auto nhwc = [](int64_t c, int64_t h) {
    return memory::desc({1, c, h, 1}, memory::data_type::f32, memory::format_tag::nhwc);
  };
  dnnl::post_ops ops;
  ValueId addend = kNoValue;
  std::size_t next = p.first_post_op;
  for (; next < f.post_ops.size(); ++next) {
    const PostOp& op = f.post_ops[next];
    if (op.kind == PostOp::Kind::kEltwise) {
      for (const EltwiseSpec& e : op.eltwise) ops.append_eltwise(1.0f, e.alg, e.alpha, e.beta);
      continue;
    }
    auto od = b.dims(op.operand);
    if (addend != kNoValue || !od || shape_numel(*od) != m * n || !b.is_last_use(op.operand)) break;
    addend = op.operand;
    ops.append_sum(1.0f);
  }
  dnnl::primitive_attr attr = PlanBuilder::base_attr();
  attr.set_post_ops(ops);
  const memory::desc src_md = nhwc(k, m), dst_md = nhwc(n, m);
  const auto any = [](const Dims& d) { return memory::desc(d, memory::data_type::f32, memory::format_tag::any); };
  using ConvPd = dnnl::convolution_forward::primitive_desc;
  std::optional<ConvPd> pd;
  try {
    const auto kind = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    pd = p.bias != kNoValue
             ? ConvPd({kind, alg, src_md, any({n, k, 1, 1}), any({n}), dst_md, {1, 1}, {0, 0}, {0, 0}}, attr, b.engine())
             : ConvPd({kind, alg, src_md, any({n, k, 1, 1}), dst_md, {1, 1}, {0, 0}, {0, 0}}, attr, b.engine());
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
  if (std::string_view(pd->impl_info_str()).starts_with("ref")) return std::nullopt;

  auto src = b.use(a, plain_md({m, k}));
  if (!src) return Expected<void>(std::unexpected(std::move(src.error())));
  // The convolution's oihw weights {N,K,1,1} are B^T: B[K,N] row-major read with strides
  // {1,N}, or B^T[N,K] as it is.
  const memory::desc user_w({n, k, 1, 1}, memory::data_type::f32, p.b_transposed ? Dims{k, 1, 1, 1} : Dims{1, n, 1, 1});
  auto weights = b.weight(node.name + ":B", pd->weights_desc(), {w}, [&]() -> Expected<PlainWeight> {
    auto t = b.constant(w);
    if (!t) return std::unexpected(std::move(t.error()));
    return PlainWeight{user_w, scaled_copy(*t, p.alpha)};
  });
  if (!weights) return Expected<void>(std::unexpected(std::move(weights.error())));
  Args args = {{DNNL_ARG_SRC, b.alias(*src, src_md)}, {DNNL_ARG_WEIGHTS, *weights}};
  if (p.bias != kNoValue) {
    auto bias = b.weight(node.name + ":bias", plain_md({n}), {p.bias}, [&]() -> Expected<PlainWeight> {
      auto t = b.constant(p.bias);
      if (!t) return std::unexpected(std::move(t.error()));
      return PlainWeight{plain_md({n}), scaled_copy(*t, p.bias_scale).reshaped(Shape{n})};
    });
    if (!bias) return Expected<void>(std::unexpected(std::move(bias.error())));
    args.emplace_back(DNNL_ARG_BIAS, *bias);
  }
  const Dims& out = p.out;
  int result = -1;
  if (addend != kNoValue) {
    auto od = b.dims(addend);
    auto sum = b.use(addend, plain_md(*od));
    if (!sum) return Expected<void>(std::unexpected(std::move(sum.error())));
    if (b.can_overwrite(addend, *sum) && b.buffer_of(*sum) != b.buffer_of(*src)) {
      result = b.define_in_place(f.output, plain_md(out), *sum);
    } else {
      result = b.define(f.output, plain_md(out));
      auto copy = emit(b, f.anchor, [&] {
        dnnl::reorder::primitive_desc cpd(b.engine(), plain_md(out), b.engine(), plain_md(out), PlanBuilder::base_attr());
        b.add_step(dnnl::reorder(cpd), cpd, {{DNNL_ARG_FROM, b.alias(*sum, plain_md(out))}, {DNNL_ARG_TO, result}}, f,
                   "Copy");
      });
      if (!copy) return copy;
    }
  } else {
    result = b.define(f.output, plain_md(out));
  }
  args.emplace_back(DNNL_ARG_DST, b.alias(result, dst_md));
  if (auto r = emit(b, f.anchor, [&] { b.add_step(dnnl::convolution_forward(*pd), *pd, args, f); }); !r) return r;
  return emit_unfused_post_ops(b, f, result, next);
}

// A product of two computed operands on the cpu EP's GEMM (native/matmul.h), whose kernels
// need no generation at the first run; the fused ops follow as their own steps.
Expected<void> lower_on_native_gemm(PlanBuilder& b, const FusedOp& f, const MatMulShape& s) {
  const Node& node = b.graph().node(f.anchor);
  auto a = b.use(node.inputs[0], plain_md(s.a));
  if (!a) return std::unexpected(std::move(a.error()));
  auto w = b.use(node.inputs[1], plain_md(s.b));
  if (!w) return std::unexpected(std::move(w.error()));
  auto kernel = make_native_matmul(s.a, s.b);
  if (!kernel) return forward_error(std::move(kernel), node.describe());
  const int dst = b.define(f.output, plain_md(s.prim));
  b.add_native_step(std::move(*kernel), {{DNNL_ARG_SRC, *a}, {DNNL_ARG_WEIGHTS, *w}, {DNNL_ARG_DST, dst}}, f);
  const int result = s.prim == s.out ? dst : b.define_in_place(f.output, plain_md(s.out), dst);
  return emit_unfused_post_ops(b, f, result);
}

Expected<void> lower_matmul(PlanBuilder& b, const FusedOp& f) {
  const Node& node = b.graph().node(f.anchor);
  const ValueId a = node.inputs[0], w = node.inputs[1];
  auto ad = b.dims(a), bd = b.dims(w);
  if (!ad || !bd) return std::unexpected(std::move((!ad ? ad : bd).error()));
  auto shape = matmul_shape(*ad, *bd);
  if (!shape) return forward_error(std::move(shape), node.describe());
  MatMulShape& s = *shape;
  // B without batch dims: A's batch and rows flattened make one 2-D GEMM with packed weights,
  // unless a fused Add would then read its operand differently.
  const std::size_t rank = s.a.size();
  const bool b_is_matrix = std::all_of(s.b.begin(), s.b.end() - 2, [](int64_t d) { return d == 1; });
  const Dims flat = {shape_numel(s.prim) / s.n, s.n};
  if (rank > 2 && b_is_matrix && adds_survive_reshape(b, f, flat, s.out)) {
    s.a = {flat[0], s.k};
    s.b = {s.k, s.n};
    s.prim = flat;
  }
  const bool constant_b = b.is_constant(w);
  if (constant_b && s.a.size() == 2) {
    ConstantProduct p{.m = s.a[0], .k = s.k, .n = s.n, .out = s.out};
    take_bias_add(b, f, p);
    if (auto done = lower_as_1x1_conv(b, f, p)) return *done;
  }
  if (!constant_b) return lower_on_native_gemm(b, f, s);
  const dnnl::matmul::desc desc(plain_md(s.a), any_md(s.b), plain_md(s.prim));
  return emit_matmul(b, f, desc, s.prim, s.out, [&](const Pd& pd, Args& args) -> Expected<void> {
    auto src = b.use(a, plain_md(s.a));
    if (!src) return std::unexpected(std::move(src.error()));
    auto weights = b.weight(node.name + ":B", pd.weights_desc(), {w}, [&]() -> Expected<PlainWeight> {
      auto t = b.constant(w);
      if (!t) return std::unexpected(std::move(t.error()));
      return PlainWeight{plain_md(s.b), copy_to_contiguous(t->view())};
    });
    if (!weights) return std::unexpected(std::move(weights.error()));
    args = {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *weights}};
    return {};
  });
}

// ---- Gemm ----

struct GemmAttrs {
  float alpha, beta;
  bool trans_a, trans_b;
};

GemmAttrs read_gemm_attrs(const AttributeMap& attrs) {
  return GemmAttrs{attrs.float_or("alpha", 1.f), attrs.float_or("beta", 1.f), attrs.int_or("transA", 0) != 0,
                   attrs.int_or("transB", 0) != 0};
}

bool uses_c(const NodeContext& ctx, const GemmAttrs& g) { return ctx.has_input(2) && g.beta != 0; }

// Whether C of dims `c` may be added to the m x n result: broadcast from opset 7, and in
// opsets 1 and 6 only with broadcast=1.
bool c_fits(const NodeContext& ctx, const Dims& c, int64_t m, int64_t n) {
  if (c.size() > 2) return false;
  if (ctx.opset() < 7 && ctx.attrs().int_or("broadcast", 0) == 0) return c == Dims{m, n};
  return broadcasts_to(pad_leading(c, 2), {m, n});
}

KernelMatch check_gemm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_float_tensors(ctx));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 0, 2, 2));
  NXRT_REQUIRE_MATCH(require_rank(ctx, 1, 2, 2));
  NXRT_REQUIRE(ctx.opset() >= 11 || ctx.has_input(2),
               "Gemm: input C is missing; it is optional only from opset 11 (the model imports opset {})", ctx.opset());
  const GemmAttrs g = read_gemm_attrs(ctx.attrs());
  const bool constant_b = ctx.constant_input(1) != nullptr;
  NXRT_REQUIRE(constant_b || g.alpha != 0,
               "Gemm: alpha 0 with a computed B is not supported by the onednn EP; it scales a computed product "
               "after the bias (the cpu EP takes it)");
  if (uses_c(ctx, g)) {
    NXRT_REQUIRE_MATCH(require_rank(ctx, 2, 0, 2));
    NXRT_REQUIRE(ctx.constant_input(2) != nullptr || g.beta == 1,
                 "Gemm: beta {} with a computed C is not supported by the onednn EP; it takes a constant C (scaled "
                 "once) or beta 1 (the cpu EP takes any)",
                 g.beta);
  }
  const auto a = ctx.input_static_shape(0), b = ctx.input_static_shape(1);
  if (!a || !b) return KernelMatch::supported();
  const int64_t m = g.trans_a ? (*a)[1] : (*a)[0], k = g.trans_a ? (*a)[0] : (*a)[1];
  const int64_t kb = g.trans_b ? (*b)[1] : (*b)[0], n = g.trans_b ? (*b)[0] : (*b)[1];
  NXRT_REQUIRE(k == kb, "Gemm: op(A) is {}x{} and op(B) {}x{} (transA={}, transB={}); the inner dims must match", m, k,
               kb, n, g.trans_a, g.trans_b);
  if (uses_c(ctx, g))
    if (auto c = ctx.input_static_shape(2))
      NXRT_REQUIRE(c_fits(ctx, to_dims(*c), m, n),
                   "Gemm: C {} does not fit the {}x{} result (opset {}, broadcast={}); it must broadcast to it (from "
                   "opset 7 or with broadcast=1) or equal it",
                   shape_to_string(*c), m, n, ctx.opset(), ctx.attrs().int_or("broadcast", 0));
  return KernelMatch::supported(Cost{2.0 * static_cast<double>(m * n * k),
                                     4.0 * static_cast<double>(m * k + k * n + 2 * m * n), {}});
}

// A {rows, cols} view of `v`, whose elements are stored transposed: a constant is transposed
// once now; a computed value is read through strides.
Expected<int> transposed_view(PlanBuilder& b, const FusedOp& f, ValueId v, int64_t rows, int64_t cols,
                              const std::string& key) {
  if (b.is_constant(v))
    return b.weight(key, plain_md({rows, cols}), {v}, [&]() -> Expected<PlainWeight> {
      auto t = b.constant(v);
      if (!t) return std::unexpected(std::move(t.error()));
      return PlainWeight{transposed_md(rows, cols), copy_to_contiguous(t->view())};
    });
  auto plain = b.use(v, plain_md({cols, rows}));
  if (!plain) return plain;
  // PlanBuilder has no call for a second view of a buffer: the step's output names this one
  // until the step defines that output.
  return b.define_in_place(f.output, transposed_md(rows, cols), *plain);
}

// Y = alpha * op(A) op(B) + beta * C. A constant B is packed with alpha folded in and C, if
// constant, becomes the bias scaled once. A computed B is scaled by a leading linear post-op,
// so that a constant C bias is scaled by beta / alpha and a computed C (beta 1) is added after
// it; a computed C under alpha 1 is the bias as it is.
Expected<void> lower_gemm(PlanBuilder& b, const FusedOp& f) {
  const NodeContext ctx = b.context(f.anchor);
  const Node& node = ctx.node();
  const ValueId a = node.inputs[0], w = node.inputs[1];
  const GemmAttrs g = read_gemm_attrs(ctx.attrs());
  auto ad = b.dims(a), bd = b.dims(w);
  if (!ad || !bd) return std::unexpected(std::move((!ad ? ad : bd).error()));
  const int64_t m = g.trans_a ? (*ad)[1] : (*ad)[0], k = g.trans_a ? (*ad)[0] : (*ad)[1];
  const int64_t kb = g.trans_b ? (*bd)[1] : (*bd)[0], n = g.trans_b ? (*bd)[0] : (*bd)[1];
  if (k != kb)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: op(A) is {}x{} and op(B) {}x{}; the inner dims must match", node.describe(), m, k,
                            kb, n),
                fmt::format("A is {} and B {} with transA={}, transB={}", shape_to_string(*ad), shape_to_string(*bd),
                            g.trans_a, g.trans_b),
                "check the shapes of the node's inputs");
  const bool constant_b = b.is_constant(w);
  const float scale = constant_b ? 1.0f : g.alpha;  // applied after the primitive's bias
  const ValueId c = uses_c(ctx, g) ? node.inputs[2] : kNoValue;
  Dims cd;
  if (c != kNoValue) {
    auto dims = b.dims(c);
    if (!dims) return std::unexpected(std::move(dims.error()));
    if (!c_fits(ctx, *dims, m, n))
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: C {} does not fit the {}x{} result", node.describe(), shape_to_string(*dims), m, n),
                  "C must broadcast to the result (from opset 7 or with broadcast=1) or equal it",
                  "check the shape of C");
    cd = pad_leading(*dims, 2);
  }
  const bool constant_c = c != kNoValue && b.is_constant(c);
  if (c != kNoValue && !constant_c && g.beta != 1)
    return fail(ErrorCode::kRuntime, fmt::format("{}: a computed C with beta {} reached the onednn EP", node.describe(),
                                                 g.beta),
                "its claim takes a computed C only with beta 1", "report this as a bug in the onednn EP");
  // A constant B with C absent or a row of n constants: a 1x1 convolution, as for MatMul.
  const bool c_is_row = constant_c && shape_numel(cd) == n && cd.back() == n;
  if (constant_b && !g.trans_a && (c == kNoValue || c_is_row)) {
    ConstantProduct p{.m = m, .k = k, .n = n, .out = {m, n}, .b_transposed = g.trans_b, .alpha = g.alpha};
    if (c != kNoValue) {
      p.bias = c;
      p.bias_scale = g.beta;
    } else {
      take_bias_add(b, f, p);
    }
    if (auto done = lower_as_1x1_conv(b, f, p)) return *done;
  }
  const bool c_is_bias = constant_c || (c != kNoValue && scale == 1.0f);
  FusedOp step = f;
  std::vector<PostOp> first;
  if (scale != 1.0f)
    first.push_back({PostOp::Kind::kEltwise, f.anchor,
                     std::vector<EltwiseSpec>{{dnnl::algorithm::eltwise_linear, scale, 0.0f}}, kNoValue});
  if (c != kNoValue && !c_is_bias) first.push_back({PostOp::Kind::kAdd, f.anchor, {}, c});
  step.post_ops.insert(step.post_ops.begin(), first.begin(), first.end());

  const memory::desc src_md = g.trans_a && !b.is_constant(a) ? transposed_md(m, k) : plain_md({m, k});
  const memory::desc w_md = constant_b ? any_md({k, n}) : g.trans_b ? transposed_md(k, n) : plain_md({k, n});
  const memory::desc dst_md = plain_md({m, n});
  const auto desc = c_is_bias ? dnnl::matmul::desc(src_md, w_md, plain_md(cd), dst_md)
                              : dnnl::matmul::desc(src_md, w_md, dst_md);
  return emit_matmul(b, step, desc, {m, n}, {m, n}, [&](const Pd& pd, Args& args) -> Expected<void> {
    auto src = g.trans_a ? transposed_view(b, step, a, m, k, node.name + ":A") : b.use(a, plain_md({m, k}));
    if (!src) return std::unexpected(std::move(src.error()));
    Expected<int> weights = 0;
    if (constant_b)
      weights = b.weight(node.name + ":B", pd.weights_desc(), {w}, [&]() -> Expected<PlainWeight> {
        auto t = b.constant(w);
        if (!t) return std::unexpected(std::move(t.error()));
        return PlainWeight{g.trans_b ? transposed_md(k, n) : plain_md({k, n}), scaled_copy(*t, g.alpha)};
      });
    else
      weights = g.trans_b ? transposed_view(b, step, w, k, n, node.name + ":B") : b.use(w, plain_md({k, n}));
    if (!weights) return std::unexpected(std::move(weights.error()));
    args = {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *weights}};
    if (!c_is_bias) return {};
    auto bias = !constant_c ? b.use(c, plain_md(cd))
                            : b.weight(node.name + ":C", pd.bias_desc(), {c}, [&]() -> Expected<PlainWeight> {
                                auto t = b.constant(c);
                                if (!t) return std::unexpected(std::move(t.error()));
                                return PlainWeight{plain_md(cd), scaled_copy(*t, g.beta / scale)};
                              });
    if (!bias) return std::unexpected(std::move(bias.error()));
    args.emplace_back(DNNL_ARG_BIAS, *bias);
    return {};
  });
}

}  // namespace

std::vector<OnednnOpDef> matmul_ops() {
  // MatMul's versions differ only in types; Gemm-1/6 broadcast C only with broadcast=1,
  // Gemm-7+ always, and Gemm-11+ makes C optional (all read per opset by the checks).
  return {
      {{{"", "MatMul", 1}, 8, check_matmul, {}}, lower_matmul},
      {{{"", "MatMul", 9}, 12, check_matmul, {}}, lower_matmul},
      {{{"", "MatMul", 13}, 0, check_matmul, {}}, lower_matmul},
      {{{"", "Gemm", 1}, 5, check_gemm, {}}, lower_gemm},
      {{{"", "Gemm", 6}, 6, check_gemm, {}}, lower_gemm},
      {{{"", "Gemm", 7}, 8, check_gemm, {}}, lower_gemm},
      {{{"", "Gemm", 9}, 10, check_gemm, {}}, lower_gemm},
      {{{"", "Gemm", 11}, 12, check_gemm, {}}, lower_gemm},
      {{{"", "Gemm", 13}, 0, check_gemm, {}}, lower_gemm},
  };
}

}  // namespace nxrt::onednn
