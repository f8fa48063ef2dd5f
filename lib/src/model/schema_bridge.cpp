// ONNX shape inference for op versions newer than libonnx: each version opsets 18 to 25
// introduced gets libonnx's schema when libonnx has it, else nxrt's rule below (the element
// type, and the shape where the rule is exact), else the previous version's when only types
// were added; versions without either infer nothing, and run time gives the shapes.
#include "schema_bridge.h"

#include <onnx/defs/shape_inference.h>

#include <map>
#include <utility>

#include "inference_rules.h"
#include "microsoft_schemas.h"
#include "nxrt/model/op_versions.h"

namespace nxrt {
namespace {

using onnx::InferenceContext;
using onnx::InferenceFunction;
using namespace inference;


void broadcast_binary(InferenceContext& ctx) { broadcast_inputs(ctx, 0, 1); }

// Output 0: element type `elem`, input 0's shape.
void typed_like_input(InferenceContext& ctx, int32_t elem) {
  ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(elem);
  if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

bool all_ones(InferenceContext& ctx, const char* attr) {
  const onnx::AttributeProto* a = ctx.getAttribute(attr);
  if (!a) return true;
  for (int64_t v : a->ints())
    if (v != 1) return false;
  return true;
}

// Attention-23: Y, present_key, present_value and qk_matmul_output from Q, K, V and past_key,
// with rank-4 inputs [batch, heads, seq, head_size] or rank-3 [batch, seq, heads * head_size].
void attention_shapes(InferenceContext& ctx) {
  if (!has_input(ctx, 0)) return;
  for (std::size_t o = 0; o < ctx.getNumOutputs(); ++o) onnx::propagateElemTypeFromInputToOutput(ctx, 0, o);
  if (!onnx::hasInputShape(ctx, 0)) return;
  const bool packed = ctx.getInputType(0)->tensor_type().shape().dim_size() == 3;
  const int64_t q_heads = onnx::getAttribute(ctx, "q_num_heads", 0), kv_heads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  auto per_head = [&](std::size_t input, int64_t heads) -> int64_t {  // head size of Q, K or V
    if (!packed) return value_of(input_dim(ctx, input, 3));
    const int64_t hidden = value_of(input_dim(ctx, input, 2));
    return hidden > 0 && heads > 0 ? hidden / heads : -1;
  };
  const auto* batch = input_dim(ctx, 0, 0);
  const auto* q_seq = input_dim(ctx, 0, packed ? 1 : 2);
  const int64_t v_size = per_head(2, kv_heads);
  auto* y = onnx::getOutputShape(ctx, 0);
  add_dim(y, batch);
  if (packed) {
    add_dim(y, q_seq);
    add_value(y, q_heads > 0 && v_size > 0 ? q_heads * v_size : -1);
  } else {
    add_dim(y, input_dim(ctx, 0, 1));
    add_dim(y, q_seq);
    add_value(y, v_size);
  }
  const int64_t kv_seq = value_of(input_dim(ctx, 1, packed ? 1 : 2));
  const int64_t past = has_input(ctx, 4) ? value_of(input_dim(ctx, 4, 2)) : 0;
  const int64_t total = kv_seq > 0 && past >= 0 ? past + kv_seq : -1;
  const int64_t kv_h = packed ? kv_heads : value_of(input_dim(ctx, 1, 1));
  for (std::size_t o : {1, 2}) {
    if (o >= ctx.getNumOutputs()) break;
    auto* s = onnx::getOutputShape(ctx, o);
    add_dim(s, batch);
    add_value(s, kv_h);
    add_value(s, total);
    add_value(s, o == 1 ? per_head(1, kv_heads) : v_size);
  }
  if (ctx.getNumOutputs() > 3) {
    auto* s = onnx::getOutputShape(ctx, 3);
    add_dim(s, batch);
    add_value(s, packed ? q_heads : value_of(input_dim(ctx, 0, 1)));
    add_dim(s, q_seq);
    add_value(s, total);
  }
}

// nxrt's rules, by (op, since_version).
std::map<std::pair<std::string, int64_t>, InferenceFunction> rules() {
  std::map<std::pair<std::string, int64_t>, InferenceFunction> r;
  // Axes as an optional input and noop_with_empty_axes: ReduceSum-13's signature.
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                         "ReduceMin", "ReduceProd", "ReduceSumSquare"})
    r[{op, 18}] = [](InferenceContext& ctx) { infer_as(ctx, "ReduceSum", 13); };
  r[{"ReduceMax", 20}] = r[{"ReduceMin", 20}] = [](InferenceContext& ctx) { infer_as(ctx, "ReduceSum", 13); };
  for (const char* op : {"Mish", "BitwiseNot", "GroupNormalization"}) r[{op, 18}] = same_as_input;
  r[{"GroupNormalization", 21}] = r[{"Gelu", 20}] = same_as_input;
  r[{"RMSNormalization", 23}] = r[{"RotaryEmbedding", 23}] = same_as_input;
  r[{"Attention", 23}] = r[{"Attention", 24}] = attention_shapes;
  r[{"Swish", 24}] = r[{"TensorScatter", 24}] = same_as_input;
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) r[{op, 18}] = broadcast_binary;
  r[{"ScatterElements", 18}] = [](InferenceContext& ctx) { infer_as(ctx, "ScatterElements", 16); };
  r[{"ScatterND", 18}] = [](InferenceContext& ctx) { infer_as(ctx, "ScatterND", 16); };
  r[{"CenterCropPad", 18}] = r[{"Col2Im", 18}] = r[{"DFT", 20}] = r[{"GridSample", 20}] = type_and_rank;
  r[{"StringConcat", 20}] = broadcast_binary;
  r[{"RegexFullMatch", 20}] = [](InferenceContext& ctx) { typed_like_input(ctx, onnx::TensorProto::BOOL); };
  // Substrings: the input's shape plus one axis as long as the most substrings (known at run
  // time); counts: the input's shape.
  r[{"StringSplit", 20}] = [](InferenceContext& ctx) {
    ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::STRING);
    const bool counts = ctx.getNumOutputs() > 1;
    if (counts) ctx.getOutputType(1)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const onnx::TensorShapeProto& in = ctx.getInputType(0)->tensor_type().shape();
    *onnx::getOutputShape(ctx, 0) = in;
    onnx::getOutputShape(ctx, 0)->add_dim();
    if (counts) *onnx::getOutputShape(ctx, 1) = in;
  };
  // DeformConv: [N, oC, oH, oW] from X, W and the offset's spatial dims.
  r[{"DeformConv", 19}] = r[{"DeformConv", 22}] = [](InferenceContext& ctx) {
    if (!has_input(ctx, 0)) return;
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    auto* y = onnx::getOutputShape(ctx, 0);
    y->clear_dim();
    add_dim(y, input_dim(ctx, 0, 0));
    add_dim(y, input_dim(ctx, 1, 0));
    add_dim(y, input_dim(ctx, 2, 2));
    add_dim(y, input_dim(ctx, 2, 3));
  };
  r[{"AffineGrid", 20}] = [](InferenceContext& ctx) {
    if (has_input(ctx, 0)) onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  };
  // Rules that hold while the new attribute or input is left at its default.
  r[{"Split", 18}] = [](InferenceContext& ctx) {
    if (!ctx.getAttribute("num_outputs")) return infer_as(ctx, "Split", 13);
    if (!has_input(ctx, 0)) return;
    for (std::size_t i = 0; i < ctx.getNumOutputs(); ++i) onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  };
  r[{"Pad", 18}] = r[{"Pad", 19}] = [](InferenceContext& ctx) {
    if (has_input(ctx, 3)) return type_and_rank(ctx);
    infer_as(ctx, "Pad", 13);
  };
  r[{"Resize", 18}] = r[{"Resize", 19}] = [](InferenceContext& ctx) {
    const onnx::AttributeProto* policy = ctx.getAttribute("keep_aspect_ratio_policy");
    if (ctx.getAttribute("axes") || (policy && policy->s() != "stretch")) return type_and_rank(ctx);
    infer_as(ctx, "Resize", 13);
  };
  r[{"LpPool", 18}] = [](InferenceContext& ctx) {
    if (onnx::getAttribute(ctx, "ceil_mode", 0) != 0 || !all_ones(ctx, "dilations")) return type_and_rank(ctx);
    infer_as(ctx, "LpPool", 11);
  };
  r[{"AveragePool", 19}] = [](InferenceContext& ctx) {
    if (!all_ones(ctx, "dilations")) return type_and_rank(ctx);
    infer_as(ctx, "AveragePool", 11);
  };
  r[{"OptionalHasElement", 18}] = [](InferenceContext& ctx) {
    ctx.getOutputType(0)->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
    ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  };
  r[{"OptionalGetElement", 18}] = [](InferenceContext& ctx) {
    if (!has_input(ctx, 0)) return;
    const onnx::TypeProto* in = ctx.getInputType(0);
    *ctx.getOutputType(0) = in->has_optional_type() ? in->optional_type().elem_type() : *in;
  };
  // The float8 (19) and int4 (21) versions only add types, but libonnx's Cast-13 refuses a
  // 'to' it does not know; every later version uses these rules too.
  r[{"Cast", 19}] = r[{"Cast", 21}] = [](InferenceContext& ctx) {
    typed_like_input(ctx, static_cast<int32_t>(onnx::getAttribute(ctx, "to", 0)));
  };
  r[{"CastLike", 19}] = r[{"CastLike", 21}] = [](InferenceContext& ctx) {
    if (has_input(ctx, 1)) typed_like_input(ctx, ctx.getInputType(1)->tensor_type().elem_type());
  };
  // Dequantized values take the scale's type (float16 and bfloat16 scales from opset 19).
  r[{"DequantizeLinear", 19}] = r[{"DequantizeLinear", 21}] = [](InferenceContext& ctx) {
    if (has_input(ctx, 1)) typed_like_input(ctx, ctx.getInputType(1)->tensor_type().elem_type());
  };
  // From opset 23, output_dtype may name the type instead.
  r[{"DequantizeLinear", 23}] = [](InferenceContext& ctx) {
    if (const int64_t code = onnx::getAttribute(ctx, "output_dtype", 0); code != 0)
      return typed_like_input(ctx, static_cast<int32_t>(code));
    if (has_input(ctx, 1)) typed_like_input(ctx, ctx.getInputType(1)->tensor_type().elem_type());
  };
  // Quantized values take the zero point's type, else output_dtype (opset 21), else uint8.
  r[{"QuantizeLinear", 19}] = r[{"QuantizeLinear", 21}] = r[{"QuantizeLinear", 23}] = [](InferenceContext& ctx) {
    int32_t elem = onnx::TensorProto::UINT8;
    if (has_input(ctx, 2)) elem = ctx.getInputType(2)->tensor_type().elem_type();
    else if (const int64_t code = onnx::getAttribute(ctx, "output_dtype", 0); code != 0)
      elem = static_cast<int32_t>(code);
    typed_like_input(ctx, elem);
  };
  return r;
}

class InferenceSchemas final : public onnx::ISchemaRegistry {
 public:
  InferenceSchemas() {
    for (auto& [key, fn] : rules()) {
      onnx::OpSchema s(key.first, __FILE__, __LINE__);
      s.SetDomain(onnx::ONNX_DOMAIN).SinceVersion(static_cast<int>(key.second)).TypeAndShapeInferenceFunction(fn);
      schemas_.emplace(key, std::move(s));
    }
  }

  const onnx::OpSchema* GetSchema(const std::string& op, const int version, const std::string& domain) const override {
    if (domain == "com.microsoft") return microsoft_schema(op, version);
    if (!domain.empty() && domain != "ai.onnx") return onnx::OpSchemaRegistry::Instance()->GetSchema(op, version, domain);
    if (const onnx::OpSchema* ort = onnx_runtime_onnx_domain_schema(op, version)) return ort;
    if (version > kNewestKnownOpset) return nullptr;
    const onnx::OpSchema* own = libonnx_schema(op, version);
    const OpVersionChange* change = op_version_at(op, version);
    if (!change || (own && own->SinceVersion() >= change->since_version)) return own;
    auto it = schemas_.find({op, change->since_version});
    if (it != schemas_.end()) return &it->second;
    if (change->kind == OpVersionChange::Kind::kSameSignature) {
      // The version before it, when libonnx knows that one (each type-only version follows one).
      const OpVersionChange* before = op_version_at(op, change->since_version - 1);
      return before && (!own || own->SinceVersion() < before->since_version) ? GetSchema(op, before->since_version, domain)
                                                                               : own;
    }
    return nullptr;
  }

 private:
  std::map<std::pair<std::string, int64_t>, onnx::OpSchema> schemas_;
};

}  // namespace

const onnx::ISchemaRegistry& inference_schemas() {
  static const InferenceSchemas schemas;
  return schemas;
}

}  // namespace nxrt
