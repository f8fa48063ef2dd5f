// Atomic output files: written under a temporary name in the target folder, then renamed.
#pragma once

#include <filesystem>
#include <span>
#include <vector>

#include "nxrt/ep/error.h"

namespace nxrt {

// A set of files that appear together or not at all. stage() writes each to a temporary
// file beside its target; commit() renames them all; the destructor removes whatever was
// not committed (so an error path leaves nothing half-written).
class StagedFiles {
 public:
  StagedFiles() = default;
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;
  ~StagedFiles();

  Expected<void> stage(const std::filesystem::path& target, std::span<const std::byte> bytes);
  // Renames every staged file into place; all of them, as one step for abandon_staged_files().
  Expected<void> commit();
  // Temporary files not yet committed.
  std::vector<std::filesystem::path> pending() const;

 private:
  struct Entry {
    std::filesystem::path target;
    std::filesystem::path temp;
  };
  std::vector<Entry> entries_;
};

// Removes the temporary files of every StagedFiles in the process, and the folders
// create_output_folder made that are still empty, and blocks any staging or commit after
// it, for good: for a process about to end on a signal (SIGINT during a compile). A commit
// in progress finishes first, so outputs appear together or not at all.
void abandon_staged_files();

// Creates `dir` and its missing parents for outputs, remembering the folders it made, so
// that a failed or interrupted run takes them back when nothing was written into them.
Expected<void> create_output_folder(const std::filesystem::path& dir);

// Removes the folders create_output_folder made that are still empty (a command that ends
// with an error calls it).
void remove_unused_output_folders();

// One file, atomically.
Expected<void> write_file_atomically(const std::filesystem::path& target, std::span<const std::byte> bytes);

}  // namespace nxrt
