// nxrt: which EP runs which node of an ONNX model and why; precompiled EPContext models.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "builtin_eps.h"
#include "cli_common.h"
#include "interrupt.h"
#include "commands.h"
#include "nxrt/version.h"

namespace {

std::string version_text() {
  std::string text = fmt::format("nxrt {}\nONNX {} (libonnx)", nxrt::kVersion, nxrt::onnx_library_version());
  for (const auto& lib : nxrt::builtin_libraries())
    text += lib.version.empty() ? fmt::format("\n{}: not built ({})", lib.name, lib.absent_reason)
                                : fmt::format("\n{} {}", lib.name, lib.version);
  return text + fmt::format("\nEPs: {}", fmt::join(nxrt::compiled_eps(), ", "));
}

}  // namespace

int main(int argc, char** argv) {
  nxrt::cli::clean_up_on_signals();
  nxrt::register_builtin_eps();
  CLI::App app{"nxrt: ONNX execution providers; which EP runs which node and why, and precompiled EPContext models"};
  app.set_version_flag("-V,--version", version_text());
  app.require_subcommand(1);
  std::map<const CLI::App*, nxrt::cli::Action> actions;
  auto add = [&](nxrt::cli::Action (*adder)(CLI::App&)) {
    const std::size_t before = app.get_subcommands({}).size();
    nxrt::cli::Action action = adder(app);
    actions[app.get_subcommands({})[before]] = std::move(action);
  };
  add(nxrt::cli::add_list_eps);
  add(nxrt::cli::add_explain_claims);
  add(nxrt::cli::add_compile_epcontext);
  add(nxrt::cli::add_run);
  add(nxrt::cli::add_bench);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints help and version on stdout (exit 0) and errors on stderr; usage is 2.
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  for (const CLI::App* sub : app.get_subcommands())
    if (auto it = actions.find(sub); it != actions.end()) try {
        return it->second();
      } catch (const std::exception& e) {
        return nxrt::cli::report(nxrt::cli::error_from_exception(e));
      }
  return 2;
}
