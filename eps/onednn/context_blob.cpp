// Encoding and validation of the oneDNN EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>

#include "nxrt/io/blob_codec.h"

namespace nxrt::onednn {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'D', 'N', 'N', 'L'};
// 2: checksum over 64-bit words; 3: a convolution's weights may be nxrt's own (Winograd's
// transformed matrices under the key the oneDNN layout had before).
constexpr uint32_t kFormat = 3;

std::unexpected<Error> invalid(std::string what, std::string why) {
  return fail(ErrorCode::kInvalidInput, std::move(what), std::move(why),
              "recompile the model with nxrt compile-epcontext");
}

}  // namespace

std::vector<std::byte> encode_blob(const OnednnBlob& blob) {
  BlobWriter w;
  w.put_raw(std::as_bytes(std::span(kMagic)));
  w.put<uint32_t>(kFormat);
  const nlohmann::ordered_json header = {{"nxrt_version", blob.nxrt_version},
                                         {"onednn_version", blob.onednn_version},
                                         {"isa", blob.isa},
                                         {"partition", blob.partition_name},
                                         {"boundary_inputs", blob.boundary_inputs},
                                         {"input_dims", blob.input_dims},
                                         {"implementations", blob.implementations}};
  w.put_string(header.dump());
  w.put_string(blob.model_bytes);
  w.put<uint32_t>(static_cast<uint32_t>(blob.weights.size()));
  for (const auto& [key, weight] : blob.weights) {  // std::map: sorted, deterministic
    w.put_string(key);
    w.put_bytes(std::as_bytes(std::span(&weight.md.data, 1)));
    w.put_bytes(std::as_bytes(std::span(weight.data->data(), weight.md.get_size() / sizeof(float))));
  }
  return std::move(w).finish_with_checksum();
}

Expected<OnednnBlob> decode_blob(std::span<const std::byte> bytes, const std::string& context) {
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid(fmt::format("the payload of {} is not a onednn EPContext blob", context),
                   "it does not start with the NXRTDNNL magic");
  std::span<const std::byte> body;
  if (!split_checksummed(bytes, sizeof(kMagic) + 4, body))
    return invalid(fmt::format("the onednn EPContext payload of {} is corrupted", context),
                   "its checksum does not match its contents (tampered or truncated)");
  BlobReader r(body.subspan(sizeof(kMagic)), fmt::format("the onednn EPContext payload of {} is truncated", context));
  auto format = r.get<uint32_t>();
  if (!format) return std::unexpected(format.error());
  if (*format != kFormat)
    return invalid(fmt::format("the onednn EPContext payload of {} has format {}", context, *format),
                   fmt::format("this nxrt reads format {}", kFormat));
  auto header_text = r.get_string();
  if (!header_text) return std::unexpected(header_text.error());
  auto header = nlohmann::json::parse(*header_text, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object() || !header.contains("input_dims") ||
      !header["input_dims"].is_array())
    return invalid(fmt::format("the onednn EPContext payload of {} has an unreadable header", context),
                   "not the JSON object nxrt writes");
  OnednnBlob blob;
  blob.nxrt_version = header.value("nxrt_version", "");
  blob.onednn_version = header.value("onednn_version", "");
  blob.isa = header.value("isa", "");
  blob.partition_name = header.value("partition", "");
  blob.boundary_inputs = header.value("boundary_inputs", std::size_t{0});
  try {
    blob.input_dims = header["input_dims"].get<std::vector<Dims>>();
    if (header.contains("implementations"))
      blob.implementations = header["implementations"].get<Implementations>();
  } catch (const nlohmann::json::exception& e) {
    return invalid(fmt::format("the onednn EPContext payload of {} has unreadable input dims", context), e.what());
  }
  auto model = r.get_string();
  if (!model) return std::unexpected(model.error());
  blob.model_bytes = std::move(*model);
  auto count = r.get<uint32_t>();
  if (!count) return std::unexpected(count.error());
  for (uint32_t i = 0; i < *count; ++i) {
    auto key = r.get_string();
    if (!key) return std::unexpected(key.error());
    auto md_bytes = r.get_bytes();
    if (!md_bytes) return std::unexpected(md_bytes.error());
    auto data = r.get_bytes();
    if (!data) return std::unexpected(data.error());
    if (md_bytes->size() != sizeof(dnnl_memory_desc_t))
      return invalid(fmt::format("weight '{}' in the onednn EPContext payload of {} has a bad descriptor", *key, context),
                     fmt::format("{} bytes, expected {}", md_bytes->size(), sizeof(dnnl_memory_desc_t)));
    memory::desc md;
    std::memcpy(&md.data, md_bytes->data(), sizeof(dnnl_memory_desc_t));
    if (md.get_size() != data->size())
      return invalid(fmt::format("weight '{}' in the onednn EPContext payload of {} has {} bytes", *key, context,
                                 data->size()),
                     fmt::format("its memory descriptor needs {}", md.get_size()));
    auto storage = std::make_shared<FloatStorage>((data->size() + sizeof(float) - 1) / sizeof(float));
    std::memcpy(storage->data(), data->data(), data->size());
    blob.weights[*key] = {md, std::move(storage)};
  }
  return blob;
}

}  // namespace nxrt::onednn
