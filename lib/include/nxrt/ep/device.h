// DeviceType and DeviceId: where a tensor lives and where an EP runs.
#pragma once

#include <cstdint>
#include <string>

namespace nxrt {

enum class DeviceType : int32_t { kCpu = 0, kCuda = 1, kPlugin = 2 };

struct DeviceId {
  DeviceType type = DeviceType::kCpu;
  int32_t ordinal = 0;

  bool operator==(const DeviceId&) const = default;
  bool is_host() const { return type == DeviceType::kCpu; }
  std::string to_string() const;  // "cpu", "cuda:0", "plugin:1"
};

inline constexpr DeviceId kHostDevice{};

}  // namespace nxrt
