// run's comparisons: error tables and histograms, expected-output folders, --check-each-node.
#include "run_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <charconv>
#include <map>
#include <set>

#include "nxrt/io/compare.h"
#include "nxrt/io/tensor_file.h"
#include "render/table.h"

namespace nxrt::cli {
namespace {

namespace fs = std::filesystem;

constexpr int kBarWidth = 40;

// "1.2e-07", or "none" when no tolerance passes.
std::string tolerance_text(double t) { return std::isinf(t) ? "none" : fmt::format("{:.3g}", t); }

nlohmann::ordered_json tolerance_json(double t) { return std::isinf(t) ? nlohmann::ordered_json() : nlohmann::ordered_json(t); }

std::string status_text(const TensorDiff& d) {
  if (d.ok) return "match";
  return d.problem.empty() ? "MISMATCH" : fmt::format("MISMATCH: {}", d.problem);
}

std::string first_mismatch_text(const TensorDiff& d) {
  if (d.first_mismatch < 0) return "-";
  return fmt::format("[{}] got {:.6g}, expected {:.6g}", d.first_mismatch, d.actual_at_first, d.expected_at_first);
}

// The histogram's rows, smallest error first: exact, each decade from the smallest to the
// largest seen (empty ones between included), then NaN/infinity mismatches when any.
std::vector<std::pair<std::string, int64_t>> histogram_rows(const TensorDiff& d) {
  std::vector<std::pair<std::string, int64_t>> rows{{"exact", d.exact}};
  if (!d.log10_buckets.empty())
    for (int k = d.log10_buckets.begin()->first; k <= d.log10_buckets.rbegin()->first; ++k) {
      const auto it = d.log10_buckets.find(k);
      rows.emplace_back(fmt::format("[{:.0e}, {:.0e})", std::pow(10.0, k), std::pow(10.0, k + 1)),
                        it == d.log10_buckets.end() ? 0 : it->second);
    }
  if (d.nonfinite > 0) rows.emplace_back("NaN/inf mismatch", d.nonfinite);
  return rows;
}

std::string render_histogram(const std::string& name, const TensorDiff& d) {
  const auto rows = histogram_rows(d);
  int64_t most = 1;
  std::size_t label_width = 0;
  for (const auto& [label, n] : rows) {
    most = std::max(most, n);
    label_width = std::max(label_width, label.size());
  }
  std::string out = fmt::format("|actual - expected| of '{}' ({} elements):\n", name, d.elements);
  for (const auto& [label, n] : rows) {
    const auto bar = static_cast<std::size_t>((n * kBarWidth + most - 1) / most);
    out += fmt::format("  {:<{}}  {:>10}  {}\n", label, label_width, n, std::string(bar, '#'));
  }
  return out;
}

nlohmann::ordered_json histogram_json(const TensorDiff& d) {
  nlohmann::ordered_json decades = nlohmann::ordered_json::array();
  for (const auto& [k, n] : d.log10_buckets)
    decades.push_back({{"from", std::pow(10.0, k)}, {"to", std::pow(10.0, k + 1)}, {"count", n}});
  return {{"exact", d.exact}, {"decades", decades}, {"nonfinite", d.nonfinite}};
}

nlohmann::ordered_json first_mismatch_json(const TensorDiff& d) {
  if (d.first_mismatch < 0) return nullptr;
  return {{"index", d.first_mismatch}, {"actual", d.actual_at_first}, {"expected", d.expected_at_first}};
}

nlohmann::ordered_json diff_json(const std::string& name, const TensorDiff& d, const Reference& ref) {
  return {{"output", name},
          {"against", ref.label},
          {"ok", d.ok},
          {"problem", d.problem},
          {"max_abs", d.max_abs},
          {"max_rel", d.max_rel},
          {"min_atol", tolerance_json(d.min_atol)},
          {"min_rtol", tolerance_json(d.min_rtol)},
          {"mismatches", d.mismatches},
          {"elements", d.elements},
          {"first_mismatch", first_mismatch_json(d)},
          {"histogram", histogram_json(d)}};
}

Table diff_table() {
  return Table({"OUTPUT", "STATUS", "MAX ABS ERR", "MAX REL ERR", "MIN ATOL (RTOL 0)", "MIN RTOL (ATOL 0)",
                "MISMATCHES", "FIRST MISMATCH"});
}

void add_diff_row(Table& table, const std::string& name, const TensorDiff& d) {
  table.add({name, status_text(d), fmt::format("{:.3g}", d.max_abs), fmt::format("{:.3g}", d.max_rel),
             tolerance_text(d.min_atol), tolerance_text(d.min_rtol), fmt::format("{} of {}", d.mismatches, d.elements),
             first_mismatch_text(d)});
}

// Compares `names` (those `expected` holds); fills the table, histograms and JSON.
bool compare_names(const ValueMap& actual, const ValueMap& expected, const std::vector<std::string>& names,
                   const Reference& ref, Table& table, std::string& histograms, nlohmann::ordered_json& json) {
  bool all_ok = true;
  for (const auto& name : names) {
    const auto want = expected.find(name);
    if (want == expected.end()) continue;
    const TensorDiff d = compare_values(actual.at(name), want->second, ref.rtol, ref.atol);
    all_ok &= d.ok;
    add_diff_row(table, name, d);
    if (d.problem.empty()) histograms += fmt::format("\n{}", render_histogram(name, d));
    json.push_back(diff_json(name, d, ref));
  }
  return all_ok;
}

std::string placement_of(const Session& session, NodeId node, std::string* partition) {
  for (const Partition& p : session.report().partitions)
    if (std::find(p.nodes.begin(), p.nodes.end(), node) != p.nodes.end()) {
      *partition = p.name;
      return p.ep;
    }
  return "-";
}

Expected<void> require_folder(const fs::path& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return fail(ErrorCode::kInvalidInput, fmt::format("--compare-to '{}' is not a folder", dir.string()), {},
                "give a folder of expected outputs: output_K.pb or NAME.npy files");
  return {};
}

}  // namespace

std::string value_file_stem(const std::string& name) {
  std::string stem = name;
  std::replace_if(stem.begin(), stem.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
  return stem;
}

Expected<std::vector<fs::path>> numbered_files(const fs::path& dir, const std::string& prefix) {
  const std::string head = prefix + "_";
  std::map<std::size_t, fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(head) || !name.ends_with(".pb") || name.size() == head.size() + 3) continue;
    const std::string_view digits = std::string_view(name).substr(head.size(), name.size() - head.size() - 3);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    std::size_t n = 0;
    if (std::from_chars(digits.data(), digits.data() + digits.size(), n).ec != std::errc())
      return fail(ErrorCode::kInvalidInput, fmt::format("'{}' is numbered {}", it->path().string(), digits),
                  "no model has that many values", fmt::format("number the {} files from 0", prefix));
    if (auto [at, fresh] = found.emplace(n, it->path()); !fresh)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("'{}' has two files numbered {}: '{}' and '{}'", dir.string(), n,
                              std::min(at->second.filename().string(), name),
                              std::max(at->second.filename().string(), name)),
                  fmt::format("file {}_K.pb holds the K-th {}, so each number names one file", prefix, prefix),
                  "keep one of them");
  }
  if (ec)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot list the folder '{}'", dir.string()), ec.message(),
                "check that the folder exists and that you may read it");
  std::vector<fs::path> out;
  for (auto& [n, path] : found) {
    if (n != out.size())
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("'{}' has {}_{}.pb but no {}_{}.pb", dir.string(), prefix, n, prefix, out.size()),
                  fmt::format("the K-th {} file is the K-th {}, so they are numbered from 0 with no gap", prefix, prefix),
                  "rename the files");
    out.push_back(std::move(path));
  }
  return out;
}

bool compare_outputs(const ValueMap& actual, const ValueMap& expected, const std::vector<std::string>& order,
                     const Reference& ref, bool quiet, nlohmann::ordered_json& json) {
  Table table = diff_table();
  std::string histograms;
  const bool all_ok = compare_names(actual, expected, order, ref, table, histograms, json);
  if (!quiet)
    fmt::print("comparison with {} (rtol {:g}, atol {:g}):\n{}{}", ref.label, ref.rtol, ref.atol, table.render(),
               histograms);
  return all_ok;
}

Expected<ValueMap> read_expected_dir(const fs::path& dir, const Session& session) {
  if (auto ok = require_folder(dir); !ok) return std::unexpected(ok.error());
  std::error_code ec;
  const Graph& graph = *session.model().graph;
  const std::set<ValueId> exposed(session.exposed_values().begin(), session.exposed_values().end());
  std::vector<ValueId> declared;
  for (ValueId v : graph.outputs)
    if (!exposed.contains(v)) declared.push_back(v);
  ValueMap expected;
  const auto found = numbered_files(dir, "output");
  if (!found) return std::unexpected(found.error());
  const std::vector<fs::path>& numbered = *found;
  if (numbered.size() > declared.size())
    return fail(ErrorCode::kInvalidInput,
                fmt::format("'{}' has {} output_K.pb files; the model has {} outputs", dir.string(), numbered.size(),
                            declared.size()));
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    const Value& v = graph.value(declared[i]);
    auto value = read_value_file(numbered[i], v.type);
    if (!value) return forward_error(std::move(value), fmt::format("reading the expected value of '{}'", v.name));
    expected[v.name] = std::move(*value);
  }
  for (ValueId id : graph.outputs) {
    const Value& v = graph.value(id);
    for (const char* ext : {".npy", ".pb"}) {
      const fs::path file = dir / (value_file_stem(v.name) + ext);
      if (expected.contains(v.name) || !fs::is_regular_file(file, ec)) continue;
      auto value = read_value_file(file, v.type);
      if (!value) return forward_error(std::move(value), fmt::format("reading the expected value of '{}'", v.name));
      expected[v.name] = std::move(*value);
    }
  }
  if (expected.empty())
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' holds no expected value for any output", dir.string()),
                fmt::format("looked for output_K.pb and, per output, NAME.npy or NAME.pb (e.g. '{}.npy')",
                            value_file_stem(graph.value(declared.front()).name)),
                "write a reference with nxrt run MODEL --output-dir DIR");
  return expected;
}

Expected<std::vector<std::string>> input_specs_from_dir(const fs::path& dir, const Session& session,
                                                        const std::vector<std::string>& specs) {
  if (auto ok = require_folder(dir); !ok) return std::unexpected(ok.error());
  std::vector<std::string> out = specs;
  const auto required = session.required_inputs();
  const auto found = numbered_files(dir, "input");
  if (!found) return std::unexpected(found.error());
  const std::vector<fs::path>& files = *found;
  for (std::size_t i = 0; i < files.size() && i < required.size(); ++i) {
    const std::string& name = required[i]->name;
    const bool given = std::any_of(specs.begin(), specs.end(), [&](const std::string& s) { return s.starts_with(name + "="); });
    if (!given) out.push_back(fmt::format("{}={}", name, files[i].string()));
  }
  return out;
}

nlohmann::ordered_json check_each_node(const Session& session, const ValueMap& actual, const ValueMap& expected,
                                       const Reference& ref, bool quiet, bool& ok) {
  const Graph& graph = *session.model().graph;
  int checked = 0, diverging = 0;
  const Node* first = nullptr;
  for (const Node& node : graph.nodes) {
    std::vector<std::string> names;
    for (ValueId v : node.outputs)
      if (v != kNoValue && expected.contains(graph.value(v).name)) names.push_back(graph.value(v).name);
    if (names.empty()) continue;
    ++checked;
    const bool node_ok = std::all_of(names.begin(), names.end(), [&](const std::string& n) {
      return compare_values(actual.at(n), expected.at(n), ref.rtol, ref.atol).ok;
    });
    if (node_ok) continue;
    ++diverging;
    if (!first) first = &node;
  }
  nlohmann::ordered_json json = {{"nodes", graph.nodes.size()}, {"nodes_checked", checked},
                                 {"nodes_diverging", diverging}, {"first_diverging_node", nullptr}};
  if (!quiet)
    fmt::print("\nchecked {} of {} nodes against {} (rtol {:g}, atol {:g}): {} diverge\n", checked,
               graph.nodes.size(), ref.label, ref.rtol, ref.atol, diverging);
  if (!first) return json;
  ok = false;
  std::string partition = "-";
  const std::string ep = placement_of(session, first->id, &partition);
  std::vector<std::string> names;
  for (ValueId v : first->outputs)
    if (v != kNoValue) names.push_back(graph.value(v).name);
  Table table = diff_table();
  std::string histograms;
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  compare_names(actual, expected, names, ref, table, histograms, outputs);
  json["first_diverging_node"] = {{"node", first->name}, {"op", first->op_type}, {"domain", display_domain(first->domain)},
                                  {"ep", ep},           {"partition", partition}, {"outputs", outputs}};
  if (!quiet)
    fmt::print("first diverging node: {} on the {} EP (partition {})\n{}{}", first->describe(), ep, partition,
               table.render(), histograms);
  return json;
}

}  // namespace nxrt::cli
