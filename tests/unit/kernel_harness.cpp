// The one-node harness: builds a Graph, places the node on the cpu EP, runs it.
#include "kernel_harness.h"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "builtin_eps.h"
#include "common/parallel_pool.h"
#include "common/subgraph.h"
#include "nxrt/ep/kernel_partition.h"
#include "nxrt/io/compare.h"

namespace nxrt::test {
namespace {

struct Built {
  Graph graph;
  Partition partition;
};

Built build(const NodeSpec& spec) {
  Built b;
  Graph& g = b.graph;
  g.opset_imports[spec.domain] = spec.opset;
  Node node;
  node.id = 0;
  node.name = spec.op_type + "_0";
  node.op_type = spec.op_type;
  node.domain = spec.domain;
  node.opset = spec.opset;
  node.attributes = spec.attrs;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i) {
    const Tensor& t = spec.inputs[i];
    if (!t.defined()) {
      node.inputs.push_back(kNoValue);
      continue;
    }
    ValueId v = g.intern_value(fmt::format("in{}", i));
    Value& val = g.value(v);
    val.type.dtype = t.dtype();
    std::vector<Dim> dims;
    for (int64_t d : t.shape()) dims.push_back(Dim{d, {}});
    val.type.shape = dims;
    const bool constant = i < spec.constant.size() && spec.constant[i];
    if (constant) {
      val.initializer = WeightHandle::resident(t);
    } else {
      val.is_graph_input = true;
      g.inputs.push_back(v);
      b.partition.inputs.push_back(v);
    }
    node.inputs.push_back(v);
  }
  for (std::size_t o = 0; o < spec.outputs; ++o) {
    ValueId v = g.intern_value(fmt::format("out{}", o));
    g.value(v).is_graph_output = true;
    if (o < spec.output_dtypes.size()) g.value(v).type.dtype = spec.output_dtypes[o];
    g.outputs.push_back(v);
    node.outputs.push_back(v);
    b.partition.outputs.push_back(v);
  }
  g.nodes.push_back(std::move(node));
  g.rebuild_links();
  b.partition.ep = "cpu";
  b.partition.name = "cpu_0";
  b.partition.nodes = {0};
  return b;
}

std::unique_ptr<ExecutionProvider> make_ep(std::string_view name, int threads) {
  if (ep_factories().empty()) register_builtin_eps();
  const EpFactory* factory = find_ep_factory(name);
  if (!factory) throw std::runtime_error(fmt::format("no EP named '{}' in this build", name));
  auto ep = factory->create(EpConfig{threads, {}, nullptr});
  if (!ep) throw std::runtime_error(ep.error().render());
  return std::move(*ep);
}

}  // namespace

KernelMatch claim_on_cpu(const NodeSpec& spec) { return claim_on("cpu", spec); }

Expected<std::vector<Tensor>> run_on_cpu(const NodeSpec& spec) { return run_on("cpu", spec); }

KernelMatch claim_on(std::string_view ep_name, const NodeSpec& spec) {
  Built b = build(spec);
  auto ep = make_ep(ep_name, 1);
  return ep->claim(NodeContext(b.graph, b.graph.nodes[0]));
}

void check_matches_cpu(std::string_view ep_name, const NodeSpec& spec, double rtol, double atol) {
  auto actual = run_on(ep_name, spec);
  INFO((actual ? std::string() : actual.error().render()));
  REQUIRE(actual);
  auto expected = run_on_cpu(spec);
  INFO((expected ? std::string() : expected.error().render()));
  REQUIRE(expected);
  REQUIRE(actual->size() == expected->size());
  for (std::size_t i = 0; i < actual->size(); ++i) {
    INFO(fmt::format("output {} of {} on {}", i, spec.op_type, ep_name));
    CHECK(test::compare_tensors((*actual)[i], (*expected)[i], rtol, atol) == "");
  }
}

Expected<std::vector<Tensor>> run_partition_with(const NodeSpec& spec, std::string_view ep_name,
                                                 const PartitionRunner& run) {
  Built b = build(spec);
  b.partition.graph = &b.graph;
  b.partition.ep = std::string(ep_name);
  b.partition.name = fmt::format("{}_0", ep_name);
  std::vector<Tensor> inputs;
  for (std::size_t i = 0; i < spec.inputs.size(); ++i)
    if (spec.inputs[i].defined() && !(i < spec.constant.size() && spec.constant[i])) inputs.push_back(spec.inputs[i]);
  return run(b.partition, inputs);
}

Tensor channels_last_bytes(const Tensor& t, bool back) {
  const Shape s = back ? cpu::channels_first_shape(t.shape()) : t.shape();
  const int64_t n = s[0], c = s[1], plane = s[2] * s[3];
  Tensor out = Tensor::empty(t.dtype(), back ? s : cpu::channels_last_shape(s));
  const auto* src = static_cast<const uint8_t*>(t.data());
  auto* dst = static_cast<uint8_t*>(out.mut_data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < plane; ++p) {
        const int64_t planar = (i * c + ch) * plane + p, last = (i * plane + p) * c + ch;
        if (back) {
          dst[planar] = src[last];
        } else {
          dst[last] = src[planar];
        }
      }
  return out;
}

Expected<std::vector<Tensor>> run_in_layout(const NodeSpec& spec, cpu::ChannelsLast layout, const KernelMaker& make) {
  return run_partition_with(spec, "cpu", [&](const Partition& p, const std::vector<Tensor>& inputs)
                                             -> Expected<std::vector<Tensor>> {
    const Node& node = p.graph->node(p.nodes.front());
    auto kernel = make(NodeContext(*p.graph, node));
    if (!kernel) return std::unexpected(kernel.error());
    std::vector<FusedStep> steps(1);
    steps[0].nodes = {node.id};
    steps[0].inputs = node.inputs;
    steps[0].outputs = node.outputs;
    steps[0].kernel = std::move(*kernel);
    auto kp = KernelPartition::build(p, cpu::cpu_kernel_registry(), "cpu", cpu::make_parallel_pool(2), {},
                                     std::move(steps));
    if (!kp) return std::unexpected(kp.error());
    const Tensor x = layout.x ? channels_last_bytes(inputs.at(0), false) : inputs.at(0);
    auto out = (*kp)->run(std::vector<RuntimeValue>{x});
    if (!out) return std::unexpected(out.error());
    const Tensor& y = out->at(0).tensor();
    return std::vector<Tensor>{layout.y ? channels_last_bytes(y, true) : y};
  });
}

Partition whole_graph(const Graph& graph, std::string ep) {
  Partition p;
  p.graph = &graph;
  p.name = ep + "_0";
  p.ep = std::move(ep);
  for (const Node& n : graph.nodes) p.nodes.push_back(n.id);
  p.inputs = graph.inputs;
  p.outputs = graph.outputs;
  return p;
}

Expected<std::vector<Tensor>> run_graph_on_cpu(const Graph& graph, const std::vector<Tensor>& inputs) {
  auto compiled = make_ep("cpu", 1)->compile(whole_graph(graph, "cpu"));
  if (!compiled) return std::unexpected(compiled.error());
  auto ran = (*compiled)->run(std::vector<RuntimeValue>(inputs.begin(), inputs.end()));
  if (!ran) return std::unexpected(ran.error());
  std::vector<Tensor> outputs;
  for (const RuntimeValue& v : *ran) outputs.push_back(v.tensor());
  return outputs;
}

Expected<std::vector<Tensor>> run_on(std::string_view ep_name, const NodeSpec& spec) {
  auto ep = make_ep(ep_name, spec.threads);
  return run_partition_with(spec, ep_name, [&](const Partition& p, const std::vector<Tensor>& inputs)
                                               -> Expected<std::vector<Tensor>> {
    KernelMatch m = ep->claim(NodeContext(*p.graph, p.graph->nodes[0]));
    if (!m) return fail(ErrorCode::kUnclaimed, "declined", m.reason());
    auto compiled = ep->compile(p);
    if (!compiled) return std::unexpected(compiled.error());
    auto outputs = (*compiled)->run(std::vector<RuntimeValue>(inputs.begin(), inputs.end()));
    if (!outputs) return std::unexpected(outputs.error());
    std::vector<Tensor> tensors;
    for (const RuntimeValue& v : *outputs) {
      if (!v.is_tensor())
        return fail(ErrorCode::kRuntime, fmt::format("the kernel returned a {} where a tensor was expected", v.describe()));
      tensors.push_back(v.tensor());
    }
    return tensors;
  });
}

std::string compare_tensors(const RuntimeValue& actual_value, const RuntimeValue& expected_value, double rtol,
                            double atol) {
  if (!actual_value.is_tensor() || !expected_value.is_tensor())
    return fmt::format("compared a {} with a {}; only tensors compare here", actual_value.describe(),
                       expected_value.describe());
  const Tensor& actual = actual_value.tensor();
  const Tensor& expected = expected_value.tensor();
  // The library's rule (float16/bfloat16, NaN, exact integers and strings included).
  const TensorDiff d = nxrt::compare_tensors(actual, expected, rtol, atol);
  if (d.ok) return {};
  if (!d.problem.empty()) return d.problem;
  return fmt::format("{} of {} elements differ; element {}: {} != expected {}", d.mismatches, d.elements,
                     d.first_mismatch, d.actual_at_first, d.expected_at_first);
}

void check_equal(const RuntimeValue& actual, const RuntimeValue& expected) {
  const std::string diff = compare_tensors(actual, expected);
  INFO(diff);
  CHECK(diff.empty());
}

Tensor run_one(const NodeSpec& spec) {
  auto r = run_on_cpu(spec);
  INFO((r ? std::string() : r.error().render()));
  REQUIRE(r);
  return (*r)[0];
}

Tensor bools(Shape shape, std::vector<uint8_t> values) {
  std::vector<std::byte> bytes;
  for (uint8_t b : values) bytes.push_back(static_cast<std::byte>(b != 0));
  return Tensor::from_bytes(DType::kBool, std::move(shape), bytes);
}

Tensor int64s(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return Tensor::from_vector<int64_t>({n}, values);
}

Tensor iota_float(Shape shape) {
  std::vector<float> v(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return Tensor::from_vector<float>(std::move(shape), v);
}

std::vector<float> random_floats(std::size_t n, unsigned seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Tensor random_tensor(Shape shape, unsigned seed, float lo, float hi) {
  const auto n = static_cast<std::size_t>(shape_numel(shape));
  return Tensor::from_vector<float>(std::move(shape), random_floats(n, seed, lo, hi));
}

AttributeMap attrs(std::vector<std::pair<std::string, Attribute::Value>> entries) {
  AttributeMap m;
  for (auto& [name, value] : entries) m.set(name, Attribute{std::move(value)});
  return m;
}

}  // namespace nxrt::test
