// DepthToSpace (DCR and CRD) and SpaceToDepth of any dtype: each is a 6-D transpose of the
// NCHW input, copied row by row.
#include <algorithm>
#include <array>
#include <string>

#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

using Dims6 = std::array<int64_t, 6>;

// Copies x viewed as `view` (6-D, row-major) into y transposed by `perm` (output axis ->
// view axis).
void permute_copy(KernelContext& ctx, const Tensor& x, const Tensor& y, const Dims6& view, const Dims6& perm) {
  const Shape view_strides = contiguous_strides(view);
  OuterAxes rows;
  for (std::size_t d = 0; d + 1 < 6; ++d) {
    rows.sizes.push_back(view[static_cast<std::size_t>(perm[d])]);
    rows.in_strides.push_back(view_strides[static_cast<std::size_t>(perm[d])]);
  }
  const int64_t inner = view[static_cast<std::size_t>(perm[5])];
  const int64_t inner_stride = view_strides[static_cast<std::size_t>(perm[5])];
  rows.out_strides = contiguous_strides(rows.sizes);
  for (int64_t& s : rows.out_strides) s *= inner;
  visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
    const T* src = x.data_as<T>();
    T* dst = y.mut_as<T>();
    ctx.parallel().for_range(rows.count(), std::max<int64_t>(1, kGrainElements / std::max<int64_t>(inner, 1)),
                             [&](int64_t b, int64_t e) {
                               for (int64_t r = b; r < e; ++r) {
                                 const auto [from, to] = rows.offsets(r);
                                 for (int64_t j = 0; j < inner; ++j) dst[to + j] = src[from + j * inner_stride];
                               }
                             });
  });
}

// Both ops: a 4-D tensor input and a blocksize of 1 or more.
KernelMatch check_block_op(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  NXRT_REQUIRE(ctx.has_input(0), "{}: input 0 (input) is missing; it is required", op);
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  const auto blocksize = ctx.attrs().get_int("blocksize");
  NXRT_REQUIRE(blocksize.has_value(), "{}: the blocksize attribute (int) is missing; it is required", op);
  NXRT_REQUIRE(*blocksize >= 1, "{}: blocksize={} is invalid; it must be 1 or more", op, *blocksize);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 4, "{}: input 0 has rank {}; the cpu EP supports 4-D NCHW inputs", op,
               rank.value_or(0));
  return KernelMatch::supported(copy_cost(ctx));
}

std::unexpected<Error> block_error(std::string_view op, const Shape& in, std::string why) {
  return fail(ErrorCode::kRuntime, fmt::format("{}: input shape {} does not fit the blocksize", op, shape_to_string(in)),
              std::move(why), "fix the input shape or the blocksize attribute");
}

KernelMatch check_depth_to_space(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(check_block_op(ctx));
  const std::string mode = ctx.attrs().string_or("mode", "DCR");
  NXRT_REQUIRE(mode == "DCR" || (mode == "CRD" && ctx.opset() >= 11),
               "DepthToSpace: mode '{}' is not supported for DepthToSpace-{}; the modes are DCR{}", mode,
               ctx.opset(), ctx.opset() >= 11 ? " and CRD" : " (CRD from opset 11)");
  return KernelMatch::supported(copy_cost(ctx));
}

class DepthToSpaceKernel final : public Kernel {
 public:
  DepthToSpaceKernel(int64_t blocksize, bool crd) : bs_(blocksize), crd_(crd) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    if (in.size() != 4) return block_error("DepthToSpace", in, "the input must be 4-D (NCHW)");
    const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
    if (c % (bs_ * bs_) != 0)
      return block_error("DepthToSpace", in, fmt::format("channels must be a multiple of blocksize^2 = {}", bs_ * bs_));
    const int64_t oc = c / (bs_ * bs_);
    auto y = ctx.output(0, x.dtype(), {n, oc, h * bs_, w * bs_});
    if (!y) return std::unexpected(std::move(y.error()));
    // DCR: channel = (bh * bs + bw) * oc + oc_i; CRD: channel = oc_i * bs^2 + bh * bs + bw.
    if (crd_) permute_copy(ctx, x, *y, {n, oc, bs_, bs_, h, w}, {0, 1, 4, 2, 5, 3});
    else permute_copy(ctx, x, *y, {n, bs_, bs_, oc, h, w}, {0, 3, 4, 1, 5, 2});
    return {};
  }

 private:
  int64_t bs_;
  bool crd_;
};

KernelMatch check_space_to_depth(const NodeContext& ctx) { return check_block_op(ctx); }

class SpaceToDepthKernel final : public Kernel {
 public:
  explicit SpaceToDepthKernel(int64_t blocksize) : bs_(blocksize) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& in = x.shape();
    if (in.size() != 4) return block_error("SpaceToDepth", in, "the input must be 4-D (NCHW)");
    const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
    if (h % bs_ != 0 || w % bs_ != 0)
      return block_error("SpaceToDepth", in, fmt::format("height and width must be multiples of {}", bs_));
    auto y = ctx.output(0, x.dtype(), {n, c * bs_ * bs_, h / bs_, w / bs_});
    if (!y) return std::unexpected(std::move(y.error()));
    permute_copy(ctx, x, *y, {n, c, h / bs_, bs_, w / bs_, bs_}, {0, 3, 5, 1, 2, 4});
    return {};
  }

 private:
  int64_t bs_;
};

}  // namespace

std::vector<KernelDef> depth_space_kernels() {
  auto depth_to_space = [](const NodeContext& ctx) {
    return make_kernel<DepthToSpaceKernel>(ctx.attrs().int_or("blocksize", 1),
                                           ctx.attrs().string_or("mode", "DCR") == "CRD");
  };
  auto space_to_depth = [](const NodeContext& ctx) {
    return make_kernel<SpaceToDepthKernel>(ctx.attrs().int_or("blocksize", 1));
  };
  return {
      {{"", "DepthToSpace", 1}, 10, check_depth_to_space, depth_to_space},
      {{"", "DepthToSpace", 11}, 12, check_depth_to_space, depth_to_space},
      {{"", "DepthToSpace", 13}, 0, check_depth_to_space, depth_to_space},
      {{"", "SpaceToDepth", 1}, 12, check_space_to_depth, space_to_depth},
      {{"", "SpaceToDepth", 13}, 0, check_space_to_depth, space_to_depth},
  };
}

}  // namespace nxrt::cpu
