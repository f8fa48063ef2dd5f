// Shared flag handling and input gathering for the subcommands.
#include "cli_common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "builtin_eps.h"
#include "plugin_library.h"
#include "nxrt/io/tensor_file.h"
#include "nxrt/ir/passes.h"

namespace nxrt::cli {

void EpFlags::add_to(CLI::App& cmd, bool list_per_flag) {
  auto* ep = cmd.add_option("--ep", eps,
                            fmt::format("EPs in priority order, comma separated (default: {}){}",
                                        fmt::join(default_eps(), ","),
                                        list_per_flag ? "; give --ep again to compare another list" : ""))
                 ->allow_extra_args(false)
                 ->type_name("LIST");
  if (!list_per_flag) ep->delimiter(',');
  cmd.add_option("--threads", threads, "threads per EP (0: one per hardware thread)")
      ->check(CLI::Range(0, 4096))
      ->capture_default_str();
  cmd.add_option("--shape", shapes, "concrete shape of an input, e.g. --shape input=1x3x224x224")
      ->allow_extra_args(false)
      ->type_name("NAME=DIMS");
  add_plugin_option(cmd, plugins);
  cmd.add_option("--device", device, "device ordinal of GPU EPs (cuda), default 0")->type_name("N");
  std::vector<std::string> policies;
  for (std::string_view name : placement_policy_names()) policies.emplace_back(name);
  cmd.add_option("--placement", placement,
                 "first-claim: each node on the first EP that claims it; fewer-partitions: then memory-bound "
                 "partitions between another EP's nodes move to that EP")
      ->check(CLI::IsMember(policies))
      ->type_name("POLICY")
      ->capture_default_str();
  std::vector<std::string> passes;
  for (const auto& pass : default_passes()) passes.emplace_back(pass->name());
  cmd.add_option("--skip-pass", skipped_passes,
                 fmt::format("leave out a graph rewrite (repeatable): {}; fuse-qdq runs DequantizeLinear -> Conv, "
                             "MatMul or Gemm -> QuantizeLinear as QLinearConv, QLinearMatMul or QGemm, whose outputs "
                             "can differ from the float ops' by one quantization step",
                             fmt::join(passes, ", ")))
      ->check(CLI::IsMember(passes))
      ->allow_extra_args(false)
      ->type_name("NAME");
}

void add_plugin_option(CLI::App& cmd, std::vector<std::string>& plugins) {
  cmd.add_option("--plugin", plugins,
                 "load an ONNX Runtime plugin EP library (also NXRT_PLUGIN_PATH, colon separated); its EPs go first "
                 "in the default --ep list")
      ->allow_extra_args(false)
      ->type_name("PATH[:NAME]");
}

Expected<std::vector<std::string>> load_plugins(const std::vector<std::string>& specs) {
  std::vector<std::string> all;
  if (const char* env = std::getenv("NXRT_PLUGIN_PATH"))
    for (std::string_view rest = env; !rest.empty();) {
      const auto colon = rest.find(':');
      if (colon != 0) all.emplace_back(rest.substr(0, colon));
      if (colon == std::string_view::npos) break;
      rest.remove_prefix(colon + 1);
    }
  all.insert(all.end(), specs.begin(), specs.end());
  std::vector<std::string> names;
  for (const auto& spec : all) {
    auto loaded = ort_plugin::register_plugin_library(spec);
    if (!loaded) return std::unexpected(loaded.error());
    for (auto& n : *loaded)
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  }
  return names;
}

void EpFlags::add_target_arch_to(CLI::App& cmd) {
  cmd.add_option("--target-arch", target_arch,
                 "GPU architecture to claim and compile for, e.g. sm_90; no GPU needs to be present (cuda EP)")
      ->type_name("ARCH");
}

Expected<Shape> parse_dims(const std::string& text) {
  Shape dims;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t end = text.find_first_of("x,", pos);
    const std::string part = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    std::size_t used = 0;
    int64_t d = -1;
    try {
      d = std::stoll(part, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (part.empty() || used != part.size() || d < 0)
      return fail(ErrorCode::kUsage, fmt::format("'{}' is not a shape", text), fmt::format("'{}' is not a size", part),
                  "write dimensions separated by 'x', e.g. 1x3x224x224 (an empty value is a scalar: NAME=)");
    dims.push_back(d);
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return dims;
}

Expected<SessionOptions> EpFlags::session_options() const {
  auto plugin_eps = load_plugins(plugins);
  if (!plugin_eps) return std::unexpected(plugin_eps.error());
  SessionOptions o;
  o.eps = eps;
  if (o.eps.empty()) {
    o.eps = *plugin_eps;
    for (auto& name : default_eps()) o.eps.push_back(name);
  }
  o.config.threads = threads;
  // --placement's check only lets the policies' names through.
  o.placement = parse_placement_policy(placement).value_or(kDefaultPlacementPolicy);
  o.skipped_passes = skipped_passes;
  if (!device.empty()) o.config.options["device"] = device;
  if (!target_arch.empty()) o.config.options["target_arch"] = target_arch;
  for (const auto& spec : shapes) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(ErrorCode::kUsage, fmt::format("--shape '{}' has no NAME=", spec), {},
                  "write --shape NAME=DIMS, e.g. --shape input=1x3x224x224");
    Shape dims;
    if (eq + 1 < spec.size()) {
      auto parsed = parse_dims(spec.substr(eq + 1));
      if (!parsed) return std::unexpected(parsed.error());
      dims = *parsed;
    }
    o.load.input_shapes[spec.substr(0, eq)] = dims;
  }
  return o;
}

Expected<std::vector<SessionOptions>> EpFlags::session_options_per_flag() const {
  std::vector<SessionOptions> out;
  for (std::size_t i = 0; i < std::max<std::size_t>(eps.size(), 1); ++i) {
    EpFlags one = *this;
    one.eps.clear();
    if (i < eps.size())
      for (const auto& part : CLI::detail::split(eps[i], ',')) one.eps.push_back(part);
    auto options = one.session_options();
    if (!options) return std::unexpected(options.error());
    out.push_back(std::move(*options));
  }
  return out;
}

Expected<std::map<std::string, RuntimeValue>> gather_inputs(const Session& session,
                                                            const std::vector<std::string>& specs, bool quiet) {
  std::map<std::string, std::string> given;
  for (const auto& spec : specs) {
    const auto eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return fail(ErrorCode::kUsage, fmt::format("--input '{}' is not NAME=FILE", spec), {},
                  "write --input NAME=FILE.npy, NAME=FILE.pb or NAME=random");
    given[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::map<std::string, RuntimeValue> inputs;
  uint64_t seed = 0;
  for (const Value* v : session.required_inputs()) {
    ++seed;
    auto it = given.find(v->name);
    if (it != given.end() && it->second != "random") {
      const std::string where = fmt::format("reading input '{}' from '{}'", v->name, it->second);
      auto t = read_value_file(it->second, v->type);
      if (!t) return forward_error(std::move(t), where);
      if (auto r = session.check_input(v->name, *t); !r) return forward_error(std::move(r), where);
      inputs[v->name] = std::move(*t);
      given.erase(it);
      continue;
    }
    const bool asked = it != given.end();
    if (asked) given.erase(it);
    if (v->type.kind != ValueType::Kind::kTensor)
      return fail(ErrorCode::kUsage,
                  fmt::format("input '{}' is a {}; nxrt makes random data for tensors only", v->name,
                              v->type.to_string()),
                  {}, fmt::format("give it with --input {}=FILE.pb (an ONNX SequenceProto or OptionalProto)", v->name));
    bool defaulted = false;
    const Shape shape = concrete_shape(v->type, &defaulted);
    if (!quiet && defaulted)
      fmt::print(stderr, "note: input '{}' is {}; unknown dimensions set to 1 (use --shape {}=DIMS)\n", v->name,
                 v->type.to_string(), v->name);
    if (!quiet && !asked)
      fmt::print(stderr, "note: input '{}' not given; using random {} data\n", v->name, shape_to_string(shape));
    auto t = random_tensor(v->type.dtype, shape, seed);
    if (!t)
      return forward_error(std::move(t), fmt::format("making random data for input '{}' of '{}'", v->name,
                                                     session.model().path.string()));
    inputs[v->name] = std::move(*t);
  }
  if (!given.empty()) {
    std::vector<std::string> names;
    for (const Value* v : session.required_inputs()) names.push_back(v->name);
    return fail(ErrorCode::kUsage, fmt::format("--input names '{}', which is not an input of the model", given.begin()->first),
                {}, fmt::format("the inputs are: {}", fmt::join(names, ", ")));
  }
  return inputs;
}

int report(const Error& error) {
  fmt::print(stderr, "{}", error.render());
  return error.exit_code();
}

Error error_from_exception(const std::exception& e) {
  if (dynamic_cast<const std::bad_alloc*>(&e))
    // The library checks every size a file declares; what is left is a tensor the model
    // computes that does not fit in memory.
    return {ErrorCode::kRuntime, "out of memory", "a tensor the model computes is larger than the memory available",
            "run the model with smaller inputs or on a machine with more memory", {}};
  return {ErrorCode::kRuntime, fmt::format("internal error: {}", e.what()), "a failure nxrt does not handle (a bug)",
          "please report it, with the command line and the model", {}};
}

std::string human_bytes(double bytes) {
  if (bytes < 1024) return fmt::format("{:.0f} B", bytes);
  if (bytes < 1024.0 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  if (bytes < 1024.0 * 1024 * 1024) return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024));
  return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
}

std::string human_flops(double flops) {
  if (flops < 1e3) return fmt::format("{:.0f} FLOP", flops);
  if (flops < 1e6) return fmt::format("{:.1f} kFLOP", flops / 1e3);
  if (flops < 1e9) return fmt::format("{:.1f} MFLOP", flops / 1e6);
  return fmt::format("{:.2f} GFLOP", flops / 1e9);
}

}  // namespace nxrt::cli
