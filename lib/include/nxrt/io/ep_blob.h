// The envelope of the EPContext payloads nxrt's own EPs write: an 8-byte magic naming the EP,
// a u32 format, a JSON object (length-prefixed) with what the EP records about the partition,
// then the EP's own fields, and the checksum of everything before it (blob_codec.h).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/io/blob_codec.h"

namespace nxrt {

// Which EP's payload, in which format.
struct EpBlobKind {
  std::string_view ep;                // "cpu": in the errors
  std::span<const char, 8> magic;     // "NXRTCPU\0"
  uint32_t format;                    // the one this nxrt writes and reads
  std::string_view compile_command;   // "nxrt compile-epcontext --ep cuda": the errors' fix
};

// A writer holding the magic, the format and `header`; the EP appends its fields and finishes
// with finish_with_checksum().
BlobWriter start_ep_blob(const EpBlobKind& kind, const nlohmann::ordered_json& header);

// A payload whose magic, checksum and format are the kind's, and whose header is a JSON object.
struct OpenedEpBlob {
  nlohmann::json header;
  BlobReader fields;  // the EP's own fields, after the header; a view of the payload's bytes
};
// Errors are kInvalidInput, naming `context` (the EPContext node) and the EP, with the fix of
// recompiling the model. `bytes` must outlive the result, whose reader views them.
Expected<OpenedEpBlob> open_ep_blob(std::span<const std::byte> bytes, const EpBlobKind& kind, const std::string& context);

// The error for a payload the envelope accepted but the EP cannot use: `what` and `why`, with
// the fix of recompiling the model.
std::unexpected<Error> invalid_ep_blob(const EpBlobKind& kind, std::string what, std::string why);

}  // namespace nxrt
