// Shape, Size, ConstantOfShape and Range: values known on the host (the input's shape, or
// scalars read back), written to the device; ConstantOfShape and Range fill their outputs with
// generated kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ops/op_util.h"
#include "ops/ops.h"
#include "runtime.h"

namespace nxrt::cuda {
namespace {

KernelMatch check_shape_of(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_fixed_size(ctx, 0));
  return KernelMatch::supported();
}

// Shape's output: dims [start, end) of the input's shape (from opset 15; negative values
// count from the end and both are clamped to the rank).
Expected<void> build_shape(PlanBuilder& b, const Node& node) {
  const int64_t start_attr = node.attributes.int_or("start", 0);
  const std::optional<int64_t> end_attr = node.attributes.get_int("end");
  b.add_step(make_step(node, "host", [=](StepContext& ctx) -> Expected<void> {
    const Shape& s = ctx.input(0).shape();
    const auto rank = static_cast<int64_t>(s.size());
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_attr), end = std::max(start, clamp(end_attr.value_or(rank)));
    const Shape dims(s.begin() + start, s.begin() + end);
    return ctx.set_output_from_host(0, Tensor::from_vector<int64_t>({static_cast<int64_t>(dims.size())}, dims));
  }));
  return {};
}

Expected<void> build_size(PlanBuilder& b, const Node& node) {
  b.add_step(make_step(node, "host", [](StepContext& ctx) -> Expected<void> {
    return ctx.set_output_from_host(0, Tensor::from_vector<int64_t>({}, {ctx.input(0).numel()}));
  }));
  return {};
}

KernelMatch check_constant_of_shape(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_dtype(0) == DType::kInt64, "ConstantOfShape: input 0 is {}; expected int64",
               dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(require_ints(ctx, 0, "shape"));
  if (ctx.attrs().has("value")) {
    const Tensor* value = ctx.attrs().get_tensor("value");
    NXRT_REQUIRE(value && value->numel() == 1, "ConstantOfShape: the value attribute must be a tensor of one element");
    NXRT_REQUIRE(value->dtype() != DType::kString && dtype_size(value->dtype()) > 0 && dtype_size(value->dtype()) <= 8,
                 "ConstantOfShape: a value of type {} is not supported by the cuda EP", dtype_name(value->dtype()));
  }
  return KernelMatch::supported();
}

Expected<void> build_constant_of_shape(PlanBuilder& b, const Node& node) {
  const Tensor* attr = node.attributes.get_tensor("value");
  const Tensor value = attr ? *attr : Tensor::from_vector<float>({1}, {0.f});
  uint64_t bits = 0;  // the value's bytes, as the fill kernel's element type holds them
  std::memcpy(&bits, value.view().data(), dtype_size(value.dtype()));
  const std::string t(element_type(value.dtype()));
  const std::string kernel = b.instantiate("fill", t, fmt::format("i64 n, {0} value, {0}* out", t), "n, value, out");
  const IntsInput shape_input(b.graph(), node, 0);
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    auto read = shape_input.read(ctx);
    if (!read) return std::unexpected(read.error());
    const Shape shape = read->value_or(Shape{});
    for (int64_t d : shape)
      if (d < 0)
        return fail(ErrorCode::kRuntime, fmt::format("{}: shape {} has a negative size", ctx.where(), shape_to_string(shape)));
    auto y = ctx.output(0, value.dtype(), shape);
    if (!y) return std::unexpected(y.error());
    const int64_t n = y->numel();
    if (n == 0) return {};
    KernelArgs args;
    args.add(n);
    switch (dtype_size(value.dtype())) {  // the value as the kernel's parameter type
      case 1: args.add(static_cast<uint8_t>(bits)); break;
      case 2: args.add(static_cast<uint16_t>(bits)); break;
      case 4: args.add(static_cast<uint32_t>(bits)); break;
      default: args.add(bits);
    }
    args.ptr(dev_mut(*y));
    return ctx.launch(kernel, n, args);
  }));
  return {};
}

bool is_range_type(DType t) { return t == DType::kFloat32 || t == DType::kInt32 || t == DType::kInt64; }

KernelMatch check_range(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 3, "Range: expected 3 inputs (start, limit, delta), got {}", ctx.input_count());
  return require_dtypes(ctx, {0, 1, 2}, is_range_type, "float, int32 and int64");
}

// The element count of Range(start, limit, delta): ceil((limit - start) / delta), at least 0.
template <class T>
Expected<int64_t> range_count(const StepContext& ctx, T start, T limit, T delta) {
  if (delta == T(0))
    return fail(ErrorCode::kRuntime, fmt::format("{}: Range's delta is 0 (start {}, limit {})", ctx.where(), start, limit),
                "the sequence would never reach its limit", "give a non-zero delta");
  const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
  if (!std::isfinite(n) || n > 9.2e18)
    return fail(ErrorCode::kRuntime, fmt::format("{}: Range({}, {}, {}) has {} elements", ctx.where(), start, limit, delta, n));
  return std::max<int64_t>(static_cast<int64_t>(n), 0);
}

// Range: start, limit and delta are read on the host (the count sizes the output), then one
// kernel writes the sequence.
Expected<void> build_range(PlanBuilder& b, const Node& node) {
  const DType dtype = b.graph().value(node.inputs[0]).type.dtype;
  const std::string t(chain_storage_type(dtype));
  const std::string kernel = b.instantiate("range", t, fmt::format("i64 n, {0} start, {0} delta, {0}* out", t), "n, start, delta, out");
  b.add_step(make_step(node, "nvrtc:" + kernel, [=](StepContext& ctx) -> Expected<void> {
    Tensor scalars[3];
    for (std::size_t i = 0; i < 3; ++i) {
      auto host = ctx.input_on_host(i);
      if (!host) return std::unexpected(host.error());
      if (host->numel() != 1)
        return fail(ErrorCode::kRuntime, fmt::format("{}: Range's input {} has {} elements; expected a scalar", ctx.where(), i,
                                                     host->numel()));
      scalars[i] = std::move(*host);
    }
    auto launch = [&]<class T>(T) -> Expected<void> {
      const T start = *scalars[0].data_as<T>(), limit = *scalars[1].data_as<T>(), delta = *scalars[2].data_as<T>();
      auto n = range_count(ctx, start, limit, delta);
      if (!n) return std::unexpected(n.error());
      auto y = ctx.output(0, dtype, {*n});
      if (!y) return std::unexpected(y.error());
      if (*n == 0) return {};
      KernelArgs args;
      args.add(*n).add(start).add(delta).ptr(dev_mut(*y));
      return ctx.launch(kernel, *n, args);
    };
    if (dtype == DType::kFloat32) return launch(float{});
    if (dtype == DType::kInt32) return launch(int32_t{});
    return launch(int64_t{});
  }));
  return {};
}

}  // namespace

std::vector<CudaOpDef> shape_ops() {
  std::vector<CudaOpDef> ops;
  ops.push_back(make_op("Shape", 1, check_shape_of, build_shape));
  ops.push_back(make_op("Size", 1, check_shape_of, build_size));
  ops.push_back(make_op("ConstantOfShape", 9, check_constant_of_shape, build_constant_of_shape));
  ops.push_back(make_op("Range", 11, check_range, build_range));
  return ops;
}

}  // namespace nxrt::cuda
