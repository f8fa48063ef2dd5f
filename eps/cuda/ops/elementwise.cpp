// Elementwise ops (unary, binary, variadic, Clip, Cast, BitShift, the bitwise ops,
// BatchNormalization in inference): each is an expression that the chain fuser inlines into one generated kernel per
// chain. Float and float16 compute in float; the arithmetic ops, Mod, Clip, Pow, comparisons,
// Where and Cast also take bfloat16 (in float), double and the signed and unsigned integers of
// 8 to 64 bits (8- and 16-bit ones computed in int, stored wrapped); the logical ops, Where and
// Cast take bool. The other ops (transcendental ones included) take float, float16 and
// bfloat16 only.
#include <fmt/format.h>

#include "nxrt/ep/cast_rounding.h"
#include "nxrt/ep/prelu.h"
#include "ops/op_util.h"
#include "ops/ops.h"

namespace nxrt::cuda {
namespace {

using Args = std::span<const std::string>;

KernelMatch check_float_elementwise(const NodeContext& ctx) {
  std::vector<std::size_t> all;
  for (std::size_t i = 0; i < ctx.input_count(); ++i) {
    NXRT_REQUIRE_MATCH(require_max_rank(ctx, i));
    all.push_back(i);
  }
  return require_float(ctx, all);
}

bool is_unsigned(DType t) {
  return t == DType::kUInt8 || t == DType::kUInt16 || t == DType::kUInt32 || t == DType::kUInt64;
}
bool is_chain_type(DType t) {
  return is_cuda_float(t) || t == DType::kFloat64 || is_whole_byte_integer(t);
}
constexpr std::string_view kChainTypes = "float, float16, bfloat16, double and 8- to 64-bit integers";
constexpr std::string_view kChainTypesOrBool = "float, float16, bfloat16, double, 8- to 64-bit integers and bool";
bool is_chain_type_or_bool(DType t) { return is_chain_type(t) || t == DType::kBool; }
bool is_bool(DType t) { return t == DType::kBool; }

// Inputs [first, end) of the node, within the kernels' rank, of one dtype that `allowed`
// accepts (`kinds` names those in the reason).
KernelMatch require_one_dtype(const NodeContext& ctx, std::size_t first, std::size_t end, bool (*allowed)(DType),
                              std::string_view kinds) {
  std::vector<std::size_t> inputs;
  for (std::size_t i = first; i < std::min(end, ctx.input_count()); ++i) {
    NXRT_REQUIRE_MATCH(require_max_rank(ctx, i));
    inputs.push_back(i);
  }
  return require_dtypes(ctx, inputs, allowed, kinds);
}

constexpr std::size_t kAll = ~std::size_t{0};

// Add, Sub, Mul, Div, Neg, Abs, Max, Min, Sign, Mod.
KernelMatch check_arithmetic(const NodeContext& ctx) {
  return require_one_dtype(ctx, 0, kAll, is_chain_type, kChainTypes);
}
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual (Equal also compares booleans).
KernelMatch check_compare(const NodeContext& ctx) {
  if (ctx.node().op_type == "Equal") return require_one_dtype(ctx, 0, kAll, is_chain_type_or_bool, kChainTypesOrBool);
  return require_one_dtype(ctx, 0, kAll, is_chain_type, kChainTypes);
}
// Pow: a float, double, int32 or int64 base; before opset 12 the exponent has the base's
// type, from 12 on any number type.
bool is_pow_base(DType t) { return is_cuda_number(t); }
KernelMatch check_pow(const NodeContext& ctx) {
  if (ctx.opset() < 12) return require_one_dtype(ctx, 0, 2, is_pow_base, kCudaNumbers);
  NXRT_REQUIRE_MATCH(require_one_dtype(ctx, 0, 1, is_pow_base, kCudaNumbers));
  return require_one_dtype(ctx, 1, 2, is_chain_type, kChainTypes);
}
// BitShift: unsigned integers, and a direction.
KernelMatch check_bit_shift(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_one_dtype(ctx, 0, 2, is_unsigned, "uint8, uint16, uint32 and uint64"));
  const std::string direction = ctx.attrs().string_or("direction", "");
  NXRT_REQUIRE(direction == "LEFT" || direction == "RIGHT", "BitShift: direction '{}' is not LEFT or RIGHT", direction);
  return KernelMatch::supported();
}
// BitwiseAnd, BitwiseOr, BitwiseXor, BitwiseNot: integers of one type. 8- and 16-bit ones
// compute in int, where the low bits come out as in the type.
KernelMatch check_bitwise(const NodeContext& ctx) {
  return require_one_dtype(ctx, 0, kAll, is_whole_byte_integer, "8- to 64-bit integers");
}
// Clip: from opset 12 any number type (the bounds, optional inputs, of the same type); before,
// float.
KernelMatch check_clip(const NodeContext& ctx) {
  if (ctx.opset() < 12) return require_one_dtype(ctx, 0, kAll, is_cuda_float, kCudaFloats);
  return require_one_dtype(ctx, 0, kAll, is_chain_type, kChainTypes);
}

// IsNaN, IsInf: float in (float8 too from opset 20), bool out.
bool is_cuda_float_or_float8(DType t) { return is_cuda_float(t) || is_float8(t); }
KernelMatch check_float_test(const NodeContext& ctx) {
  if (ctx.opset() >= 20)
    return require_one_dtype(ctx, 0, kAll, is_cuda_float_or_float8, "float, float16, bfloat16 and the float8 types");
  return require_one_dtype(ctx, 0, kAll, is_cuda_float, kCudaFloats);
}
// Not, And, Or, Xor.
KernelMatch check_logical(const NodeContext& ctx) { return require_one_dtype(ctx, 0, kAll, is_bool, "bool"); }
// Where: a bool condition, and two values of one dtype.
KernelMatch check_where(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_one_dtype(ctx, 0, 1, is_bool, "bool"));
  return require_one_dtype(ctx, 1, 3, is_chain_type_or_bool, kChainTypesOrBool);
}

// The chain fuser declares each value in its node's output type (chain.cpp), so that type must
// be known before `check` decides.
KernelMatch require_known_output(const NodeContext& ctx, const KernelCheck& check) {
  const ValueType* out = ctx.output_type(0);
  NXRT_REQUIRE(out && out->dtype != DType::kUndefined,
               "{}: the type of output 0 is unknown; the cuda EP generates its kernel in that type (run ONNX shape "
               "inference on the model, or give its inputs' types)",
               ctx.node().op_type);
  return check(ctx);
}

// PRelu-1 and -6: a slope of one value per channel (lib's prelu_slope_per_channel) or one that
// broadcasts numpy-style. Which it is depends on the static shapes.
KernelMatch check_legacy_prelu(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_float_elementwise(ctx));
  const auto x = ctx.input_static_shape(0), slope = ctx.input_static_shape(1);
  NXRT_REQUIRE(x && slope, "PRelu-{}: the shape of X or the slope is unknown; the cuda EP needs both to tell a per-channel "
               "slope from a broadcast one (give --shape)", ctx.opset());
  if (prelu_slope_per_channel(ctx.opset(), *x, *slope)) return KernelMatch::supported();
  bool fits = slope->size() <= x->size();
  for (std::size_t k = 0; fits && k < slope->size(); ++k) {
    const int64_t d = (*slope)[slope->size() - 1 - k];
    fits = d == 1 || d == (*x)[x->size() - 1 - k];
  }
  NXRT_REQUIRE(fits, "PRelu-{}: slope {} neither holds one value per channel of X {} nor broadcasts onto it", ctx.opset(),
               shape_to_string(*slope), shape_to_string(*x));
  return KernelMatch::supported();
}

Broadcast legacy_prelu_broadcast(const Graph& graph, const Node& node) {
  const auto x = graph.value(node.inputs[0]).type.static_shape(), slope = graph.value(node.inputs[1]).type.static_shape();
  return x && slope && prelu_slope_per_channel(node.opset, *x, *slope) ? Broadcast::kChannel : Broadcast::kNumpy;
}

CudaOpDef checked_by(KernelCheck check, CudaOpDef def) {
  def.def.check = std::move(check);
  return def;
}
CudaOpDef arithmetic(CudaOpDef def) { return checked_by(check_arithmetic, std::move(def)); }

// Before opset 7, Add, Sub, Mul, Div and Pow broadcast only with broadcast=1, matching input
// 1's dims against input 0's from `axis` on, or against its trailing dims when no axis is
// given: numpy broadcasting, but for an axis before the trailing dims.
KernelMatch check_legacy_broadcast(const NodeContext& ctx) {
  const AttributeMap& attrs = ctx.attrs();
  if (ctx.opset() >= 7 || attrs.int_or("broadcast", 0) == 0 || !attrs.has("axis")) return KernelMatch::supported();
  const int64_t axis = attrs.int_or("axis", 0);
  const auto a = ctx.input_rank(0), b = ctx.input_rank(1);
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(a && b, "{}: broadcast=1 with axis={} (opset {}) and an input of unknown rank; the cuda EP broadcasts "
               "numpy-style only", op, axis, ctx.opset());
  NXRT_REQUIRE(axis == *a - *b, "{}: broadcast=1 with axis={} (opset {}) matches input 1 against input 0 from dim {}, "
               "not its trailing dims; the cuda EP broadcasts numpy-style only", op, axis, ctx.opset(), axis);
  return KernelMatch::supported();
}
// `def`, registered from before opset 7: its check also takes check_legacy_broadcast's.
CudaOpDef with_legacy_broadcast(CudaOpDef def) {
  def.def.check = [check = std::move(def.def.check)](const NodeContext& ctx) -> KernelMatch {
    NXRT_REQUIRE_MATCH(check_legacy_broadcast(ctx));
    return check(ctx);
  };
  return def;
}

// A unary op whose expression reads only the node's attributes and `a`.
CudaOpDef unary(std::string op, int64_t since, std::function<std::string(const AttributeMap&, const std::string&)> f) {
  return {{{"", op, since}, 0, check_float_elementwise, {}},
          {},
          ElementwiseDef{[f](const Node& n, Args a) { return f(n.attributes, a[0]); }}};
}

CudaOpDef simple(std::string op, int64_t since, std::string pattern) {
  return unary(std::move(op), since,
               [pattern](const AttributeMap&, const std::string& a) { return fmt::format(fmt::runtime(pattern), a); });
}

CudaOpDef binary(std::string op, int64_t since, std::string pattern) {
  return {{{"", op, since}, 0, check_float_elementwise, {}},
          {},
          ElementwiseDef{[pattern](const Node&, Args a) { return fmt::format(fmt::runtime(pattern), a[0], a[1]); }}};
}

// Sum, Mean, Max, Min: a fold over one or more inputs.
CudaOpDef variadic(std::string op, int64_t since, std::string pattern, bool mean) {
  return {{{"", op, since}, 0, check_float_elementwise, {}},
          {},
          ElementwiseDef{[pattern, mean](const Node&, Args a) {
            std::string acc = a[0];
            for (std::size_t i = 1; i < a.size(); ++i) acc = fmt::format(fmt::runtime(pattern), acc, a[i]);
            return mean ? fmt::format("(({}) / {})", acc, float_literal(static_cast<float>(a.size()))) : acc;
          }}};
}

std::string attr(const AttributeMap& m, const char* name, float fallback) {
  return float_literal(m.float_or(name, fallback));
}

std::string clip_expr(const Node& n, Args a) {
  // Opset 6 has min/max attributes; from 11 they are optional inputs (absent: no bound).
  if (n.opset < 11)
    return fmt::format("fminf(fmaxf({}, {}), {})", a[0], attr(n.attributes, "min", -3.402823466e38f),
                       attr(n.attributes, "max", 3.402823466e38f));
  std::string v = a[0];
  if (a.size() > 1 && !a[1].empty()) v = fmt::format("vmax({}, {})", v, a[1]);
  if (a.size() > 2 && !a[2].empty()) v = fmt::format("vmin({}, {})", v, a[2]);
  return v;
}

// Cast and CastLike: among the chain types and bool, the float8 types from opset 19 (rounded
// as the saturate attribute says), int4 and uint4 from 21, float4e2m1 from 23, float8e8m0 from
// 24 (rounded as round_mode says), int2 and uint2 from 25.
constexpr std::string_view kCastTypes =
    "float, float16, bfloat16, double, 8- to 64-bit integers, bool, from opset 19 the float8 types, from 21 int4 and "
    "uint4, from 23 float4e2m1, from 24 float8e8m0, from 25 int2 and uint2";
bool is_cast_type(DType t, int64_t opset) {
  const bool narrow = is_byte_float(t) || is_subbyte_integer(t);
  return is_chain_type_or_bool(t) || (narrow && opset >= first_opset_with(t));
}

KernelMatch check_cast(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  const DType from = ctx.input_dtype(0);
  const auto to = ctx.attrs().get_int("to");
  const auto to_dtype = to ? dtype_from_onnx(static_cast<int32_t>(*to)) : std::nullopt;
  NXRT_REQUIRE(is_cast_type(from, ctx.opset()) && to_dtype && is_cast_type(*to_dtype, ctx.opset()),
               "Cast: from {} to {}; the cuda EP casts among {}", dtype_name(from),
               to_dtype ? dtype_name(*to_dtype) : "an unknown type", kCastTypes);
  return check_cast_rounding(ctx);
}

// CastLike: Cast to input 1's dtype (its values are not read).
KernelMatch check_cast_like(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_max_rank(ctx, 0));
  const DType from = ctx.input_dtype(0), to = ctx.input_dtype(1);
  NXRT_REQUIRE(is_cast_type(from, ctx.opset()) && is_cast_type(to, ctx.opset()),
               "CastLike: from {} to {}; the cuda EP casts among {}", dtype_name(from), dtype_name(to), kCastTypes);
  return check_cast_rounding(ctx);
}

// Inference (the running statistics) fuses into chains; training_mode=1 runs a kernel of its own
// that also writes the moved running statistics (outputs 1 and 2).
KernelMatch check_batch_norm(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_float_elementwise(ctx));
  const bool training = is_batch_norm_training(ctx.opset(), ctx.attrs());
  NXRT_REQUIRE(ctx.opset() >= 7 || ctx.attrs().int_or("is_test", 0) != 0,
               "BatchNormalization: is_test=0 at opset {} asks for batch statistics; the cuda EP computes them with "
               "training_mode=1 (opset 14 on)",
               ctx.opset());
  NXRT_REQUIRE(ctx.opset() >= 9 || ctx.attrs().int_or("spatial", 1) != 0,
               "BatchNormalization: spatial=0 (statistics per channel and position, opset {}) is not supported by the "
               "cuda EP", ctx.opset());
  for (std::size_t o = 1; o < ctx.output_count(); ++o)
    NXRT_REQUIRE(training || !ctx.has_output(o),
                 "BatchNormalization: output {} (batch statistics) is used at opset {}; the cuda EP computes batch "
                 "statistics with training_mode=1 (opset 14 on)",
                 o, ctx.opset());
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank >= 2, "BatchNormalization: input 0 has rank {}; expected N, C, ...", rank.value_or(0));
  for (std::size_t i = 1; i < 5; ++i) {
    const auto r = ctx.input_rank(i);
    NXRT_REQUIRE(!r || *r == 1, "BatchNormalization: input {} has rank {}; the cuda EP takes [C] vectors", i, *r);
  }
  return KernelMatch::supported();
}

std::string batch_norm_expr(const Node& n, Args a) {
  const std::string eps = attr(n.attributes, "epsilon", 1e-5f);
  return fmt::format("(({} - {}) * {} * rsqrtf({} + {}) + {})", a[0], a[3], a[1], a[4], eps, a[2]);
}

// Mod: ONNX requires fmod=1 for floats (fmod=0 is the integer, divisor-signed remainder).
KernelMatch check_mod(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_arithmetic(ctx));
  NXRT_REQUIRE(ctx.attrs().int_or("fmod", 0) != 0 || !is_floating(ctx.input_dtype(0)),
               "Mod: fmod=0 on {}; ONNX defines a float Mod only with fmod=1", dtype_name(ctx.input_dtype(0)));
  return KernelMatch::supported();
}

KernelMatch check_gelu(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_float_elementwise(ctx));
  const std::string approx = ctx.attrs().string_or("approximate", "none");
  NXRT_REQUIRE(approx == "none" || approx == "tanh", "Gelu: approximate='{}' is not 'none' or 'tanh'", approx);
  return KernelMatch::supported();
}

}  // namespace

std::string gelu_expr(bool tanh_approximation, const std::string& a) {
  if (tanh_approximation)
    return fmt::format("(0.5f * {0} * (1.f + tanhf(0.7978845608f * ({0} + 0.044715f * {0} * {0} * {0}))))", a);
  return fmt::format("(0.5f * {0} * (1.f + erff({0} * 0.70710678118f)))", a);
}

std::vector<CudaOpDef> elementwise_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(simple("Relu", 6, "fmaxf({}, 0.f)"));
  ops.push_back(simple("Sigmoid", 6, "(1.f / (1.f + expf(-{})))"));
  ops.push_back(simple("Tanh", 6, "tanhf({})"));
  ops.push_back(simple("Exp", 6, "expf({})"));
  ops.push_back(simple("Log", 6, "logf({})"));
  ops.push_back(simple("Sqrt", 6, "sqrtf({})"));
  ops.push_back(arithmetic(simple("Abs", 6, "vabs({})")));
  ops.push_back(arithmetic(simple("Neg", 6, "(-{})")));
  ops.push_back(simple("Reciprocal", 6, "(1.f / {})"));
  ops.push_back(simple("Floor", 6, "floorf({})"));
  ops.push_back(simple("Ceil", 6, "ceilf({})"));
  ops.push_back(simple("Erf", 9, "erff({})"));
  ops.push_back(simple("Sin", 7, "sinf({})"));
  ops.push_back(simple("Cos", 7, "cosf({})"));
  ops.push_back(simple("Tan", 7, "tanf({})"));
  ops.push_back(simple("Asin", 7, "asinf({})"));
  ops.push_back(simple("Acos", 7, "acosf({})"));
  ops.push_back(simple("Atan", 7, "atanf({})"));
  ops.push_back(simple("Sinh", 9, "sinhf({})"));
  ops.push_back(simple("Cosh", 9, "coshf({})"));
  ops.push_back(simple("Asinh", 9, "asinhf({})"));
  ops.push_back(simple("Acosh", 9, "acoshf({})"));
  ops.push_back(simple("Atanh", 9, "atanhf({})"));
  ops.push_back(simple("Round", 11, "rintf({})"));  // halves to even, as ONNX rounds
  ops.push_back(arithmetic(simple("Sign", 9, "((({0}) > 0) - (({0}) < 0))")));
  ops.push_back(checked_by(check_float_test, simple("IsNaN", 9, "is_nan({})")));
  ops.push_back(checked_by(check_float_test, unary("IsInf", 10, [](const AttributeMap& m, const std::string& a) {
    const bool neg = m.int_or("detect_negative", 1) != 0, pos = m.int_or("detect_positive", 1) != 0;
    return fmt::format("(is_inf({0}) && (({0}) > 0.f ? {1} : {2}))", a, pos ? "true" : "false", neg ? "true" : "false");
  })));
  ops.push_back(simple("Mish", 18, "({0} * tanhf({0} > 20.f ? {0} : log1pf(expf({0}))))"));
  ops.push_back(simple("Softsign", 1, "({0} / (1.f + fabsf({0})))"));
  ops.push_back(simple("Softplus", 1, "({0} > 20.f ? {0} : log1pf(expf({0})))"));
  ops.push_back(simple("HardSwish", 14, "({0} * fminf(fmaxf({0} / 6.f + 0.5f, 0.f), 1.f))"));
  ops.push_back(unary("LeakyRelu", 6, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("({0} >= 0.f ? {0} : {1} * {0})", a, attr(m, "alpha", 0.01f));
  }));
  ops.push_back(unary("Elu", 6, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("({0} >= 0.f ? {0} : {1} * (expf({0}) - 1.f))", a, attr(m, "alpha", 1.f));
  }));
  ops.push_back(unary("Selu", 6, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("({2} * ({0} > 0.f ? {0} : {1} * (expf({0}) - 1.f)))", a, attr(m, "alpha", 1.67326319217681884765625f),
                       attr(m, "gamma", 1.05070102214813232421875f));
  }));
  ops.push_back(unary("Celu", 12, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("(fmaxf({0}, 0.f) + fminf(0.f, {1} * (expf({0} / {1}) - 1.f)))", a, attr(m, "alpha", 1.f));
  }));
  ops.push_back(unary("ThresholdedRelu", 10, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("({0} > {1} ? {0} : 0.f)", a, attr(m, "alpha", 1.f));
  }));
  ops.push_back(unary("Shrink", 9, [](const AttributeMap& m, const std::string& a) {
    const std::string lambd = attr(m, "lambd", 0.5f), bias = attr(m, "bias", 0.f);
    return fmt::format("({0} < -{1} ? {0} + {2} : {0} > {1} ? {0} - {2} : 0.f)", a, lambd, bias);
  }));
  ops.push_back(unary("Swish", 24, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("({0} / (1.f + expf(-{1} * {0})))", a, attr(m, "alpha", 1.f));
  }));
  ops.push_back(unary("HardSigmoid", 6, [](const AttributeMap& m, const std::string& a) {
    return fmt::format("fminf(fmaxf({1} * {0} + {2}, 0.f), 1.f)", a, attr(m, "alpha", 0.2f), attr(m, "beta", 0.5f));
  }));
  ops.push_back({{{"", "Gelu", 20}, 0, check_gelu, {}},
                 {},
                 ElementwiseDef{[](const Node& n, Args a) {
                   return gelu_expr(n.attributes.string_or("approximate", "none") == "tanh", a[0]);
                 }}});
  // From opset 6 (opset 1's consumed_inputs dropped), with its legacy broadcasting.
  ops.push_back(with_legacy_broadcast(arithmetic(binary("Add", 6, "({} + {})"))));
  ops.push_back(with_legacy_broadcast(arithmetic(binary("Sub", 6, "({} - {})"))));
  ops.push_back(with_legacy_broadcast(arithmetic(binary("Mul", 6, "({} * {})"))));
  ops.push_back(with_legacy_broadcast(arithmetic(binary("Div", 6, "vdiv({}, {})"))));
  ops.push_back({{{"", "Mod", 10}, 0, check_mod, {}}, {}, ElementwiseDef{[](const Node& n, Args a) {
                   return fmt::format("{}({}, {})", n.attributes.int_or("fmod", 0) ? "vfmod" : "vmod", a[0], a[1]);
                 }}});
  ops.push_back(with_legacy_broadcast(checked_by(check_pow, binary("Pow", 1, "vpow({}, {})"))));
  ops.push_back({{{"", "BitShift", 11}, 0, check_bit_shift, {}}, {}, ElementwiseDef{[](const Node& n, Args a) {
                   return fmt::format("{}({}, {})", n.attributes.string_or("direction", "") == "LEFT" ? "vshl" : "vshr", a[0], a[1]);
                 }}});
  ops.push_back(checked_by(check_bitwise, binary("BitwiseAnd", 18, "({} & {})")));
  ops.push_back(checked_by(check_bitwise, binary("BitwiseOr", 18, "({} | {})")));
  ops.push_back(checked_by(check_bitwise, binary("BitwiseXor", 18, "({} ^ {})")));
  ops.push_back(checked_by(check_bitwise, simple("BitwiseNot", 18, "(~{})")));
  ops.push_back(binary("PRelu", 7, "({0} >= 0.f ? {0} : {1} * {0})"));
  CudaOpDef legacy_prelu = checked_by(check_legacy_prelu, binary("PRelu", 1, "({0} >= 0.f ? {0} : {1} * {0})"));
  legacy_prelu.def.until_version = 6;
  legacy_prelu.elementwise->broadcast_of = legacy_prelu_broadcast;
  ops.push_back(std::move(legacy_prelu));
  // Opset 6's take inputs of one shape, which numpy broadcasting leaves as they are.
  ops.push_back(variadic("Sum", 6, "({} + {})", false));  // ONNX's Sum takes float types only
  ops.push_back(variadic("Mean", 6, "({} + {})", true));
  ops.push_back(arithmetic(variadic("Max", 6, "vmax({}, {})", false)));
  ops.push_back(arithmetic(variadic("Min", 6, "vmin({}, {})", false)));
  ops.push_back({{{"", "Clip", 6}, 0, check_clip, {}}, {}, ElementwiseDef{clip_expr}});
  // Comparisons and logic make bool values; Where picks between its inputs.
  ops.push_back(checked_by(check_compare, binary("Equal", 7, "({} == {})")));
  ops.push_back(checked_by(check_compare, binary("Less", 7, "({} < {})")));
  ops.push_back(checked_by(check_compare, binary("Greater", 7, "({} > {})")));
  ops.push_back(checked_by(check_compare, binary("LessOrEqual", 12, "({} <= {})")));
  ops.push_back(checked_by(check_compare, binary("GreaterOrEqual", 12, "({} >= {})")));
  ops.push_back(checked_by(check_logical, simple("Not", 1, "(!{})")));
  ops.push_back(checked_by(check_logical, binary("And", 7, "({} && {})")));
  ops.push_back(checked_by(check_logical, binary("Or", 7, "({} || {})")));
  ops.push_back(checked_by(check_logical, binary("Xor", 7, "({} != {})")));
  ops.push_back({{{"", "Where", 9}, 0, check_where, {}},
                 {},
                 ElementwiseDef{[](const Node&, Args a) { return fmt::format("({} ? {} : {})", a[0], a[1], a[2]); }}});
  // The rounding to float16, when the target is float16, happens where the chain stores or
  // where a float16 value is read inside it (chain.cpp): the expression itself is the identity.
  ops.push_back({{{"", "Cast", 6}, 0, check_cast, {}}, {}, ElementwiseDef{[](const Node&, Args a) { return a[0]; }}});
  ops.push_back({{{"", "CastLike", 15}, 0, check_cast_like, {}},
                 {},
                 ElementwiseDef{[](const Node&, Args a) { return a[0]; }, Broadcast::kNumpy, 1, 1}});
  ElementwiseDef batch_norm{batch_norm_expr, Broadcast::kChannel, 1};
  batch_norm.applies = [](const Node& n) { return !is_batch_norm_training(n.opset, n.attributes); };
  ops.push_back({{{"", "BatchNormalization", 6}, 0, check_batch_norm, {}}, build_batch_norm_training, batch_norm});
  for (CudaOpDef& op : ops) op.def.check = [check = std::move(op.def.check)](const NodeContext& ctx) {
    return require_known_output(ctx, check);
  };
  return ops;
}

}  // namespace nxrt::cuda
