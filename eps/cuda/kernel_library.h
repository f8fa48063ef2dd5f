// The CUDA C every generated module starts with: f16 loads/stores without cuda_fp16.h (NVRTC
// then needs no toolkit headers), index helpers and the templated kernels of the op families.
#pragma once

#include <string_view>

namespace nxrt::cuda {

// Highest tensor rank the generated kernels index (their Dims struct holds this many).
inline constexpr int kMaxRank = 8;

// The prelude: `struct Dims`, `h16`, ld/st, and templates instantiated by name from
// generated `extern "C"` wrappers (see codegen.h).
std::string_view kernel_library_source();

}  // namespace nxrt::cuda
