// Encoding and validation of the CPU EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "nxrt/io/blob_codec.h"

namespace nxrt::cpu {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'C', 'P', 'U', '\0'};
constexpr uint32_t kFormat = 2;  // 2: checksum over 64-bit words

}  // namespace

std::vector<std::byte> encode_blob(const CpuBlob& blob) {
  BlobWriter w;
  w.put_raw(std::as_bytes(std::span(kMagic)));
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
  return std::move(w).finish_with_checksum();
}

Expected<CpuBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  auto invalid = [&](std::string what, std::string why) {
    return fail(ErrorCode::kInvalidInput, std::move(what), std::move(why),
                "recompile the model with nxrt compile-epcontext");
  };
  if (bytes.size() < sizeof(kMagic) + 4 + 8 || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid(fmt::format("the payload of {} is not a cpu EPContext blob", context),
                   "it does not start with the NXRTCPU magic");
  std::span<const std::byte> body;
  if (!split_checksummed(bytes, sizeof(kMagic) + 4, body))
    return invalid(fmt::format("the cpu EPContext payload of {} is corrupted", context),
                   "its checksum does not match its contents (tampered or truncated)");
  BlobReader r(body.subspan(sizeof(kMagic)), fmt::format("the cpu EPContext payload of {} is truncated", context));
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
