// KernelPartition with the real cpu EP: results, buffer release and reuse across runs, and which
// runs hold the pool's threads.
#include <catch2/catch.hpp>

#include <algorithm>

#include "cpu/cpu_provider.h"
#include "kernel_harness.h"
#include "lib_test_util.h"
#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/session/claims.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

std::unique_ptr<ExecutionProvider> make_cpu() {
  auto ep = cpu::CpuProvider::create(EpConfig{1, {}, nullptr});
  if (!ep) throw std::runtime_error(ep.error().render());
  return std::move(*ep);
}

// x -> Relu -> a -> Neg -> b -> Abs -> c; `a_is_output` also makes a a boundary output.
struct Chain {
  explicit Chain(bool a_is_output) {
    b.input("x");
    b.node("relu", "Relu", {"x"}, {"a"});
    b.node("neg", "Neg", {"a"}, {"b"});
    b.node("abs", "Abs", {"b"}, {"c"});
    if (a_is_output) b.output("a");
    b.output("c");
    b.finish();
    partition.graph = &b.graph;
    partition.ep = "cpu";
    partition.name = "cpu_0";
    partition.nodes = {0, 1, 2};
    compute_boundary(b.graph, partition);
  }
  GraphBuilder b;
  Partition partition;
};

bool contains(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

TEST_CASE("KernelPartition runs a chain of cpu kernels", "[lib][kernel_partition]") {
  auto ep = make_cpu();
  const auto& cpu = static_cast<const cpu::CpuProvider&>(*ep);
  Chain chain(false);
  REQUIRE(chain.partition.outputs.size() == 1);
  auto kp = KernelPartition::build(chain.partition, cpu.registry(), "cpu", std::make_shared<SerialParallel>());
  REQUIRE(kp);
  const Tensor x = Tensor::from_vector<float>({4}, {-2, -0.5f, 0, 3});
  auto out = (*kp)->run(std::vector<RuntimeValue>{x});
  REQUIRE(out);
  REQUIRE(out->size() == 1);
  // |-(relu(x))| == relu(x)
  CHECK(compare_tensors((*out)[0], Tensor::from_vector<float>({4}, {0, 0, 0, 3})) == "");
  const auto steps = (*kp)->profile();
  CHECK(steps.size() == 3);
  CHECK(steps[0].nodes == std::vector<std::string>{"relu"});
  CHECK(steps[0].op_type == "Relu");
  CHECK(steps[0].us == 0.0);  // not profiled
  (*kp)->set_profiling(true);
  REQUIRE((*kp)->run(std::vector<RuntimeValue>{x}));
  double total = 0;
  for (const StepProfile& p : (*kp)->profile()) total += p.us;
  CHECK(total > 0.0);

  auto wrong = (*kp)->run(std::vector<RuntimeValue>{});
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().what == "partition expects 1 inputs, got 0");
}

TEST_CASE("KernelPartition releases intermediates after their last reader, never its outputs",
          "[lib][kernel_partition]") {
  auto ep = make_cpu();
  const auto& cpu = static_cast<const cpu::CpuProvider&>(*ep);
  Chain chain(true);  // a is both read by Neg and a boundary output
  REQUIRE(chain.partition.outputs.size() == 2);
  auto kp = KernelPartition::build(chain.partition, cpu.registry(), "cpu", std::make_shared<SerialParallel>());
  REQUIRE(kp);
  const auto& steps = (*kp)->steps();
  REQUIRE(steps.size() == 3);
  const int slot_a = steps[0].outputs[0];
  const int slot_b = steps[1].outputs[0];
  const int slot_c = steps[2].outputs[0];
  CHECK(steps[1].inputs[0] == slot_a);
  CHECK(steps[2].inputs[0] == slot_b);
  // b is an intermediate: dropped right after Abs, its only reader.
  CHECK(contains(steps[2].release, slot_b));
  // a and c are outputs: nobody releases them.
  for (const auto& s : steps) {
    CHECK_FALSE(contains(s.release, slot_a));
    CHECK_FALSE(contains(s.release, slot_c));
  }

  const Tensor x1 = Tensor::from_vector<float>({4}, {-1, 2, -3, 4});
  const Tensor x2 = Tensor::from_vector<float>({4}, {5, -6, 7, -8});
  auto first = (*kp)->run(std::vector<RuntimeValue>{x1});
  REQUIRE(first);
  const std::vector<RuntimeValue> kept = *first;
  auto again = (*kp)->run(std::vector<RuntimeValue>{x1});
  REQUIRE(again);
  auto second = (*kp)->run(std::vector<RuntimeValue>{x2});
  REQUIRE(second);
  // Identical results for identical inputs...
  CHECK(compare_tensors((*again)[0], kept[0]) == "");
  CHECK(compare_tensors((*again)[1], kept[1]) == "");
  // ...and outputs the caller still holds are never reused for later runs.
  CHECK(compare_tensors(kept[0], Tensor::from_vector<float>({4}, {0, 2, 0, 4})) == "");
  CHECK(compare_tensors(kept[1], Tensor::from_vector<float>({4}, {0, 2, 0, 4})) == "");
  CHECK(compare_tensors((*second)[0], Tensor::from_vector<float>({4}, {5, 0, 7, 0})) == "");
  CHECK(compare_tensors((*second)[1], Tensor::from_vector<float>({4}, {5, 0, 7, 0})) == "");
  CHECK((*second)[0].tensor().storage() != kept[0].tensor().storage());
  CHECK((*second)[1].tensor().storage() != kept[1].tensor().storage());
  CHECK((*first)[0].tensor().view().data() != (*first)[1].tensor().view().data());
  // The outputs are owned by the caller alone: the partition kept no reference.
  CHECK(kept[1].tensor().storage().use_count() == 2);  // `kept` and `*first`
}

TEST_CASE("KernelPartition::build fails for a node the registry declines", "[lib][kernel_partition]") {
  auto ep = make_cpu();
  const auto& cpu = static_cast<const cpu::CpuProvider&>(*ep);
  GraphBuilder b;
  b.input("x", DType::kInt32);
  b.node("sin", "Sin", {"x"}, {"y"}, DType::kInt32);
  b.output("y");
  b.finish();
  Partition p;
  p.graph = &b.graph;
  p.ep = "cpu";
  p.name = "cpu_0";
  p.nodes = {0};
  compute_boundary(b.graph, p);
  auto kp = KernelPartition::build(p, cpu.registry(), "cpu", std::make_shared<SerialParallel>());
  REQUIRE_FALSE(kp);
  CHECK(kp.error().code == ErrorCode::kUnclaimed);
  CHECK(kp.error().what == "the cpu EP cannot build a kernel for 'sin' (ai.onnx::Sin, opset 17)");
  CHECK(kp.error().why == "Sin: input 0 has type int32; the cpu EP supports float, double, float16 for Sin");
}

namespace {

// A pool that runs every chunk inline, reports each for_range call as a parallel loop while
// `counting`, and counts the runs that held its threads.
class CountingPool final : public Parallel {
 public:
  int threads() const override { return 2; }
  void for_range(int64_t n, int64_t, const std::function<void(int64_t, int64_t)>& fn) const override {
    if (counting) ++loops;
    if (n > 0) fn(0, n);
  }
  void hold_threads(const std::function<void()>& body) const override {
    ++holds;
    body();
  }
  int64_t parallel_loops() const override { return loops; }

  bool counting = false;
  mutable int64_t loops = 0, holds = 0;
};

}  // namespace

TEST_CASE("KernelPartition holds the pool's threads where the last run had two parallel loops or more",
          "[lib][kernel_partition][parallel]") {
  auto ep = make_cpu();
  const auto& cpu = static_cast<const cpu::CpuProvider&>(*ep);
  Chain chain(false);
  const auto pool = std::make_shared<CountingPool>();
  auto kp = KernelPartition::build(chain.partition, cpu.registry(), "cpu", pool);
  REQUIRE(kp);
  const Tensor x = Tensor::from_vector<float>({4}, {-2, -0.5f, 0, 3});
  const auto run = [&] { REQUIRE((*kp)->run(std::vector<RuntimeValue>{x})); };
  run();  // the first run holds them
  CHECK(pool->holds == 1);
  run();  // no parallel loop in the first: not held
  CHECK(pool->holds == 1);
  pool->counting = true;
  run();  // still not held, but Relu, Neg and Abs each ran a loop
  CHECK(pool->holds == 1);
  REQUIRE(pool->loops == 3);
  run();
  CHECK(pool->holds == 2);
}

TEST_CASE("The cpu EP's partitions take their tensors from EpConfig::host_buffers", "[lib][kernel_partition]") {
  // Two partitions of one Relu each (x -> y, then y -> z), as a session would have around another EP's.
  GraphBuilder b;
  b.input("x", DType::kFloat32, {4096});
  b.node("first", "Relu", {"x"}, {"y"}, DType::kFloat32, {4096});
  b.node("second", "Relu", {"y"}, {"z"}, DType::kFloat32, {4096});
  b.output("z");
  b.finish();
  auto partition = [&](NodeId node, std::string name) {
    Partition p;
    p.graph = &b.graph;
    p.ep = "cpu";
    p.name = std::move(name);
    p.nodes = {node};
    compute_boundary(b.graph, p);
    return p;
  };
  const Partition first = partition(0, "cpu_0"), second = partition(1, "cpu_1");
  auto shared = std::make_shared<BufferPool>();
  auto ep = cpu::CpuProvider::create(EpConfig{1, {}, shared});
  REQUIRE(ep);
  auto run_first = (*ep)->compile(first);
  auto run_second = (*ep)->compile(second);
  REQUIRE(run_first);
  REQUIRE(run_second);
  const Tensor x = Tensor::from_vector<float>({4096}, std::vector<float>(4096, -1.f));
  auto y = (*run_first)->run(std::vector<RuntimeValue>{x});
  REQUIRE(y);
  const void* block = (*y)[0].tensor().data();
  auto z = (*run_second)->run(*y);  // y read: z cannot have its block
  REQUIRE(z);
  CHECK((*z)[0].tensor().data() != block);
  y->clear();  // y's block goes back to the shared pool ...
  const std::vector<float> elsewhere(4096, 1.f);  // (where malloc would have handed it to this vector)
  auto again = (*run_second)->run(std::vector<RuntimeValue>{x});
  REQUIRE(again);
  CHECK((*again)[0].tensor().data() == block);  // ... and serves the other partition's output
  CHECK(compare_tensors((*again)[0], Tensor::from_vector<float>({4096}, std::vector<float>(4096, 0.f))) == "");
}
