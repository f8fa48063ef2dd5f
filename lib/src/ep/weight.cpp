// Memory-mapped files and weight handles.
#include "nxrt/ep/weight.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nxrt {

Expected<std::shared_ptr<MappedFile>> MappedFile::open(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot open '{}'", path.string()),
                std::strerror(errno), "check that the file exists and is readable");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is not a regular file", path.string()));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  const void* data = nullptr;
  if (size > 0) {
    data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (data == MAP_FAILED) {
      const int err = errno;
      ::close(fd);
      return fail(ErrorCode::kInvalidInput, fmt::format("cannot map '{}'", path.string()), std::strerror(err));
    }
  }
  ::close(fd);
  return std::shared_ptr<MappedFile>(new MappedFile(path, static_cast<const std::byte*>(data), size));
}

MappedFile::~MappedFile() {
  if (data_ && size_ > 0) ::munmap(const_cast<std::byte*>(data_), size_);
}

WeightHandle WeightHandle::resident(Tensor tensor) {
  WeightHandle w;
  w.dtype_ = tensor.dtype();
  w.shape_ = tensor.shape();
  w.tensor_ = std::move(tensor);
  return w;
}

WeightHandle WeightHandle::mapped(std::shared_ptr<MappedFile> file, std::size_t offset,
                                  std::size_t length, DType dtype, Shape shape) {
  WeightHandle w;
  w.dtype_ = dtype;
  w.shape_ = std::move(shape);
  w.file_ = std::move(file);
  w.offset_ = offset;
  w.length_ = length;
  return w;
}

WeightHandle WeightHandle::prepared(DType dtype, Shape shape) {
  WeightHandle w;
  w.dtype_ = dtype;
  w.shape_ = std::move(shape);
  w.prepared_ = true;
  return w;
}

std::size_t WeightHandle::nbytes() const {
  return static_cast<std::size_t>(std::max<int64_t>(shape_numel(shape_), 0)) * dtype_size(dtype_);
}

std::string WeightHandle::describe_location() const {
  if (prepared_) return "prepared by its EP in an EPContext blob";
  if (is_resident()) return "inline";
  return fmt::format("external: {} @ {} (+{} bytes)", file_->path().filename().string(), offset_, length_);
}

Expected<Tensor> WeightHandle::materialize() const {
  if (prepared_)
    return fail(ErrorCode::kInvalidInput, "a weight's original values were asked of an EPContext blob",
                "the blob holds the weight only in its EP's prepared form",
                "recompile the model with nxrt compile-epcontext");
  if (is_resident()) return tensor_;
  const auto* base = file_->data() + offset_;
  const std::size_t align = std::max<std::size_t>(dtype_size(dtype_), 1);
  if (reinterpret_cast<std::uintptr_t>(base) % align != 0)
    return Tensor::from_bytes(dtype_, shape_, std::span(base, length_));
  // The storage's deleter holds the mapping: the tensor keeps the file mapped.
  auto storage = std::make_shared<Storage>(const_cast<std::byte*>(base), length_, kHostDevice,
                                           [keep = file_](void*) {});
  return Tensor(storage, dtype_, shape_);
}

}  // namespace nxrt
