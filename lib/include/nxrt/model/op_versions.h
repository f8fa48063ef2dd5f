// What nxrt knows of ai.onnx operator versions past ONNX 1.12 (opset 17): every version
// that opsets 18 to 25 introduced, so claims and shape inference never guess at them.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace nxrt {

// The newest ai.onnx opset whose operator versions nxrt knows; models importing a newer one
// still load, and their ai.onnx nodes are declined with the version nxrt does know.
inline constexpr int64_t kNewestKnownOpset = 25;

struct OpVersionChange {
  enum class Kind {
    kNewOp,          // the op's first version
    kSameSignature,  // only new types: inputs, outputs and attributes as before
    kChanged,        // inputs, outputs, attributes or semantics changed
  };
  std::string_view op;
  int64_t since_version;
  Kind kind;
  std::string_view change;  // what is new, for messages: "axes as an input"
};

// Every ai.onnx version introduced in opsets 18..kNewestKnownOpset, sorted by op then version.
std::span<const OpVersionChange> op_version_changes();

// The newest of those versions of `op` (ai.onnx) at or below `opset`; nullopt when the op
// keeps a version from opset 17 or earlier there.
const OpVersionChange* op_version_at(std::string_view op, int64_t opset);

// The first of those versions of `op` above `since` (and at or below `opset`); nullopt when none.
const OpVersionChange* op_version_after(std::string_view op, int64_t since, int64_t opset);

// The same, skipping versions that only add types (kSameSignature): the first version after
// `since` that a kernel written for `since` may not run correctly.
const OpVersionChange* op_signature_change_after(std::string_view op, int64_t since, int64_t opset);

}  // namespace nxrt
