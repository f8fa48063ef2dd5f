// WeightHandle: an initializer that is resident in memory, a lazily mapped file region, or
// held by an EP in its own prepared form.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt {

// A read-only memory map of a whole file; unmapped when the last user releases it.
class MappedFile {
 public:
  static Expected<std::shared_ptr<MappedFile>> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::filesystem::path path_;
  const std::byte* data_;
  std::size_t size_;
};

class WeightHandle {
 public:
  // Weight held in memory (inline initializer, Constant).
  static WeightHandle resident(Tensor tensor);
  // Weight stored in an external file region; nothing is read until materialize().
  static WeightHandle mapped(std::shared_ptr<MappedFile> file, std::size_t offset,
                             std::size_t length, DType dtype, Shape shape);
  // Weight whose data an EP keeps in a prepared form of its own (reordered, folded) in an
  // EPContext blob: a constant of this type and shape whose original values are gone;
  // materialize() fails.
  static WeightHandle prepared(DType dtype, Shape shape);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  std::size_t nbytes() const;
  bool is_resident() const { return !file_ && !prepared_; }
  // "inline" or "external: weights.bin @ 1024 (+4096 bytes)", for reports.
  std::string describe_location() const;

  // A tensor over the bytes. A mapped region is not copied: the tensor's storage keeps
  // the mapping alive. Misaligned regions are copied into aligned memory.
  Expected<Tensor> materialize() const;

 private:
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  Tensor tensor_;
  std::shared_ptr<MappedFile> file_;
  std::size_t offset_ = 0;
  std::size_t length_ = 0;
  bool prepared_ = false;
};

}  // namespace nxrt
