// Encoding and validation of the CPU EP's EPContext payload.
#include "context_blob.h"

#include "nxrt/io/ep_blob.h"

namespace nxrt::cpu {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'C', 'P', 'U', '\0'};
// 2: checksum over 64-bit words.
constexpr EpBlobKind kBlob{"cpu", kMagic, 2, "nxrt compile-epcontext"};

}  // namespace

std::vector<std::byte> encode_blob(const CpuBlob& blob) {
  BlobWriter w = start_ep_blob(kBlob, {{"nxrt_version", blob.nxrt_version},
                                       {"isa", blob.isa},
                                       {"partition", blob.partition_name}});
  w.put_string(blob.model_bytes);
  w.put<uint32_t>(static_cast<uint32_t>(blob.packed.size()));
  for (const auto& [name, state] : blob.packed) {  // std::map: sorted, deterministic
    w.put_string(name);
    w.put_bytes(state);
  }
  return std::move(w).finish_with_checksum();
}

Expected<CpuBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  auto opened = open_ep_blob(bytes, kBlob, context);
  if (!opened) return std::unexpected(opened.error());
  const nlohmann::json& header = opened->header;
  BlobReader& r = opened->fields;
  CpuBlob blob;
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
