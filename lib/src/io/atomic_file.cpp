// Temporary-then-rename writes, with cleanup of anything not committed.
#include "nxrt/io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <vector>

namespace nxrt {
namespace {

// Every temporary file of the process not yet committed or removed, for abandon_staged_files().
struct TempRegistry {
  std::mutex mutex;
  std::set<std::filesystem::path> temps;
  std::vector<std::filesystem::path> created_folders;  // by create_output_folder, parents first
};

// Removes the folders create_output_folder made that are still empty, deepest first.
// The caller holds the registry's mutex.
void remove_empty_created_folders(TempRegistry& r) {
  std::error_code ec;
  for (auto it = r.created_folders.rbegin(); it != r.created_folders.rend(); ++it)
    if (std::filesystem::is_empty(*it, ec)) std::filesystem::remove(*it, ec);
  r.created_folders.clear();
}

TempRegistry& registry() {
  static TempRegistry* r = new TempRegistry();  // never destroyed: a signal may come at exit
  return *r;
}

}  // namespace

void abandon_staged_files() {
  TempRegistry& r = registry();
  r.mutex.lock();  // held until the process ends: nothing is staged or committed any more
  std::error_code ec;
  for (const auto& temp : r.temps) std::filesystem::remove(temp, ec);
  r.temps.clear();
  remove_empty_created_folders(r);
}

Expected<void> create_output_folder(const std::filesystem::path& dir) {
  std::lock_guard lock(registry().mutex);
  // The folders that do not exist yet, outermost first: those are ours to take back.
  std::vector<std::filesystem::path> missing;
  std::error_code ec;
  for (auto p = std::filesystem::absolute(dir, ec); !p.empty() && !std::filesystem::exists(p, ec); p = p.parent_path()) {
    missing.insert(missing.begin(), p);
    if (p == p.parent_path()) break;
  }
  for (const auto& folder : missing) {
    if (!std::filesystem::create_directory(folder, ec) && ec)
      return fail(ErrorCode::kRuntime, fmt::format("cannot create the folder '{}'", folder.string()), ec.message(),
                  "check the path and its permissions");
    registry().created_folders.push_back(folder);
  }
  return {};
}

void remove_unused_output_folders() {
  std::lock_guard lock(registry().mutex);
  remove_empty_created_folders(registry());
}

StagedFiles::~StagedFiles() {
  std::lock_guard lock(registry().mutex);
  std::error_code ec;
  for (const auto& e : entries_) {
    std::filesystem::remove(e.temp, ec);
    registry().temps.erase(e.temp);
  }
}

Expected<void> StagedFiles::stage(const std::filesystem::path& target, std::span<const std::byte> bytes) {
  const auto dir = target.parent_path().empty() ? std::filesystem::path(".") : target.parent_path();
  std::string pattern = (dir / fmt::format(".{}.tmp-XXXXXX", target.filename().string())).string();
  int fd = -1;
  {
    // Created and registered as one step, so abandon_staged_files() sees every temporary file.
    std::lock_guard lock(registry().mutex);
    fd = ::mkstemp(pattern.data());
    if (fd < 0)
      return fail(ErrorCode::kRuntime, fmt::format("cannot write '{}'", target.string()),
                  fmt::format("creating a temporary file in '{}' failed: {}", dir.string(), std::strerror(errno)),
                  "check that the folder exists and is writable, and that the file name is not too long");
    registry().temps.insert(pattern);
  }
  entries_.push_back({target, pattern});
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return fail(ErrorCode::kRuntime, fmt::format("cannot write '{}'", target.string()), std::strerror(err),
                  "check the free space and permissions of the folder");
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  const bool synced = ::fsync(fd) == 0;
  const int sync_errno = errno;
  const bool closed = ::close(fd) == 0;
  if (!synced || !closed)
    return fail(ErrorCode::kRuntime, fmt::format("cannot finish writing '{}'", target.string()),
                std::strerror(synced ? errno : sync_errno));
  return {};
}

Expected<void> StagedFiles::commit() {
  std::lock_guard lock(registry().mutex);
  for (auto it = entries_.begin(); it != entries_.end();) {
    std::error_code ec;
    std::filesystem::rename(it->temp, it->target, ec);
    if (ec)
      return fail(ErrorCode::kRuntime, fmt::format("cannot move the new file into place as '{}'", it->target.string()),
                  ec.message());
    registry().temps.erase(it->temp);
    it = entries_.erase(it);
  }
  return {};
}

std::vector<std::filesystem::path> StagedFiles::pending() const {
  std::vector<std::filesystem::path> out;
  for (const auto& e : entries_) out.push_back(e.temp);
  return out;
}

Expected<void> write_file_atomically(const std::filesystem::path& target, std::span<const std::byte> bytes) {
  StagedFiles files;
  if (auto r = files.stage(target, bytes); !r) return r;
  return files.commit();
}

}  // namespace nxrt
