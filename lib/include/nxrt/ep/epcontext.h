// EpContext (the runtime form of a com.microsoft::EPContext node) and EpContextRegistry.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/weight.h"

namespace nxrt {

class ExecutionProvider;

struct EpContext {
  std::string source;          // dispatch key
  std::string partition_name;
  int64_t main_context = 1;
  int64_t embed_mode = 1;      // only 0 means external
  std::string ep_sdk_version;
  std::string hardware_architecture;
  std::string onnx_model_filename;
  std::string notes;
  int64_t max_size = 0;
  std::string external_path;   // embed_mode 0: the relative path stored in the node

  // The payload. When read from an external file it is a view into a mapping that
  // `mapping` keeps alive; when produced by an EP, `owned` holds it.
  std::span<const std::byte> payload() const;
  std::vector<std::byte> owned;
  std::shared_ptr<MappedFile> mapping;
  std::span<const std::byte> mapped_bytes;
};

class EpContextRegistry {
 public:
  // The EP that accepts `source`, or nullptr when no loaded EP does.
  ExecutionProvider* find(std::string_view source) const;
  // "cpu (nxrt.cpu), onednn (nxrt.onednn)": loaded EPs and their keys, for messages.
  std::string describe_keys() const;
  const std::map<std::string, ExecutionProvider*>& keys() const { return by_source_; }

 private:
  friend Expected<EpContextRegistry> build_ep_context_registry(
      std::span<ExecutionProvider* const> eps);
  std::map<std::string, ExecutionProvider*> by_source_;
  std::vector<std::string> ep_names_;
};

// Maps every EP's accepted `source` keys; two EPs accepting one key is an error.
Expected<EpContextRegistry> build_ep_context_registry(std::span<ExecutionProvider* const> eps);

}  // namespace nxrt
