// Optional ops: Optional wraps a value (or makes an empty optional), OptionalHasElement
// tells whether one holds a value, OptionalGetElement takes the value out.
#include <fmt/format.h>

#include "common/kernel_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using Kind = ValueType::Kind;

class OptionalKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    ctx.set_output_value(0, ctx.has_input(0) ? ctx.value(0) : RuntimeValue::none());
    return {};
  }
  std::string_view variant() const override { return "optional"; }
};

KernelMatch check_optional(const NodeContext& ctx) {
  if (ctx.has_input(0)) {
    const Kind kind = ctx.input_type(0)->kind;
    NXRT_REQUIRE(kind == Kind::kTensor || kind == Kind::kSequence,
                 "Optional: input 0 is a {}; an optional holds a tensor or a sequence of tensors",
                 ctx.input_type(0)->to_string());
  } else {
    NXRT_REQUIRE(ctx.attrs().has("type"), "Optional: with no input, attribute 'type' must say what it would hold");
  }
  return KernelMatch::supported();
}

class HasElementKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const bool has = ctx.has_input(0) && !ctx.value(0).is_none();
    Tensor out = Tensor::empty(DType::kBool, {});
    *out.mut_as<uint8_t>() = has ? 1 : 0;
    ctx.set_output(0, std::move(out));
    return {};
  }
  std::string_view variant() const override { return "optional"; }
};

// Opset 15 takes an optional only; 18 also a plain tensor or sequence (always present) or
// no input at all (never present).
KernelMatch check_has_element(const NodeContext& ctx) {
  if (ctx.opset() < 18) {
    NXRT_REQUIRE(ctx.has_input(0), "OptionalHasElement: input 0 is missing; it is required before opset 18");
    NXRT_REQUIRE(ctx.input_type(0)->kind == Kind::kOptional,
                 "OptionalHasElement: input 0 is a {}; before opset 18 it must be an optional",
                 ctx.input_type(0)->to_string());
  }
  return KernelMatch::supported();
}

class GetElementKernel final : public Kernel {
 public:
  explicit GetElementKernel(const NodeContext& ctx) : node_(ctx.node().describe()) {}
  Expected<void> compute(KernelContext& ctx) override {
    const RuntimeValue& v = ctx.value(0);
    if (v.is_none())
      return fail(ErrorCode::kRuntime, fmt::format("OptionalGetElement: {} read an empty optional", node_),
                  "an empty optional holds no value to get", "check OptionalHasElement first (e.g. in an If)");
    ctx.set_output_value(0, v);
    return {};
  }
  std::string_view variant() const override { return "optional"; }

 private:
  std::string node_;
};

KernelMatch check_get_element(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "OptionalGetElement: input 0 is missing");
  const Kind kind = ctx.input_type(0)->kind;
  NXRT_REQUIRE(kind == Kind::kOptional || ctx.opset() >= 18,
               "OptionalGetElement: input 0 is a {}; before opset 18 it must be an optional",
               ctx.input_type(0)->to_string());
  return KernelMatch::supported();
}

}  // namespace

std::vector<KernelDef> optional_kernels() {
  return {
      KernelDef{{"", "Optional", 15}, 0, check_optional,
                [](const NodeContext&) { return make_kernel<OptionalKernel>(); }},
      KernelDef{{"", "OptionalHasElement", 15}, 23, check_has_element,
                [](const NodeContext&) { return make_kernel<HasElementKernel>(); }},
      KernelDef{{"", "OptionalGetElement", 15}, 23, check_get_element,
                [](const NodeContext& ctx) { return make_kernel<GetElementKernel>(ctx); }},
  };
}

}  // namespace nxrt::cpu
