// KernelMatch, NodeContext and the serial Parallel.
#include "nxrt/ep/kernel.h"

namespace nxrt {

KernelMatch KernelMatch::supported(Cost cost) {
  KernelMatch m;
  m.supported_ = true;
  m.cost_ = cost;
  return m;
}

KernelMatch KernelMatch::declined(std::string reason) {
  KernelMatch m;
  m.reason_ = reason.empty() ? "declined without a reason (a bug in the EP: every decline must say why)"
                             : std::move(reason);
  return m;
}

bool NodeContext::has_input(std::size_t i) const {
  return i < node_.inputs.size() && node_.inputs[i] != kNoValue;
}

bool NodeContext::has_output(std::size_t i) const {
  return i < node_.outputs.size() && node_.outputs[i] != kNoValue;
}

const ValueType* NodeContext::input_type(std::size_t i) const {
  return has_input(i) ? &graph_.value(node_.inputs[i]).type : nullptr;
}

const ValueType* NodeContext::output_type(std::size_t i) const {
  return has_output(i) ? &graph_.value(node_.outputs[i]).type : nullptr;
}

DType NodeContext::input_dtype(std::size_t i) const {
  const auto* t = input_type(i);
  return t ? t->dtype : DType::kUndefined;
}

std::optional<int64_t> NodeContext::input_rank(std::size_t i) const {
  const auto* t = input_type(i);
  if (!t || !t->shape) return std::nullopt;
  return static_cast<int64_t>(t->shape->size());
}

std::optional<Shape> NodeContext::input_static_shape(std::size_t i) const {
  const auto* t = input_type(i);
  return t ? t->static_shape() : std::nullopt;
}

const WeightHandle* NodeContext::constant_input(std::size_t i) const {
  if (!has_input(i)) return nullptr;
  const auto& v = graph_.value(node_.inputs[i]);
  // An initializer that is also a graph input is only a default: the caller may override it.
  return v.initializer && !v.is_graph_input ? &*v.initializer : nullptr;
}

std::optional<std::vector<int64_t>> NodeContext::constant_ints(std::size_t i) const {
  const WeightHandle* w = constant_input(i);
  if (!w || !is_integer(w->dtype())) return std::nullopt;
  auto t = w->materialize();
  if (!t) return std::nullopt;
  return t->to_int64_vector();
}

void SerialParallel::for_range(int64_t n, int64_t,
                               const std::function<void(int64_t, int64_t)>& fn) const {
  if (n > 0) fn(0, n);
}

}  // namespace nxrt
