// SkipLayerNormalization's and SkipSimplifiedLayerNormalization's claim check and shapes
// (nxrt/ep/skip_layer_normalization.h).
#include "nxrt/ep/skip_layer_normalization.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace nxrt {
namespace {

// Skip's shape, leading ones dropped, must be input's trailing dims.
bool skip_fits(const Shape& x, Shape skip) {
  while (skip.size() > 1 && skip.front() == 1) skip.erase(skip.begin());
  return skip.size() <= x.size() && std::equal(skip.rbegin(), skip.rend(), x.rbegin());
}

}  // namespace

std::vector<std::size_t> SkipNormForm::vectors() const {
  std::vector<std::size_t> v = {2, bias()};
  if (beta()) v.push_back(*beta());
  return v;
}

KernelMatch check_skip_norm_node(const NodeContext& ctx) {
  const SkipNormForm form = SkipNormForm::of(ctx.node());
  const std::string_view op = form.op();
  for (std::size_t i = 1; i < ctx.input_count(); ++i)
    NXRT_REQUIRE(!ctx.has_input(i) || ctx.input_dtype(i) == ctx.input_dtype(0),
                 "{}: input {} is {} and input 0 {}; all must be one type", op, i, dtype_name(ctx.input_dtype(i)),
                 dtype_name(ctx.input_dtype(0)));
  NXRT_REQUIRE(ctx.has_input(1) && ctx.has_input(2), "{}: skip (input 1) and gamma (input 2) are required", op);
  const auto x = ctx.input_static_shape(0);
  NXRT_REQUIRE(!x || x->size() == 2 || x->size() == 3,
               "{}: input has rank {}; it must be 3 [batch, sequence, hidden] or 2 [tokens, hidden]", op,
               x ? x->size() : 0);
  if (!x) return KernelMatch::supported();
  const auto skip = ctx.input_static_shape(1);
  NXRT_REQUIRE(!skip || skip_fits(*x, *skip), "{}: skip has shape {}; it must be input's {} or its trailing dims", op,
               shape_to_string(skip.value_or(Shape{})), shape_to_string(*x));
  for (std::size_t i : form.vectors()) {
    const auto s = ctx.has_input(i) ? ctx.input_static_shape(i) : std::nullopt;
    NXRT_REQUIRE(!s || (s->size() == 1 && s->front() == x->back()),
                 "{}: input {} has shape {}; it must be [{}], one value per element of the hidden dim", op, i,
                 shape_to_string(s.value_or(Shape{})), x->back());
  }
  return KernelMatch::supported();
}

Expected<void> check_skip_norm_shapes(SkipNormForm form, const Shape& s, const Shape& skip,
                                      const std::vector<const Shape*>& vectors) {
  auto wrong = [&](std::string what, std::string why) -> Expected<void> {
    return fail(ErrorCode::kRuntime, fmt::format("{}: {}", form.op(), what), std::move(why),
                "give tensors of the shapes ONNX Runtime's definition of the op states");
  };
  if (s.size() != 2 && s.size() != 3)
    return wrong(fmt::format("input has shape {}", shape_to_string(s)),
                 "it must be [batch, sequence, hidden] or [tokens, hidden]");
  if (!skip_fits(s, skip))
    return wrong(fmt::format("skip has shape {} for input {}", shape_to_string(skip), shape_to_string(s)),
                 "skip must have input's shape or its trailing dims");
  const std::vector<std::size_t> inputs = form.vectors();
  for (std::size_t k = 0; k < inputs.size() && k < vectors.size(); ++k)
    if (vectors[k] && shape_numel(*vectors[k]) != s.back())
      return wrong(fmt::format("input {} has {} values", inputs[k], shape_numel(*vectors[k])),
                   fmt::format("gamma, beta and bias hold one value per element of the hidden dim, {}", s.back()));
  return {};
}

}  // namespace nxrt
