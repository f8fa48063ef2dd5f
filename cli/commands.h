// The subcommands: each adds itself to the app and returns what runs it after parsing.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace nxrt::cli {

using Action = std::function<int()>;

Action add_list_eps(CLI::App& app);
Action add_explain_claims(CLI::App& app);
Action add_compile_epcontext(CLI::App& app);
Action add_run(CLI::App& app);
Action add_bench(CLI::App& app);

}  // namespace nxrt::cli
