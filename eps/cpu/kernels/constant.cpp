// Constant (the attribute's value, returned without a copy) and ConstantOfShape (a tensor
// of a runtime shape filled with one value of any dtype).
#include <algorithm>
#include <array>
#include <cstring>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

struct ValueAttribute {
  const char* name;
  AttributeType type;
  const char* type_name;
};

// Constant's mutually exclusive value attributes; all but `value` (and the unsupported
// sparse_value) arrived in opset 12.
constexpr std::array<ValueAttribute, 8> kValueAttributes{{
    {"value", AttributeType::kTensor, "tensor"},
    {"sparse_value", AttributeType::kOther, "sparse tensor"},
    {"value_float", AttributeType::kFloat, "float"},
    {"value_floats", AttributeType::kFloats, "floats"},
    {"value_int", AttributeType::kInt, "int"},
    {"value_ints", AttributeType::kInts, "ints"},
    {"value_string", AttributeType::kString, "string"},
    {"value_strings", AttributeType::kStrings, "strings"},
}};

Tensor string_tensor(Shape shape, const std::vector<std::string>& values) {
  Tensor t = Tensor::empty(DType::kString, std::move(shape));
  std::copy(values.begin(), values.end(), t.mut_as<std::string>());
  return t;
}

// The value of a Constant node whose check passed: exactly one value attribute is set.
Tensor constant_value(const AttributeMap& attrs) {
  if (const Tensor* t = attrs.get_tensor("value")) return *t;
  if (auto f = attrs.get_float("value_float")) return Tensor::from_vector<float>({}, {*f});
  if (auto f = attrs.get_floats("value_floats"))
    return Tensor::from_vector<float>({static_cast<int64_t>(f->size())}, *f);
  if (auto i = attrs.get_int("value_int")) return Tensor::from_vector<int64_t>({}, {*i});
  if (auto i = attrs.get_ints("value_ints"))
    return Tensor::from_vector<int64_t>({static_cast<int64_t>(i->size())}, *i);
  if (auto s = attrs.get_string("value_string")) return string_tensor({}, {*s});
  const auto strings = attrs.get_strings("value_strings").value_or(std::vector<std::string>{});
  return string_tensor({static_cast<int64_t>(strings.size())}, strings);
}

KernelMatch check_constant(const NodeContext& ctx) {
  std::vector<const ValueAttribute*> given;
  for (const ValueAttribute& v : kValueAttributes)
    if (ctx.attrs().has(v.name)) given.push_back(&v);
  std::vector<std::string_view> names;
  for (const ValueAttribute* v : given) names.push_back(v->name);
  NXRT_REQUIRE(given.size() == 1,
               "Constant: expected exactly one value attribute, got {} ({}); use one of value, value_float(s), "
               "value_int(s), value_string(s)", given.size(), names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", ")));
  const ValueAttribute& v = *given.front();
  NXRT_REQUIRE(v.type != AttributeType::kOther,
               "Constant: sparse_value is not supported by the cpu EP; store the constant densely in the "
               "value attribute");
  NXRT_REQUIRE(v.type == AttributeType::kTensor || ctx.opset() >= 12,
               "Constant: attribute {} exists from opset 12 on and this node has opset {}; use the value "
               "attribute", v.name, ctx.opset());
  const Attribute& attr = *ctx.attrs().find(v.name);
  NXRT_REQUIRE(attr.type() == v.type, "Constant: attribute {} has type {}, expected {}", v.name,
               attr.type_name(), v.type_name);
  return KernelMatch::supported();
}

// Returns the same tensor on every run: consumers read the attribute's storage.
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}
  Expected<void> compute(KernelContext& ctx) override {
    ctx.set_output(0, value_);
    return {};
  }
  std::string_view variant() const override { return "view"; }

 private:
  Tensor value_;
};

KernelDef constant_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Constant", since}, until, check_constant, [](const NodeContext& ctx) {
                     return make_kernel<ConstantKernel>(constant_value(ctx.attrs()));
                   }};
}

KernelMatch check_constant_of_shape(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kInt64}));
  if (const Attribute* attr = ctx.attrs().find("value")) {
    const Tensor* value = ctx.attrs().get_tensor("value");
    NXRT_REQUIRE(value != nullptr, "ConstantOfShape: attribute value has type {}, expected a tensor",
                 attr->type_name());
    NXRT_REQUIRE(value->numel() == 1,
                 "ConstantOfShape: the value tensor has shape {} ({} elements); it must hold exactly one",
                 shape_to_string(value->shape()), value->numel());
  }
  return KernelMatch::supported(elementwise_cost(ctx, 0));
}

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Shape shape = ctx.input(0).to_int64_vector();
    for (std::size_t i = 0; i < shape.size(); ++i)
      if (shape[i] < 0)
        return fail(ErrorCode::kRuntime,
                    fmt::format("ConstantOfShape: shape {} has size {} at index {}", shape_to_string(shape),
                                shape[i], i),
                    "sizes must be >= 0", "fix the shape input");
    auto y = ctx.output(0, value_.dtype(), shape);
    if (!y) return std::unexpected(std::move(y.error()));
    visit_element_type(value_.dtype(), [&]<class T>(std::type_identity<T>) {
      T v;
      if constexpr (std::is_same_v<T, std::string>)
        v = value_.data_as<std::string>()[0];
      else
        std::memcpy(&v, value_.view().data(), sizeof(T));
      T* out = y->mut_as<T>();
      ctx.parallel().for_range(y->numel(), kGrainElements, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
    });
    return {};
  }
  std::string_view variant() const override { return "fill"; }

 private:
  Tensor value_;
};

KernelDef constant_of_shape_def() {
  return KernelDef{{"", "ConstantOfShape", 9}, 0, check_constant_of_shape, [](const NodeContext& ctx) {
                     const Tensor* value = ctx.attrs().get_tensor("value");
                     return make_kernel<ConstantOfShapeKernel>(value ? *value : Tensor::from_vector<float>({1}, {0.0f}));
                   }};
}

}  // namespace

std::vector<KernelDef> constant_kernels() {
  return {
      constant_def(1, 8),
      constant_def(9, 11),
      constant_def(12, 0),
      constant_of_shape_def(),
  };
}

}  // namespace nxrt::cpu
