// Kernel lookup for plugin EP kernel registries. The version rule is ONNX Runtime's: a kernel
// matches its start version exactly, or any version up to its end when it has one (an
// open-ended range, end INT_MAX, matches only its start); each type constraint must accept
// the element type of every present input and output the operator binds to that name.
#include "kernel_match.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "nxrt/ep/dtype.h"
#include "nxrt/model/op_signature.h"

namespace nxrt::ort_plugin {
namespace {

std::string element_name(ONNXTensorElementDataType t) {
  auto d = dtype_from_onnx(static_cast<int32_t>(t));
  return d ? std::string(dtype_name(*d)) : fmt::format("element type {}", static_cast<int>(t));
}

std::string versions_text(const KernelDefinition& def) {
  if (def.since_end == INT_MAX) return fmt::format("{}+", def.since_start);
  return fmt::format("{}-{}", def.since_start, def.since_end);
}

std::string node_key(const OrtNode& node) {
  return fmt::format("{}::{} version {}", display_domain(node.domain), node.op_type, node.since_version);
}

bool version_matches(const KernelDefinition& def, int since) {
  return def.since_start == since || (def.since_end != INT_MAX && def.since_start <= since && since <= def.since_end);
}

// The element types of the node's present values bound to type string `name`.
std::vector<ONNXTensorElementDataType> bound_types(const OrtNode& node, const OpSignature& sig, const std::string& name,
                                                   bool& non_tensor) {
  std::vector<ONNXTensorElementDataType> out;
  auto add = [&](const OrtValueInfo* v) {
    if (!v) return;
    if (v->type.type != ONNX_TYPE_TENSOR) non_tensor = true;
    else out.push_back(v->type.tensor.element_type);
  };
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    if (sig.input_type(i) == name) add(node.inputs[i]);
  for (std::size_t i = 0; i < node.outputs.size(); ++i)
    if (sig.output_type(i) == name) add(node.outputs[i]);
  return out;
}

// Why `def` does not run `node` on `ep_name`; "" when it does.
std::string mismatch(const KernelDefinition& def, const OrtNode& node, const std::optional<OpSignature>& sig,
                     std::string_view ep_name) {
  if (def.ep_name != ep_name) return fmt::format("it is registered for EP '{}', not '{}'", def.ep_name, ep_name);
  if (!version_matches(def, node.since_version))
    return def.since_end == INT_MAX
               ? fmt::format("version {} is not its start version {} (an open-ended range matches its start only)",
                             node.since_version, def.since_start)
               : fmt::format("version {} is outside {}", node.since_version, versions_text(def));
  for (const auto& [name, allowed] : def.type_constraints) {
    if (!sig) continue;  // no definition to bind names with: ONNX Runtime skips unbound constraints too
    bool non_tensor = false;
    for (ONNXTensorElementDataType t : bound_types(node, *sig, name, non_tensor))
      if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
        return fmt::format("its type constraint {} does not allow {}", name, element_name(t));
    if (non_tensor) return fmt::format("its type constraint {} allows tensors only, and the node binds a non-tensor to it", name);
  }
  return "";
}

}  // namespace

std::string describe_kernel(const KernelDefinition& def) {
  std::string out = fmt::format("{}::{} {} on {}", display_domain(def.domain), def.op_type, versions_text(def),
                                def.ep_name.empty() ? std::string("(no EP)") : def.ep_name);
  std::vector<std::string> constraints;
  for (const auto& [name, types] : def.type_constraints) {
    std::vector<std::string> names;
    for (auto t : types) names.push_back(element_name(t));
    constraints.push_back(fmt::format("{}: {}", name, fmt::join(names, ", ")));
  }
  if (!constraints.empty()) out += fmt::format(" [{}]", fmt::join(constraints, "; "));
  return out;
}

KernelLookup find_kernel(const OrtKernelRegistry* registry, const OrtNode& node, std::string_view ep_name) {
  KernelLookup out;
  if (!registry || registry->kernels.empty()) {
    out.why_none = fmt::format("its kernel registry has no kernels, so none runs {}", node_key(node));
    return out;
  }
  const std::optional<OpSignature> sig =
      node.node ? op_signature(node.op_type, node.domain, node.node->opset) : std::nullopt;
  std::vector<std::string> misses;
  std::vector<std::string> others;
  for (const auto& k : registry->kernels) {
    const KernelDefinition& def = k->def.def;
    if (def.op_type != node.op_type || def.domain != node.domain) {
      others.push_back(fmt::format("{}::{}", display_domain(def.domain), def.op_type));
      continue;
    }
    std::string why = mismatch(def, node, sig, ep_name);
    if (why.empty()) {
      out.kernel = k.get();
      return out;
    }
    misses.push_back(fmt::format("{} ({})", describe_kernel(def), why));
  }
  if (!misses.empty()) {
    out.why_none = fmt::format("no kernel in its kernel registry runs {}: {}", node_key(node), fmt::join(misses, "; "));
    return out;
  }
  constexpr std::size_t kShown = 8;
  const std::size_t total = others.size();
  if (others.size() > kShown) others.resize(kShown);
  out.why_none = fmt::format("its kernel registry has no kernel for {}::{} (it has {} kernel{}: {}{})",
                             display_domain(node.domain), node.op_type, total, total == 1 ? "" : "s",
                             fmt::join(others, ", "), total > kShown ? ", ..." : "");
  return out;
}

}  // namespace nxrt::ort_plugin
