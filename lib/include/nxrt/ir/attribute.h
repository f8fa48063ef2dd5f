// Attribute: a node attribute in nxrt's own form, so kernels never see protobuf.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "nxrt/ep/tensor.h"

namespace nxrt {

class Graph;

enum class AttributeType { kInt, kFloat, kString, kInts, kFloats, kStrings, kTensor, kGraph, kOther };

// An attribute nxrt does not model (a type proto, a sparse tensor, a list of tensors or
// graphs): its serialized onnx::AttributeProto, so that writing the node gives it back as read.
struct OpaqueAttribute {
  std::string proto;
};

struct Attribute {
  using Value = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                             std::vector<float>, std::vector<std::string>, Tensor,
                             std::shared_ptr<const Graph>, OpaqueAttribute>;
  Value value;

  AttributeType type() const { return static_cast<AttributeType>(value.index()); }
  std::string_view type_name() const;  // "int", "floats", "graph"...
};

// Attributes of one node, by name, with typed getters that fall back to a default.
class AttributeMap {
 public:
  void set(std::string name, Attribute a) { attrs_[std::move(name)] = std::move(a); }
  bool has(const std::string& name) const { return attrs_.contains(name); }
  const Attribute* find(const std::string& name) const;
  const std::map<std::string, Attribute>& all() const { return attrs_; }

  // The typed getters return nullopt when absent or when the type differs;
  // use type_of() to tell the two apart in a decline reason.
  std::optional<int64_t> get_int(const std::string& name) const;
  std::optional<float> get_float(const std::string& name) const;
  std::optional<std::string> get_string(const std::string& name) const;
  std::optional<std::vector<int64_t>> get_ints(const std::string& name) const;
  std::optional<std::vector<float>> get_floats(const std::string& name) const;
  std::optional<std::vector<std::string>> get_strings(const std::string& name) const;
  const Tensor* get_tensor(const std::string& name) const;
  std::shared_ptr<const Graph> get_graph(const std::string& name) const;

  int64_t int_or(const std::string& name, int64_t fallback) const;
  float float_or(const std::string& name, float fallback) const;
  std::string string_or(const std::string& name, std::string fallback) const;
  std::vector<int64_t> ints_or(const std::string& name, std::vector<int64_t> fallback) const;

 private:
  std::map<std::string, Attribute> attrs_;
};

}  // namespace nxrt
