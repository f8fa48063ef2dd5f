// Loading a plugin EP library: dlopen, symbols, API version, factories, devices.
#include "plugin_library.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "host_api_decls.h"
#include "host_checks.h"
#include "nxrt/ep/registry.h"
#include "plugin_provider.h"

namespace nxrt::ort_plugin {
namespace {

constexpr std::size_t kMaxFactories = 4;  // what ORT offers
constexpr std::size_t kMaxDevices = 8;

std::string dl_error() {
  const char* e = dlerror();
  return e ? e : "unknown dlopen error";
}

// "GenuineIntel" -> PCI vendor id, for OrtHardwareDevice::vendor_id.
uint32_t pci_vendor_of(const std::string& cpu_vendor) {
  if (cpu_vendor == "GenuineIntel") return 0x8086;
  if (cpu_vendor == "AuthenticAMD") return 0x1022;
  return 0;
}

std::string cpu_vendor() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("vendor_id") || line.starts_with("CPU implementer")) {
      const auto colon = line.find(':');
      if (colon == std::string::npos) break;
      auto v = line.substr(colon + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      return v;
    }
  return "unknown";
}

std::string describe_device(const OrtHardwareDevice& d) {
  static constexpr const char* kTypes[] = {"cpu", "gpu", "npu"};
  return fmt::format("{} ({})", kTypes[static_cast<int>(d.type) % 3], d.vendor);
}

// Functions every factory must provide; the rest are optional or version-dependent.
Expected<void> check_factory(const OrtEpFactory& f, const std::string& path, std::size_t index) {
  std::vector<std::string> missing;
  if (!f.GetName) missing.push_back("GetName");
  if (!f.GetVendor) missing.push_back("GetVendor");
  if (!f.GetSupportedDevices) missing.push_back("GetSupportedDevices");
  if (!f.CreateEp) missing.push_back("CreateEp");
  if (!f.ReleaseEp) missing.push_back("ReleaseEp");
  if (f.ort_version_supported >= 23 && !f.GetVersion) missing.push_back("GetVersion");
  if (!missing.empty())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("EP factory {} of plugin '{}' leaves OrtEpFactory::{} NULL", index, path, fmt::join(missing, ", ")),
                "the host calls these functions and cannot continue without them",
                "fix the plugin: set every required OrtEpFactory function pointer");
  // nxrt moves no data between devices for a plugin, but ONNX Runtime asks every factory for its
  // data transfer when the library is registered; refusing here keeps nxrt and ORT in agreement.
  if (f.ort_version_supported >= 23 && !f.CreateDataTransfer)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("EP factory {} of plugin '{}' leaves OrtEpFactory::CreateDataTransfer NULL", index, path),
                fmt::format("it declares ORT API {}, and ONNX Runtime calls CreateDataTransfer of every factory of "
                            "API 23 or newer when it registers the library (a NULL crashes it)",
                            f.ort_version_supported),
                "fix the plugin: implement CreateDataTransfer; an EP that copies nothing between devices sets "
                "*data_transfer = NULL and returns NULL");
  return {};
}

// What one of a factory's name functions returned; NULL is an error naming the function.
Expected<std::string> factory_text(const OrtEpFactory* f, const char* (*get)(const OrtEpFactory*), const char* function,
                                   const std::string& path, std::size_t index) {
  const char* text = get(f);
  if (text) return std::string(text);
  return fail(ErrorCode::kInvalidInput, fmt::format("OrtEpFactory::{} of EP factory {} of plugin '{}' returned NULL", function, index, path),
              "the host needs the text to name the EP in list-eps, claims and errors",
              fmt::format("fix the plugin: return a string from {}", function));
}

// GetSupportedDevices, and the host's ownership of each device it returned. A device the host
// did not make with CreateEpDevice, or one listed twice, is refused before anything uses it.
Expected<void> adopt_devices(PluginFactory& f, const std::string& path) {
  OrtEpDevice* devices[kMaxDevices] = {};
  std::size_t n = 0;
  const auto devs = host_devices();
  const std::string err =
      take_status(f.factory->GetSupportedDevices(f.factory, devs.data(), devs.size(), devices, kMaxDevices, &n));
  const std::string what = fmt::format("GetSupportedDevices of the {} EP ('{}')", f.name, path);
  auto refuse = [&](std::string problem) {
    return fail(ErrorCode::kInvalidInput, fmt::format("{} returned {}", what, problem),
                "the host keeps and later frees every device it is given, so each must be a distinct OrtEpDevice "
                "from OrtEpApi::CreateEpDevice",
                "fix the plugin: fill ep_devices with CreateEpDevice results and set num_ep_devices to their count");
  };
  if (n > kMaxDevices) return refuse(fmt::format("{} devices for {} slots", n, kMaxDevices));
  for (std::size_t d = 0; d < n; ++d) {
    for (std::size_t e = 0; e < d; ++e)
      if (devices[d] && devices[e] == devices[d]) return refuse(fmt::format("ep_devices[{}] twice (again as [{}])", e, d));
    if (!usable(devices[d]) || !devices[d]->plugin_owned)
      return refuse(fmt::format("ep_devices[{}] {}", d, devices[d] ? "that is not a device CreateEpDevice made" : "NULL"));
    if (devices[d]->factory != f.factory) return refuse(fmt::format("ep_devices[{}] made for another factory", d));
    devices[d]->plugin_owned = false;
    f.devices.emplace_back(devices[d]);
  }
  if (!err.empty())
    return fail(ErrorCode::kRuntime, fmt::format("{} failed", what), err, "see the plugin's documentation for the devices it needs");
  return {};
}

}  // namespace

void EpDeviceDeleter::operator()(OrtEpDevice* d) const { delete d; }

std::span<const OrtHardwareDevice* const> host_devices() {
  static const OrtHardwareDevice cpu = [] {
    OrtHardwareDevice d;
    d.type = OrtHardwareDeviceType_CPU;
    d.vendor = cpu_vendor();
    d.vendor_id = pci_vendor_of(d.vendor);
    return d;
  }();
  static const OrtHardwareDevice* const devices[] = {&cpu};
  return devices;
}

PluginLibrary::~PluginLibrary() {
  for (auto& f : factories_) {
    f.devices.clear();
    if (release_) take_status(release_(f.factory));
  }
  if (handle_) dlclose(handle_);
}

Expected<std::shared_ptr<PluginLibrary>> PluginLibrary::load(const std::string& path, const std::string& registration_name) {
  std::shared_ptr<PluginLibrary> lib(new PluginLibrary());
  lib->path_ = path;
  dlerror();
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot load plugin library '{}'", path), dl_error(),
                "check the path, and that the library's dependencies are found ('ldd " + path + "' lists them)");
  auto symbol = [&](const char* name) -> Expected<void*> {
    dlerror();
    void* s = dlsym(lib->handle_, name);
    if (s) return s;
    return fail(ErrorCode::kInvalidInput,
                fmt::format("'{}' is not an ONNX Runtime plugin EP library: it does not export '{}'", path, name), dl_error(),
                "a plugin EP library exports CreateEpFactories and ReleaseEpFactory (extern \"C\", default visibility)");
  };
  auto create = symbol("CreateEpFactories");
  if (!create) return std::unexpected(create.error());
  auto release = symbol("ReleaseEpFactory");
  if (!release) return std::unexpected(release.error());
  lib->release_ = reinterpret_cast<NxrtReleaseEpFactoryFn>(*release);

  take_requested_api_version();
  OrtEpFactory* made[kMaxFactories] = {};
  std::size_t count = 0;
  const std::string status = take_status(reinterpret_cast<NxrtCreateEpFactoriesFn>(*create)(
      registration_name.c_str(), api_base(), &lib->logger_, made, kMaxFactories, &count));
  const uint32_t asked = take_requested_api_version();
  const std::size_t reported = count;
  count = std::min(count, kMaxFactories);
  // Factories made before a failure are still the plugin's to release.
  std::size_t null_factories = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (made[i]) lib->factories_.push_back(PluginFactory{made[i], {}, {}, {}, asked, {}});
    else ++null_factories;
  }
  if (reported > kMaxFactories)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("CreateEpFactories of plugin '{}' reported {} factories for {} slots", path, reported, kMaxFactories),
                fmt::format("the host offers max_factories={}; the plugin may have written past the array", kMaxFactories),
                "fix the plugin: make at most max_factories factories");
  uint32_t newest = asked;
  for (const auto& f : lib->factories_) newest = std::max(newest, f.factory->ort_version_supported);
  if (newest > NXRT_ORT_API_VERSION)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("plugin '{}' needs ORT API {}, this host provides up to {}", path, newest, NXRT_ORT_API_VERSION),
                fmt::format("the plugin was built against ONNX Runtime 1.{} headers{}", newest,
                            status.empty() ? "" : fmt::format("; CreateEpFactories said: {}", status)),
                fmt::format("rebuild the plugin against ORT 1.{} headers (ORT_API_VERSION {}), or use an nxrt that "
                            "serves API {}", NXRT_ORT_API_VERSION, NXRT_ORT_API_VERSION, newest));
  if (!status.empty())
    return fail(ErrorCode::kRuntime, fmt::format("CreateEpFactories of plugin '{}' failed", path), status,
                "see the plugin's documentation for its requirements");
  if (null_factories > 0)
    return fail(ErrorCode::kInvalidInput,
                fmt::format("CreateEpFactories of plugin '{}' returned {} NULL factor{}", path, null_factories,
                            null_factories == 1 ? "y" : "ies"),
                fmt::format("it reported {} factories and succeeded, but left {} of the first {} entries NULL", count,
                            null_factories, count),
                "fix the plugin: set num_factories to the number of factories it wrote");
  if (lib->factories_.empty())
    return fail(ErrorCode::kInvalidInput, fmt::format("plugin '{}' created no EP factories", path),
                "CreateEpFactories succeeded but returned 0 factories",
                "check the plugin's requirements (drivers, devices, environment)");

  std::vector<std::string> offered;
  for (const OrtHardwareDevice* d : host_devices()) offered.push_back(describe_device(*d));
  for (std::size_t i = 0; i < lib->factories_.size(); ++i) {
    PluginFactory& f = lib->factories_[i];
    if (auto ok = check_factory(*f.factory, path, i); !ok) return std::unexpected(ok.error());
    if (f.api_version == 0) f.api_version = f.factory->ort_version_supported;
    auto name = factory_text(f.factory, f.factory->GetName, "GetName", path, i);
    if (!name) return std::unexpected(name.error());
    f.name = *name;
    auto vendor = factory_text(f.factory, f.factory->GetVendor, "GetVendor", path, i);
    if (!vendor) return std::unexpected(vendor.error());
    f.vendor = *vendor;
    if (f.factory->ort_version_supported >= 23) {
      auto version = factory_text(f.factory, f.factory->GetVersion, "GetVersion", path, i);
      if (!version) return std::unexpected(version.error());
      f.version = *version;
    }
    if (auto ok = adopt_devices(f, path); !ok) return std::unexpected(ok.error());
    if (f.devices.empty())
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("the {} EP ('{}') supports none of this host's devices", f.name, path),
                  fmt::format("GetSupportedDevices returned 0 of the {} device{} offered: {}", offered.size(),
                              offered.size() == 1 ? "" : "s", fmt::join(offered, ", ")),
                  "run it on a machine with a device it supports, or leave --plugin out");
  }
  return lib;
}

Expected<std::vector<std::string>> register_plugin_library(const std::string& spec) {
  // Canonical path -> EP names. A dlopen'ed library is process-wide anyway; this keeps a
  // library named twice (NXRT_PLUGIN_PATH and --plugin) from registering its EPs twice.
  static std::map<std::string, std::vector<std::string>> loaded;
  const auto colon = spec.find(':');
  const std::string path = spec.substr(0, colon);
  std::string registration = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (path.empty())
    return fail(ErrorCode::kUsage, fmt::format("--plugin '{}' names no library", spec), {},
                "write --plugin PATH[:REGISTRATION_NAME]");
  if (registration.empty()) {
    registration = std::filesystem::path(path).stem().string();
    if (registration.starts_with("lib")) registration.erase(0, 3);
  }
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(path, ec).string();
  if (auto it = loaded.find(key); it != loaded.end()) return it->second;

  auto lib = PluginLibrary::load(path, registration);
  if (!lib) return forward_error(std::move(lib), fmt::format("loading plugin '{}'", spec));
  std::vector<std::string> names;
  for (std::size_t i = 0; i < (*lib)->factories().size(); ++i) {
    const std::string& name = (*lib)->factories()[i].name;
    if (find_ep_factory(name))
      return fail(ErrorCode::kUsage, fmt::format("plugin '{}' provides an EP named '{}', a name already taken", path, name),
                  "EP names must be unique in one process", "load only one library that provides this EP");
    names.push_back(name);
  }
  for (std::size_t i = 0; i < names.size(); ++i) {
    const PluginFactory& f = (*lib)->factories()[i];
    register_ep_factory({names[i], fmt::format("ONNX Runtime plugin EP from {} ({})", path, f.vendor),
                         [lib = *lib, i](const EpConfig& config) { return PluginProvider::create(lib, i, config); }});
  }
  loaded[key] = names;
  return names;
}

}  // namespace nxrt::ort_plugin
