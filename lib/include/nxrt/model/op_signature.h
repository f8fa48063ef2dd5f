// The ONNX definition of the operator version a node uses, as hosts that match kernels by it
// need it (ONNX Runtime plugin EP kernel registries): the since version and the type
// parameter each input and output is bound to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nxrt {

struct OpSignature {
  int64_t since_version = 0;  // the operator version in force at the node's opset
  // Per formal input / output: its type string ("T", or a fixed type such as "tensor(int64)").
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  bool variadic_input = false;   // the last formal input takes the remaining actual inputs
  bool variadic_output = false;

  // The type string actual input (output) `index` is bound to; "" past the formal list.
  std::string input_type(std::size_t index) const;
  std::string output_type(std::size_t index) const;
};

// The signature of `op` in `domain` ("" for ai.onnx) at `opset`, from libonnx's definitions and
// nxrt's table of later ai.onnx versions; nullopt for operators ONNX does not define.
std::optional<OpSignature> op_signature(std::string_view op, std::string_view domain, int64_t opset);

}  // namespace nxrt
