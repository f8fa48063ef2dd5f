// Encoding and validation of the oneDNN EP's EPContext payload.
#include "context_blob.h"

#include <fmt/format.h>

#include <cstring>

#include "nxrt/io/ep_blob.h"

namespace nxrt::onednn {
namespace {

constexpr char kMagic[8] = {'N', 'X', 'R', 'T', 'D', 'N', 'N', 'L'};
// 2: checksum over 64-bit words; 3: a convolution's weights may be nxrt's own (Winograd's
// transformed matrices under the key the oneDNN layout had before).
constexpr EpBlobKind kBlob{"onednn", kMagic, 3, "nxrt compile-epcontext"};

std::unexpected<Error> invalid(std::string what, std::string why) {
  return invalid_ep_blob(kBlob, std::move(what), std::move(why));
}

}  // namespace

std::vector<std::byte> encode_blob(const OnednnBlob& blob) {
  BlobWriter w = start_ep_blob(kBlob, {{"nxrt_version", blob.nxrt_version},
                                       {"onednn_version", blob.onednn_version},
                                       {"isa", blob.isa},
                                       {"partition", blob.partition_name},
                                       {"boundary_inputs", blob.boundary_inputs},
                                       {"input_dims", blob.input_dims},
                                       {"implementations", blob.implementations}});
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
  auto opened = open_ep_blob(bytes, kBlob, context);
  if (!opened) return std::unexpected(opened.error());
  const nlohmann::json& header = opened->header;
  BlobReader& r = opened->fields;
  if (!header.contains("input_dims") || !header["input_dims"].is_array())
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
