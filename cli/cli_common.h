// Flags and helpers shared by the subcommands: EP lists, shapes, inputs, error output.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/session/session.h"

namespace nxrt::cli {

// The flags every subcommand that claims or runs takes.
struct EpFlags {
  std::vector<std::string> eps;      // --ep, comma lists allowed, repeatable
  int threads = 0;                   // --threads
  std::vector<std::string> shapes;   // --shape NAME=DIMS
  std::vector<std::string> plugins;  // --plugin PATH[:REGISTRATION_NAME], repeatable
  std::string device;                // --device N (GPU EPs' device ordinal)
  std::string target_arch;           // --target-arch A (compile for a GPU that may not be here)
  std::string placement{placement_policy_name(kDefaultPlacementPolicy)};  // --placement POLICY
  std::vector<std::string> skipped_passes;  // --skip-pass NAME, repeatable
  // With `list_per_flag`, each --ep is an EP list of its own (bench compares them):
  // --ep onednn,cpu --ep cpu is two lists, not one.
  void add_to(CLI::App& cmd, bool list_per_flag = false);
  // Adds --target-arch (compile-epcontext, explain-claims).
  void add_target_arch_to(CLI::App& cmd);
  // SessionOptions from the flags (defaults to the default EP list).
  Expected<SessionOptions> session_options() const;
  // With list_per_flag: SessionOptions for each --ep given, or one for the default list.
  Expected<std::vector<SessionOptions>> session_options_per_flag() const;
};


// Adds --plugin PATH[:REGISTRATION_NAME] (repeatable) to a subcommand.
void add_plugin_option(CLI::App& cmd, std::vector<std::string>& plugins);
// Loads the plugin EP libraries of NXRT_PLUGIN_PATH (colon separated) and of --plugin;
// returns the EPs they provide, in load order.
Expected<std::vector<std::string>> load_plugins(const std::vector<std::string>& specs);

// "1x3x224x224" or "1,3,224,224" -> dims.
Expected<Shape> parse_dims(const std::string& text);

// Inputs for a session from --input NAME=FILE|random specs; inputs not named get random
// data (said on stderr unless quiet), symbolic dims default to 1 (said too).
Expected<std::map<std::string, RuntimeValue>> gather_inputs(const Session& session,
                                                            const std::vector<std::string>& specs, bool quiet);

// Prints the error for people on stderr and returns its exit code.
int report(const Error& error);

// The error for an exception that reached a command or one of its threads: out of memory (a
// tensor the model computes that does not fit), or else a bug in nxrt. Reported like any other
// error, so the process ends normally and takes back its staged output files.
Error error_from_exception(const std::exception& e);

// "1.2 KiB", "3.4 MiB".
std::string human_bytes(double bytes);
// "12.3 MFLOP", "4.56 GFLOP".
std::string human_flops(double flops);

}  // namespace nxrt::cli
