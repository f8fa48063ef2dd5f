// The random ops' attributes as every EP reads them: RandomUniform, RandomNormal and their Like
// forms, Bernoulli, Multinomial and Dropout. The checks here decline what no EP can draw; each
// EP adds its own of element types. The numbers drawn are each EP's own.
#pragma once

#include <optional>

#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt {

// The output type from the `dtype` attribute, else `fallback`; nullopt for an unknown code.
std::optional<DType> random_dtype_attr(const AttributeMap& attrs, DType fallback);
// RandomUniform(Like) and RandomNormal(Like)'s output type: dtype, else the input's (the Like
// forms) or float.
std::optional<DType> random_fill_dtype(const NodeContext& ctx);
// The output type named for a decline: its name, or the unknown code.
std::string random_dtype_name(const NodeContext& ctx, const std::optional<DType>& t);

// RandomUniform and RandomNormal (and their Like forms): declines a missing shape or one with
// a negative dim (the forms without an input), and low above high.
KernelMatch check_random_fill_node(const NodeContext& ctx);
// Multinomial: declines an input of rank other than 2 (when known) and sample_size below 1.
KernelMatch check_multinomial_node(const NodeContext& ctx);
// Dropout: declines a ratio attribute outside [0, 1].
KernelMatch check_dropout_node(const NodeContext& ctx);

}  // namespace nxrt
