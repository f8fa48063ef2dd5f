// The list of built-in EPs; a new EP adds one line here.
#include "builtin_eps.h"

#include "cpu/cpu_provider.h"
#include "nxrt/ep/registry.h"

namespace nxrt {

void register_builtin_eps() {
  register_ep_factory({"cpu", "portable CPU kernels (nxrt)", cpu::CpuProvider::create});
}

}  // namespace nxrt
