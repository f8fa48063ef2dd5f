// nxrt run: run a model (or an EPContext model, or an ONNX backend-test folder).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "cli_common.h"
#include "commands.h"
#include "nxrt/io/atomic_file.h"
#include "nxrt/io/compare.h"
#include "nxrt/io/npy.h"
#include "nxrt/io/tensor_file.h"
#include "render/tensor_summary.h"
#include "run_compare.h"

namespace nxrt::cli {
namespace {

namespace fs = std::filesystem;

struct RunFlags {
  std::string model;
  std::vector<std::string> test_dirs;
  EpFlags ep;
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string compare_ep;
  std::string compare_to;
  bool check_each_node = false;
  double rtol = kDefaultRtol;
  double atol = kDefaultAtol;
  bool json = false;
  bool quiet = false;
};

// The declared outputs, in model order (not the intermediates --check-each-node adds).
std::vector<std::string> output_order(const Session& s) {
  const Graph& graph = *s.model().graph;
  const std::set<ValueId> exposed(s.exposed_values().begin(), s.exposed_values().end());
  std::vector<std::string> names;
  for (ValueId v : graph.outputs)
    if (!exposed.contains(v)) names.push_back(graph.value(v).name);
  return names;
}

// Runs one ONNX backend-test folder (model.onnx plus test_data_set_N/ holding input_K.pb and
// output_K.pb) and compares every data set's outputs with the expected ones: true when all
// match. The comparisons go to `comparisons` (and, without --json, to standard output).
Expected<bool> check_test_dir(const fs::path& dir, const SessionOptions& options, const RunFlags& f,
                              nlohmann::ordered_json& comparisons) {
  const fs::path model = dir / "model.onnx";
  std::error_code ec;
  if (!fs::is_regular_file(model, ec))
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' has no model.onnx", dir.string()), {},
                "give an ONNX backend-test folder: model.onnx plus test_data_set_N/");
  auto session = Session::create(model, options);
  if (!session) return std::unexpected(std::move(session.error()));
  std::vector<fs::path> sets;
  std::error_code entry_ec;  // an entry that cannot be read is not a data set
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_directory(entry_ec) && it->path().filename().string().starts_with("test_data_set_"))
      sets.push_back(it->path());
  if (ec)
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot list the folder '{}'", dir.string()), ec.message(),
                "check that the folder exists and that you may read it");
  std::sort(sets.begin(), sets.end());
  if (sets.empty())
    return fail(ErrorCode::kInvalidInput, fmt::format("'{}' has no test_data_set_* folder", dir.string()));
  const auto required = (*session)->required_inputs();
  const auto order = output_order(**session);
  bool all_ok = true;
  for (const fs::path& set : sets) {
    // input_K.pb feeds the K-th graph input; its own name, when it is one, wins.
    std::map<std::string, RuntimeValue> inputs;
    const auto found_inputs = numbered_files(set, "input");
    if (!found_inputs) return std::unexpected(found_inputs.error());
    const std::vector<fs::path>& input_files = *found_inputs;
    for (std::size_t i = 0; i < input_files.size(); ++i) {
      const Value* declared = i < required.size() ? required[i] : nullptr;
      if (!declared)
        return fail(ErrorCode::kInvalidInput, fmt::format("'{}' has {} inputs; the model takes {}", set.string(),
                                                          input_files.size(), required.size()));
      std::string name;
      auto value = read_value_file(input_files[i], declared->type, &name);
      if (!value) return std::unexpected(std::move(value.error()));
      auto named = std::find_if(required.begin(), required.end(), [&](const Value* v) { return v->name == name; });
      if (named != required.end() && *named != declared) {
        value = read_value_file(input_files[i], (*named)->type, &name);
        if (!value) return std::unexpected(std::move(value.error()));
      }
      inputs[named != required.end() ? name : declared->name] = std::move(*value);
    }
    auto outputs = (*session)->run(inputs);
    if (!outputs) return std::unexpected(std::move(outputs.error()));
    const auto found_outputs = numbered_files(set, "output");
    if (!found_outputs) return std::unexpected(found_outputs.error());
    const std::vector<fs::path>& expected_files = *found_outputs;
    if (expected_files.size() != order.size())
      return fail(ErrorCode::kInvalidInput, fmt::format("'{}' has {} expected outputs; the model has {}", set.string(),
                                                        expected_files.size(), order.size()));
    std::map<std::string, RuntimeValue> expected;
    const Graph& graph = *(*session)->model().graph;
    for (std::size_t i = 0; i < expected_files.size(); ++i) {
      const Value& declared = graph.value(graph.outputs[i]);
      auto value = read_value_file(expected_files[i], declared.type);
      if (!value) return std::unexpected(std::move(value.error()));
      expected[order[i]] = std::move(*value);
    }
    all_ok &=
        compare_outputs(*outputs, expected, order, {set.filename().string(), f.rtol, f.atol}, f.json, comparisons);
  }
  return all_ok;
}

// How a test folder's result is named: by its exit status (pass 0, mismatch 5, declined 4,
// error any other).
std::string_view case_status(int exit_code) {
  switch (static_cast<ErrorCode>(exit_code)) {
    case ErrorCode::kMismatch: return "mismatch";
    case ErrorCode::kUnclaimed: return "declined";
    default: return exit_code == 0 ? "pass" : "error";
  }
}

nlohmann::ordered_json error_json(const Error& error) {
  return {{"what", error.what}, {"why", error.why}, {"how", error.how},
          {"context", std::vector<std::string>(error.context.rbegin(), error.context.rend())}};
}

// Runs each --test-dir folder in turn, in one process. Per folder: the comparison tables and
// a line "DIR: pass" (MISMATCH, DECLINED, ERROR), or with --json one object on one line,
// written as soon as the folder is done, so a reader sees every finished case even if a
// later one crashes. Exit status: that of the first folder that did not pass.
int run_test_dirs(const RunFlags& f) {
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  int first_failure = 0;
  std::map<std::string_view, int> counts;
  for (const std::string& dir : f.test_dirs) {
    const auto start = std::chrono::steady_clock::now();
    nlohmann::ordered_json comparisons = nlohmann::ordered_json::array();
    const auto checked = check_test_dir(dir, *options, f, comparisons);
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    int code = 0;
    if (!checked)
      code = report(Error(checked.error()).add_context(fmt::format("checking the test folder '{}'", dir)));
    else if (!*checked)
      code = static_cast<int>(ErrorCode::kMismatch);
    const std::string_view status = case_status(code);
    ++counts[status];
    if (first_failure == 0) first_failure = code;
    if (f.json) {
      nlohmann::ordered_json line{{"test_dir", dir}, {"status", status},           {"exit_code", code},
                                  {"ok", code == 0}, {"seconds", seconds.count()}, {"outputs", comparisons}};
      if (!checked) line["error"] = error_json(checked.error());
      fmt::print("{}\n", line.dump());
    } else if (code == 0 || status == "mismatch") {
      fmt::print("{}: {}\n", dir, code == 0 ? "pass" : "MISMATCH");
    } else {
      fmt::print("{}: {} (status {})\n", dir, status == "declined" ? "DECLINED" : "ERROR", code);
    }
    std::fflush(stdout);  // each case's line before the next case starts
  }
  if (!f.json && f.test_dirs.size() > 1) {
    std::vector<std::string> parts;
    for (const std::string_view status : {"pass", "mismatch", "declined", "error"})
      if (counts[status] > 0) parts.push_back(fmt::format("{} {}", counts[status], status));
    fmt::print("{} cases: {}\n", f.test_dirs.size(), fmt::join(parts, ", "));
  }
  return first_failure;
}

// Writes each named value into the folder as <name>.npy (or .pb for what .npy cannot hold).
Expected<void> write_values(const ValueMap& values, const std::vector<std::string>& names, const RunFlags& f) {
  if (auto made = create_output_folder(f.output_dir); !made) return made;
  for (const auto& name : names) {
    const RuntimeValue& value = values.at(name);
    const bool npy = value.is_tensor() && npy_supports(value.dtype());
    const fs::path path = fs::path(f.output_dir) / (value_file_stem(name) + (npy ? ".npy" : ".pb"));
    if (auto r = write_value_file(path, value, name); !r) return r;
    if (!f.json && !f.quiet) fmt::print("    written to {}\n", path.string());
  }
  return {};
}

// The values to compare with: the --compare-ep run's or the --compare-to folder's.
Expected<ValueMap> reference_values(const RunFlags& f, const SessionOptions& options, const Session& session,
                                    const ValueMap& inputs) {
  if (!f.compare_to.empty()) return read_expected_dir(f.compare_to, session);
  SessionOptions other = options;
  other.eps = {f.compare_ep};
  auto reference = Session::create(f.model, other);
  if (!reference) return std::unexpected(reference.error());
  return (*reference)->run(inputs);
}

int run_model(const RunFlags& f) {
  auto options = f.ep.session_options();
  if (!options) return report(options.error());
  options->all_values_as_outputs = f.check_each_node;
  auto session = Session::create(f.model, *options);
  if (!session) return report(session.error());
  const Session& s = **session;
  auto specs = f.compare_to.empty() ? f.inputs : input_specs_from_dir(f.compare_to, s, f.inputs);
  if (!specs) return report(specs.error());
  auto inputs = gather_inputs(s, *specs, f.quiet || f.json);
  if (!inputs) return report(inputs.error());
  auto outputs = (*session)->run(*inputs);
  if (!outputs) return report(outputs.error());
  const auto order = output_order(s);

  nlohmann::ordered_json json_outputs = nlohmann::ordered_json::object();
  if (!f.json) fmt::print("outputs of {} on [{}]:\n", f.model, fmt::join(options->eps, ", "));
  for (const auto& name : order) {
    json_outputs[name] = summary_json(outputs->at(name));
    if (!f.json) fmt::print("  {}: {}\n", name, summarize(outputs->at(name)));
  }
  if (!f.output_dir.empty()) {
    std::vector<std::string> written = order;
    for (ValueId v : s.exposed_values()) written.push_back(s.model().graph->value(v).name);
    if (auto r = write_values(*outputs, written, f); !r) return report(r.error());
  }
  bool ok = true;
  nlohmann::ordered_json comparisons = nlohmann::ordered_json::array();
  nlohmann::ordered_json node_check;
  if (!f.compare_ep.empty() || !f.compare_to.empty()) {
    auto expected = reference_values(f, *options, s, *inputs);
    if (!expected) return report(expected.error());
    const Reference ref{f.compare_to.empty() ? fmt::format("the {} EP", f.compare_ep)
                                             : fmt::format("folder '{}'", f.compare_to),
                        f.rtol, f.atol};
    ok = compare_outputs(*outputs, *expected, order, ref, f.json, comparisons);
    if (f.check_each_node) node_check = check_each_node(s, *outputs, *expected, ref, f.json, ok);
  }
  if (f.json) {
    nlohmann::ordered_json json{{"model", f.model}, {"eps", options->eps}, {"outputs", json_outputs},
                                {"comparisons", comparisons}};
    if (f.check_each_node) json["check_each_node"] = node_check;
    json["ok"] = ok;
    fmt::print("{}\n", json.dump(2));
  }
  return ok ? 0 : static_cast<int>(ErrorCode::kMismatch);
}

}  // namespace

Action add_run(CLI::App& app) {
  auto f = std::make_shared<RunFlags>();
  auto* cmd = app.add_subcommand("run", "run a model (or an EPContext model) and print or save its outputs");
  auto* model = cmd->add_option("MODEL", f->model, "the .onnx model");
  auto* test_dir = cmd->add_option("--test-dir", f->test_dirs,
                                   "run ONNX backend-test folders (model.onnx + test_data_set_N/), one after the "
                                   "other, and compare with their expected outputs")
                       ->type_name("DIR...")
                       ->excludes(model);
  f->ep.add_to(*cmd);
  cmd->add_option("--input", f->inputs, "an input from a .npy or .pb file, or random data")
      ->type_name("NAME=FILE|random")
      ->allow_extra_args(false)
      ->excludes(test_dir);
  cmd->add_option("--output-dir", f->output_dir, "write each output as <name>.npy (or .pb) into this folder")
      ->excludes(test_dir);
  auto* compare_ep =
      cmd->add_option("--compare-ep", f->compare_ep, "run again on this EP alone and compare the outputs")
          ->excludes(test_dir);
  cmd->add_option("--compare-to", f->compare_to,
                                     "compare the outputs with a folder of expected ones (output_K.pb, NAME.npy); "
                                     "its input_K.pb files feed the inputs --input does not give")
      ->type_name("DIR")
      ->excludes(test_dir)
      ->excludes(compare_ep);
  cmd->add_flag("--check-each-node", f->check_each_node,
                "make every intermediate value an output and report the first node whose output diverges "
                "(with --output-dir: write them all)")
      ->excludes(test_dir);
  cmd->add_option("--rtol", f->rtol, "relative tolerance for comparisons")->capture_default_str();
  cmd->add_option("--atol", f->atol, "absolute tolerance for comparisons")->capture_default_str();
  cmd->add_flag("--json", f->json, "print JSON instead of text");
  cmd->add_flag("-q,--quiet", f->quiet, "no notes on stderr");
  return [f] {
    if (!f->test_dirs.empty()) return run_test_dirs(*f);
    if (f->model.empty())
      return report(fail(ErrorCode::kUsage, "run needs a MODEL or --test-dir CASE", {}, "see nxrt run --help").error());
    if (f->check_each_node && f->compare_ep.empty() && f->compare_to.empty() && f->output_dir.empty())
      return report(fail(ErrorCode::kUsage, "--check-each-node needs --compare-ep, --compare-to or --output-dir", {},
                         "compare with another EP (--compare-ep cpu) or a reference folder (--compare-to DIR), "
                         "or write every value (--output-dir DIR)")
                        .error());
    return run_model(*f);
  };
}

}  // namespace nxrt::cli
