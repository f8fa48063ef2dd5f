// Matching a node to a kernel of a plugin EP's kernel registry, by ONNX Runtime's rules:
// op type, domain, EP name, since-version range and type constraints.
#pragma once

#include <string>
#include <string_view>

#include "host_types.h"

namespace nxrt::ort_plugin {

struct KernelLookup {
  const OrtKernelRegistry::Kernel* kernel = nullptr;  // the first that matches
  std::string why_none;  // when none does: what the registry holds for the node, and why each misses
};

// The kernel of `registry` (may be NULL) that runs `node` on the EP named `ep_name`.
KernelLookup find_kernel(const OrtKernelRegistry* registry, const OrtNode& node, std::string_view ep_name);

// "ai.onnx::Neg 13-13 on test_plugin [T: float]": a kernel as messages name it.
std::string describe_kernel(const KernelDefinition& def);

}  // namespace nxrt::ort_plugin
