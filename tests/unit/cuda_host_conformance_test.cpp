// The ONNX backend suite (Debian's libonnx-testdata) and nxrt's own cases with ONNX Runtime's
// outputs (testdata/opset18plus, testdata/com_microsoft) on the cuda EP's kernels without a GPU:
// every case (node, pytorch-converted, pytorch-operator, simple, opset18plus, com_microsoft) whose
// nodes the cuda EP claims for sm_90 runs through the host build of its module
// (cuda_host_module.h), cuBLASLt and cuDNN steps on their host stand-ins (cuda_host_libraries.h),
// and is compared with the expected outputs. tests/conformance/cuda_on_host_passing.txt is the
// ratchet: each case listed there must pass. Hidden from the default run; ctest runs it as
// cuda_on_host_conformance. NXRT_CUDA_CONFORMANCE_REPORT=FILE writes every case's result and
// how long it ran; NXRT_CUDA_CONFORMANCE_ONLY=REGEX runs only the cases whose name matches (and
// checks only the ratchet's entries that match).
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>

#include "cuda_host_module.h"
#include "nxrt/io/compare.h"
#include "nxrt/ir/passes.h"
#include "nxrt/io/tensor_file.h"
#include "nxrt/model/model.h"

using namespace nxrt;
namespace fs = std::filesystem;

namespace {

const fs::path kSuite = "/usr/share/libonnx-testdata/data";
// The suite's folders, as the case names in the ratchet and in conformance.sh start.
constexpr std::array kSuiteParts = {"node", "pytorch-converted", "pytorch-operator", "simple"};

// Modules per compiler run: one run is mostly start-up, so batches make the suite fast.
constexpr std::size_t kModulesPerBatch = 64;

const ConstantToInitializer kConstantToInitializer;
const ExpandOrtFusions kExpandOrtFusions;

// One case: its model and plan, and once its module is built, its result.
struct Case {
  std::string name{};  // "node/test_abs"
  fs::path dir{};
  std::optional<Model> model{};
  Partition partition{};
  std::optional<cuda::Plan> plan{};
  std::unique_ptr<test::HostModule> module{};
  std::string result{};  // "pass", "fail: ...", "skip: ..." (not the cuda EP's, or unreadable)
};

// Loads the model and plans it (plan_for_host claims every node); sets `result` when the case
// is not the cuda EP's or its plan fails.
void plan_case(Case& c) {
  auto model = load_model(c.dir / "model.onnx");
  if (!model) {
    c.result = "skip: the model does not load";
    return;
  }
  c.model = std::move(*model);
  // As a session does before claiming: Constant nodes become initializers, and ONNX Runtime's
  // FusedConv, FusedGemm and FusedMatMul become the standard ops they fuse.
  for (const OptimizerPass* pass : std::array<const OptimizerPass*, 2>{&kConstantToInitializer, &kExpandOrtFusions})
    if (auto done = pass->run(*c.model->graph); !done) {
      c.result = "fail: " + done.error().what;
      return;
    }
  const Graph& g = *c.model->graph;
  c.partition.graph = &g;
  c.partition.ep = "cuda";
  c.partition.name = "cuda_0";
  for (const Node& n : g.nodes) c.partition.nodes.push_back(n.id);
  // Inputs with an initializer (older models list weights as inputs) keep its value, as in a
  // session; the test data feeds the others.
  for (ValueId v : g.inputs)
    if (!g.value(v).initializer) c.partition.inputs.push_back(v);
  c.partition.outputs = g.outputs;
  auto plan = test::plan_for_host(c.partition);
  if (plan) c.plan = std::move(*plan);
  else if (plan.error().code == ErrorCode::kUnclaimed) c.result = "skip: " + plan.error().what + ": " + plan.error().why;
  else c.result = "fail: " + plan.error().what;
}

// Runs every test_data_set_* of a planned and built case against its expected outputs.
std::string run_case(const Case& c) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir))
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < c.partition.inputs.size(); ++i) {
      auto t = read_tensor_file(set / fmt::format("input_{}.pb", i));
      if (!t) return "skip: an input is not a tensor file";
      inputs.push_back(std::move(*t));
    }
    auto outputs = test::run_plan_on_host(*c.plan, *c.module, c.partition, inputs);
    if (!outputs) return fmt::format("fail: {}: {}", outputs.error().what, outputs.error().why.substr(0, 300));
    for (std::size_t o = 0; o < outputs->size(); ++o) {
      auto expected = read_tensor_file(set / fmt::format("output_{}.pb", o));
      if (!expected) return "skip: an output is not a tensor file";
      const TensorDiff d = compare_tensors((*outputs)[o], *expected);
      if (!d.problem.empty()) return fmt::format("fail: {} output {}: {}", set.filename().string(), o, d.problem);
      if (d.mismatches > 0 || d.elements != expected->numel())
        return fmt::format("fail: {} output {}: {} of {} elements differ, max abs error {:g}", set.filename().string(), o,
                           d.mismatches, d.elements, d.max_abs);
    }
  }
  return "pass";
}

// Builds the modules of the planned cases, kModulesPerBatch per compiler run.
void build_modules(std::vector<Case*> planned) {
  for (std::size_t start = 0; start < planned.size(); start += kModulesPerBatch) {
    const std::size_t end = std::min(planned.size(), start + kModulesPerBatch);
    std::vector<std::string> sources;
    for (std::size_t i = start; i < end; ++i) sources.push_back(planned[i]->plan->source);
    auto modules = test::HostModule::compile_all(sources);
    for (std::size_t i = start; i < end; ++i) {
      if (modules) planned[i]->module = std::move((*modules)[i - start]);
      else planned[i]->result = "fail: " + modules.error().what + ": " + modules.error().why.substr(0, 300);
    }
  }
}

}  // namespace

TEST_CASE("ONNX backend cases the cuda EP takes whole pass on the host build of its kernels", "[.cuda_conformance]") {
  if (!fs::is_directory(kSuite)) {
    WARN("Debian's libonnx-testdata is not installed: " << kSuite);
    return;
  }
  const char* only_env = std::getenv("NXRT_CUDA_CONFORMANCE_ONLY");
  const std::optional<std::regex> only = only_env ? std::optional<std::regex>(only_env) : std::nullopt;
  auto selected = [&](const std::string& name) { return !only || std::regex_search(name, *only); };
  std::set<std::string> ratchet;
  std::ifstream list(fs::path(NXRT_SOURCE_DIR) / "tests/conformance/cuda_on_host_passing.txt");
  for (std::string line; std::getline(list, line);)
    if (!line.empty() && line[0] != '#' && selected(line)) ratchet.insert(line);
  std::vector<Case> cases;
  auto add_cases = [&](const std::string& part, const fs::path& dir) {
    for (const auto& e : fs::directory_iterator(dir))
      if (fs::exists(e.path() / "model.onnx") && selected(part + "/" + e.path().filename().string()))
        cases.push_back({.name = part + "/" + e.path().filename().string(), .dir = e.path()});
  };
  for (const std::string part : kSuiteParts)
    if (fs::is_directory(kSuite / part)) add_cases(part, kSuite / part);
  add_cases("opset18plus", fs::path(NXRT_SOURCE_DIR) / "testdata/opset18plus");
  add_cases("com_microsoft", fs::path(NXRT_SOURCE_DIR) / "testdata/com_microsoft");
  std::sort(cases.begin(), cases.end(), [](const Case& a, const Case& b) { return a.name < b.name; });
  std::vector<Case*> planned;
  for (Case& c : cases) {
    plan_case(c);
    if (c.plan) planned.push_back(&c);
  }
  build_modules(planned);
  // Cases whose expected outputs no EP can match (tests/conformance/cpu_not_passing.tsv): wrong
  // ones ("test data") and draws of NumPy's generator ("random"). A failure there is reported
  // as a skip with the reason.
  std::map<std::string, std::string> not_comparable;
  std::ifstream not_passing(fs::path(NXRT_SOURCE_DIR) / "tests/conformance/cpu_not_passing.tsv");
  for (std::string line; std::getline(not_passing, line);) {
    const auto tab = line.find('\t'), second = line.find('\t', tab + 1);
    if (tab == std::string::npos || second == std::string::npos) continue;
    const std::string category = line.substr(tab + 1, second - tab - 1);
    if (category == "test data") not_comparable.emplace(line.substr(0, tab), "wrong test data: " + line.substr(second + 1));
    if (category == "random") not_comparable.emplace(line.substr(0, tab), "random draws: " + line.substr(second + 1));
  }
  std::ofstream report;
  if (const char* path = std::getenv("NXRT_CUDA_CONFORMANCE_REPORT")) report.open(path);
  int ran = 0, passed = 0;
  for (Case& c : cases) {
    const auto start = std::chrono::steady_clock::now();
    if (c.module) c.result = run_case(c);
    if (c.result.starts_with("fail") && not_comparable.contains(c.name))
      c.result = "skip: " + not_comparable.at(c.name) + ": " + c.result;
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    if (report.is_open()) report << c.name << '\t' << c.result << '\t' << ms << " ms\n";
    if (c.result.starts_with("skip")) continue;
    ++ran;
    passed += c.result == "pass";
    if (ratchet.contains(c.name)) {
      INFO(c.name << ": " << c.result);
      CHECK(c.result == "pass");
    } else if (c.result == "pass") {
      WARN(c.name << " passes now: add it to tests/conformance/cuda_on_host_passing.txt");
    }
  }
  WARN(fmt::format("cuda EP kernels on the host: {} of {} cases pass ({} in the ratchet)", passed, ran, ratchet.size()));
  CHECK(passed >= static_cast<int>(ratchet.size()));
}
#endif  // NXRT_HAVE_CUDA
