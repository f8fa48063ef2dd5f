// The path guard: files a model refers to must stay inside the model's folder.
#include <fmt/format.h>

#include "nxrt/model/model.h"

namespace nxrt {

Expected<std::filesystem::path> guard_relative_path(const std::filesystem::path& dir, const std::string& relative,
                                                    std::string_view what) {
  namespace fs = std::filesystem;
  const std::string how = fmt::format("store {} files beside the model and refer to them by a relative name", what);
  if (relative.empty()) return fail(ErrorCode::kInvalidInput, fmt::format("{} path is empty", what), {}, how);
  if (relative.find('\0') != std::string::npos)
    return fail(ErrorCode::kInvalidInput, fmt::format("{} path contains a NUL byte", what), {}, how);
  const fs::path rel(relative);
  if (rel.is_absolute())
    return fail(ErrorCode::kInvalidInput, fmt::format("{} path '{}' is absolute", what, relative),
                "a model may only refer to files inside its own folder", how);
  for (const auto& part : rel)
    if (part == "..")
      return fail(ErrorCode::kInvalidInput, fmt::format("{} path '{}' contains '..'", what, relative),
                  "a model may only refer to files inside its own folder", how);
  const fs::path base = dir.empty() ? fs::path(".") : dir;
  const fs::path joined = base / rel;
  std::error_code dir_ec, ec;
  const fs::path real_dir = fs::weakly_canonical(base, dir_ec);
  const fs::path real = fs::weakly_canonical(joined, ec);
  if (dir_ec) ec = dir_ec;
  if (ec)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot resolve {} path '{}'", what, relative), ec.message(), how);
  // A symbolic link may point anywhere: compare the resolved path with the resolved folder.
  auto [d, r] = std::mismatch(real_dir.begin(), real_dir.end(), real.begin(), real.end());
  if (d != real_dir.end())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("{} path '{}' leads outside the model's folder (to '{}')", what, relative, real.string()),
                "a symbolic link points out of the folder", how);
  return joined;
}

}  // namespace nxrt
