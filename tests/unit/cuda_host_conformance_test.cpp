// The ONNX backend suite (Debian's libonnx-testdata) on the cuda EP's kernels without a GPU:
// every node case whose nodes the cuda EP claims for sm_90 and whose plan needs neither
// cuBLASLt nor cuDNN runs through the host build of its module (cuda_host_module.h) and is
// compared with the expected outputs. tests/conformance/cuda_on_host_passing.txt is the
// ratchet: each case listed there must pass. Hidden from the default run; ctest runs it as
// cuda_on_host_conformance. NXRT_CUDA_CONFORMANCE_REPORT=FILE writes every case's result.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "cuda_host_module.h"
#include "nxrt/io/compare.h"
#include "nxrt/io/tensor_file.h"
#include "nxrt/model/model.h"

using namespace nxrt;
namespace fs = std::filesystem;

namespace {

const fs::path kSuite = "/usr/share/libonnx-testdata/data/node";

// "pass", or why the case failed or was not run ("skip: ..." when it is not the cuda EP's).
std::string run_case(const fs::path& dir) {
  auto model = load_model(dir / "model.onnx");
  if (!model) return "skip: the model does not load";
  const Graph& g = *model->graph;
  for (const Node& n : g.nodes)
    if (!test::cuda_for_sm90().claim(NodeContext(g, n))) return "skip: a node is not the cuda EP's";
  Partition p;
  p.graph = &g;
  p.ep = "cuda";
  p.name = "cuda_0";
  for (const Node& n : g.nodes) p.nodes.push_back(n.id);
  p.inputs = g.inputs;
  p.outputs = g.outputs;
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().starts_with("test_data_set_")) sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  for (const fs::path& set : sets) {
    std::vector<Tensor> inputs;
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
      auto t = read_tensor_file(set / fmt::format("input_{}.pb", i));
      if (!t) return "skip: an input is not a tensor file";
      inputs.push_back(std::move(*t));
    }
    auto outputs = test::run_partition_on_host(p, inputs);
    if (!outputs) {
      const Error& e = outputs.error();
      if (e.what == "the plan cannot run on the host") return "skip: " + e.why;
      return fmt::format("fail: {}: {}", e.what, e.why.substr(0, 300));
    }
    for (std::size_t o = 0; o < outputs->size(); ++o) {
      auto expected = read_tensor_file(set / fmt::format("output_{}.pb", o));
      if (!expected) return "skip: an output is not a tensor file";
      const TensorDiff d = compare_tensors((*outputs)[o], *expected);
      if (d.mismatches > 0 || d.elements != expected->numel())
        return fmt::format("fail: {} output {}: {} of {} elements differ, max abs error {:g}", set.filename().string(), o,
                           d.mismatches, d.elements, d.max_abs);
    }
  }
  return "pass";
}

}  // namespace

TEST_CASE("ONNX backend cases the cuda EP takes whole pass on the host build of its kernels", "[.cuda_conformance]") {
  if (!fs::is_directory(kSuite)) {
    WARN("Debian's libonnx-testdata is not installed: " << kSuite);
    return;
  }
  std::set<std::string> ratchet;
  std::ifstream list(fs::path(NXRT_SOURCE_DIR) / "tests/conformance/cuda_on_host_passing.txt");
  for (std::string line; std::getline(list, line);)
    if (!line.empty() && line[0] != '#') ratchet.insert(line);
  std::vector<fs::path> cases;
  for (const auto& e : fs::directory_iterator(kSuite))
    if (fs::exists(e.path() / "model.onnx")) cases.push_back(e.path());
  std::sort(cases.begin(), cases.end());
  std::ofstream report;
  if (const char* path = std::getenv("NXRT_CUDA_CONFORMANCE_REPORT")) report.open(path);
  int ran = 0, passed = 0;
  for (const fs::path& dir : cases) {
    const std::string name = "node/" + dir.filename().string();
    const std::string result = run_case(dir);
    if (report.is_open()) report << name << '\t' << result << '\n';
    if (result.starts_with("skip")) continue;
    ++ran;
    passed += result == "pass";
    if (ratchet.contains(name)) {
      INFO(name << ": " << result);
      CHECK(result == "pass");
    } else if (result == "pass") {
      WARN(name << " passes now: add it to tests/conformance/cuda_on_host_passing.txt");
    }
  }
  WARN(fmt::format("cuda EP kernels on the host: {} of {} cases pass ({} in the ratchet)", passed, ran, ratchet.size()));
  CHECK(passed >= static_cast<int>(ratchet.size()));
}
#endif  // NXRT_HAVE_CUDA
