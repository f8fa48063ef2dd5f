// Runs one ONNX node on the CPU EP (or another built-in EP) from in-memory tensors: the unit tests' kernel harness.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/channels_last.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/provider.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ir/attribute.h"

namespace nxrt::test {

struct NodeSpec {
  // The {} initializers let designated initializers omit fields without
  // -Wmissing-field-initializers warnings.
  std::string op_type{};
  std::string domain{};               // "" for ai.onnx
  int64_t opset = 17;
  std::vector<Tensor> inputs{};       // an undefined Tensor marks an omitted optional input
  std::vector<bool> constant{};       // per input: feed it as an initializer (default: no)
  AttributeMap attrs{};
  std::size_t outputs = 1;
  std::vector<DType> output_dtypes{};  // the outputs' types as shape inference gives them (default: unknown)
  int threads = 2;
};

// The cpu EP's verdict on the node (input types and shapes taken from the tensors).
KernelMatch claim_on_cpu(const NodeSpec& spec);
// Claims, compiles and runs the node; the error carries the decline reason if any.
Expected<std::vector<Tensor>> run_on_cpu(const NodeSpec& spec);

// The same on any built-in EP by name ("cpu", "onednn").
KernelMatch claim_on(std::string_view ep, const NodeSpec& spec);
Expected<std::vector<Tensor>> run_on(std::string_view ep, const NodeSpec& spec);
// Builds the node's one-node graph and hands its partition (placed on `ep`) and the inputs
// that are not constants to `run`: for tests that run a partition their own way.
using PartitionRunner =
    std::function<Expected<std::vector<Tensor>>(const Partition& partition, const std::vector<Tensor>& inputs)>;
Expected<std::vector<Tensor>> run_partition_with(const NodeSpec& spec, std::string_view ep, const PartitionRunner& run);

// The bytes of an N x C x H x W tensor of one-byte elements stored channels-last (N x H x W x C),
// or, `back`, the reverse.
Tensor channels_last_bytes(const Tensor& t, bool back);
// Runs the node of `spec` on the cpu EP (two threads) with a kernel the EP builds itself, as its
// layout step does; X (input 0, the only one not constant) is given and Y (output 0) returned in
// ONNX's layout, stored channels-last in between as `layout` says.
using KernelMaker = std::function<Expected<std::unique_ptr<Kernel>>(const NodeContext&)>;
Expected<std::vector<Tensor>> run_in_layout(const NodeSpec& spec, cpu::ChannelsLast layout, const KernelMaker& make);

// Every node of `graph` as one partition placed on `ep`; its inputs and outputs are the graph's.
Partition whole_graph(const Graph& graph, std::string ep);
// Runs `graph` whole on the cpu EP.
Expected<std::vector<Tensor>> run_graph_on_cpu(const Graph& graph, const std::vector<Tensor>& inputs);
// Runs the node on `ep` and on the cpu EP (the reference) and checks every output agrees.
void check_matches_cpu(std::string_view ep, const NodeSpec& spec, double rtol = 1e-4, double atol = 1e-5);

// Elementwise comparison with |a-b| <= atol + rtol*|b|; exact for non-float types.
// Returns an empty string when equal, else a description of the first difference.
// Takes the values partitions and sessions return; both must hold tensors.
std::string compare_tensors(const RuntimeValue& actual, const RuntimeValue& expected, double rtol = 1e-5,
                            double atol = 1e-6);

// A Catch2 check that the two tensors agree under compare_tensors' defaults, reporting the
// first difference.
void check_equal(const RuntimeValue& actual, const RuntimeValue& expected);

// Runs a node that must succeed (the test fails with the rendered error otherwise) and
// returns its first output.
Tensor run_one(const NodeSpec& spec);
// A bool tensor of `shape` (each nonzero value is true).
Tensor bools(Shape shape, std::vector<uint8_t> values);
// A 1-D int64 tensor of the values (shapes, axes, indices).
Tensor int64s(std::vector<int64_t> values);
// A float tensor holding 0, 1, 2, ... in row-major order.
Tensor iota_float(Shape shape);
// n floats uniform in [lo, hi), reproducible from the seed.
std::vector<float> random_floats(std::size_t n, unsigned seed, float lo = -2, float hi = 2);
// A float tensor of `shape` holding random_floats(numel, seed, lo, hi).
Tensor random_tensor(Shape shape, unsigned seed, float lo = -2, float hi = 2);
// A tensor of integer type T of `shape`, every value of T equally likely, drawn from rng.
template <class T>
Tensor random_ints(Shape shape, std::mt19937& rng) {
  std::uniform_int_distribution<int> dist(std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
  std::vector<T> v(static_cast<std::size_t>(shape_numel(shape)));
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return Tensor::from_vector<T>(std::move(shape), std::move(v));
}

// Attribute construction shorthand: attrs({{"axis", 1}, {"perm", ints{0,2,1}}}).
using ints = std::vector<int64_t>;
using floats = std::vector<float>;
AttributeMap attrs(std::vector<std::pair<std::string, Attribute::Value>> entries);

}  // namespace nxrt::test
