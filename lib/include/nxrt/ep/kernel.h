// Kernel and its run context, KernelMatch (a claim's verdict), Cost, and what a claim sees.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/error.h"
#include "nxrt/ep/runtime_value.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/ep/weight.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

// Structural cost of running a node; never invented. time_us stays empty until measured.
struct Cost {
  double flops = 0;
  double bytes_moved = 0;
  std::optional<double> time_us;
};

// One EP's verdict on one node: supported with a cost, or declined with a reason.
class KernelMatch {
 public:
  static KernelMatch supported(Cost cost = {});
  // The reason is mandatory: an empty one is replaced by a text that flags the EP's bug.
  static KernelMatch declined(std::string reason);

  bool is_supported() const { return supported_; }
  explicit operator bool() const { return supported_; }
  const Cost& cost() const { return cost_; }
  const std::string& reason() const { return reason_; }

 private:
  bool supported_ = false;
  Cost cost_;
  std::string reason_;
};

// What a claim and a kernel factory see of one node: attributes, opset, input and output
// types (shapes may be symbolic) and which inputs are constant initializers.
class NodeContext {
 public:
  NodeContext(const Graph& graph, const Node& node) : graph_(graph), node_(node) {}

  const Graph& graph() const { return graph_; }
  const Node& node() const { return node_; }
  const AttributeMap& attrs() const { return node_.attributes; }
  int64_t opset() const { return node_.opset; }

  std::size_t input_count() const { return node_.inputs.size(); }
  std::size_t output_count() const { return node_.outputs.size(); }
  bool has_input(std::size_t i) const;
  bool has_output(std::size_t i) const;
  // Type of input i; nullptr when the input is absent.
  const ValueType* input_type(std::size_t i) const;
  const ValueType* output_type(std::size_t i) const;
  DType input_dtype(std::size_t i) const;  // kUndefined when absent or unknown
  // Rank of input i when known statically.
  std::optional<int64_t> input_rank(std::size_t i) const;
  std::optional<Shape> input_static_shape(std::size_t i) const;
  // The initializer feeding input i, or nullptr when the input is computed at run time.
  const WeightHandle* constant_input(std::size_t i) const;
  // The values of input i, widened to int64, when it is an integer constant; nullopt otherwise.
  std::optional<std::vector<int64_t>> constant_ints(std::size_t i) const;

  // Pre-packed state saved by Kernel::save_packed() (restored from an EPContext blob);
  // empty when the kernel must pack its weights itself.
  std::span<const std::byte> packed_state() const { return packed_; }
  void set_packed_state(std::span<const std::byte> packed) { packed_ = packed; }

 private:
  const Graph& graph_;
  const Node& node_;
  std::span<const std::byte> packed_;
};

// Parallel loops, supplied by the EP that runs the kernel (honours --threads).
class Parallel {
 public:
  virtual ~Parallel() = default;
  virtual int threads() const = 0;
  // Calls fn(begin, end) over [0, n) in chunks of at least `grain` items, possibly
  // concurrently; returns when every chunk has run.
  virtual void for_range(int64_t n, int64_t grain,
                         const std::function<void(int64_t, int64_t)>& fn) const = 0;
  // Runs body on the calling thread while the pool's threads wait for its for_range calls,
  // where a pool whose threads take long to start (OpenMP's) starts them once for the body
  // instead of once per call. Plain pools just run body.
  virtual void hold_threads(const std::function<void()>& body) const { body(); }
  // How many for_range calls made on the calling thread so far ran on several threads (for a
  // caller to tell whether holding the threads pays); 0 where the pool does not count them.
  virtual int64_t parallel_loops() const { return 0; }
};

// Runs every chunk inline; for tests and single-threaded use.
class SerialParallel final : public Parallel {
 public:
  int threads() const override { return 1; }
  void for_range(int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)>& fn) const override;
};

// What a kernel sees while running: its inputs and a way to get its outputs.
// Inputs are the node's own, then its implicit inputs (Node::implicit_inputs).
class KernelContext {
 public:
  virtual ~KernelContext() = default;
  virtual std::size_t input_count() const = 0;
  // True when input i was given (optional inputs may be omitted).
  virtual bool has_input(std::size_t i) const = 0;
  // Input i of any kind (tensor, sequence, empty optional); kNone when omitted.
  virtual const RuntimeValue& value(std::size_t i) const = 0;
  // Input i as a tensor; only for inputs the claim checked to be tensors.
  const Tensor& input(std::size_t i) const { return value(i).tensor(); }
  virtual std::size_t output_count() const = 0;
  // False when the model does not use output i (optional outputs).
  virtual bool wants_output(std::size_t i) const = 0;
  // Allocates output i (from the executor's pool; contents undefined, not zeroed).
  virtual Expected<Tensor> output(std::size_t i, DType dtype, Shape shape) = 0;
  // Output i is `value` itself: a view of an input without a copy, a sequence, a none.
  virtual void set_output_value(std::size_t i, RuntimeValue value) = 0;
  void set_output(std::size_t i, Tensor tensor) { set_output_value(i, std::move(tensor)); }
  virtual const Parallel& parallel() const = 0;
  // The same Parallel, shared, for kernels that build nested runners (If, Loop, Scan).
  virtual std::shared_ptr<const Parallel> shared_parallel() const = 0;
};

// Input i's shape, or null when it is not given, from any context with has_input(i) and input(i)
// (the cpu EP's KernelContext, the cuda EP's StepContext): what the run plans take for optional
// inputs.
template <class Context>
const Shape* given_shape(const Context& ctx, std::size_t i) {
  return ctx.has_input(i) ? &ctx.input(i).shape() : nullptr;
}

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Computes the outputs. Attributes and constant weights were validated and packed at
  // creation; only what depends on input values can fail here.
  virtual Expected<void> compute(KernelContext& ctx) = 0;
  // Names the implementation that ran ("gemm-packed-avx2", "reference"), for profiles.
  virtual std::string_view variant() const { return "reference"; }
  // Pre-packed constant state worth storing in an EPContext blob; empty when none.
  virtual std::vector<std::byte> save_packed() const { return {}; }
};

}  // namespace nxrt
