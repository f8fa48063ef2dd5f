// register_builtin_eps(): fills the EP factory list with the EPs this build has.
#pragma once

#include <string>
#include <vector>

namespace nxrt {

// Explicit, guarded by build options; the command calls it once at start.
void register_builtin_eps();

// The EPs compiled into this build, in registration order (plugins are not).
std::vector<std::string> compiled_eps();

// A library the built-in EPs run on, for `nxrt --version`; version empty when not built in.
struct BuiltinLibrary {
  std::string name;
  std::string version;
  std::string absent_reason;  // why it is not built in
};
std::vector<BuiltinLibrary> builtin_libraries();

// The EP list used when the user gives no --ep: the fastest EPs this build has, then cpu.
std::vector<std::string> default_eps();

}  // namespace nxrt
