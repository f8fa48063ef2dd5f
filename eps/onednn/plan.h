// Plan: a partition compiled for one set of input shapes: oneDNN primitives (and a few of
// nxrt's own kernels) in order, their
// memory in one arena reused by lifetime, weights already in the primitives' layouts.
// The plan itself is read-only while it runs; each run in flight has its own arena.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "dnnl_util.h"
#include "native/native_kernel.h"
#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ep/provider.h"

namespace nxrt::onednn {

// The alignment, in bytes, of a run's arena and of every buffer placed in it (the tuning
// runs align their buffers alike).
inline constexpr std::size_t kArenaAlignment = 64;

// Bytes of one value (or of a weight, a workspace) during a run.
struct Buffer {
  enum class Kind { kArena, kWeight, kInput, kOutput, kSlice };
  Kind kind = Kind::kArena;
  std::size_t bytes = 0;
  int boundary_index = -1;                  // kInput / kOutput: position in the partition's boundary
  std::shared_ptr<FloatStorage> weight;  // kWeight: owned data
  std::size_t arena_offset = 0;             // kArena: placed by the planner
  int parent = -1;                          // kSlice: the buffer it is part of (a Concat's output)
  std::size_t slice_offset = 0;             // kSlice: bytes from the parent's start
};

// One buffer seen through one memory descriptor.
struct View {
  memory::desc md;
  int buffer = -1;
};

struct Step {
  dnnl::primitive primitive;                   // empty when `native` computes the step
  std::shared_ptr<const NativeKernel> native;  // nxrt's own kernel (native/), where oneDNN's is slow
  std::vector<std::pair<int, int>> args;  // (DNNL_ARG_*, view)
  StepProfile profile;                    // nodes, op, implementation; time of the last run
};

// A prepared weight (reordered, folded) by its key, for EPContext blobs.
struct PreparedWeight {
  memory::desc md;
  std::shared_ptr<FloatStorage> data;
};
using PreparedWeights = std::map<std::string, PreparedWeight>;
// Step key -> the oneDNN implementation chosen for it ("jit:avx2", "x64:gemm:jit").
using Implementations = std::map<std::string, std::string>;

class Plan {
 public:
  Plan(dnnl::engine engine, std::vector<Buffer> buffers, std::vector<View> views, std::vector<Step> steps,
       std::vector<Dims> output_dims, PreparedWeights weights, Implementations implementations,
       std::shared_ptr<BufferPool> outputs);

  ~Plan();
  // Safe to call from several threads at once; `profile` (step times) only from one.
  Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs, bool profile);
  const std::vector<Step>& steps() const { return steps_; }
  const PreparedWeights& weights() const { return weights_; }
  const Implementations& implementations() const { return implementations_; }

 private:
  dnnl::engine engine_;
  std::vector<Buffer> buffers_;
  std::vector<View> views_;
  std::vector<Step> steps_;
  std::vector<Dims> output_dims_;
  PreparedWeights weights_;
  Implementations implementations_;
  std::vector<std::pair<int, int>> input_views_, output_views_;  // (boundary index, view)

  // What one run writes: the arena (intermediates, scratchpads), memory objects bound to
  // it and to the run's inputs and outputs, and a stream. Kept for the next run.
  struct Execution;
  // The buffer a view is part of (through Concat slices) and the view's offset in it.
  std::pair<std::size_t, std::size_t> root_buffer(int view) const;
  std::unique_ptr<Execution> take_execution();
  Expected<std::vector<RuntimeValue>> run_on(Execution& e, std::span<const RuntimeValue> inputs, bool profile);
  void give_back(std::unique_ptr<Execution> execution);
  std::mutex idle_mutex_;
  std::vector<std::unique_ptr<Execution>> idle_;
  std::shared_ptr<BufferPool> outputs_;  // where the runs' output tensors come from
};

}  // namespace nxrt::onednn
