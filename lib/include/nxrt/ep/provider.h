// ExecutionProvider, EpInfo, EpConfig, Partition, CompiledPartition and the optional
// interfaces (ContextCapable) found with dynamic_cast.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/device.h"
#include "nxrt/ep/error.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/registry.h"
#include "nxrt/ir/graph.h"

namespace nxrt {

struct EpContext;

struct EpInfo {
  std::string name;      // "cpu", "onednn", "cuda", or a plugin's own
  std::string version;
  std::string vendor;
  DeviceId device;
  std::string device_name;  // "x86_64 (avx2, fma)"
  bool available = true;
  std::string unavailable_reason;
  std::vector<std::string> capabilities;     // "epcontext", "weight-paging"...
  std::vector<std::string> context_sources;  // EPContext `source` keys this EP accepts
  std::string library;           // the shared library a plugin EP came from; empty if built in
  uint32_t ort_api_version = 0;  // the ONNX Runtime API version a plugin EP asked for
};

class BufferPool;

struct EpConfig {
  int threads = 0;  // 0: one per core
  std::map<std::string, std::string> options;
  // Host memory for the tensors of runs, shared by the host EPs of one session (a block one
  // partition frees serves the next partition's output); null: each partition keeps its own.
  std::shared_ptr<BufferPool> host_buffers;
};

// A convex group of nodes of one graph placed on one EP (ARCHITECTURE.md §3.6).
struct Partition {
  const Graph* graph = nullptr;
  std::string ep;
  int index = 0;               // order among the session's partitions
  std::string name;            // "cpu_0"; the EPContext node's partition_name
  std::vector<NodeId> nodes;   // members in topological order
  // Consumed by a member, produced outside (first-use order); constant initializers are
  // not boundary values: the partition owns them (and an EPContext blob stores them).
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;  // produced by a member, used by a graph output or non-member
};

// One step of a compiled partition as a profile shows it: a kernel, or a fused group.
struct StepProfile {
  std::vector<std::string> nodes;  // node names; the step is named after the first
  std::string op_type;             // the first node's op ("Conv"), or the EP's own ("Reorder")
  std::string variant;             // the implementation that ran ("brg:avx512_core", "reference")
  double us = 0;                   // time of the last profiled run; 0 when not profiled
  double start_us = 0;             // its start in that run, µs on std::chrono::steady_clock
};

// A compiled partition: takes the boundary inputs (in Partition::inputs order) and
// produces the boundary outputs (in Partition::outputs order).
class CompiledPartition {
 public:
  virtual ~CompiledPartition() = default;
  virtual Expected<std::vector<RuntimeValue>> run(std::span<const RuntimeValue> inputs) = 0;
  // True when run() may be called from several threads at once (each call keeps its own
  // intermediate buffers); the session serializes runs of partitions that say false.
  virtual bool runs_concurrently() const { return false; }
  // True when run() also takes inputs in host memory and moves them to its device itself,
  // ordered with its own work (no wait), keeping them for steps that read small values on the
  // host: the session then hands host values over as they are instead of copying them first.
  virtual bool takes_host_inputs() const { return false; }
  // The session says, once after compiling, which outputs it will read on the host (graph
  // outputs and values that only host EPs read), in Partition::outputs order. A partition that
  // can may return those in host memory, copied before its run ends, saving the session a
  // separate wait per output.
  virtual void set_host_outputs(std::vector<bool> on_host) { (void)on_host; }
  // Turns per-step timing on for the following runs (it costs a clock read per step).
  // Profiling and profile() are for serial runs: concurrent runs would share the timings.
  virtual void set_profiling(bool on) { (void)on; }
  // The steps of the last run, in execution order, timed when profiling is on.
  virtual std::vector<StepProfile> profile() const { return {}; }
};

class ExecutionProvider {
 public:
  virtual ~ExecutionProvider() = default;
  virtual const EpInfo& info() const = 0;
  // This EP's verdict on one node; cheap and without side effects.
  virtual KernelMatch claim(const NodeContext& ctx) const = 0;
  virtual Expected<std::unique_ptr<CompiledPartition>> compile(const Partition& partition) = 0;
  // The ops this EP registers (for list-eps); empty for EPs without a kernel table.
  virtual std::vector<OpKey> registered_ops() const { return {}; }

  // Memory of the EP's device. Host EPs use host memory and need not override these.
  virtual Expected<Tensor> allocate(DType dtype, Shape shape);
  virtual Expected<void> copy(const TensorView& src, const TensorMut& dst);
  virtual Expected<void> sync() { return {}; }
};

// Optional: the EP can save a compiled partition as an EPContext payload and restore it.
class ContextCapable {
 public:
  virtual ~ContextCapable() = default;
  // Whether this partition becomes an EPContext node; false keeps its nodes as they are in the
  // written model (an ORT plugin EP's kernel-registry nodes, which ORT does not compile either).
  virtual bool saves_context(const Partition& partition, const CompiledPartition& compiled) const {
    (void)partition, (void)compiled;
    return true;
  }
  virtual Expected<EpContext> save_context(const Partition& partition,
                                           const CompiledPartition& compiled) = 0;
  // `partition` has the EPContext node as its only member; its boundary is the node's.
  virtual Expected<std::unique_ptr<CompiledPartition>> load_context(
      const EpContext& context, const Partition& partition) = 0;
  // "ep_compatibility_info.<ep>" metadata value: what blobs of this host depend on.
  virtual std::string compatibility_info() const = 0;
};

// Optional: the EP answers for a whole graph at once and names groups of nodes it runs
// together (ONNX Runtime plugin EPs' GetCapability). claim() must agree with the verdicts.
struct GraphClaims {
  std::vector<KernelMatch> verdicts;        // one per node of the graph, by NodeId
  std::vector<std::vector<NodeId>> groups;  // each compiled as one partition
};

class GraphClaimer {
 public:
  virtual ~GraphClaimer() = default;
  virtual Expected<GraphClaims> claim_graph(const Graph& graph) const = 0;
};

}  // namespace nxrt
