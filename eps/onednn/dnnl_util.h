// Small bridges between nxrt and oneDNN: errors, dims, plain formats, versions and ISA names.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <string>
#include <type_traits>
#include <utility>
#include <vector>
#include <memory>

#include "nxrt/ep/error.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::onednn {

using dnnl::memory;
using Dims = memory::dims;

// An allocator whose vector elements start uninitialized: weight storage is always written
// whole at once (a copy or a reorder), so zeroing megabytes first would only cost time.
template <class T>
struct UninitializedAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = UninitializedAllocator<U>;
  };
  UninitializedAllocator() = default;
  template <class U>
  UninitializedAllocator(const UninitializedAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
// Prepared weights' floats (reordered, folded), shared by plans and blobs.
using FloatStorage = std::vector<float, UninitializedAllocator<float>>;

std::string fmt_dnnl_error(const dnnl::error& e);

// Runs `fn`; a dnnl::error becomes an nxrt Error whose `why` is oneDNN's own status text.
template <class Fn>
auto dnnl_call(const std::string& what, Fn&& fn) -> Expected<decltype(fn())> {
  try {
    if constexpr (std::is_void_v<decltype(fn())>) {
      fn();
      return {};
    } else {
      return fn();
    }
  } catch (const dnnl::error& e) {
    return fail(ErrorCode::kRuntime, what, fmt_dnnl_error(e), "run the node on the cpu EP (--ep cpu)");
  }
}

inline Dims to_dims(const Shape& shape) { return Dims(shape.begin(), shape.end()); }

// Row-major f32 descriptor of `dims` (abc...); the layout nxrt tensors have. A scalar
// (no dims) is described as dims {1}.
memory::desc plain_md(const Dims& dims);

// "2.6.3": the oneDNN library nxrt runs with (not the headers it was built against).
std::string onednn_version();
// "avx512_core", "avx2", ...: the instruction set oneDNN dispatches to on this machine.
std::string effective_isa();

}  // namespace nxrt::onednn
