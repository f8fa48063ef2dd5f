// DeviceId formatting.
#include "nxrt/ep/device.h"

#include <fmt/format.h>

namespace nxrt {

std::string DeviceId::to_string() const {
  switch (type) {
    case DeviceType::kCpu: return "cpu";
    case DeviceType::kCuda: return fmt::format("cuda:{}", ordinal);
    case DeviceType::kPlugin: return fmt::format("plugin:{}", ordinal);
  }
  return "unknown";
}

}  // namespace nxrt
