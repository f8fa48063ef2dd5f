// Runs a subgraph (If branches, Loop and Scan bodies, SequenceMap's body) with the CPU
// EP's kernels: the one place control-flow kernels turn a graph attribute into a runner.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "nxrt/ep/kernel.h"
#include "nxrt/ep/kernel_partition.h"

namespace nxrt::cpu {

// Every CPU kernel, registered once, for kernels that compile subgraphs at run time.
const OpRegistry& cpu_kernel_registry();

// The CPU EP's verdict on every node of `body` (subgraphs inside it included): supported
// when it claims them all, else the first decline, prefixed with `owner` ("If: then_branch").
KernelMatch check_subgraph(const Graph& body, std::string_view owner);

class SubgraphRunner {
 public:
  // The graph attribute `attribute` of the node `owner` (If's "then_branch", Loop's "body").
  // Outer-scope values come from the owner's implicit inputs (Node::implicit_inputs),
  // which its kernel context holds after the owner's own inputs.
  SubgraphRunner(const NodeContext& owner, const std::string& attribute);
  ~SubgraphRunner();

  // How many inputs the owning node has of its own, before its implicit inputs.
  std::size_t owner_inputs() const { return owner_inputs_; }
  const Graph& body() const { return *body_; }
  // Runs the body on its formal inputs (in body().inputs order) within the owner's kernel
  // context `ctx`. Returns the body's outputs in order.
  Expected<std::vector<RuntimeValue>> run(std::vector<RuntimeValue> formal, const KernelContext& ctx);

 private:
  Expected<void> build(const KernelContext& ctx);

  std::shared_ptr<const Graph> body_;
  std::size_t owner_inputs_;
  std::vector<ValueId> outer_values_;   // the body's outer-scope values
  std::vector<std::size_t> outer_index_;  // each one's position among the implicit inputs
  // Where each body output comes from: a node of the partition, one of its inputs passed
  // straight through, or an initializer returned as it is.
  struct OutputSource {
    enum class Kind { kNode, kInput, kConstant } kind;
    std::size_t index;  // into the partition's outputs, its inputs, or constants_
  };
  std::vector<OutputSource> output_sources_;
  std::vector<Tensor> constants_;
  Partition partition_;
  std::mutex build_mutex_;  // guards the build on first use; then the members above stay as built
  std::unique_ptr<KernelPartition> compiled_;
};

}  // namespace nxrt::cpu
