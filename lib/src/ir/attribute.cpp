// Typed access to node attributes.
#include "nxrt/ir/attribute.h"

namespace nxrt {

std::string_view Attribute::type_name() const {
  static constexpr std::string_view kNames[] = {"int", "float", "string", "ints", "floats",
                                                "strings", "tensor", "graph", "other"};
  return kNames[value.index()];
}

const Attribute* AttributeMap::find(const std::string& name) const {
  auto it = attrs_.find(name);
  return it == attrs_.end() ? nullptr : &it->second;
}

namespace {
template <class T>
std::optional<T> get_as(const AttributeMap& m, const std::string& name) {
  const Attribute* a = m.find(name);
  if (!a) return std::nullopt;
  if (const T* v = std::get_if<T>(&a->value)) return *v;
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> AttributeMap::get_int(const std::string& name) const { return get_as<int64_t>(*this, name); }
std::optional<float> AttributeMap::get_float(const std::string& name) const { return get_as<float>(*this, name); }
std::optional<std::string> AttributeMap::get_string(const std::string& name) const {
  return get_as<std::string>(*this, name);
}
std::optional<std::vector<int64_t>> AttributeMap::get_ints(const std::string& name) const {
  return get_as<std::vector<int64_t>>(*this, name);
}
std::optional<std::vector<float>> AttributeMap::get_floats(const std::string& name) const {
  return get_as<std::vector<float>>(*this, name);
}
std::optional<std::vector<std::string>> AttributeMap::get_strings(const std::string& name) const {
  return get_as<std::vector<std::string>>(*this, name);
}

const Tensor* AttributeMap::get_tensor(const std::string& name) const {
  const Attribute* a = find(name);
  return a ? std::get_if<Tensor>(&a->value) : nullptr;
}

std::shared_ptr<const Graph> AttributeMap::get_graph(const std::string& name) const {
  return get_as<std::shared_ptr<const Graph>>(*this, name).value_or(nullptr);
}

int64_t AttributeMap::int_or(const std::string& name, int64_t fallback) const {
  return get_int(name).value_or(fallback);
}
float AttributeMap::float_or(const std::string& name, float fallback) const {
  return get_float(name).value_or(fallback);
}
std::string AttributeMap::string_or(const std::string& name, std::string fallback) const {
  return get_string(name).value_or(std::move(fallback));
}
std::vector<int64_t> AttributeMap::ints_or(const std::string& name, std::vector<int64_t> fallback) const {
  return get_ints(name).value_or(std::move(fallback));
}

}  // namespace nxrt
