// run's comparisons: per-output error statistics and histograms, expected-output folders,
// and the first node whose output diverges (--check-each-node).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/runtime_value.h"
#include "nxrt/session/session.h"

namespace nxrt::cli {

using ValueMap = std::map<std::string, RuntimeValue>;

// What the outputs are compared with, and under which tolerances.
struct Reference {
  std::string label;  // "the cpu EP", "folder 'ref'"
  double rtol = 0;
  double atol = 0;
};

// Compares each name of `order` that `expected` holds; prints a table and each output's
// error histogram unless `quiet`; appends one JSON object per output to `json`. Returns
// whether all matched.
bool compare_outputs(const ValueMap& actual, const ValueMap& expected, const std::vector<std::string>& order,
                     const Reference& ref, bool quiet, nlohmann::ordered_json& json);

// Expected values from a folder: output_K.pb for the K-th declared output (ONNX backend
// tests) and NAME.npy or NAME.pb for any output or, with --check-each-node, intermediate
// value (the names --output-dir writes). Files that name nothing are ignored.
Expected<ValueMap> read_expected_dir(const std::filesystem::path& dir, const Session& session);

// --input specs "NAME=DIR/input_K.pb" for the K-th required input, for each input that
// `specs` does not name already (a --compare-to folder of ONNX backend-test data). Fails
// before anything runs when `dir` is not a folder.
Expected<std::vector<std::string>> input_specs_from_dir(const std::filesystem::path& dir, const Session& session,
                                                        const std::vector<std::string>& specs);

// The file name --output-dir gives a value: its name with '/', '\' and ':' made '_'.
std::string value_file_stem(const std::string& name);

// The files "<prefix>_<N>.pb" of a folder, ordered by N. The K-th one feeds (or is compared
// with) the K-th input (or output), so the numbers must run from 0 with no gap or repeat.
Expected<std::vector<std::filesystem::path>> numbered_files(const std::filesystem::path& dir,
                                                            const std::string& prefix);

// --check-each-node: walks the main graph's nodes in topological order and compares each
// node's outputs that `expected` holds; prints (unless `quiet`) and returns as JSON the
// count of nodes checked and diverging and the first diverging node with its op, EP and
// error statistics. `ok` is set false when a node diverges.
nlohmann::ordered_json check_each_node(const Session& session, const ValueMap& actual, const ValueMap& expected,
                                       const Reference& ref, bool quiet, bool& ok);

}  // namespace nxrt::cli
