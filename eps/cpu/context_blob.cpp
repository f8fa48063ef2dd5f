// Encoding and validation of the CPU EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>

namespace nxrt::cpu {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'C', 'P', 'U', '\0'};
constexpr uint32_t kFormat = 1;

uint64_t fnv1a(std::span<const std::byte> bytes) {
  uint64_t h = 1469598103934665603ull;
  for (std::byte b : bytes) {
    h ^= static_cast<uint8_t>(b);
    h *= 1099511628211ull;
  }
  return h;
}

class Writer {
 public:
  template <class T>
  void put(T v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
  }
  void put_bytes(std::span<const std::byte> b) {
    put<uint64_t>(b.size());
    out.insert(out.end(), b.begin(), b.end());
  }
  void put_string(const std::string& s) { put_bytes(std::as_bytes(std::span(s.data(), s.size()))); }
  std::vector<std::byte> out;
};

class Reader {
 public:
  Reader(std::span<const std::byte> b, const std::string& ctx) : bytes_(b), ctx_(ctx) {}
  template <class T>
  Expected<T> get() {
    if (bytes_.size() - pos_ < sizeof(T)) return truncated();
    T v;
    std::memcpy(&v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return v;
  }
  Expected<std::span<const std::byte>> get_bytes() {
    auto n = get<uint64_t>();
    if (!n) return std::unexpected(n.error());
    if (bytes_.size() - pos_ < *n) return truncated();
    auto s = bytes_.subspan(pos_, *n);
    pos_ += *n;
    return s;
  }
  Expected<std::string> get_string() {
    auto b = get_bytes();
    if (!b) return std::unexpected(b.error());
    return std::string(reinterpret_cast<const char*>(b->data()), b->size());
  }

 private:
  std::unexpected<Error> truncated() const {
    return fail(ErrorCode::kInvalidInput, fmt::format("the cpu EPContext payload of {} is truncated", ctx_),
                fmt::format("a field reaches past its {} bytes", bytes_.size()),
                "recompile the model with nxrt compile-epcontext");
  }
  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
  const std::string& ctx_;
};

}  // namespace

std::vector<std::byte> encode_blob(const CpuBlob& blob) {
  Writer w;
  w.out.insert(w.out.end(), reinterpret_cast<const std::byte*>(kMagic),
               reinterpret_cast<const std::byte*>(kMagic) + sizeof(kMagic));
  w.put<uint32_t>(kFormat);
  const nlohmann::ordered_json header = {{"nxrt_version", blob.nxrt_version},
                                         {"isa", blob.isa},
                                         {"partition", blob.partition_name}};
  w.put_string(header.dump());
  w.put_string(blob.model_bytes);
  w.put<uint32_t>(static_cast<uint32_t>(blob.packed.size()));
  for (const auto& [name, state] : blob.packed) {  // std::map: sorted, deterministic
    w.put_string(name);
    w.put_bytes(state);
  }
  w.put<uint64_t>(fnv1a(w.out));
  return std::move(w.out);
}

Expected<CpuBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  auto invalid = [&](std::string what, std::string why) {
    return fail(ErrorCode::kInvalidInput, std::move(what), std::move(why),
                "recompile the model with nxrt compile-epcontext");
  };
  if (bytes.size() < sizeof(kMagic) + 4 + 8 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid(fmt::format("the payload of {} is not a cpu EPContext blob", context),
                   "it does not start with the NXRTCPU magic");
  const auto body = bytes.first(bytes.size() - 8);
  uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + body.size(), 8);
  if (fnv1a(body) != stored)
    return invalid(fmt::format("the cpu EPContext payload of {} is corrupted", context),
                   "its checksum does not match its contents (tampered or truncated)");
  Reader r(body.subspan(sizeof(kMagic)), context);
  auto format = r.get<uint32_t>();
  if (!format) return std::unexpected(format.error());
  if (*format != kFormat)
    return invalid(fmt::format("the cpu EPContext payload of {} has format {}", context, *format),
                   fmt::format("this nxrt reads format {}", kFormat));
  CpuBlob blob;
  auto header_text = r.get_string();
  if (!header_text) return std::unexpected(header_text.error());
  auto header = nlohmann::json::parse(*header_text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return invalid(fmt::format("the cpu EPContext payload of {} has an unreadable header", context), "not JSON");
  blob.nxrt_version = header.value("nxrt_version", "");
  blob.isa = header.value("isa", "");
  blob.partition_name = header.value("partition", "");
  auto model = r.get_string();
  if (!model) return std::unexpected(model.error());
  blob.model_bytes = std::move(*model);
  auto count = r.get<uint32_t>();
  if (!count) return std::unexpected(count.error());
  for (uint32_t i = 0; i < *count; ++i) {
    auto name = r.get_string();
    if (!name) return std::unexpected(name.error());
    auto state = r.get_bytes();
    if (!state) return std::unexpected(state.error());
    blob.packed[*name] = std::vector<std::byte>(state->begin(), state->end());
  }
  return blob;
}

}  // namespace nxrt::cpu
