// compile-epcontext: an ONNX model whose compiled partitions are EPContext nodes.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/session/session.h"

namespace nxrt {

struct EpContextWriteOptions {
  std::filesystem::path output;   // the model to write
  bool embed = false;             // false: payloads in side files (ORT's default, embed_mode=0)
  std::string node_name_prefix;   // ORT's ep.context_node_name_prefix
  bool force = false;             // overwrite existing outputs
  bool allow_empty = false;       // succeed when no partition could be compiled to a context
};

struct WrittenContext {
  std::string node_name;
  std::string partition;
  std::string ep;
  std::size_t node_count = 0;     // original nodes it replaces
  std::size_t payload_bytes = 0;
  std::string location;           // "inline" or the side file's name
};

struct EpContextWriteResult {
  std::filesystem::path output;
  std::vector<std::filesystem::path> side_files;
  std::vector<WrittenContext> contexts;
  std::size_t kept_nodes = 0;     // nodes left as ordinary ONNX nodes
  std::map<std::string, std::string> compatibility;  // ep -> ep_compatibility_info value
};

// The default output for `input`: "<stem>_ctx.onnx" beside it.
std::filesystem::path default_context_output(const std::filesystem::path& input);

// Writes the EPContext model of a compiled session (see EPCONTEXT.md). Files appear
// atomically (temporary name, then rename); nothing is left behind on failure.
Expected<EpContextWriteResult> write_epcontext_model(const Session& session, const EpContextWriteOptions& options);

}  // namespace nxrt
