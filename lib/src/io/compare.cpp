// Elementwise comparison of tensors for run --test-dir, --compare-ep and the tests.
#include "nxrt/io/compare.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "nxrt/ep/mx_float.h"

namespace nxrt {

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400u)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(bits);
}

float bfloat16_to_float(uint16_t bits) { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// A diff no tolerance can pass: kinds, dtypes or shapes disagree.
TensorDiff problem_diff(std::string problem) {
  TensorDiff d;
  d.ok = false;
  d.problem = std::move(problem);
  d.min_atol = d.min_rtol = kInf;
  return d;
}

// floor(log10(x)) for x > 0, exact at powers of ten (log10 may round 1e-3 to -2.9999...).
int log10_bucket(double x) {
  int k = static_cast<int>(std::floor(std::log10(x)));
  if (std::pow(10.0, k + 1) <= x) ++k;
  if (std::pow(10.0, k) > x) --k;
  return k;
}

// Records a finite error |actual - expected| in the histogram and the needed tolerances.
void record_finite_error(TensorDiff& d, double diff, double expected) {
  d.max_abs = std::max(d.max_abs, diff);
  if (expected != 0) d.max_rel = std::max(d.max_rel, diff / std::abs(expected));
  if (diff == 0) {
    ++d.exact;
    return;
  }
  ++d.log10_buckets[log10_bucket(diff)];
  d.min_atol = std::max(d.min_atol, diff);
  d.min_rtol = std::max(d.min_rtol, expected != 0 ? diff / std::abs(expected) : kInf);
}

}  // namespace

TensorDiff compare_values(const RuntimeValue& actual, const RuntimeValue& expected, double rtol, double atol) {
  if (actual.kind() != expected.kind())
    return problem_diff(fmt::format("{} where {} was expected", actual.describe(), expected.describe()));
  TensorDiff d;
  if (actual.is_none()) return d;
  if (actual.is_tensor()) return compare_tensors(actual.tensor(), expected.tensor(), rtol, atol);
  const auto& got = actual.items();
  const auto& want = expected.items();
  if (got.size() != want.size())
    return problem_diff(fmt::format("a sequence of {} tensors where {} were expected", got.size(), want.size()));
  for (std::size_t i = 0; i < got.size(); ++i) {
    const TensorDiff item = compare_tensors(got[i], want[i], rtol, atol);
    if (!item.problem.empty()) return problem_diff(fmt::format("sequence item {}: {}", i, item.problem));
    if (d.mismatches == 0 && item.mismatches > 0) {
      d.first_mismatch = d.elements + item.first_mismatch;
      d.actual_at_first = item.actual_at_first;
      d.expected_at_first = item.expected_at_first;
    }
    d.ok &= item.ok;
    d.elements += item.elements;
    d.mismatches += item.mismatches;
    d.max_abs = std::max(d.max_abs, item.max_abs);
    d.max_rel = std::max(d.max_rel, item.max_rel);
    d.min_atol = std::max(d.min_atol, item.min_atol);
    d.min_rtol = std::max(d.min_rtol, item.min_rtol);
    d.exact += item.exact;
    d.nonfinite += item.nonfinite;
    for (const auto& [k, n] : item.log10_buckets) d.log10_buckets[k] += n;
  }
  return d;
}

double element_as_double(const TensorView& v, int64_t i) {
  switch (v.dtype) {
    case DType::kFloat32: return v.data_as<float>()[i];
    case DType::kFloat64: return v.data_as<double>()[i];
    case DType::kFloat16: return half_to_float(v.data_as<uint16_t>()[i]);
    case DType::kBFloat16: return bfloat16_to_float(v.data_as<uint16_t>()[i]);
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
      return byte_float_to_float(v.dtype, v.data_as<uint8_t>()[i]);
    case DType::kInt2:
    case DType::kInt4:
    case DType::kInt8: return v.data_as<int8_t>()[i];
    case DType::kUInt2:
    case DType::kUInt4:
    case DType::kUInt8: return v.data_as<uint8_t>()[i];
    case DType::kInt16: return v.data_as<int16_t>()[i];
    case DType::kUInt16: return v.data_as<uint16_t>()[i];
    case DType::kInt32: return v.data_as<int32_t>()[i];
    case DType::kUInt32: return v.data_as<uint32_t>()[i];
    case DType::kInt64: return static_cast<double>(v.data_as<int64_t>()[i]);
    case DType::kUInt64: return static_cast<double>(v.data_as<uint64_t>()[i]);
    case DType::kBool: return v.data_as<uint8_t>()[i] != 0;
    default: return std::nan("");
  }
}

namespace {

// Integers compare exactly on their bit patterns (doubles lose int64 precision).
bool exact_equal(const TensorView& a, const TensorView& e, int64_t i) {
  if (a.dtype == DType::kString) return a.data_as<std::string>()[i] == e.data_as<std::string>()[i];
  if (a.dtype == DType::kBool) return (a.data_as<uint8_t>()[i] != 0) == (e.data_as<uint8_t>()[i] != 0);
  const std::size_t size = dtype_size(a.dtype);
  return std::memcmp(static_cast<const char*>(a.data()) + i * static_cast<int64_t>(size),
                     static_cast<const char*>(e.data()) + i * static_cast<int64_t>(size), size) == 0;
}

}  // namespace

TensorDiff compare_tensors(const Tensor& actual, const Tensor& expected, double rtol, double atol) {
  if (actual.dtype() != expected.dtype())
    return problem_diff(
        fmt::format("type {} where {} was expected", dtype_name(actual.dtype()), dtype_name(expected.dtype())));
  if (actual.shape() != expected.shape())
    return problem_diff(fmt::format("shape {} where {} was expected", shape_to_string(actual.shape()),
                                    shape_to_string(expected.shape())));
  TensorDiff d;
  const Tensor a = actual.view().is_contiguous() ? actual : copy_to_contiguous(actual.view());
  const Tensor e = expected.view().is_contiguous() ? expected : copy_to_contiguous(expected.view());
  const TensorView av = a.view(), ev = e.view();
  const bool floating = is_floating(a.dtype());
  d.elements = a.numel();
  for (int64_t i = 0; i < d.elements; ++i) {
    bool ok;
    if (floating) {
      const double x = element_as_double(av, i), y = element_as_double(ev, i);
      if (std::isnan(x) || std::isnan(y) || std::isinf(x) || std::isinf(y)) {
        ok = (std::isnan(x) && std::isnan(y)) || x == y;
        ++(ok ? d.exact : d.nonfinite);
      } else {
        const double diff = std::abs(x - y);
        record_finite_error(d, diff, y);
        ok = diff <= atol + rtol * std::abs(y);
      }
    } else {
      ok = exact_equal(av, ev, i);
      if (ok) {
        ++d.exact;
      } else if (a.dtype() != DType::kString) {
        const double y = element_as_double(ev, i);
        record_finite_error(d, std::abs(element_as_double(av, i) - y), y);
      }
    }
    if (!ok) {
      if (d.mismatches == 0) {
        d.first_mismatch = i;
        if (a.dtype() != DType::kString) {
          d.actual_at_first = element_as_double(av, i);
          d.expected_at_first = element_as_double(ev, i);
        }
      }
      ++d.mismatches;
    }
  }
  d.ok = d.mismatches == 0;
  // Integers, booleans and strings compare exactly, and a NaN or infinity matches only
  // itself: no tolerance makes such a mismatch pass.
  if (d.nonfinite > 0 || (!floating && d.mismatches > 0)) d.min_atol = d.min_rtol = kInf;
  return d;
}

}  // namespace nxrt
