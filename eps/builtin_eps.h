// register_builtin_eps(): fills the EP factory list with the EPs this build has.
#pragma once

#include <string>
#include <vector>

namespace nxrt {

// Explicit, guarded by build options; the command calls it once at start.
void register_builtin_eps();

// The EP list used when the user gives no --ep: the fastest EPs this build has, then cpu.
std::vector<std::string> default_eps();

}  // namespace nxrt
