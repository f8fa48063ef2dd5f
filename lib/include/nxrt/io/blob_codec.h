// Little-endian binary encoding for EP blobs: length-prefixed fields, bounds-checked reads
// and the checksum every EPContext payload of nxrt ends with (FNV-1a over 64-bit words).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"

namespace nxrt {

uint64_t fnv1a(std::span<const std::byte> bytes);

class BlobWriter {
 public:
  template <class T>
  void put(T v) {
    put_raw(std::as_bytes(std::span(&v, 1)));
  }
  void put_raw(std::span<const std::byte> b) {
    if (b.empty()) return;
    const std::size_t at = out_.size();
    out_.resize(at + b.size());
    std::memcpy(out_.data() + at, b.data(), b.size());
  }
  // u64 length, then the bytes.
  void put_bytes(std::span<const std::byte> b);
  void put_string(const std::string& s) { put_bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  // Appends the checksum of everything written so far and returns the blob.
  std::vector<std::byte> finish_with_checksum() &&;

 private:
  std::vector<std::byte> out_;
};

class BlobReader {
 public:
  // `truncated_message` is the error `what` when a field reaches past the end.
  BlobReader(std::span<const std::byte> bytes, std::string truncated_message)
      : bytes_(bytes), truncated_message_(std::move(truncated_message)) {}
  template <class T>
  Expected<T> get() {
    if (bytes_.size() - pos_ < sizeof(T)) return truncated();
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  Expected<std::span<const std::byte>> get_bytes();
  Expected<std::string> get_string();

 private:
  std::unexpected<Error> truncated() const;
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  std::string truncated_message_;
};

// Splits `blob` into its body and checks the trailing checksum; false when it differs or
// the blob is shorter than `min_body` + 8 bytes.
bool split_checksummed(std::span<const std::byte> blob, std::size_t min_body, std::span<const std::byte>& body);

}  // namespace nxrt
