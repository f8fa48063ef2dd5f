// The cuda EP's device path on the host stack (cuda_host_stack.h): the EP opens a device,
// compiles a partition, uploads its initializers, moves its inputs to the device, runs its
// steps (generated kernels, cuBLASLt, cuDNN) and hands back device tensors; it saves and
// reloads EPContext blobs; and it gives every byte of device memory back.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include <algorithm>

#include "builtin_eps.h"
#include "cuda/cuda_provider.h"
#include "cuda/gpu.h"
#include "cuda_host_libraries.h"
#include "cuda_host_stack.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/io/tensor_file.h"
#include "nxrt/model/partition_model.h"
#include "nxrt/session/epcontext_writer.h"
#include "nxrt/session/session.h"

using namespace nxrt;
using namespace nxrt::cuda;
using test::random_tensor;

namespace {

constexpr GpuArch kSm90{9, 0};

std::unique_ptr<ExecutionProvider> cuda_on_host_stack(EpConfig config = {}) {
  auto ep = CudaProvider::create(config, test::host_stack());
  INFO((ep ? std::string() : ep.error().render()));
  REQUIRE(ep);
  return std::move(*ep);
}

// Two branches with weights: x·W + b -> Relu -> Softmax and a Transpose of the Relu; and a
// Conv with bias -> Sigmoid -> GlobalAveragePool.
test::GraphBuilder model() {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {4, 8});
  b.input("img", DType::kFloat32, {1, 2, 5, 5});
  b.constant("w", random_tensor({8, 6}, 1));
  b.constant("b", random_tensor({6}, 2));
  b.constant("wc", random_tensor({3, 2, 3, 3}, 3));
  b.constant("bc", random_tensor({3}, 4));
  b.node("mm", "MatMul", {"x", "w"}, {"m"}, DType::kFloat32, {4, 6});
  b.node("add", "Add", {"m", "b"}, {"a"}, DType::kFloat32, {4, 6});
  b.node("relu", "Relu", {"a"}, {"r"}, DType::kFloat32, {4, 6});
  b.node("softmax", "Softmax", {"r"}, {"s"}, DType::kFloat32, {4, 6});
  b.node("transpose", "Transpose", {"r"}, {"t"}, DType::kFloat32, {6, 4});
  const NodeId conv = b.node("conv", "Conv", {"img", "wc", "bc"}, {"c"}, DType::kFloat32, {1, 3, 5, 5});
  b.graph.nodes[static_cast<std::size_t>(conv)].attributes = test::attrs({{"pads", std::vector<int64_t>{1, 1, 1, 1}}});
  b.node("sigmoid", "Sigmoid", {"c"}, {"sc"}, DType::kFloat32, {1, 3, 5, 5});
  b.node("gap", "GlobalAveragePool", {"sc"}, {"g"}, DType::kFloat32, {1, 3, 1, 1});
  b.output("s");
  b.output("t");
  b.output("g");
  b.finish();
  return b;
}

// Runs `compiled` on host inputs; the outputs come back on the device and are copied home.
std::vector<Tensor> run_to_host(ExecutionProvider& ep, CompiledPartition& compiled, const std::vector<Tensor>& inputs) {
  auto ran = compiled.run(std::vector<RuntimeValue>(inputs.begin(), inputs.end()));
  INFO((ran ? std::string() : ran.error().render()));
  REQUIRE(ran);
  std::vector<Tensor> host;
  for (const RuntimeValue& v : *ran) {
    const Tensor& t = v.tensor();
    CHECK(t.device() == DeviceId{DeviceType::kCuda, 0});
    Tensor h = Tensor::empty(t.dtype(), t.shape());
    REQUIRE(ep.copy(t.view(), h.mut()));
    host.push_back(std::move(h));
  }
  return host;
}

void check_same(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    INFO("output " << i);
    CHECK(test::compare_tensors(actual[i], expected[i], 1e-4, 1e-5) == "");
  }
}

// While it lives, the "cuda" EP factory makes the EP on the host stack (sessions create their
// EPs by name).
class CudaFactoryOnHostStack {
 public:
  CudaFactoryOnHostStack() {
    if (ep_factories().empty()) register_builtin_eps();
    saved_ = *find_ep_factory("cuda");
    register_ep_factory({"cuda", saved_.description, [](const EpConfig& config) { return CudaProvider::create(config, test::host_stack()); }});
  }
  ~CudaFactoryOnHostStack() { register_ep_factory(saved_); }

 private:
  EpFactory saved_;
};

// The graph as an ONNX file in `dir`, for sessions (which load models by path).
std::filesystem::path save_model(const Graph& graph, const test::TempDir& dir) {
  auto bytes = partition_to_onnx(test::whole_graph(graph, "cpu"));
  REQUIRE(bytes);
  const auto model = dir / "model.onnx";
  std::ofstream(model, std::ios::binary) << *bytes;
  return model;
}

std::map<std::string, Tensor> run_session(const std::filesystem::path& model, std::vector<std::string> eps, const Tensor& x) {
  SessionOptions options;
  options.eps = std::move(eps);
  auto session = Session::create(model, options);
  INFO((session ? std::string() : session.error().render()));
  REQUIRE(session);
  auto ran = (*session)->run({{"x", RuntimeValue(x)}});
  INFO((ran ? std::string() : ran.error().render()));
  REQUIRE(ran);
  std::map<std::string, Tensor> out;
  for (const auto& [name, value] : *ran) {
    CHECK(value.tensor().device().is_host());  // the session brings graph outputs home
    out.emplace(name, value.tensor());
  }
  return out;
}

}  // namespace

TEST_CASE("cuda EP on the host stack: a session hands values between cuda and cpu partitions, and its EPContext model runs",
          "[cuda]") {
  test::set_host_devices(1, kSm90);
  CudaFactoryOnHostStack on_host_stack;
  // x -> Relu -> Cast to double (cuda) -> Erf (cpu: the cuda EP runs Erf in float types only;
  // if it learns double, pick another node only the cpu EP runs) -> Cast to float -> Mul by
  // itself (cuda) -> y; the Relu's output is a graph output too.
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.node("relu", "Relu", {"x"}, {"r"}, DType::kFloat32, {2, 3});
  b.node("widen", "Cast", {"r"}, {"r64"}, DType::kFloat64, {2, 3});
  b.graph.nodes.back().attributes = test::attrs({{"to", int64_t{11}}});
  b.node("erf", "Erf", {"r64"}, {"e64"}, DType::kFloat64, {2, 3});
  b.node("narrow", "Cast", {"e64"}, {"q"}, DType::kFloat32, {2, 3});
  b.graph.nodes.back().attributes = test::attrs({{"to", int64_t{1}}});
  b.node("mul", "Mul", {"q", "q"}, {"y"}, DType::kFloat32, {2, 3});
  b.output("y");
  b.output("r");
  b.finish();
  const test::TempDir dir;
  const auto model = save_model(b.graph, dir);
  const Tensor x = Tensor::from_vector<float>({2, 3}, {-1.5f, 0.4f, 2.6f, 3.5f, -0.2f, 1.2f});
  const auto expected = run_session(model, {"cpu"}, x);

  SessionOptions options;
  options.eps = {"cuda", "cpu"};
  auto session = Session::create(model, options);
  REQUIRE(session);
  std::vector<std::string> placed;
  for (const Partition& p : (*session)->report().partitions) placed.push_back(p.ep);
  CHECK(placed == std::vector<std::string>{"cuda", "cpu", "cuda"});
  for (const auto& [name, t] : run_session(model, {"cuda", "cpu"}, x)) {
    INFO(name);
    CHECK(test::compare_tensors(t, expected.at(name), 0, 0) == "");
  }
  // compile-epcontext's model: each partition becomes an EPContext node (the cpu EP saves its
  // own too), which a new session restores (load_context) and runs.
  EpContextWriteOptions write;
  write.output = dir / "model_ctx.onnx";
  auto written = write_epcontext_model(**session, write);
  INFO((written ? std::string() : written.error().render()));
  REQUIRE(written);
  std::vector<std::string> saved_by;
  for (const WrittenContext& c : written->contexts) saved_by.push_back(c.ep);
  CHECK(saved_by == std::vector<std::string>{"cuda", "cpu", "cuda"});
  for (const auto& [name, t] : run_session(write.output, {"cuda", "cpu"}, x)) {
    INFO(name);
    CHECK(test::compare_tensors(t, expected.at(name), 0, 0) == "");
  }
}

TEST_CASE("cuda EP on the host stack: the bundled mlp and cnn give their expected outputs", "[cuda]") {
  test::set_host_devices(1, kSm90);
  CudaFactoryOnHostStack on_host_stack;
  for (const char* name : {"mlp", "cnn"}) {
    INFO(name);
    const std::filesystem::path dir = std::filesystem::path(NXRT_SOURCE_DIR) / "testdata" / name;
    SessionOptions options;
    options.eps = {"cuda", "cpu"};
    auto session = Session::create(dir / "model.onnx", options);
    INFO((session ? std::string() : session.error().render()));
    REQUIRE(session);
    CHECK((*session)->report().partitions.size() == 1);  // all on the cuda EP
    auto input = read_tensor_file(dir / "test_data_set_0/input_0.pb");
    auto expected = read_tensor_file(dir / "test_data_set_0/output_0.pb");
    REQUIRE(input);
    REQUIRE(expected);
    auto ran = (*session)->run({{(*session)->required_inputs().front()->name, RuntimeValue(*input)}});
    INFO((ran ? std::string() : ran.error().render()));
    REQUIRE(ran);
    CHECK(test::compare_tensors(ran->begin()->second.tensor(), *expected, 1e-4, 1e-5) == "");
  }
}

// Opt-in (the models are exported by scripts/export-bench-models.sh, not committed): each
// bench model in .cache/bench-models runs on --ep cuda,cpu on the host stack, agrees with the
// cpu EP, and the test prints how often a run waits for the stream.
TEST_CASE("cuda EP on the host stack: the bench models agree with the cpu EP", "[.cuda_bench_models]") {
  test::set_host_devices(1, kSm90);
  CudaFactoryOnHostStack on_host_stack;
  const std::filesystem::path dir = std::filesystem::path(NXRT_SOURCE_DIR) / ".cache" / "bench-models";
  if (!std::filesystem::exists(dir)) WARN("no bench models in " << dir << "; run scripts/export-bench-models.sh");
  for (const char* name : {"transformer_encoder_op13", "transformer_encoder_op17", "squeezenet1_1", "resnet18"}) {
    const auto model = dir / (std::string(name) + ".onnx");
    if (!std::filesystem::exists(model)) continue;
    INFO(name);
    SessionOptions options;
    options.eps = {"cpu"};
    auto on_cpu = Session::create(model, options);
    options.eps = {"cuda", "cpu"};
    auto on_cuda = Session::create(model, options);
    REQUIRE(on_cpu);
    INFO((on_cuda ? std::string() : on_cuda.error().render()));
    REQUIRE(on_cuda);
    const Value& input = *(*on_cpu)->required_inputs().front();
    const Tensor x = random_tensor(*input.type.static_shape(), 11);
    auto expected = (*on_cpu)->run({{input.name, RuntimeValue(x)}});
    REQUIRE(expected);
    (void)(*on_cuda)->run({{input.name, RuntimeValue(x)}});  // the first run uploads the weights
    const auto before = test::host_driver_counts();
    auto ran = (*on_cuda)->run({{input.name, RuntimeValue(x)}});
    const auto after = test::host_driver_counts();
    INFO((ran ? std::string() : ran.error().render()));
    REQUIRE(ran);
    for (const auto& [out, t] : *ran) CHECK(test::compare_tensors(t.tensor(), expected->at(out).tensor(), 1e-3, 1e-4) == "");
    WARN(name << ": " << (*on_cuda)->report().partitions.size() << " partition(s); a run waits for the stream "
              << after.synchronizations - before.synchronizations << " times and reads back "
              << after.downloads - before.downloads << " tensors");
  }
}

TEST_CASE("cuda EP on the host stack: a partition runs through the device path and frees its memory", "[cuda]") {
  test::set_host_devices(1, kSm90);
  const auto before = test::host_driver_counts();
  auto b = model();
  const std::vector<Tensor> inputs = {random_tensor({4, 8}, 5), random_tensor({1, 2, 5, 5}, 6)};
  auto expected = test::run_graph_on_cpu(b.graph, inputs);
  REQUIRE(expected);
  {
    auto ep = cuda_on_host_stack();
    CHECK(ep->info().available);
    CHECK(ep->info().device_name == "nxrt host stand-in (sm_90)");
    auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
    INFO((compiled ? std::string() : compiled.error().render()));
    REQUIRE(compiled);
    check_same(run_to_host(*ep, **compiled, inputs), *expected);
    // The second run reuses the first run's blocks: the pool allocates nothing new.
    const std::size_t allocations = test::host_driver_counts().allocations;
    check_same(run_to_host(*ep, **compiled, inputs), *expected);
    CHECK(test::host_driver_counts().allocations == allocations);
    CHECK(test::host_driver_counts().launches > before.launches);
    // Profiling names every step with what ran it.
    (*compiled)->set_profiling(true);
    (void)run_to_host(*ep, **compiled, inputs);
    std::vector<std::string> variants;
    for (const StepProfile& s : (*compiled)->profile()) variants.push_back(s.variant);
    CHECK(std::count(variants.begin(), variants.end(), "cublasLt") == 1);
    CHECK(std::count(variants.begin(), variants.end(), "cudnn") == 1);
  }
  // The partition, the pool and the context are gone: every block freed, every retain released.
  const auto after = test::host_driver_counts();
  CHECK(after.live_allocations == before.live_allocations);
  CHECK(after.context_retains == before.context_retains);
}

TEST_CASE("cuda EP on the host stack: the program's own CUDA context is current again after every call", "[cuda]") {
  // The host driver refuses every call made outside one of its devices' contexts, so each
  // step below also checks that the EP enters its context where it needs it.
  test::set_host_devices(1, kSm90);
  test::push_foreign_context();
  const uintptr_t own = test::current_context();
  auto b = model();
  const std::vector<Tensor> inputs = {random_tensor({4, 8}, 5), random_tensor({1, 2, 5, 5}, 6)};
  {
    auto ep = cuda_on_host_stack();
    CHECK(test::current_context() == own);
    auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
    REQUIRE(compiled);
    CHECK(test::current_context() == own);
    (void)run_to_host(*ep, **compiled, inputs);
    CHECK(test::current_context() == own);
    auto t = ep->allocate(DType::kFloat32, {3});
    REQUIRE(t);
    CHECK(ep->sync());
    CHECK(test::current_context() == own);
  }
  CHECK(test::current_context() == own);
  test::pop_context();
  CHECK(test::current_context() == 0);
}

// Two products of one shape (x·w1, then ·w2), one of another (·w3), and an RNN whose five time
// steps each multiply the hidden state by R.
test::GraphBuilder products_and_rnn() {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {4, 8});
  b.constant("w1", random_tensor({8, 8}, 1));
  b.constant("w2", random_tensor({8, 8}, 2));
  b.constant("w3", random_tensor({8, 6}, 3));
  b.node("mm1", "MatMul", {"x", "w1"}, {"m1"}, DType::kFloat32, {4, 8});
  b.node("mm2", "MatMul", {"m1", "w2"}, {"m2"}, DType::kFloat32, {4, 8});
  b.node("mm3", "MatMul", {"m2", "w3"}, {"y"}, DType::kFloat32, {4, 6});
  b.input("seq", DType::kFloat32, {5, 2, 4});
  b.constant("W", random_tensor({1, 3, 4}, 4));
  b.constant("R", random_tensor({1, 3, 3}, 5));
  const NodeId rnn = b.node("rnn", "RNN", {"seq", "W", "R"}, {"h"}, DType::kFloat32, {5, 1, 2, 3});
  b.graph.nodes[static_cast<std::size_t>(rnn)].attributes = test::attrs({{"hidden_size", int64_t{3}}});
  b.output("y");
  b.output("h");
  b.finish();
  return b;
}

TEST_CASE("cuda EP on the host stack: cuBLASLt is set up once per product shape", "[cuda]") {
  test::set_host_devices(1, kSm90);
  const test::GraphBuilder b = products_and_rnn();
  const std::vector<Tensor> inputs = {random_tensor({4, 8}, 6), random_tensor({5, 2, 4}, 7)};
  auto expected = test::run_graph_on_cpu(b.graph, inputs);
  REQUIRE(expected);
  const auto before = test::host_blas_counts();
  {
    auto ep = cuda_on_host_stack();
    auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
    INFO((compiled ? std::string() : compiled.error().render()));
    REQUIRE(compiled);
    check_same(run_to_host(*ep, **compiled, inputs), *expected);
    const auto first = test::host_blas_counts();
    // 3 MatMuls, the RNN's input product and its 5 steps.
    CHECK(first.matmuls - before.matmuls == 9);
    // The MatMuls ask twice (two shapes); the RNN's steps share their shape, so they ask once
    // per alignment of the hidden state they read.
    const std::size_t first_queries = first.heuristic_queries - before.heuristic_queries;
    CHECK(first_queries >= 4);
    CHECK(first_queries < 9);
    // Later runs only launch.
    check_same(run_to_host(*ep, **compiled, inputs), *expected);
    const auto second = test::host_blas_counts();
    CHECK(second.matmuls - first.matmuls == 9);
    CHECK(second.heuristic_queries == first.heuristic_queries);
  }
  // The device is closed: the descriptors of its plans are destroyed with it.
  CHECK(test::host_blas_counts().live_descriptors == before.live_descriptors);
}

// How often a run makes the host wait for the stream, and what it copies.
struct RunTraffic {
  std::size_t synchronizations, downloads, uploads;
};
RunTraffic traffic_of_run(CompiledPartition& compiled, const std::vector<Tensor>& inputs) {
  const auto before = test::host_driver_counts();
  auto ran = compiled.run(std::vector<RuntimeValue>(inputs.begin(), inputs.end()));
  INFO((ran ? std::string() : ran.error().render()));
  REQUIRE(ran);
  const auto after = test::host_driver_counts();
  return {after.synchronizations - before.synchronizations, after.downloads - before.downloads,
          after.uploads - before.uploads};
}

TEST_CASE("cuda EP on the host stack: a product cuBLASLt has no algorithm for runs on aligned copies", "[cuda]") {
  test::set_host_devices(1, kSm90);
  // The heuristic finds nothing for operands less than 16-byte aligned: the reverse direction
  // of this bidirectional RNN multiplies by R[1], 9 floats (36 bytes) into R.
  struct MinAlignment {
    MinAlignment() { test::set_host_blas_min_alignment(16); }
    ~MinAlignment() { test::set_host_blas_min_alignment(0); }
  } min_alignment;
  test::GraphBuilder b;
  b.input("seq", DType::kFloat32, {4, 2, 5});
  b.constant("W", random_tensor({2, 3, 5}, 8));
  b.constant("R", random_tensor({2, 3, 3}, 9));
  const NodeId rnn = b.node("rnn", "RNN", {"seq", "W", "R"}, {"y"}, DType::kFloat32, {4, 2, 2, 3});
  b.graph.nodes[static_cast<std::size_t>(rnn)].attributes =
      test::attrs({{"hidden_size", int64_t{3}}, {"direction", std::string("bidirectional")}});
  b.output("y");
  b.finish();
  const std::vector<Tensor> inputs = {random_tensor({4, 2, 5}, 10)};
  auto expected = test::run_graph_on_cpu(b.graph, inputs);
  REQUIRE(expected);
  auto ep = cuda_on_host_stack();
  auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
  REQUIRE(compiled);
  const auto before = test::host_driver_counts();
  check_same(run_to_host(*ep, **compiled, inputs), *expected);
  const auto first = test::host_driver_counts();
  CHECK(first.device_copies > before.device_copies);
  // "No algorithm" is remembered like a plan: the next run asks the heuristic nothing.
  const std::size_t queries = test::host_blas_counts().heuristic_queries;
  check_same(run_to_host(*ep, **compiled, inputs), *expected);
  CHECK(test::host_blas_counts().heuristic_queries == queries);
}

TEST_CASE("cuda EP on the host stack: steps read shapes from host copies, so a run waits for the stream once", "[cuda]") {
  test::set_host_devices(1, kSm90);
  // Shape(x) is computed on the host; Unsqueeze and Squeeze are views of it, so Reshape reads
  // their values without a read-back. Resize's scales are a small initializer, kept on the host
  // too. Only `computed`, a shape that a kernel (Add) writes on the device, is read back.
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 4});
  b.constant("flat", Tensor::from_vector<int64_t>({2}, {6, 4}));
  b.constant("axis0", Tensor::from_vector<int64_t>({1}, {0}));
  b.constant("zeros", Tensor::from_vector<int64_t>({3}, {0, 0, 0}));
  b.constant("scales", Tensor::from_vector<float>({3}, {1.f, 1.f, 2.f}));
  b.node("flatten", "Reshape", {"x", "flat"}, {"f"}, DType::kFloat32, {6, 4});
  b.node("shape", "Shape", {"x"}, {"s"}, DType::kInt64, {3});
  b.node("unsqueeze", "Unsqueeze", {"s", "axis0"}, {"su"}, DType::kInt64, {1, 3});
  b.node("squeeze", "Squeeze", {"su", "axis0"}, {"ss"}, DType::kInt64, {3});
  b.node("back", "Reshape", {"f", "ss"}, {"y"}, DType::kFloat32, {2, 3, 4});
  b.node("resize", "Resize", {"y", "", "scales"}, {"z"}, DType::kFloat32, {2, 3, 8});
  b.node("add", "Add", {"s", "zeros"}, {"computed"}, DType::kInt64, {3});
  b.node("again", "Reshape", {"f", "computed"}, {"w"}, DType::kFloat32, {2, 3, 4});
  b.output("z");
  b.output("w");
  b.finish();
  const std::vector<Tensor> inputs = {random_tensor({2, 3, 4}, 9)};
  auto expected = test::run_graph_on_cpu(b.graph, inputs);
  REQUIRE(expected);
  auto ep = cuda_on_host_stack();
  auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
  INFO((compiled ? std::string() : compiled.error().render()));
  REQUIRE(compiled);
  check_same(run_to_host(*ep, **compiled, inputs), *expected);  // the first run also uploads the initializers
  const RunTraffic second = traffic_of_run(**compiled, inputs);
  CHECK(second.downloads == 1);         // `computed`, for the last Reshape
  CHECK(second.synchronizations == 2);  // for that read-back, and at the end of the run
  CHECK(second.uploads == 2);           // x and Shape's output (Resize uploaded its table once)
  check_same(run_to_host(*ep, **compiled, inputs), *expected);
}

TEST_CASE("cuda EP on the host stack: a session run of a cuda partition waits for the stream once", "[cuda]") {
  test::set_host_devices(1, kSm90);
  CudaFactoryOnHostStack on_host_stack;
  // The shape comes from the host (a graph input here; a cpu partition's output goes the same
  // way): the partition uploads it on its stream and Reshape reads its host copy. The graph
  // output is downloaded on the stream too, so the run's final wait is its only one.
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 4});
  b.input("shape", DType::kInt64, {2});
  b.node("reshape", "Reshape", {"x", "shape"}, {"r"}, DType::kFloat32, {-1, -1});
  b.node("relu", "Relu", {"r"}, {"y"}, DType::kFloat32, {-1, -1});
  b.output("y");
  b.finish();
  const test::TempDir dir;
  const auto model = save_model(b.graph, dir);
  SessionOptions options;
  options.eps = {"cuda", "cpu"};
  auto session = Session::create(model, options);
  INFO((session ? std::string() : session.error().render()));
  REQUIRE(session);
  REQUIRE((*session)->report().partitions.size() == 1);
  const Tensor x = random_tensor({2, 3, 4}, 12);
  const std::map<std::string, RuntimeValue> inputs{{"x", RuntimeValue(x)},
                                                   {"shape", RuntimeValue(Tensor::from_vector<int64_t>({2}, {6, -1}))}};
  REQUIRE((*session)->run(inputs));  // the first run loads the module
  const auto before = test::host_driver_counts();
  auto ran = (*session)->run(inputs);
  const auto after = test::host_driver_counts();
  INFO((ran ? std::string() : ran.error().render()));
  REQUIRE(ran);
  CHECK(after.uploads - before.uploads == 2);                    // x and the shape, by the partition
  CHECK(after.downloads - before.downloads == 1);                // y, on the stream; no read-back of the shape
  CHECK(after.synchronizations - before.synchronizations == 1);  // the partition's end, which covers y's download
  const Tensor& y = ran->at("y").tensor();
  CHECK(y.shape() == Shape{6, 4});
  for (int64_t i = 0; i < y.numel(); ++i) CHECK(y.data_as<float>()[i] == std::max(x.data_as<float>()[i], 0.f));
}

TEST_CASE("cuda EP on the host stack: NonZero reads its mask back once and may find nothing", "[cuda]") {
  test::set_host_devices(1, kSm90);
  // A mask computed on the device (Greater), its NonZero, and a Gather of the found rows
  // through Compress-free indexing: x[nz[0]].
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {3, 4});
  b.constant("zero", Tensor::from_vector<float>({}, {0.f}));
  b.node("greater", "Greater", {"x", "zero"}, {"mask"}, DType::kBool, {3, 4});
  b.node("nonzero", "NonZero", {"mask"}, {"nz"}, DType::kInt64, {2, -1});
  b.output("nz");
  b.finish();
  auto ep = cuda_on_host_stack();
  auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
  INFO((compiled ? std::string() : compiled.error().render()));
  REQUIRE(compiled);
  for (float shift : {0.f, -10.f}) {  // -10: every element <= 0, nothing found
    INFO("shift " << shift);
    const Tensor x = random_tensor({3, 4}, 12);
    std::vector<float> values(x.data_as<float>(), x.data_as<float>() + 12);
    for (float& v : values) v += shift;
    const std::vector<Tensor> inputs = {Tensor::from_vector<float>({3, 4}, values)};
    auto expected = test::run_graph_on_cpu(b.graph, inputs);
    REQUIRE(expected);
    check_same(run_to_host(*ep, **compiled, inputs), *expected);
    if (shift < 0) CHECK(expected->front().shape() == Shape{2, 0});
    const RunTraffic traffic = traffic_of_run(**compiled, inputs);
    CHECK(traffic.downloads == 1);  // the mask
  }
}

TEST_CASE("cuda EP on the host stack: the host driver catches an upload whose source changes before the stream runs it",
          "[cuda]") {
  // The check the test above relies on: an enqueued upload's host buffer must stay unchanged
  // until cuStreamSynchronize, as it must on a GPU when the buffer is pinned.
  auto driver = test::host_stack().driver();
  REQUIRE(driver);
  const DriverApi& cu = (*driver)->api();
  CUcontext context = nullptr;
  REQUIRE(cu.primary_ctx_retain(&context, 0) == CUDA_SUCCESS);
  auto scope = ContextScope::enter(**driver, context, "cuda:0");
  REQUIRE(scope);
  CUdeviceptr block = 0;
  REQUIRE(cu.mem_alloc(&block, 16) == CUDA_SUCCESS);
  std::vector<int64_t> source = {1, 2};
  REQUIRE(cu.memcpy_htod_async(block, source.data(), 16, nullptr) == CUDA_SUCCESS);
  CHECK(cu.stream_synchronize(nullptr) == CUDA_SUCCESS);
  REQUIRE(cu.memcpy_htod_async(block, source.data(), 16, nullptr) == CUDA_SUCCESS);
  source[1] = 3;
  CHECK(cu.stream_synchronize(nullptr) == CUDA_ERROR_ILLEGAL_ADDRESS);
  CHECK(cu.stream_synchronize(nullptr) == CUDA_SUCCESS);  // reported once
  CHECK(cu.mem_free(block) == CUDA_SUCCESS);
  CHECK(cu.primary_ctx_release(0) == CUDA_SUCCESS);
}

TEST_CASE("cuda EP on the host stack: an EPContext blob reloads and runs; the device's architecture decides", "[cuda]") {
  test::set_host_devices(1, kSm90);
  auto b = model();
  const std::vector<Tensor> inputs = {random_tensor({4, 8}, 7), random_tensor({1, 2, 5, 5}, 8)};
  auto expected = test::run_graph_on_cpu(b.graph, inputs);
  REQUIRE(expected);
  const Partition partition = test::whole_graph(b.graph, "cuda");
  auto saver = cuda_on_host_stack();
  auto compiled = saver->compile(partition);
  REQUIRE(compiled);
  auto* capable = dynamic_cast<ContextCapable*>(saver.get());
  REQUIRE(capable);
  auto saved = capable->save_context(partition, **compiled);
  INFO((saved ? std::string() : saved.error().render()));
  REQUIRE(saved);
  CHECK(saved->hardware_architecture == "sm_90");

  SECTION("on the same architecture the cubin loads") {
    auto ep = cuda_on_host_stack();
    auto loaded = dynamic_cast<ContextCapable&>(*ep).load_context(*saved, partition);
    INFO((loaded ? std::string() : loaded.error().render()));
    REQUIRE(loaded);
    check_same(run_to_host(*ep, **loaded, inputs), *expected);
  }
  SECTION("on a newer architecture the PTX loads") {
    test::set_host_devices(1, {10, 0});
    auto ep = cuda_on_host_stack();
    auto loaded = dynamic_cast<ContextCapable&>(*ep).load_context(*saved, partition);
    INFO((loaded ? std::string() : loaded.error().render()));
    REQUIRE(loaded);
    check_same(run_to_host(*ep, **loaded, inputs), *expected);
  }
  SECTION("on an older architecture it is refused, naming both") {
    test::set_host_devices(1, {8, 0});
    auto ep = cuda_on_host_stack();
    auto loaded = dynamic_cast<ContextCapable&>(*ep).load_context(*saved, partition);
    REQUIRE_FALSE(loaded);
    CHECK_THAT(loaded.error().render(),
               Catch::Contains("compiled for sm_90, this GPU is sm_80 (nxrt host stand-in)"));
  }
  test::set_host_devices(1, kSm90);
}

TEST_CASE("cuda EP on the host stack: --device picks among the visible devices", "[cuda]") {
  test::set_host_devices(2, kSm90);
  EpConfig second;
  second.options[std::string(kDeviceOption)] = "1";
  auto ep = cuda_on_host_stack(second);
  CHECK(ep->info().available);
  CHECK(ep->info().device == DeviceId{DeviceType::kCuda, 1});
  auto b = model();
  auto compiled = ep->compile(test::whole_graph(b.graph, "cuda"));
  REQUIRE(compiled);
  const std::vector<RuntimeValue> inputs = {RuntimeValue(random_tensor({4, 8}, 9)), RuntimeValue(random_tensor({1, 2, 5, 5}, 10))};
  auto ran = (*compiled)->run(inputs);
  REQUIRE(ran);
  CHECK(ran->front().tensor().device() == DeviceId{DeviceType::kCuda, 1});

  EpConfig missing;
  missing.options[std::string(kDeviceOption)] = "2";
  auto absent = cuda_on_host_stack(missing);
  CHECK_FALSE(absent->info().available);
  CHECK(absent->info().unavailable_reason == "no CUDA device 2: 2 devices are visible");
  test::set_host_devices(1, kSm90);
}

TEST_CASE("cuda EP on the host stack: without cuDNN, Conv declines with the loader's reason; other nodes stay claimed",
          "[cuda]") {
  CudaStack no_cudnn = test::host_stack();
  no_cudnn.dnn = []() -> Expected<std::shared_ptr<const DnnApi>> {
    return fail(ErrorCode::kRuntime, "cannot load libcudnn.so.9 (cuDNN)",
                "libcudnn.so.9: cannot open shared object file", "install cuDNN");
  };
  auto ep = CudaProvider::create({}, no_cudnn);
  REQUIRE(ep);
  auto b = model();
  auto verdict = [&](const ExecutionProvider& provider, const std::string& name) {
    const KernelMatch m = provider.claim(NodeContext(b.graph, b.graph.node(*b.graph.find_node(name))));
    return m ? std::string("claimed") : m.reason();
  };
  CHECK(verdict(**ep, "conv") ==
        "Conv: the cuda EP runs it on cuDNN, which is not usable here (cannot load libcudnn.so.9 (cuDNN): "
        "libcudnn.so.9: cannot open shared object file); install cuDNN");
  for (const char* other : {"mm", "add", "relu", "softmax", "transpose", "sigmoid", "gap"})
    CHECK(verdict(**ep, other) == "claimed");
  // Compiling for another architecture does not ask: the deployment machine's cuDNN runs it.
  EpConfig sm80;
  sm80.options[std::string(kTargetArchOption)] = "sm_80";
  auto for_sm80 = CudaProvider::create(sm80, no_cudnn);
  REQUIRE(for_sm80);
  CHECK(verdict(**for_sm80, "conv") == "claimed");
}

#endif  // NXRT_HAVE_CUDA
