// PlanBuilder: what an op's lowering sees while a partition is compiled for concrete shapes:
// the values' dims and layouts, constants, weights prepared once, and the steps so far.
#pragma once

#include <functional>
#include <map>
#include <optional>

#include <fmt/format.h>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fusion.h"
#include "plan.h"

namespace nxrt::onednn {

// A weight in the layout its user gave it (before any reorder), from the model's constants.
struct PlainWeight {
  memory::desc md;
  Tensor data;  // f32, matching md
};

// Implementations chosen by timing, by problem (argument layouts and sizes): one EP times
// each distinct convolution once, however often a model repeats it.
class TuningCache {
 public:
  std::optional<std::string> find(const std::string& problem) const {
    std::lock_guard lock(mutex_);
    auto it = choices_.find(problem);
    if (it == choices_.end()) return std::nullopt;
    return it->second;
  }
  void remember(const std::string& problem, std::string implementation) {
    std::lock_guard lock(mutex_);
    choices_.emplace(problem, std::move(implementation));
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::string> choices_;
};

// oneDNN's implementations of a primitive, each once: those of `makers[0]` in oneDNN's order,
// then those of the alternatives (another algorithm for the same operation, e.g. Winograd),
// where oneDNN has any. A maker creates the descriptor at its first implementation.
// The descriptors are kept, so the one chosen is the one timed: a second walk would not name
// the same kernels (oneDNN's iterator answers a position from its primitive cache without
// advancing, so once a primitive of the problem exists, the walk repeats an implementation and
// every later position shifts).
template <class Pd>
std::vector<Pd> list_implementations(const std::vector<std::function<Pd()>>& makers) {
  std::vector<Pd> pds;
  std::set<std::string, std::less<>> seen;
  for (std::size_t m = 0; m < makers.size(); ++m) {
    std::optional<Pd> pd;
    try {
      pd = makers[m]();
    } catch (const dnnl::error&) {
      if (m == 0) throw;
      continue;  // oneDNN has no kernel of this alternative for the problem
    }
    do
      if (seen.insert(pd->impl_info_str()).second) pds.push_back(*pd);  // a copy keeps its implementation
    while (pd->next_impl());
  }
  return pds;
}

class PlanBuilder {
 public:
  // `input_dims`: the partition's boundary inputs, in Partition::inputs order. `restored`:
  // weights from an EPContext blob, used instead of preparing them again.
  PlanBuilder(dnnl::engine engine, const Partition& partition, std::span<const Dims> input_dims,
              const PreparedWeights* restored, const Implementations* restored_choices,
              std::shared_ptr<TuningCache> tuning_cache, std::function<bool(ValueId)> is_constant);

  const Graph& graph() const { return graph_; }
  const dnnl::engine& engine() const { return engine_; }
  NodeContext context(NodeId id) const { return NodeContext(graph_, graph_.node(id)); }

  // Dims of a value computed by an earlier step, a boundary input or a constant.
  Expected<Dims> dims(ValueId v) const;
  bool is_constant(ValueId v) const { return is_constant_(v); }
  // A constant initializer's data (f32 or any dtype), read from the model.
  Expected<Tensor> constant(ValueId v) const;

  // Layout of a computed or input value.
  memory::desc md(ValueId v) const;
  // A view of `v` in layout `want`: v itself, or a reordered copy made once (a run-time step
  // for computed values, a compile-time reorder for constants).
  Expected<int> use(ValueId v, const memory::desc& want);
  // A constant in layout `want`, prepared now: `make_plain` gives it in its user layout
  // (e.g. BatchNormalization folded in); restored from the blob when it holds `key`.
  // `sources` are the initializers it is made from (left out of the blob's model).
  Expected<int> weight(const std::string& key, const memory::desc& want, const std::vector<ValueId>& sources,
                       const std::function<Expected<PlainWeight>()>& make_plain);

  // Concatenation without a copy: when every input was computed by this plan, dies at this
  // step, and is laid out as a dense slice of `dst_md` at its offset along `axis`, the
  // inputs' buffers become parts of one buffer that holds `out`. Returns the output's view,
  // or nullopt when a copy is needed.
  std::optional<int> concat_in_place(ValueId out, std::span<const ValueId> inputs, int axis,
                                     const memory::desc& dst_md);
  // Gives `v` a new buffer in layout `md`; returns its view.
  int define(ValueId v, const memory::desc& md);
  // Gives `v` the buffer of view `reuse` (whose value is dead after this step): in-place.
  int define_in_place(ValueId v, const memory::desc& md, int reuse);
  // Whether no later step reads `v`, so that the buffer of `view` (one of v's views) may be
  // overwritten by this step.
  bool can_overwrite(ValueId v, int view) const;
  int buffer_of(int view) const { return views_[static_cast<std::size_t>(view)].buffer; }
  // Whether no later step reads `v` and its current buffer is the plan's own (so a step
  // may accumulate into it).
  bool is_last_use(ValueId v) const;
  // Another view of the buffer of `view`, through `md` (a strided or reshaped reading).
  int alias(int view, const memory::desc& md) { return new_view(md, buffer_of(view)); }

  // The implementation to use among those oneDNN offers for a primitive: the one an
  // EPContext blob recorded under `key`, else the fastest on this machine, timed on scratch
  // memory for `args` (oneDNN ranks its candidates by heuristics, not by measuring).
  // `makers` create the primitive descriptor of each algorithm to consider (the first one
  // must exist) from op descriptors that outlive this call (oneDNN's iterator keeps a
  // pointer to them). `src_now`: the layout the source has; a kernel reading another one
  // is timed with the reorder it needs.
  template <class Pd>
  Expected<Pd> tuned(const std::string& key, const std::vector<std::function<Pd()>>& makers,
                     const std::vector<int>& args, const memory::desc& src_now) {
    auto listed = dnnl_call(fmt::format("listing the implementations of '{}' on the onednn EP", key),
                            [&] { return list_implementations<Pd>(makers); });
    if (!listed) return std::unexpected(std::move(listed.error()));
    const std::vector<dnnl::primitive_desc> impls(listed->begin(), listed->end());
    auto index = dnnl_call(fmt::format("choosing the implementation of '{}' on the onednn EP", key),
                           [&] { return choose_implementation(key, impls, args, src_now); });
    if (!index) return std::unexpected(std::move(index.error()));
    return (*listed)[*index];
  }
  // A buffer that lives for one step only (scratchpads, temporaries).
  int scratch(const memory::desc& md);

  // Attributes every primitive is created with (user-managed scratchpad).
  static dnnl::primitive_attr base_attr();
  // Adds a step; its scratchpad (from `pd`) is placed in the arena.
  void add_step(dnnl::primitive primitive, const dnnl::primitive_desc_base& pd,
                std::vector<std::pair<int, int>> args, const FusedOp& op, std::string op_type = {});
  // Adds a step that nxrt's own `kernel` computes (it needs no scratchpad).
  void add_native_step(std::shared_ptr<const NativeKernel> kernel, std::vector<std::pair<int, int>> args,
                       const FusedOp& op);
  // Lowers the next fused op: the caller then calls the op's lowering.
  void begin(const FusedOp& op);

  // Every partition output exists: the plan, its arena placed by lifetime.
  Expected<std::unique_ptr<Plan>> finish(std::shared_ptr<BufferPool> outputs);
  // Initializers that only prepared weights read: the blob's model may leave them out.
  std::set<ValueId> packed_initializers() const;

  // Timing candidates at compile time (off: oneDNN's own first choice).
  void set_tuning(bool on) { tuning_ = on; }

 private:
  // Index into `impls` (oneDNN's implementations of one primitive, in its order).
  std::size_t choose_implementation(const std::string& key, const std::vector<dnnl::primitive_desc>& impls,
                                    const std::vector<int>& args, const memory::desc& src_now);
  std::size_t fastest(const std::vector<std::size_t>& candidates, const std::vector<dnnl::primitive_desc>& impls,
                      const std::vector<int>& args, const memory::desc& src_now) const;
  int new_buffer(Buffer::Kind kind, std::size_t bytes);
  int new_view(const memory::desc& md, int buffer);
  std::string step_label(const FusedOp& op) const;
  // A step's profile entry: its nodes (else the partition's name) and op (`op_type`, else the label).
  StepProfile step_profile(const FusedOp& op, std::string op_type) const;

  dnnl::engine engine_;
  const Partition& partition_;
  const Graph& graph_;
  const PreparedWeights* restored_;
  const Implementations* restored_choices_;
  Implementations choices_;
  std::shared_ptr<TuningCache> tuning_cache_;
  bool tuning_ = true;
  std::function<bool(ValueId)> is_constant_;

  std::vector<Buffer> buffers_;
  std::vector<View> views_;
  std::vector<Step> steps_;
  std::map<ValueId, int> view_of_;                                // current view of each value
  std::map<ValueId, Dims> dims_;
  std::map<std::pair<ValueId, std::string>, int> converted_;      // (value, layout) -> view
  std::map<ValueId, int> remaining_uses_;
  std::set<ValueId> boundary_outputs_;
  PreparedWeights prepared_;
  std::map<ValueId, std::set<NodeId>> weight_readers_;            // initializer -> nodes that packed it
  const FusedOp* current_ = nullptr;
};

// A stable text key of a memory descriptor (oneDNN 2.x descriptors are plain C structs).
std::string md_key(const memory::desc& md);

}  // namespace nxrt::onednn
