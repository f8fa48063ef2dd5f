// GPU architecture names and compatibility.
#include "arch.h"

#include <fmt/format.h>

#include <charconv>

namespace nxrt::cuda {

std::string GpuArch::sm() const { return fmt::format("sm_{}{}", major, minor); }
std::string GpuArch::compute() const { return fmt::format("compute_{}{}", major, minor); }

Expected<GpuArch> parse_arch(std::string_view text) {
  std::string_view digits = text;
  for (std::string_view prefix : {"sm_", "compute_"})
    if (digits.starts_with(prefix)) digits.remove_prefix(prefix.size());
  int number = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), number);
  if (ec != std::errc{} || end != digits.data() + digits.size() || number < 10 || number > 999)
    return fail(ErrorCode::kUsage, fmt::format("'{}' is not a GPU architecture", text), {},
                "write a compute capability as sm_XY, e.g. sm_80 (A100), sm_89 (L4), sm_90 (H100)");
  return GpuArch{number / 10, number % 10};
}

Expected<ArchMatch> match_arch(GpuArch compiled, bool has_ptx, GpuArch device, std::string_view device_name) {
  if (compiled.major == device.major && device.minor >= compiled.minor) return ArchMatch::kCubin;
  if (has_ptx && device >= compiled) return ArchMatch::kPtxJit;
  return fail(ErrorCode::kInvalidInput,
              fmt::format("the cuda EPContext blob was compiled for {}, this GPU is {} ({})", compiled.sm(), device.sm(),
                          device_name),
              fmt::format("its cubin runs on sm_{}x GPUs from {} on, {}", compiled.major, compiled.sm(),
                          has_ptx ? fmt::format("and its PTX ({}) cannot be compiled for an older GPU", compiled.compute())
                                  : std::string("and it holds no PTX")),
              fmt::format("recompile with nxrt compile-epcontext --ep cuda --target-arch {}", device.sm()));
}

}  // namespace nxrt::cuda
