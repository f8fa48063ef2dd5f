// Tensor summaries: statistics over numeric elements, a few leading values.
#include "render/tensor_summary.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

#include "nxrt/io/compare.h"

namespace nxrt::cli {
namespace {

std::optional<double> number_at(const TensorView& v, int64_t i) {
  if (v.dtype == DType::kString) return std::nullopt;
  return element_as_double(v, i);
}

struct Stats {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
  double mean = 0;
  bool numeric = false;
};

Stats stats_of(const TensorView& v) {
  Stats s;
  double sum = 0;
  int64_t n = 0;
  for (int64_t i = 0; i < v.numel(); ++i) {
    auto x = number_at(v, i);
    if (!x) return s;
    if (std::isnan(*x)) continue;
    s.min = std::min(s.min, *x);
    s.max = std::max(s.max, *x);
    sum += *x;
    ++n;
  }
  s.numeric = true;
  s.mean = n ? sum / static_cast<double>(n) : 0;
  return s;
}

std::vector<std::string> first_values(const TensorView& v, std::size_t count) {
  std::vector<std::string> out;
  for (int64_t i = 0; i < v.numel() && out.size() < count; ++i) {
    if (v.dtype == DType::kString) out.push_back(fmt::format("'{}'", v.data_as<std::string>()[i]));
    else if (v.dtype == DType::kBool) out.push_back(v.data_as<uint8_t>()[i] ? "true" : "false");
    else out.push_back(fmt::format("{:.6g}", *number_at(v, i)));
  }
  return out;
}

}  // namespace

std::string summarize(const Tensor& t, std::size_t count) {
  const Tensor c = copy_to_contiguous(t.view());
  const TensorView v = c.view();
  const Stats s = stats_of(v);
  std::string head = fmt::format("{}{}", dtype_name(t.dtype()), shape_to_string(t.shape()));
  if (s.numeric && v.numel() > 0) head += fmt::format(" min {:.6g} max {:.6g} mean {:.6g}", s.min, s.max, s.mean);
  auto values = first_values(v, count);
  return fmt::format("{}: [{}{}]", head, fmt::join(values, ", "),
                     static_cast<int64_t>(values.size()) < v.numel() ? ", ..." : "");
}

nlohmann::ordered_json summary_json(const Tensor& t, std::size_t count) {
  const Tensor c = copy_to_contiguous(t.view());
  const TensorView v = c.view();
  nlohmann::ordered_json j = {{"dtype", std::string(dtype_name(t.dtype()))}, {"shape", t.shape()}};
  const Stats s = stats_of(v);
  if (s.numeric && v.numel() > 0) {
    j["min"] = s.min;
    j["max"] = s.max;
    j["mean"] = s.mean;
  }
  j["first_values"] = first_values(v, count);
  return j;
}

std::string summarize(const RuntimeValue& v, std::size_t count) {
  if (v.is_tensor()) return summarize(v.tensor(), count);
  if (v.is_none()) return "none (an empty optional)";
  std::vector<std::string> items;
  for (const Tensor& t : v.items()) items.push_back(summarize(t, count));
  return fmt::format("sequence of {} {}: {{{}}}", v.items().size(), dtype_name(v.dtype()), fmt::join(items, "; "));
}

nlohmann::ordered_json summary_json(const RuntimeValue& v, std::size_t count) {
  if (v.is_tensor()) return summary_json(v.tensor(), count);
  if (v.is_none()) return {{"kind", "none"}};
  nlohmann::ordered_json items = nlohmann::ordered_json::array();
  for (const Tensor& t : v.items()) items.push_back(summary_json(t, count));
  return {{"kind", "sequence"}, {"dtype", std::string(dtype_name(v.dtype()))}, {"items", items}};
}

}  // namespace nxrt::cli
