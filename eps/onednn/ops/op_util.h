// Checks and helpers the oneDNN op families share.
#pragma once

#include <optional>
#include <string_view>

#include "dnnl_util.h"
#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"
#include "plan_builder.h"

namespace nxrt::onednn {

// Declines unless every present input and output is a float32 tensor.
KernelMatch require_float_tensors(const NodeContext& ctx);
// Declines unless input i's rank is known statically and within [lo, hi].
KernelMatch require_rank(const NodeContext& ctx, std::size_t i, int64_t lo, int64_t hi);
// Declines unless input i is a constant initializer.
KernelMatch require_constant(const NodeContext& ctx, std::size_t i, std::string_view what);

// `axis` resolved against `rank` (negative axes count from the end); nullopt when out of range.
std::optional<int64_t> normalize_axis(int64_t axis, int64_t rank);

// `dims` with leading 1s up to `rank` (ONNX multidirectional broadcasting).
Dims pad_leading(const Dims& dims, std::size_t rank);
// Whether `small` broadcasts to `big` (same rank; each dim equal or 1).
bool broadcasts_to(const Dims& small, const Dims& big);

// The number of elements of dims [begin, end) of `d`.
int64_t product(const Dims& d, std::size_t begin, std::size_t end);

// Primitive-descriptor creation that reports oneDNN's refusal as an nxrt Error naming the node.
template <class Pd, class... Args>
Expected<Pd> make_pd(const PlanBuilder& b, NodeId node, Args&&... args) {
  return dnnl_call(fmt::format("the onednn EP cannot build {}", b.graph().node(node).describe()),
                   [&] { return Pd(std::forward<Args>(args)...); });
}

// Runs `fn` (which adds steps to the builder), reporting oneDNN errors against `node`.
template <class Fn>
Expected<void> emit(const PlanBuilder& b, NodeId node, Fn&& fn) {
  return dnnl_call(fmt::format("the onednn EP cannot build {}", b.graph().node(node).describe()), std::forward<Fn>(fn));
}

}  // namespace nxrt::onednn
