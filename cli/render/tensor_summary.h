// Short descriptions of tensors for people and JSON: dtype, shape, min/max/mean, first values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "nxrt/ep/runtime_value.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::cli {

// "float[1,10] min -2.31 max 3.02 mean 0.12: [0.5, -1.2, ...]"
std::string summarize(const Tensor& t, std::size_t first_values = 6);
nlohmann::ordered_json summary_json(const Tensor& t, std::size_t first_values = 16);
// Tensors as above; "sequence of 2 float: {float[2] ..., float[3] ...}"; "none".
std::string summarize(const RuntimeValue& v, std::size_t first_values = 6);
nlohmann::ordered_json summary_json(const RuntimeValue& v, std::size_t first_values = 16);

}  // namespace nxrt::cli
