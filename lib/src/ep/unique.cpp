// find_unique (nxrt/ep/unique.h).
#include "nxrt/ep/unique.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <string>

#include "nxrt/io/compare.h"

namespace nxrt {
namespace {

// Three-way comparison of two elements, NaN after every number and equal to NaN.
template <class T>
int compare_values(const T& x, const T& y) {
  if constexpr (std::is_floating_point_v<T>) {
    const bool xn = std::isnan(x), yn = std::isnan(y);
    if (xn || yn) return xn == yn ? 0 : xn ? 1 : -1;
  }
  return x < y ? -1 : y < x ? 1 : 0;
}

// Compares element e of x with element f (flat indices), by x's dtype.
std::function<int(int64_t, int64_t)> element_comparison(const Tensor& x) {
  auto typed = [&x]<class T>(const T*) -> std::function<int(int64_t, int64_t)> {
    const T* p = x.data_as<T>();
    return [p](int64_t e, int64_t f) { return compare_values(p[e], p[f]); };
  };
  auto widened = [&x](float (*to_float)(uint16_t)) -> std::function<int(int64_t, int64_t)> {
    const uint16_t* p = x.data_as<uint16_t>();
    return [p, to_float](int64_t e, int64_t f) { return compare_values(to_float(p[e]), to_float(p[f])); };
  };
  switch (x.dtype()) {
    case DType::kFloat32: return typed(static_cast<const float*>(nullptr));
    case DType::kFloat64: return typed(static_cast<const double*>(nullptr));
    case DType::kFloat16: return widened(half_to_float);
    case DType::kBFloat16: return widened(bfloat16_to_float);
    case DType::kInt8: return typed(static_cast<const int8_t*>(nullptr));
    case DType::kUInt8: return typed(static_cast<const uint8_t*>(nullptr));
    case DType::kInt16: return typed(static_cast<const int16_t*>(nullptr));
    case DType::kUInt16: return typed(static_cast<const uint16_t*>(nullptr));
    case DType::kInt32: return typed(static_cast<const int32_t*>(nullptr));
    case DType::kUInt32: return typed(static_cast<const uint32_t*>(nullptr));
    case DType::kInt64: return typed(static_cast<const int64_t*>(nullptr));
    case DType::kUInt64: return typed(static_cast<const uint64_t*>(nullptr));
    case DType::kBool: return typed(static_cast<const bool*>(nullptr));
    case DType::kString: return typed(static_cast<const std::string*>(nullptr));
    default: return nullptr;
  }
}

}  // namespace

Expected<UniqueGroups> find_unique(const Tensor& x, std::optional<int64_t> axis, bool sorted) {
  auto compare_elements = element_comparison(x);
  if (!compare_elements)
    return fail(ErrorCode::kRuntime, fmt::format("Unique: elements of {} cannot be compared", dtype_name(x.dtype())));
  UniqueGroups g;
  g.count = x.numel();
  std::optional<std::size_t> ax;
  if (axis) {
    const Shape& s = x.shape();
    const auto rank = static_cast<int64_t>(s.size());
    const int64_t a = *axis < 0 ? *axis + rank : *axis;
    if (a < 0 || a >= rank)
      return fail(ErrorCode::kRuntime, fmt::format("Unique: axis {} is out of range for {}", *axis, shape_to_string(s)),
                  fmt::format("valid axes are [{}, {}]", -rank, rank - 1), "fix the axis attribute");
    ax = static_cast<std::size_t>(a);
    g.outer = shape_numel(std::span<const int64_t>(s).first(*ax));
    g.count = s[*ax];
    g.inner = shape_numel(std::span<const int64_t>(s).subspan(*ax + 1));
  }
  // Slice s is x[o, s, j] for every outer o and inner j, compared in that order.
  auto compare = [&](int64_t a, int64_t b) {
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t j = 0; j < g.inner; ++j)
        if (int c = compare_elements((o * g.count + a) * g.inner + j, (o * g.count + b) * g.inner + j); c != 0) return c;
    return 0;
  };
  // A stable sort keeps equal slices in input order, so each group starts with the first
  // occurrence.
  std::vector<int64_t> order(static_cast<std::size_t>(g.count));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
  std::vector<int64_t> group_of(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i == 0 || compare(order[i - 1], order[i]) != 0) {
      g.first.push_back(order[i]);
      g.counts.push_back(0);
    }
    ++g.counts.back();
    group_of[static_cast<std::size_t>(order[i])] = static_cast<int64_t>(g.first.size()) - 1;
  }
  // The groups are sorted; unsorted output lists them by first occurrence.
  std::vector<int64_t> by_output(g.first.size());
  std::iota(by_output.begin(), by_output.end(), int64_t{0});
  if (!sorted)
    std::sort(by_output.begin(), by_output.end(), [&](int64_t a, int64_t b) {
      return g.first[static_cast<std::size_t>(a)] < g.first[static_cast<std::size_t>(b)];
    });
  std::vector<int64_t> position(by_output.size());
  for (std::size_t p = 0; p < by_output.size(); ++p) position[static_cast<std::size_t>(by_output[p])] = static_cast<int64_t>(p);
  UniqueGroups out{g.outer, g.count, g.inner, {static_cast<int64_t>(by_output.size())}, {}, {}, {}};
  if (ax) {
    out.shape = x.shape();
    out.shape[*ax] = static_cast<int64_t>(by_output.size());
  }
  for (int64_t group : by_output) {
    out.first.push_back(g.first[static_cast<std::size_t>(group)]);
    out.counts.push_back(g.counts[static_cast<std::size_t>(group)]);
  }
  for (int64_t group : group_of) out.inverse.push_back(position[static_cast<std::size_t>(group)]);
  return out;
}

}  // namespace nxrt
