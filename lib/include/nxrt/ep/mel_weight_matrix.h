// MelWeightMatrix's filter bank, shared by the EPs that run it (the cpu EP, and the cuda EP,
// which computes it on the host from its five scalar inputs and uploads it).
#pragma once

#include <cstdint>
#include <vector>

#include "nxrt/ep/error.h"

namespace nxrt {

struct MelParams {
  int64_t num_mel_bins = 0;
  int64_t dft_length = 0;
  int64_t sample_rate = 0;
  double lower_edge_hertz = 0;
  double upper_edge_hertz = 0;
};

// The [dft_length / 2 + 1, num_mel_bins] matrix, row-major, in double: triangular filters
// between num_mel_bins + 2 mel-spaced edges (mel(f) = 2595 log10(1 + f / 700)), mapped to DFT
// bins by floor((dft_length + 1) * f / sample_rate), as the ONNX reference builds them. A size
// or sample rate below 1, or an edge that is not finite, is a kRuntime error.
Expected<std::vector<double>> mel_weight_matrix(const MelParams& params);

}  // namespace nxrt
