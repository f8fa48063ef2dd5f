// register_builtin_eps(): fills the EP factory list with the EPs this build has.
#pragma once

namespace nxrt {

// Explicit, guarded by build options; the command calls it once at start.
void register_builtin_eps();

}  // namespace nxrt
