// A plan step that nxrt computes itself instead of a oneDNN primitive: used only where oneDNN
// 2.6's own kernel is measurably slow (BENCHMARKS.md). It reads and writes the step's memory
// objects exactly as a primitive would, in the layouts the plan chose.
#pragma once

#include <string>
#include <unordered_map>

#include "dnnl_util.h"

namespace nxrt::onednn {

class NativeKernel {
 public:
  virtual ~NativeKernel() = default;
  // `args`: DNNL_ARG_* -> memory, bound like a primitive's. Runs on the caller's OpenMP
  // threads (--threads). Never throws.
  virtual void execute(const std::unordered_map<int, dnnl::memory>& args) const = 0;
  // The implementation's name for profiles, e.g. "nxrt:nChw8c".
  virtual std::string name() const = 0;
};

}  // namespace nxrt::onednn
