// nxrt run: run a model (or an EPContext model, or an ONNX backend-test folder).
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli_common.h"
#include "commands.h"
#include "nxrt/io/compare.h"
#include "nxrt/io/tensor_file.h"
#include "render/table.h"
#include "render/tensor_summary.h"

namespace nxrt::cli {
namespace {

namespace fs = std::filesystem;

struct RunFlags {
  std::string model;
  std::string test_dir;
  EpFlags ep;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string compare_ep;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  bool json = false;
  bool quiet = false;
};

// Compares each output; prints a table unless `quiet` (JSON output); returns whether all matched.
bool compare_outputs(const std::map<std::string, RuntimeValue>& actual,
                     const std::map<std::string, RuntimeValue>& expected,
                     const std::vector<std::string>& order, double rtol, double atol, const std::string& label,
                     bool quiet, nlohmann::ordered_json& json) {
  Table table({"OUTPUT", "STATUS", "MAX ABS ERR", "MAX REL ERR", "MISMATCHES", "FIRST MISMATCH"});
  bool all_ok = true;
  for (const auto& name : order) {
    const TensorDiff d = compare_values(actual.at(name), expected.at(name), rtol, atol);
    all_ok &= d.ok;
    const std::string first =
        d.first_mismatch < 0 ? "-"
                             : fmt::format("[{}] got {:.6g}, expected {:.6g}", d.first_mismatch, d.actual_at_first,
                                           d.expected_at_first);
    table.add({name, d.ok ? "match" : (d.problem.empty() ? "MISMATCH" : "MISMATCH: " + d.problem),
               fmt::format("{:.3g}", d.max_abs), fmt::format("{:.3g}", d.max_rel),
               fmt::format("{} of {}", d.mismatches, d.elements), first});
    json.push_back({{"output", name}, {"against", label}, {"ok", d.ok}, {"problem", d.problem}, {"max_abs", d.max_abs},
                    {"max_rel", d.max_rel}, {"mismatches", d.mismatches}, {"elements", d.elements}});
  }
  if (!quiet) fmt::print("comparison with {} (rtol {:g}, atol {:g}):\n{}", label, rtol, atol, table.render());
  return all_ok;
}

std::vector<std::string> output_order(const Session& s) {
  std::vector<std::string> names;
  for (ValueId v : s.model().graph->outputs) names.push_back(s.model().graph->value(v).name);
  return names;
}

// Files matching "<prefix>_<N>.pb" in a folder, ordered by N.
std::vector<fs::path> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, fs::path>> found;
  const std::regex pattern(prefix + "_([0-9]+)\\.pb");
  for (const auto& e : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, pattern)) found.emplace_back(std::stoi(m[1]), e.path());
  }
  std::sort(found.begin(), found.end());
  std::vector<fs::path> out;
  for (auto& [n, p] : found) out.push_back(std::move(p));
  return out;
}

int run_test_dir(const RunFlags& f) {
  const fs::path dir(f.test_dir);
  const fs::path model = dir / "model.onnx";
  std::error_code ec;
  if (!fs::is_regular_file(model, ec))
    return report(fail(ErrorCode::kInvalidInput, fmt::format("'{}' has no model.onnx", f.test_dir), {},
                        "give an ONNX backend-test folder: model.onnx plus test_data_set_N/").error());
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  auto session = Session::create(model, *options);
  if (!session) return report(session.error());
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    return report(fail(ErrorCode::kInvalidInput, fmt::format("'{}' has no test_data_set_* folder", f.test_dir)).error());
  const auto required = (*session)->required_inputs();
  const auto order = output_order(**session);
  bool all_ok = true;
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const fs::path& set : sets) {
    // input_K.pb feeds the K-th graph input; its own name, when it is one, wins.
    std::map<std::string, RuntimeValue> inputs;
    const auto input_files = numbered_files(set, "input");
    for (std::size_t i = 0; i < input_files.size(); ++i) {
      const Value* declared = i < required.size() ? required[i] : nullptr;
      if (!declared)
        return report(fail(ErrorCode::kInvalidInput,
                            fmt::format("'{}' has {} inputs; the model takes {}", set.string(), input_files.size(),
                                        required.size())).error());
      std::string name;
      auto value = read_value_file(input_files[i], declared->type, &name);
      if (!value) return report(value.error());
      auto named = std::find_if(required.begin(), required.end(), [&](const Value* v) { return v->name == name; });
      if (named != required.end() && *named != declared) {
        value = read_value_file(input_files[i], (*named)->type, &name);
        if (!value) return report(value.error());
      }
      inputs[named != required.end() ? name : declared->name] = std::move(*value);
    }
    auto outputs = (*session)->run(inputs);
    if (!outputs) return report(outputs.error());
    const auto expected_files = numbered_files(set, "output");
    if (expected_files.size() != order.size())
      return report(fail(ErrorCode::kInvalidInput,
                          fmt::format("'{}' has {} expected outputs; the model has {}", set.string(),
                                      expected_files.size(), order.size())).error());
    std::map<std::string, RuntimeValue> expected;
    const Graph& graph = *(*session)->model().graph;
    for (std::size_t i = 0; i < expected_files.size(); ++i) {
      const Value& declared = graph.value(graph.outputs[i]);
      auto value = read_value_file(expected_files[i], declared.type);
      if (!value) return report(value.error());
      expected[order[i]] = std::move(*value);
    }
    all_ok &= compare_outputs(*outputs, expected, order, f.rtol, f.atol, set.filename().string(), f.json, json);
  }
  if (f.json)
    fmt::print("{}\n", nlohmann::ordered_json{{"test_dir", f.test_dir}, {"ok", all_ok}, {"outputs", json}}.dump(2));
  else
    fmt::print("{}: {}\n", f.test_dir, all_ok ? "pass" : "MISMATCH");
  return all_ok ? 0 : static_cast<int>(ErrorCode::kMismatch);
}

int run_model(const RunFlags& f) {
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  auto session = Session::create(f.model, *options);
  if (!session) return report(session.error());
  auto inputs = gather_inputs(**session, f.inputs, f.quiet || f.json);
  if (!inputs) return report(inputs.error());
  auto outputs = (*session)->run(*inputs);
  if (!outputs) return report(outputs.error());
  const auto order = output_order(**session);

  nlohmann::ordered_json json_outputs = nlohmann::ordered_json::object();
  if (!f.json) fmt::print("outputs of {} on [{}]:\n", f.model, fmt::join(options->eps, ", "));
  for (const auto& name : order) {
    const RuntimeValue& value = outputs->at(name);
    json_outputs[name] = summary_json(value);
    if (!f.json) fmt::print("  {}: {}\n", name, summarize(value));
    if (!f.output_dir.empty()) {
      std::error_code ec;
      fs::create_directories(f.output_dir, ec);
      std::string file = name;
      std::replace_if(file.begin(), file.end(), [](char c) { return c == '/' || c == '\\' || c == ':'; }, '_');
      const bool npy = value.is_tensor() && value.dtype() != DType::kString && value.dtype() != DType::kBFloat16;
      const fs::path path = fs::path(f.output_dir) / (file + (npy ? ".npy" : ".pb"));
      if (auto r = write_value_file(path, value, name); !r) return report(r.error());
      if (!f.json && !f.quiet) fmt::print("    written to {}\n", path.string());
    }
  }
  bool ok = true;
  nlohmann::ordered_json comparisons = nlohmann::ordered_json::array();
  if (!f.compare_ep.empty()) {
    SessionOptions other = *options;
    other.eps = {f.compare_ep};
    auto reference = Session::create(f.model, other);
    if (!reference) return report(reference.error());
    auto expected = (*reference)->run(*inputs);
    if (!expected) return report(expected.error());
    ok = compare_outputs(*outputs, *expected, order, f.rtol, f.atol, fmt::format("the {} EP", f.compare_ep), f.json,
                         comparisons);
  }
  if (f.json)
    fmt::print("{}\n", nlohmann::ordered_json{{"model", f.model}, {"eps", options->eps}, {"outputs", json_outputs},
                                              {"comparisons", comparisons}, {"ok", ok}}.dump(2));
  return ok ? 0 : static_cast<int>(ErrorCode::kMismatch);
}

}  // namespace

Action add_run(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand("run", "run a model (or an EPContext model) and print or save its outputs");
  auto* model = cmd->add_option("MODEL", f->model, "the .onnx model");
  auto* test_dir = cmd->add_option("--test-dir", f->test_dir,
                                   "run an ONNX backend-test folder (model.onnx + test_data_set_N/) and compare")
                       ->excludes(model);
  f->ep.add_to(*cmd);
  cmd->add_option("--input", f->inputs, "an input from a .npy or .pb file, or random data")
      ->type_name("NAME=FILE|random")
      ->allow_extra_args(false)
      ->excludes(test_dir);
  cmd->add_option("--output-dir", f->output_dir, "write each output as <name>.npy (or .pb) into this folder")
      ->excludes(test_dir);
  cmd->add_option("--compare-ep", f->compare_ep, "run again on this EP alone and compare the outputs")->excludes(test_dir);
  cmd->add_option("--rtol", f->rtol, "relative tolerance for comparisons")->capture_default_str();
  cmd->add_option("--atol", f->atol, "absolute tolerance for comparisons")->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON instead of text");
  cmd->add_flag("-q,--quiet", f->quiet, "no notes on stderr");
  return [f] {
    if (!f->test_dir.empty()) return run_test_dir(*f);
    if (f->model.empty())
      return report(fail(ErrorCode::kUsage, "run needs a MODEL or --test-dir CASE", {}, "see nxrt run --help").error());
    return run_model(*f);
  };
}

}  // namespace nxrt::cli
