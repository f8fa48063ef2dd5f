// Binary field encoding and checksums of EP blobs.
#include "nxrt/io/blob_codec.h"

#include <fmt/format.h>

namespace nxrt {

uint64_t fnv1a(std::span<const std::byte> bytes) {
  // FNV-1a over little-endian 64-bit words (then the tail bytes): 8 bytes per multiply, so
  // checking a blob of weights costs little next to reading it.
  uint64_t h = 1469598103934665603ull;
  constexpr uint64_t kPrime = 1099511628211ull;
  std::size_t i = 0;
  for (; i + 8 <= bytes.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, bytes.data() + i, 8);
    h = (h ^ word) * kPrime;
  }
  for (; i < bytes.size(); ++i) h = (h ^ static_cast<uint8_t>(bytes[i])) * kPrime;
  return h;
}

void BlobWriter::put_bytes(std::span<const std::byte> b) {
  put<uint64_t>(b.size());
  put_raw(b);
}

std::vector<std::byte> BlobWriter::finish_with_checksum() && {
  put<uint64_t>(fnv1a(out_));
  return std::move(out_);
}

Expected<std::span<const std::byte>> BlobReader::get_bytes() {
  auto n = get<uint64_t>();
  if (!n) return std::unexpected(n.error());
  if (bytes_.size() - pos_ < *n) return truncated();
  auto s = bytes_.subspan(pos_, *n);
  pos_ += *n;
  return s;
}

Expected<std::string> BlobReader::get_string() {
  auto b = get_bytes();
  if (!b) return std::unexpected(b.error());
  return std::string(reinterpret_cast<const char*>(b->data()), b->size());
}

std::unexpected<Error> BlobReader::truncated() const {
  return fail(ErrorCode::kInvalidInput, truncated_message_,
              fmt::format("a field reaches past the payload's {} bytes", bytes_.size()),
              "recompile the model with nxrt compile-epcontext");
}

bool split_checksummed(std::span<const std::byte> blob, std::size_t min_body, std::span<const std::byte>& body) {
  if (blob.size() < min_body + 8) return false;
  body = blob.first(blob.size() - 8);
  uint64_t stored = 0;
  std::memcpy(&stored, blob.data() + body.size(), 8);
  return fnv1a(body) == stored;
}

}  // namespace nxrt
