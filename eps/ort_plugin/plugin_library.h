// PluginLibrary: an ONNX Runtime plugin EP library loaded with dlopen, its EP factories
// and the devices each supports; register_plugin_library() makes them nxrt EPs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "host_types.h"
#include "nxrt/ep/error.h"

namespace nxrt::ort_plugin {

// Frees what a plugin's CreateEpDevice made (the host owns the devices it is given).
struct EpDeviceDeleter {
  void operator()(OrtEpDevice* d) const;
};
using EpDevicePtr = std::unique_ptr<OrtEpDevice, EpDeviceDeleter>;

// One factory of a library: what list-eps shows and what CreateEp needs.
struct PluginFactory {
  OrtEpFactory* factory = nullptr;
  std::string name;
  std::string vendor;
  std::string version;          // "" before API 23 (no GetVersion)
  uint32_t api_version = 0;     // the ORT API version the plugin asked for
  std::vector<EpDevicePtr> devices;
};

class PluginLibrary {
 public:
  // dlopen, the two symbols, the API version check, CreateEpFactories, each factory's
  // functions and devices. On any failure nothing stays loaded.
  static Expected<std::shared_ptr<PluginLibrary>> load(const std::string& path, const std::string& registration_name);
  ~PluginLibrary();
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  const std::string& path() const { return path_; }
  std::vector<PluginFactory>& factories() { return factories_; }
  // The logger plugins get for messages outside a session.
  OrtLogger& logger() { return logger_; }

 private:
  PluginLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  NxrtReleaseEpFactoryFn release_ = nullptr;
  std::vector<PluginFactory> factories_;
  OrtLogger logger_;
};

// The hardware devices the host offers plugins (the CPU).
std::span<const OrtHardwareDevice* const> host_devices();

// Loads "PATH[:REGISTRATION_NAME]" and registers one EP factory per plugin EP; returns
// their names in the library's order. A library already loaded is not loaded again.
Expected<std::vector<std::string>> register_plugin_library(const std::string& spec);

}  // namespace nxrt::ort_plugin
