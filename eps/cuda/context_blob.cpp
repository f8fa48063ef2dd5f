// Encoding and validation of the cuda EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "nxrt/io/blob_codec.h"

namespace nxrt::cuda {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'C', 'U', 'D', 'A'};

std::unexpected<Error> invalid(std::string what, std::string why) {
  return fail(ErrorCode::kInvalidInput, std::move(what), std::move(why),
              "recompile the model with nxrt compile-epcontext --ep cuda");
}

}  // namespace

std::vector<std::byte> encode_blob(const CudaBlob& blob) {
  BlobWriter w;
  w.put_raw(std::as_bytes(std::span(kMagic)));
  w.put<uint32_t>(kContextBlobFormat);
  const nlohmann::ordered_json header = {{"nxrt_version", blob.nxrt_version},
                                         {"cuda_version", blob.cuda_version},
                                         {"nvrtc_version", blob.image.nvrtc_version},
                                         {"arch", blob.image.arch.sm()},
                                         {"partition", blob.partition_name},
                                         {"source_hash", blob.source_hash},
                                         {"steps", blob.steps}};
  w.put_string(header.dump());
  w.put_string(blob.model_bytes);
  w.put_bytes(blob.image.cubin);
  w.put_string(blob.image.ptx);
  return std::move(w).finish_with_checksum();
}

Expected<CudaBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid(fmt::format("the payload of {} is not a cuda EPContext blob", context),
                   "it does not start with the NXRTCUDA magic");
  std::span<const std::byte> body;
  if (!split_checksummed(bytes, sizeof(kMagic) + 4, body))
    return invalid(fmt::format("the cuda EPContext payload of {} is corrupted", context),
                   "its checksum does not match its contents (tampered or truncated)");
  BlobReader r(body.subspan(sizeof(kMagic)), fmt::format("the cuda EPContext payload of {} is truncated", context));
  auto format = r.get<uint32_t>();
  if (!format) return std::unexpected(format.error());
  if (*format != kContextBlobFormat)
    return invalid(fmt::format("the cuda EPContext payload of {} has format {}", context, *format),
                   fmt::format("this nxrt reads format {}", kContextBlobFormat));
  auto header_text = r.get_string();
  if (!header_text) return std::unexpected(header_text.error());
  const auto header = nlohmann::json::parse(*header_text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object())
    return invalid(fmt::format("the cuda EPContext payload of {} has an unreadable header", context),
                   "not the JSON object nxrt writes");
  CudaBlob blob;
  try {
    blob.nxrt_version = header.at("nxrt_version").get<std::string>();
    blob.cuda_version = header.at("cuda_version").get<std::string>();
    blob.image.nvrtc_version = header.at("nvrtc_version").get<std::string>();
    blob.partition_name = header.at("partition").get<std::string>();
    blob.source_hash = header.at("source_hash").get<uint64_t>();
    blob.steps = header.at("steps").get<std::vector<std::string>>();
    auto arch = parse_arch(header.at("arch").get<std::string>());
    if (!arch) return invalid(fmt::format("the cuda EPContext payload of {} names no architecture", context), arch.error().what);
    blob.image.arch = *arch;
  } catch (const nlohmann::json::exception& e) {
    return invalid(fmt::format("the cuda EPContext payload of {} has an incomplete header", context), e.what());
  }
  auto model = r.get_string();
  if (!model) return std::unexpected(model.error());
  blob.model_bytes = std::move(*model);
  auto cubin = r.get_bytes();
  if (!cubin) return std::unexpected(cubin.error());
  blob.image.cubin.assign(cubin->begin(), cubin->end());
  auto ptx = r.get_string();
  if (!ptx) return std::unexpected(ptx.error());
  blob.image.ptx = std::move(*ptx);
  if (blob.image.cubin.empty())
    return invalid(fmt::format("the cuda EPContext payload of {} holds no cubin", context), "its cubin field is empty");
  return blob;
}

}  // namespace nxrt::cuda
