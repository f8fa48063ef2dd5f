// op_signature: libonnx's OpSchema for a node's operator version, reduced to what kernel
// matching reads; ai.onnx versions newer than libonnx take their since version from
// op_versions (their inputs and type strings stay libonnx's, the newest it has).
#include "nxrt/model/op_signature.h"

#include <onnx/defs/schema.h>

#include <algorithm>

#include "nxrt/model/op_versions.h"

namespace nxrt {
namespace {

std::string bound_type(const std::vector<std::string>& formals, bool variadic, std::size_t index) {
  if (index < formals.size()) return formals[index];
  return variadic && !formals.empty() ? formals.back() : std::string();
}

}  // namespace

std::string OpSignature::input_type(std::size_t index) const { return bound_type(inputs, variadic_input, index); }
std::string OpSignature::output_type(std::size_t index) const { return bound_type(outputs, variadic_output, index); }

std::optional<OpSignature> op_signature(std::string_view op, std::string_view domain, int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(std::string(op), static_cast<int>(opset), std::string(domain));
  const OpVersionChange* later = domain.empty() ? op_version_at(op, opset) : nullptr;
  if (!schema && !later) return std::nullopt;
  OpSignature out;
  if (schema) {
    out.since_version = schema->since_version();
    for (const auto& p : schema->inputs()) out.inputs.push_back(p.GetTypeStr());
    for (const auto& p : schema->outputs()) out.outputs.push_back(p.GetTypeStr());
    out.variadic_input = !schema->inputs().empty() && schema->inputs().back().GetOption() == onnx::OpSchema::Variadic;
    out.variadic_output = !schema->outputs().empty() && schema->outputs().back().GetOption() == onnx::OpSchema::Variadic;
  }
  if (later) out.since_version = std::max(out.since_version, later->since_version);
  return out;
}

}  // namespace nxrt
