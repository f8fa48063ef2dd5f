// Session end to end on a tiny model file: outputs, defaults, input validation and concurrent runs.
#include <catch2/catch.hpp>

#include <thread>

#include "builtin_eps.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/session/session.h"

using namespace nxrt;
using namespace nxrt::test;
namespace ob = nxrt::test::onnx_build;
using Catch::Matchers::Contains;

namespace {

// y = Add(Neg(Relu(x)), bias): x is float[N,3]; bias is an input with an initializer default.
std::filesystem::path write_model(const TempDir& dir) {
  onnx::ModelProto m = ob::model(17);
  auto& g = *m.mutable_graph();
  ob::input(g, "x", {-1, 3});
  ob::input(g, "bias", {3});
  ob::initializer(g, "bias", {3}, {10, 20, 30});
  ob::node(g, "relu", "Relu", {"x"}, {"r"});
  ob::node(g, "neg", "Neg", {"r"}, {"n"});
  ob::node(g, "add", "Add", {"n", "bias"}, {"y"});
  ob::output(g, "y");
  const auto path = dir / "tiny.onnx";
  ob::save(m, path);
  return path;
}

std::unique_ptr<Session> open(const std::filesystem::path& path) {
  register_builtin_eps();
  SessionOptions options;
  options.eps = {"cpu"};
  options.config.threads = 1;
  auto s = Session::create(path, options);
  if (!s) throw std::runtime_error(s.error().render());
  return std::move(*s);
}

}  // namespace

TEST_CASE("a session runs a model file and returns its outputs by name", "[lib][session]") {
  TempDir dir;
  auto session = open(write_model(dir));
  REQUIRE(session->report().partitions.size() == 1);
  CHECK(session->report().partitions[0].ep == "cpu");
  auto required = session->required_inputs();
  REQUIRE(required.size() == 1);
  CHECK(required[0]->name == "x");

  const Tensor x = Tensor::from_vector<float>({2, 3}, {-1, 2, -3, 4, -5, 6});
  auto out = session->run({{"x", x}});
  REQUIRE(out);
  REQUIRE(out->size() == 1);
  REQUIRE(out->contains("y"));
  CHECK(compare_tensors(out->at("y"), Tensor::from_vector<float>({2, 3}, {10, 18, 30, 6, 20, 24})) == "");

  // The initializer default can be overridden, and a symbolic dim takes any size.
  auto overridden =
      session->run({{"x", Tensor::from_vector<float>({1, 3}, {1, 1, 1})}, {"bias", Tensor::from_vector<float>({3}, {0, 0, 0})}});
  REQUIRE(overridden);
  CHECK(compare_tensors(overridden->at("y"), Tensor::from_vector<float>({1, 3}, {-1, -1, -1})) == "");

  // Running again gives the same result.
  auto again = session->run({{"x", x}});
  REQUIRE(again);
  CHECK(compare_tensors(again->at("y"), out->at("y"), 0, 0) == "");
}

TEST_CASE("a session refuses missing, unknown, mistyped and misshapen inputs", "[lib][session]") {
  TempDir dir;
  auto session = open(write_model(dir));

  auto missing = session->run({});
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kUsage);
  CHECK(missing.error().what == "input 'x' (float[N,3]) was not given");

  auto unknown = session->run({{"x", Tensor::from_vector<float>({1, 3}, {0, 0, 0})},
                               {"z", Tensor::from_vector<float>({1}, {0})}});
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == ErrorCode::kUsage);
  CHECK(unknown.error().what == "'z' is not an input of the model");
  CHECK(unknown.error().how == "the inputs are: x, bias");

  auto dtype = session->run({{"x", Tensor::from_vector<double>({1, 3}, {0, 0, 0})}});
  REQUIRE_FALSE(dtype);
  CHECK(dtype.error().code == ErrorCode::kInvalidInput);
  CHECK(dtype.error().what == "input 'x' is double, the model expects float");

  auto dim = session->run({{"x", Tensor::from_vector<float>({1, 4}, {0, 0, 0, 0})}});
  REQUIRE_FALSE(dim);
  CHECK(dim.error().code == ErrorCode::kInvalidInput);
  CHECK(dim.error().what == "input 'x' has shape [1,4], the model expects float[N,3]");

  auto rank = session->run({{"x", Tensor::from_vector<float>({3}, {0, 0, 0})}});
  REQUIRE_FALSE(rank);
  CHECK(rank.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(rank.error().what, Contains("has shape [3]"));
}

TEST_CASE("Session::create reports an unknown EP and a bad model", "[lib][session]") {
  TempDir dir;
  const auto path = write_model(dir);
  register_builtin_eps();
  SessionOptions options;
  options.eps = {"cpu", "warp-drive"};
  auto unknown_ep = Session::create(path, options);
  REQUIRE_FALSE(unknown_ep);
  CHECK(unknown_ep.error().code == ErrorCode::kUsage);
  CHECK(unknown_ep.error().what == "unknown EP 'warp-drive'");
  CHECK_THAT(unknown_ep.error().why, Contains("cpu"));

  write_bytes(dir / "broken.onnx", "not a model");
  options.eps = {"cpu"};
  auto broken = Session::create(dir / "broken.onnx", options);
  REQUIRE_FALSE(broken);
  CHECK(broken.error().exit_code() == 3);
}

TEST_CASE("a session runs a file whose nodes are listed out of order", "[lib][session]") {
  // Shape inference must see the nodes in topological order, or b stays untyped and the
  // cpu EP declines Abs for an input of unknown type.
  TempDir dir;
  onnx::ModelProto m = ob::model(17);
  auto& g = *m.mutable_graph();
  ob::input(g, "x", {3});
  ob::node(g, "abs", "Abs", {"b"}, {"y"});
  ob::node(g, "neg", "Neg", {"a"}, {"b"});
  ob::node(g, "relu", "Relu", {"x"}, {"a"});
  ob::output(g, "y");
  ob::save(m, dir / "reversed.onnx");
  auto session = open(dir / "reversed.onnx");
  auto out = session->run({{"x", Tensor::from_vector<float>({3}, {-1, 2, -3})}});
  REQUIRE(out);
  CHECK(compare_tensors(out->at("y"), Tensor::from_vector<float>({3}, {0, 2, 0})) == "");
}

TEST_CASE("one session serves runs from several threads at once, each with its own result", "[lib][session]") {
  TempDir dir;
  auto session = open(write_model(dir));
  constexpr int kThreads = 4;
  constexpr int kRunsPerThread = 50;
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRunsPerThread && failures[t].empty(); ++i) {
        // Each thread its own input (and so its own expected output), a different batch size each run.
        const auto v = static_cast<float>(t * 100 + i);
        const int64_t n = 1 + (t + i) % 3;
        std::vector<float> x, y;
        for (int64_t r = 0; r < n; ++r)
          for (float c : {1.0f, 2.0f, 3.0f}) {
            x.push_back(v * c);
            y.push_back(-v * c + c * 10);  // relu(x) = x (v >= 0), then -x + bias
          }
        auto out = session->run({{"x", Tensor::from_vector<float>({n, 3}, x)}});
        if (!out) failures[t] = out.error().render();
        else failures[t] = compare_tensors(out->at("y"), Tensor::from_vector<float>({n, 3}, y));
      }
    });
  for (auto& th : threads) th.join();
  for (const auto& f : failures) CHECK(f == "");
}
