// NumPy .npy files: reading (format 1.0, 2.0, 3.0) and writing, C order, little-endian.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/dtype.h"
#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

// True for the element types a .npy file can carry here: float16/32/64, int8..64,
// uint8..64 and bool (not string, bfloat16).
bool npy_supports(DType dtype);

// Reads a .npy file. The header is checked against the file's size before the data is
// allocated, so a lying header costs nothing. Errors are ErrorCode::kInvalidInput.
Expected<Tensor> read_npy(const std::filesystem::path& path);

// Parses .npy bytes held in memory; `context` names them in messages (a path, "input 'x'").
Expected<Tensor> parse_npy(std::span<const std::byte> bytes, const std::string& context);

// Writes a host tensor the way numpy.save does, atomically: into a temporary file in the
// same folder, then renamed over `path`. On failure nothing is left behind.
Expected<void> write_npy(const std::filesystem::path& path, const Tensor& tensor);

// The bytes numpy.save would write for the tensor (format 1.0; 2.0 only for a header over
// 64 KiB). Empty, which no .npy file is, when the tensor is undefined, not on the host or
// of a type npy_supports() rejects; write_npy reports those cases as errors.
std::vector<std::byte> encode_npy(const Tensor& tensor);

}  // namespace nxrt
