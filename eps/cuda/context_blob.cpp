// Encoding and validation of the cuda EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>

#include "nxrt/io/ep_blob.h"

namespace nxrt::cuda {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'C', 'U', 'D', 'A'};
constexpr EpBlobKind kBlob{"cuda", kMagic, kContextBlobFormat, "nxrt compile-epcontext --ep cuda"};

std::unexpected<Error> invalid(std::string what, std::string why) {
  return invalid_ep_blob(kBlob, std::move(what), std::move(why));
}

}  // namespace

std::vector<std::byte> encode_blob(const CudaBlob& blob) {
  BlobWriter w = start_ep_blob(kBlob, {{"nxrt_version", blob.nxrt_version},
                                       {"cuda_version", blob.cuda_version},
                                       {"nvrtc_version", blob.image.nvrtc_version},
                                       {"arch", blob.image.arch.sm()},
                                       {"partition", blob.partition_name},
                                       {"source_hash", blob.source_hash},
                                       {"steps", blob.steps}});
  w.put_string(blob.model_bytes);
  w.put_bytes(blob.image.cubin);
  w.put_string(blob.image.ptx);
  return std::move(w).finish_with_checksum();
}

Expected<CudaBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  auto opened = open_ep_blob(bytes, kBlob, context);
  if (!opened) return std::unexpected(opened.error());
  const nlohmann::json& header = opened->header;
  BlobReader& r = opened->fields;
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
