// Type and shape rules of ONNX Runtime's com.microsoft ops (see microsoft_schemas.h), from the
// definitions in ONNX Runtime's ContribOperators.md: the element type always, the shape where it
// follows from the inputs' shapes and the attributes.
#include "microsoft_schemas.h"

#include <onnx/defs/schema.h>
#include <onnx/defs/shape_inference.h>

#include <algorithm>
#include <map>

#include "inference_rules.h"

namespace nxrt {
namespace {

using onnx::InferenceContext;
using namespace inference;

// QLinearGlobalAveragePool: N x C x 1..., or N x 1... x C with channels_last 1.
void global_pool_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const int rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  if (rank < 3) return;
  const bool channels_last = onnx::getAttribute(ctx, "channels_last", 0) == 1;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  add_dim(y, input_dim(ctx, 0, 0));
  for (int d = 1; d < rank; ++d) {
    const bool channel = channels_last ? d == rank - 1 : d == 1;
    if (channel) add_dim(y, input_dim(ctx, 0, d));
    else add_value(y, 1);
  }
}

// QLinearAveragePool: as AveragePool-11 (the same attributes) for channels-first X; the element
// type and rank for channels-last X.
void average_pool_shape(InferenceContext& ctx) {
  if (onnx::getAttribute(ctx, "channels_last", 0) == 1) return type_and_rank(ctx);
  infer_as(ctx, "AveragePool", 11);
}

// QLinearConcat: Y_zero_point's element type; the tensors (inputs 2, 5, ...) joined along axis.
void concat_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 1)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  std::vector<const onnx::TensorShapeProto*> shapes;
  for (std::size_t i = 2; i < ctx.getNumInputs(); i += 3) {
    if (!has_input(ctx, i) || !onnx::hasInputShape(ctx, i)) return;
    shapes.push_back(&ctx.getInputType(i)->tensor_type().shape());
  }
  if (shapes.empty()) return;
  const int rank = shapes.front()->dim_size();
  int64_t axis = onnx::getAttribute(ctx, "axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return;
  int64_t joined = 0;
  for (const auto* s : shapes) {
    if (s->dim_size() != rank) return;
    const auto& d = s->dim(static_cast<int>(axis));
    joined = joined >= 0 && d.has_dim_value() ? joined + d.dim_value() : -1;
  }
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  for (int d = 0; d < rank; ++d) {
    if (d == axis) add_value(y, joined);
    else add_dim(y, &shapes.front()->dim(d));
  }
}

// QGemm: y_zero_point's element type (float without y_scale); M x N from A, B, transA, transB.
void qgemm_shape(InferenceContext& ctx) {
  auto* type = ctx.getOutputType(0)->mutable_tensor_type();
  if (has_input(ctx, 8)) type->set_elem_type(ctx.getInputType(8)->tensor_type().elem_type());
  else if (!has_input(ctx, 7)) type->set_elem_type(onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 3)) return;
  if (ctx.getInputType(0)->tensor_type().shape().dim_size() != 2 ||
      ctx.getInputType(3)->tensor_type().shape().dim_size() != 2)
    return;
  const bool trans_a = onnx::getAttribute(ctx, "transA", 0) != 0, trans_b = onnx::getAttribute(ctx, "transB", 0) != 0;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  add_dim(y, input_dim(ctx, 0, trans_a ? 1 : 0));
  add_dim(y, input_dim(ctx, 3, trans_b ? 0 : 1));
}

void qlinear_binary_shape(InferenceContext& ctx) { broadcast_inputs(ctx, 0, 3); }

// MatMulIntegerToFloat, DynamicQuantizeMatMul: float; A's dims but the last, then B's last, where
// B is a matrix or A and B have one rank (the batch dims A's).
void integer_to_float_shape(InferenceContext& ctx) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const auto& a = ctx.getInputType(0)->tensor_type().shape();
  const auto& b = ctx.getInputType(1)->tensor_type().shape();
  if (a.dim_size() < 2 || b.dim_size() < 2 || (b.dim_size() != 2 && b.dim_size() != a.dim_size())) return;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  for (int d = 0; d + 1 < a.dim_size(); ++d) add_dim(y, &a.dim(d));
  add_dim(y, &b.dim(b.dim_size() - 1));
}

// MatMulNBits: A's type; A's dims with the last one N (attribute).
void matmul_nbits_shape(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  const auto* n = ctx.getAttribute("N");
  if (!onnx::hasInputShape(ctx, 0) || !n || !n->has_i()) return;
  const auto& a = ctx.getInputType(0)->tensor_type().shape();
  if (a.dim_size() < 1) return;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  for (int d = 0; d + 1 < a.dim_size(); ++d) add_dim(y, &a.dim(d));
  y->add_dim()->set_dim_value(n->i());
}

// SkipLayerNormalization, SkipSimplifiedLayerNormalization: output and input_skip_bias_sum as the
// input; mean and inv_std_var float, the input's dims with the last one 1.
void skip_normalization_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  for (std::size_t out : {0, 3})
    if (ctx.getNumOutputs() > out) {
      onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
      if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, out);
    }
  for (std::size_t out : {1, 2}) {
    if (ctx.getNumOutputs() <= out) continue;
    ctx.getOutputType(out)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    if (!onnx::hasInputShape(ctx, 0)) continue;
    const auto& x = ctx.getInputType(0)->tensor_type().shape();
    auto* stats = onnx::getOutputShape(ctx, out);
    stats->clear_dim();
    for (int d = 0; d + 1 < x.dim_size(); ++d) add_dim(stats, &x.dim(d));
    if (x.dim_size() > 0) stats->add_dim()->set_dim_value(1);
  }
}

// GroupQueryAttention: output [batch, sequence, num_heads * head_size] of query's type (query's
// shape without packed key and value); present_key and present_value of rank 4 (their length is a
// run-time value).
void group_query_attention_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  for (std::size_t out = 0; out < std::min<std::size_t>(ctx.getNumOutputs(), 3); ++out)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
  const auto* heads = ctx.getAttribute("num_heads");
  const auto* kv_heads = ctx.getAttribute("kv_num_heads");
  if (!onnx::hasInputShape(ctx, 0) || !heads || !kv_heads || heads->i() <= 0 || kv_heads->i() <= 0) return;
  const auto& q = ctx.getInputType(0)->tensor_type().shape();
  if (q.dim_size() != 3) return;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  add_dim(y, &q.dim(0));
  add_dim(y, &q.dim(1));
  const bool packed = !has_input(ctx, 1);
  if (!packed) {
    add_dim(y, &q.dim(2));
  } else if (q.dim(2).has_dim_value()) {
    const int64_t columns = heads->i() + 2 * kv_heads->i();
    y->add_dim()->set_dim_value(q.dim(2).dim_value() / columns * heads->i());
  } else {
    y->add_dim();
  }
  for (std::size_t out = 1; out < std::min<std::size_t>(ctx.getNumOutputs(), 3); ++out) {
    auto* present = onnx::getOutputShape(ctx, out);
    present->clear_dim();
    add_dim(present, &q.dim(0));
    present->add_dim()->set_dim_value(kv_heads->i());
    present->add_dim();
    if (q.dim(2).has_dim_value())
      present->add_dim()->set_dim_value(q.dim(2).dim_value() / (packed ? heads->i() + 2 * kv_heads->i() : heads->i()));
    else
      present->add_dim();
  }
}

// GatherBlockQuantized: scales' type; indices' dims, then data's after the first, the last one
// unpacked (bits values per uint8 element) where the cpu EP's layout (gather_axis 0,
// quantize_axis last) holds.
void gather_block_quantized_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 2)) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const auto& data = ctx.getInputType(0)->tensor_type().shape();
  const auto& indices = ctx.getInputType(1)->tensor_type().shape();
  const int rank = data.dim_size();
  if (rank < 2 || onnx::getAttribute(ctx, "gather_axis", 0) != 0 ||
      (onnx::getAttribute(ctx, "quantize_axis", 1) + rank) % rank != rank - 1)
    return;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  for (int d = 0; d < indices.dim_size(); ++d) add_dim(y, &indices.dim(d));
  for (int d = 1; d + 1 < rank; ++d) add_dim(y, &data.dim(d));
  const auto& last = data.dim(rank - 1);
  const bool packed = ctx.getInputType(0)->tensor_type().elem_type() == onnx::TensorProto::UINT8;
  const int64_t per_element = packed ? 8 / std::max<int64_t>(onnx::getAttribute(ctx, "bits", 4), 1) : 1;
  if (last.has_dim_value()) y->add_dim()->set_dim_value(last.dim_value() * per_element);
  else y->add_dim();
}

// EmbedLayerNormalization: output and embedding_sum [batch, sequence, hidden] of word_embedding's
// type (input_ids' dims, word_embedding's last); mask_index int32 [batch].
void embed_layer_normalization_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 2)) return;
  for (std::size_t out : {0, 2})
    if (ctx.getNumOutputs() > out) onnx::propagateElemTypeFromInputToOutput(ctx, 2, out);
  if (ctx.getNumOutputs() > 1) ctx.getOutputType(1)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const auto& ids = ctx.getInputType(0)->tensor_type().shape();
  if (ids.dim_size() != 2) return;
  for (std::size_t out : {0, 2}) {
    if (ctx.getNumOutputs() <= out) continue;
    auto* y = onnx::getOutputShape(ctx, out);
    y->clear_dim();
    add_dim(y, &ids.dim(0));
    add_dim(y, &ids.dim(1));
    const bool table_known = onnx::hasInputShape(ctx, 2) && ctx.getInputType(2)->tensor_type().shape().dim_size() == 2;
    add_dim(y, table_known ? &ctx.getInputType(2)->tensor_type().shape().dim(1) : nullptr);
  }
  if (ctx.getNumOutputs() > 1) {
    auto* mask_index = onnx::getOutputShape(ctx, 1);
    mask_index->clear_dim();
    add_dim(mask_index, &ids.dim(0));
  }
}

// Attention: output [batch, sequence, Dv] of the input's type (Dv: qkv_hidden_sizes' last, or a
// third of the weights' columns); present [2, batch, num_heads, unknown, head_size].
void microsoft_attention_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  for (std::size_t out = 0; out < std::min<std::size_t>(ctx.getNumOutputs(), 2); ++out)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1)) return;
  const auto& x = ctx.getInputType(0)->tensor_type().shape();
  const auto& w = ctx.getInputType(1)->tensor_type().shape();
  if (x.dim_size() != 3 || w.dim_size() != 2) return;
  const auto* sizes = ctx.getAttribute("qkv_hidden_sizes");
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  int64_t hidden = -1, v_hidden = -1;
  if (sizes && sizes->ints_size() == 3) {
    hidden = sizes->ints(0);
    v_hidden = sizes->ints(2);
  } else if (w.dim(1).has_dim_value()) {
    hidden = v_hidden = w.dim(1).dim_value() / 3;
  }
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  add_dim(y, &x.dim(0));
  add_dim(y, &x.dim(1));
  add_value(y, v_hidden);
  if (ctx.getNumOutputs() > 1) {
    auto* present = onnx::getOutputShape(ctx, 1);
    present->clear_dim();
    present->add_dim()->set_dim_value(2);
    add_dim(present, &x.dim(0));
    add_value(present, heads);
    present->add_dim();
    add_value(present, heads > 0 && hidden > 0 ? hidden / heads : -1);
  }
}

// QAttention: Attention's shapes, its output float (the input is quantized).
void qattention_shape(InferenceContext& ctx) {
  microsoft_attention_shape(ctx);
  for (std::size_t out = 0; out < std::min<std::size_t>(ctx.getNumOutputs(), 2); ++out)
    ctx.getOutputType(out)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

// MultiHeadAttention: output [batch, sequence, Dv] of the query's type (Dv: value's last dim, or
// num_heads times it when value is split into heads; with packed QKV or KV, Q's hidden size);
// present_key and present_value [batch, num_heads, unknown, head size]; qk float [batch,
// num_heads, sequence, unknown].
void multi_head_attention_shape(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  for (std::size_t out = 0; out < std::min<std::size_t>(ctx.getNumOutputs(), 3); ++out)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, out);
  if (ctx.getNumOutputs() > 3) ctx.getOutputType(3)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  const int64_t heads = onnx::getAttribute(ctx, "num_heads", 0);
  if (!onnx::hasInputShape(ctx, 0) || heads <= 0) return;
  const auto& q = ctx.getInputType(0)->tensor_type().shape();
  auto value_of = [](const onnx::TensorShapeProto_Dimension& d) { return d.has_dim_value() ? d.dim_value() : -1; };
  int64_t head = -1, v_head = -1;
  if (q.dim_size() == 5) {  // packed QKV [batch, sequence, heads, 3, head_size]
    head = v_head = value_of(q.dim(4));
  } else if (q.dim_size() == 3) {
    head = q.dim(2).has_dim_value() ? q.dim(2).dim_value() / heads : -1;
    if (onnx::hasInputShape(ctx, 2)) {
      const auto& v = ctx.getInputType(2)->tensor_type().shape();
      const int64_t last = v.dim_size() > 0 ? value_of(v.dim(v.dim_size() - 1)) : -1;
      v_head = v.dim_size() == 4 ? last : v.dim_size() == 3 && last > 0 ? last / heads : -1;
    } else if (has_input(ctx, 1)) {  // packed KV: V's head size is K's
      v_head = head;
    }
  } else {
    return;
  }
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  add_dim(y, &q.dim(0));
  add_dim(y, &q.dim(1));
  add_value(y, v_head > 0 ? v_head * heads : -1);
  for (std::size_t out : {1, 2, 3}) {
    if (ctx.getNumOutputs() <= out) continue;
    auto* s = onnx::getOutputShape(ctx, out);
    s->clear_dim();
    add_dim(s, &q.dim(0));
    add_value(s, heads);
    if (out == 3) add_dim(s, &q.dim(1));
    s->add_dim();
    if (out != 3) add_value(s, out == 1 ? head : v_head);
  }
}

// FusedConv and FusedGemm (ONNX Runtime's Conv and Gemm with an activation after): the standard
// op's rule, which reads only the attributes the two share.
onnx::InferenceFunction standard_rule(const char* op, int version) {
  return [op, version](InferenceContext& ctx) {
    if (const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, version))
      schema->GetTypeAndShapeInferenceFunction()(ctx);
  };
}

// FusedMatMul: alpha * op(A) op(B), op transposing the last two dims where transA / transB say;
// the batch dims broadcast as MatMul's (left unknown where they differ and neither is 1).
void fused_matmul_shape(InferenceContext& ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0) || !onnx::hasInputShape(ctx, 1) ||
      onnx::getAttribute(ctx, "transBatchA", 0) != 0 || onnx::getAttribute(ctx, "transBatchB", 0) != 0)
    return;
  const auto& a = ctx.getInputType(0)->tensor_type().shape();
  const auto& b = ctx.getInputType(1)->tensor_type().shape();
  if (a.dim_size() < 2 || b.dim_size() < 2) return;
  const bool trans_a = onnx::getAttribute(ctx, "transA", 0) != 0, trans_b = onnx::getAttribute(ctx, "transB", 0) != 0;
  auto* y = onnx::getOutputShape(ctx, 0);
  y->clear_dim();
  const int batch = std::max(a.dim_size(), b.dim_size()) - 2;
  for (int d = 0; d < batch; ++d) {
    const int da = d - (batch - (a.dim_size() - 2)), db = d - (batch - (b.dim_size() - 2));
    const auto* x = da >= 0 ? &a.dim(da) : nullptr;
    const auto* z = db >= 0 ? &b.dim(db) : nullptr;
    if (!x || (x->has_dim_value() && x->dim_value() == 1 && z)) add_dim(y, z);
    else if (!z || (z->has_dim_value() && z->dim_value() == 1) || (x->has_dim_value() && z->has_dim_value() &&
                                                                   x->dim_value() == z->dim_value()))
      add_dim(y, x);
    else
      y->add_dim();
  }
  add_dim(y, &a.dim(a.dim_size() - (trans_a ? 1 : 2)));
  add_dim(y, &b.dim(b.dim_size() - (trans_b ? 2 : 1)));
}

std::map<std::string, onnx::OpSchema> build_schemas() {
  const std::pair<const char*, onnx::InferenceFunction> rules[] = {
      {"FusedConv", standard_rule("Conv", 11)},
      {"FusedGemm", standard_rule("Gemm", 13)},
      {"FusedMatMul", fused_matmul_shape},
      {"QLinearAdd", qlinear_binary_shape},
      {"QLinearMul", qlinear_binary_shape},
      {"QLinearSigmoid", same_as_input},
      {"QLinearLeakyRelu", same_as_input},
      {"QLinearGlobalAveragePool", global_pool_shape},
      {"QLinearAveragePool", average_pool_shape},
      {"QLinearConcat", concat_shape},
      {"QGemm", qgemm_shape},
      {"MatMulIntegerToFloat", integer_to_float_shape},
      {"DynamicQuantizeMatMul", integer_to_float_shape},
      {"MatMulNBits", matmul_nbits_shape},
      {"SkipLayerNormalization", skip_normalization_shape},
      {"SkipSimplifiedLayerNormalization", skip_normalization_shape},
      {"Gelu", same_as_input},
      {"FastGelu", same_as_input},
      {"BiasGelu", same_as_input},
      {"QuickGelu", same_as_input},
      {"GroupQueryAttention", group_query_attention_shape},
      {"GatherBlockQuantized", gather_block_quantized_shape},
      {"EmbedLayerNormalization", embed_layer_normalization_shape},
      {"Attention", microsoft_attention_shape},
      {"QAttention", qattention_shape},
      {"MultiHeadAttention", multi_head_attention_shape},
      {"RotaryEmbedding", same_as_input},
  };
  std::map<std::string, onnx::OpSchema> schemas;
  for (const auto& [op, rule] : rules) {
    onnx::OpSchema s(op, __FILE__, __LINE__);
    s.SetDomain("com.microsoft").SinceVersion(1).TypeAndShapeInferenceFunction(rule);
    schemas.emplace(op, std::move(s));
  }
  return schemas;
}

}  // namespace

const onnx::OpSchema* onnx_runtime_onnx_domain_schema(const std::string& op, int version) {
  static const onnx::OpSchema simplified_layer_norm = [] {
    onnx::OpSchema s("SimplifiedLayerNormalization", __FILE__, __LINE__);
    s.SetDomain(onnx::ONNX_DOMAIN).SinceVersion(1).TypeAndShapeInferenceFunction(same_as_input);
    return s;
  }();
  // ORT's LayerNormalization before ONNX's (opset 17), with the same attributes and outputs.
  static const onnx::OpSchema layer_norm = [] {
    onnx::OpSchema s("LayerNormalization", __FILE__, __LINE__);
    s.SetDomain(onnx::ONNX_DOMAIN).SinceVersion(1).TypeAndShapeInferenceFunction(standard_rule("LayerNormalization",
                                                                                                17));
    return s;
  }();
  if (op == "SimplifiedLayerNormalization") return &simplified_layer_norm;
  return op == "LayerNormalization" && version < 17 ? &layer_norm : nullptr;
}

const onnx::OpSchema* microsoft_schema(const std::string& op, int version) {
  static const std::map<std::string, onnx::OpSchema> schemas = build_schemas();
  auto it = schemas.find(op);
  return version >= 1 && it != schemas.end() ? &it->second : nullptr;
}

}  // namespace nxrt
