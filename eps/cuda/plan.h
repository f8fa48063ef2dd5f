// A partition's plan: steps in execution order (fused elementwise chains, library calls,
// generated kernels, views) and the CUDA C of the one module that holds its kernels.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nxrt/ep/mx_float.h"
#include "nxrt/ep/provider.h"

namespace nxrt::cuda {

class StepContext;
struct OpTable;

// One step. Its inputs and outputs are values of the partition's graph (kNoValue: omitted).
class Step {
 public:
  virtual ~Step() = default;
  // Runs on the partition's stream; checks only what depends on run-time shapes.
  virtual Expected<void> run(StepContext& ctx) const = 0;
  // The implementation, for profiles: "nvrtc:chain_3", "cublasLt", "cudnn", "view".
  virtual std::string variant() const = 0;

  std::vector<const Node*> nodes;  // the step is named after the first
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
};

// A step that runs `fn`, with the node's own inputs and outputs.
using RunFn = std::function<Expected<void>(StepContext&)>;
std::unique_ptr<Step> make_step(const Node& node, std::string variant, RunFn fn);

// Collects steps and the generated CUDA C while a partition is planned.
class PlanBuilder {
 public:
  explicit PlanBuilder(const Graph& graph) : graph_(graph) {}
  const Graph& graph() const { return graph_; }

  // "chain_3": a kernel name no other function of the module has.
  std::string unique_name(std::string_view stem);
  // Appends CUDA C (an extern "C" __global__ function named by unique_name()) to the module.
  void add_code(std::string code) { code_ += std::move(code); }
  // An extern "C" wrapper of a library template (kernel_library.cpp) for these template
  // arguments, emitted once per distinct instantiation; returns the wrapper's name.
  // `params` is the parameter list, `args` the forwarded argument names.
  std::string instantiate(std::string_view tmpl, std::string_view targs, std::string_view params,
                          std::string_view args);
  void add_step(std::unique_ptr<Step> step) { steps_.push_back(std::move(step)); }

  std::vector<std::unique_ptr<Step>> take_steps() { return std::move(steps_); }
  std::string source() const;  // the prelude and every generated function

 private:
  const Graph& graph_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::string code_;
  std::map<std::string, std::string> instances_;  // "softmax<float>" -> wrapper name
  int counter_ = 0;
};

struct Plan {
  std::vector<std::unique_ptr<Step>> steps;
  std::string source;  // CUDA C of the module (deterministic: same partition, same text)
};

// Plans the partition's nodes (every one was claimed by the cuda EP's checks): elementwise
// chains fused, every other node built by its family.
Expected<Plan> build_plan(const Partition& partition, const OpTable& ops);

// CUDA C names of the element types kernels use: "float", "h16", and by size for data movement.
std::string_view float_type(DType t);               // f32 -> "float", f16 -> "h16", bf16 -> "b16"
// Elementwise chains: how a tensor of `t` is stored, and the type its values are computed in.
std::string_view chain_storage_type(DType t);  // f32 "float", f16 "h16", bf16 "b16", f64 "double", int8 "signed char",
                                               // uint8 "unsigned char", int16 "short", int32 "int", int64 "i64",
                                               // unsigned ones likewise, bool, float8 "f8e4m3fn"..., float4e2m1
                                               // "f4e2m1", float8e8m0 "f8e8m0", int4, uint4, int2 and uint2
                                               // (held one per byte) as int8 and uint8
std::string_view chain_value_type(DType t);    // f32, f16, bf16 and the bit-pattern floats "float", f64 "double",
                                               // 2- to 16-bit integers and int32 "int", the others their storage type
int e8m0_mode_code(E8M0Rounding r);  // the kernels' float8e8m0 rounding code (e8m0_encode): up 0, down 1, nearest 2
int byte_float_code(DType t);  // the kernels' format code of a bit-pattern float (round_byte_float): E4M3FN 0 ...
                               // E5M2FNUZ 3, float4e2m1 4, float8e8m0 5
// 8- and 16-bit integers: computed in int, wrapped to their type where the unfused graph stores.
inline bool is_narrow_integer(DType t) {
  return t == DType::kInt8 || t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16;
}
std::string_view element_type(DType t);             // any fixed-size dtype by its size: "unsigned int"...

}  // namespace nxrt::cuda
