// The EPContext payload envelope (nxrt/io/ep_blob.h).
#include "nxrt/io/ep_blob.h"

#include <fmt/format.h>

#include <cstring>

namespace nxrt {

BlobWriter start_ep_blob(const EpBlobKind& kind, const nlohmann::ordered_json& header) {
  BlobWriter w;
  w.put_raw(std::as_bytes(kind.magic));
  w.put<uint32_t>(kind.format);
  w.put_string(header.dump());
  return w;
}

std::unexpected<Error> invalid_ep_blob(const EpBlobKind& kind, std::string what, std::string why) {
  return fail(ErrorCode::kInvalidInput, std::move(what), std::move(why),
              fmt::format("recompile the model with {}", kind.compile_command));
}

Expected<OpenedEpBlob> open_ep_blob(std::span<const std::byte> bytes, const EpBlobKind& kind, const std::string& context) {
  const std::size_t magic_size = kind.magic.size();
  if (bytes.size() < magic_size || std::memcmp(bytes.data(), kind.magic.data(), magic_size) != 0)
    return invalid_ep_blob(kind, fmt::format("the payload of {} is not a {} EPContext blob", context, kind.ep),
                           fmt::format("it does not start with the {} magic",
                                       std::string(kind.magic.data(), strnlen(kind.magic.data(), magic_size))));
  std::span<const std::byte> body;
  if (!split_checksummed(bytes, magic_size + sizeof(uint32_t), body))
    return invalid_ep_blob(kind, fmt::format("the {} EPContext payload of {} is corrupted", kind.ep, context),
                           "its checksum does not match its contents (tampered or truncated)");
  BlobReader fields(body.subspan(magic_size), fmt::format("the {} EPContext payload of {} is truncated", kind.ep, context));
  auto format = fields.get<uint32_t>();
  if (!format) return std::unexpected(format.error());
  if (*format != kind.format)
    return invalid_ep_blob(kind, fmt::format("the {} EPContext payload of {} has format {}", kind.ep, context, *format),
                           fmt::format("this nxrt reads format {}", kind.format));
  auto text = fields.get_string();
  if (!text) return std::unexpected(text.error());
  auto header = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return invalid_ep_blob(kind, fmt::format("the {} EPContext payload of {} has an unreadable header", kind.ep, context),
                           "not the JSON object nxrt writes");
  return OpenedEpBlob{std::move(header), std::move(fields)};
}

}  // namespace nxrt
