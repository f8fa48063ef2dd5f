// Helpers every CPU kernel family uses: dtype checks, costs, kernel construction.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/registry.h"

namespace nxrt::cpu {

// "float, double": the allowed types, for decline reasons.
std::string dtype_list(std::initializer_list<DType> types);

// Declines unless input i is present and its type is one of `allowed`.
KernelMatch require_input_dtype(const NodeContext& ctx, std::size_t i,
                                std::initializer_list<DType> allowed);

// Elements of a value when its shape is static; nullopt otherwise.
std::optional<int64_t> static_numel(const ValueType* type);

// Cost of an elementwise op: `flops_per_element` per output element, bytes of inputs and
// outputs; zeros when shapes are symbolic.
Cost elementwise_cost(const NodeContext& ctx, double flops_per_element);

// Wraps a constructed kernel into the factory's return type.
template <class K, class... Args>
Expected<std::unique_ptr<Kernel>> make_kernel(Args&&... args) {
  return std::unique_ptr<Kernel>(std::make_unique<K>(std::forward<Args>(args)...));
}

// Resolves a possibly negative axis against a rank; nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

}  // namespace nxrt::cpu
