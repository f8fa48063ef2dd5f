// oneDNN error texts, plain descriptors, the runtime version and the effective ISA.
#include "dnnl_util.h"

#include <fmt/format.h>

namespace nxrt::onednn {

std::string fmt_dnnl_error(const dnnl::error& e) {
  return fmt::format("oneDNN: {} (status {})", e.what(), static_cast<int>(e.status));
}

memory::desc plain_md(const Dims& dims_in) {
  // oneDNN has no rank-0 memory: a scalar is one element of rank 1.
  const Dims dims = dims_in.empty() ? Dims{1} : dims_in;
  Dims strides(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return memory::desc(dims, memory::data_type::f32, strides);
}

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  return fmt::format("{}.{}.{}", v->major, v->minor, v->patch);
}

std::string effective_isa() {
  switch (dnnl::get_effective_cpu_isa()) {
    case dnnl::cpu_isa::sse41: return "sse41";
    case dnnl::cpu_isa::avx: return "avx";
    case dnnl::cpu_isa::avx2: return "avx2";
    case dnnl::cpu_isa::avx2_vnni: return "avx2_vnni";
    case dnnl::cpu_isa::avx512_mic: return "avx512_mic";
    case dnnl::cpu_isa::avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl::cpu_isa::avx512_core: return "avx512_core";
    case dnnl::cpu_isa::avx512_core_vnni: return "avx512_core_vnni";
    case dnnl::cpu_isa::avx512_core_bf16: return "avx512_core_bf16";
    case dnnl::cpu_isa::avx512_core_amx: return "avx512_core_amx";
    case dnnl::cpu_isa::all: return "all";
  }
  return "unknown";
}

}  // namespace nxrt::onednn
