// Vectors of floats for nxrt's own kernels, as GCC vector types: the compiler maps them onto
// the machine's vector registers (-march=native) and turns their arithmetic into vector
// instructions.
#pragma once

#include <cstddef>
#include <cstring>
#include <utility>

namespace nxrt::onednn {

// kLanes floats as one GCC vector. (GCC ignores attributes on alias templates, hence the struct.)
template <int kLanes>
struct VectorOf {
  typedef float type __attribute__((vector_size(kLanes * sizeof(float))));
};
template <int kLanes>
using Lanes = typename VectorOf<kLanes>::type;

// `x` in every lane: one broadcast instruction. (`Lanes{} + x` would be an add, as 0 + x is
// not x for x = -0.)
template <int kLanes>
Lanes<kLanes> broadcast_lanes(float x) {
  return [x]<std::size_t... kI>(std::index_sequence<kI...>) {
    return Lanes<kLanes>{(static_cast<void>(kI), x)...};
  }(std::make_index_sequence<kLanes>{});
}

// Loads and stores that need no alignment.
template <int kLanes>
Lanes<kLanes> load_lanes(const float* p) {
  Lanes<kLanes> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <int kLanes>
void store_lanes(float* p, Lanes<kLanes> v) {
  std::memcpy(p, &v, sizeof v);
}

}  // namespace nxrt::onednn
