// PlanBuilder and build_plan: the partition's steps and the CUDA C of its module.
#include "plan.h"

#include <fmt/format.h>

#include "chain.h"
#include "kernel_library.h"
#include "ops/ops.h"

namespace nxrt::cuda {

namespace {

class FnStep final : public Step {
 public:
  FnStep(std::string variant, RunFn fn) : variant_(std::move(variant)), fn_(std::move(fn)) {}
  Expected<void> run(StepContext& ctx) const override { return fn_(ctx); }
  std::string variant() const override { return variant_; }

 private:
  std::string variant_;
  RunFn fn_;
};

}  // namespace

std::unique_ptr<Step> make_step(const Node& node, std::string variant, RunFn fn) {
  auto step = std::make_unique<FnStep>(std::move(variant), std::move(fn));
  step->nodes = {&node};
  step->inputs = node.inputs;
  step->outputs = node.outputs;
  return step;
}

std::string PlanBuilder::unique_name(std::string_view stem) { return fmt::format("{}_{}", stem, counter_++); }

std::string PlanBuilder::instantiate(std::string_view tmpl, std::string_view targs, std::string_view params,
                                     std::string_view args) {
  const std::string key = fmt::format("{}<{}>", tmpl, targs);
  if (auto it = instances_.find(key); it != instances_.end()) return it->second;
  const std::string name = unique_name(tmpl);
  code_ += fmt::format("extern \"C\" __global__ void {}({}) {{ {}({}); }}\n", name, params, key, args);
  instances_.emplace(key, name);
  return name;
}

std::string PlanBuilder::source() const { return std::string(kernel_library_source()) + code_; }

std::string_view float_type(DType t) { return t == DType::kFloat16 ? "h16" : t == DType::kBFloat16 ? "b16" : "float"; }

std::string_view chain_storage_type(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kInt4:
    case DType::kInt2:
      return "signed char";
    case DType::kUInt8:
    case DType::kUInt4:
    case DType::kUInt2:
      return "unsigned char";
    case DType::kInt16: return "short";
    case DType::kUInt16: return "unsigned short";
    case DType::kFloat64: return "double";
    case DType::kInt32: return "int";
    case DType::kUInt32: return "unsigned int";
    case DType::kInt64: return "i64";
    case DType::kUInt64: return "unsigned long long";
    case DType::kBool: return "bool";
    case DType::kBFloat16: return "b16";
    case DType::kFloat8E4M3FN: return "f8e4m3fn";
    case DType::kFloat8E4M3FNUZ: return "f8e4m3fnuz";
    case DType::kFloat8E5M2: return "f8e5m2";
    case DType::kFloat8E5M2FNUZ: return "f8e5m2fnuz";
    case DType::kFloat4E2M1: return "f4e2m1";
    case DType::kFloat8E8M0: return "f8e8m0";
    default: return float_type(t);
  }
}

int e8m0_mode_code(E8M0Rounding r) {
  switch (r) {
    case E8M0Rounding::kDown: return 1;
    case E8M0Rounding::kNearest: return 2;
    default: return 0;
  }
}

int byte_float_code(DType t) {
  switch (t) {
    case DType::kFloat8E4M3FNUZ: return 1;
    case DType::kFloat8E5M2: return 2;
    case DType::kFloat8E5M2FNUZ: return 3;
    case DType::kFloat4E2M1: return 4;
    case DType::kFloat8E8M0: return 5;
    default: return 0;
  }
}

std::string_view chain_value_type(DType t) {
  if (t == DType::kFloat16 || t == DType::kBFloat16 || is_byte_float(t)) return "float";
  if (is_narrow_integer(t) || is_subbyte_integer(t)) return "int";
  return chain_storage_type(t);
}

std::string_view element_type(DType t) {
  switch (dtype_size(t)) {
    case 1: return "unsigned char";
    case 2: return "unsigned short";
    case 4: return "unsigned int";
    default: return "unsigned long long";
  }
}

Expected<Plan> build_plan(const Partition& partition, const OpTable& ops) {
  const Graph& graph = *partition.graph;
  PlanBuilder builder(graph);
  ChainFuser chains(graph, ops, partition);
  for (NodeId id : partition.nodes) {
    const Node& node = graph.node(id);
    const KernelDef* def = ops.find(node);
    if (!def)
      return fail(ErrorCode::kRuntime, fmt::format("{} is not an op of the cuda EP", node.describe()), {},
                  "claims and plans disagree: a bug in nxrt's cuda EP");
    Expected<void> built = chains.is_elementwise(node) ? chains.add(builder, node) : ops.builders.at(def->key)(builder, node);
    if (!built) return forward_error(std::move(built), fmt::format("planning {}", node.describe()));
  }
  Plan plan;
  plan.steps = builder.take_steps();
  plan.source = builder.source();
  return plan;
}

}  // namespace nxrt::cuda
