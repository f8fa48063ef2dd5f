// Expand (broadcast to a shape) and Tile (repeat along axes) of any dtype: each output row
// reads one input row, broadcast or repeated.
#include <algorithm>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

KernelMatch check_expand(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Expand: input 0 (input) is missing; it is required");
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  auto target = ctx.constant_ints(1);
  auto shape = ctx.input_static_shape(0);
  if (target && shape) {
    const Shape t(target->begin(), target->end());
    const std::array<const Shape*, 2> shapes{&*shape, &t};
    if (auto s = broadcast_shape("Expand", shapes); !s) return declined_by(s.error());
  }
  return KernelMatch::supported(copy_cost(ctx));
}

class ExpandKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> dims = ctx.input(1).to_int64_vector();
    const Shape target(dims.begin(), dims.end());
    // The target shape enters the broadcast as a second operand that is never read.
    auto bc = Broadcast<2>::make("Expand", {&x.shape(), &target});
    if (!bc) return std::unexpected(std::move(bc.error()));
    auto y = ctx.output(0, x.dtype(), bc->shape());
    if (!y) return std::unexpected(std::move(y.error()));
    visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
      const T* src = x.data_as<T>();
      T* dst = y->mut_as<T>();
      parallel_runs(ctx.parallel(), *bc, [&](int64_t out, const auto& in, const auto& step, int64_t count) {
        if (step[0] == 0) {
          std::fill_n(dst + out, count, src[in[0]]);
          return;
        }
        std::copy_n(src + in[0], count, dst + out);
      });
    });
    return {};
  }
  std::string_view variant() const override { return "broadcast-runs"; }
};

// Output[i] = input[i mod in_shape] over out_shape (in_shape divides out_shape per axis).
void tile_copy(KernelContext& ctx, const Tensor& x, const Tensor& y) {
  const Shape& in = x.shape();
  const Shape& out = y.shape();
  const int64_t total = shape_numel(out);
  if (total == 0) return;
  const Shape strides = contiguous_strides(in);
  const int64_t inner = out.empty() ? 1 : out.back();
  const int64_t in_inner = in.empty() ? 1 : in.back();
  visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
    const T* src = x.data_as<T>();
    T* dst = y.mut_as<T>();
    ctx.parallel().for_range(total / inner, std::max<int64_t>(1, kGrainElements / inner), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        int64_t base = 0, rest = r;
        for (std::size_t d = out.empty() ? 0 : out.size() - 1; d-- > 0;) {
          base += (rest % out[d]) % in[d] * strides[d];
          rest /= out[d];
        }
        T* row = dst + r * inner;
        for (int64_t j = 0; j < inner; j += in_inner) std::copy_n(src + base, in_inner, row + j);
      }
    });
  });
}

// Tile's repeats: Tile-6+ one per axis (input 1); Tile-1 a count (input 1) for one axis
// (input 2).
Expected<std::vector<int64_t>> tile_repeats(const KernelContext& ctx, int64_t opset, int64_t rank) {
  if (opset < 6) {
    std::vector<int64_t> repeats(static_cast<std::size_t>(rank), 1);
    const std::vector<int64_t> tiles = numeric_as_int64(ctx.input(1));
    const std::vector<int64_t> axis = numeric_as_int64(ctx.input(2));
    if (tiles.size() != 1 || axis.size() != 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Tile: tiles has {} elements and axis {}", tiles.size(), axis.size()),
                  "Tile-1 takes one repeat count and one axis", "pass scalars for tiles and axis");
    auto a = normalize_axes("Tile", axis, rank, true);
    if (!a) return std::unexpected(std::move(a.error()));
    repeats[static_cast<std::size_t>(a->front())] = tiles.front();
    return repeats;
  }
  std::vector<int64_t> repeats = ctx.input(1).to_int64_vector();
  if (static_cast<int64_t>(repeats.size()) != rank)
    return fail(ErrorCode::kRuntime,
                fmt::format("Tile: repeats has {} entries for an input of rank {}", repeats.size(), rank),
                "repeats gives one count per input axis", "fix the repeats input");
  return repeats;
}

KernelMatch check_tile(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Tile: input 0 (input) is missing; it is required");
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE(ctx.has_input(1), "Tile: input 1 (repeats) is missing; it is required");
  if (ctx.opset() < 6) {
    NXRT_REQUIRE(ctx.has_input(2), "Tile: input 2 (axis) is missing; Tile-1 requires it");
    return KernelMatch::supported(copy_cost(ctx));
  }
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  auto repeats = ctx.constant_ints(1);
  auto rank = ctx.input_rank(0);
  if (repeats && rank)
    NXRT_REQUIRE(static_cast<int64_t>(repeats->size()) == *rank,
                 "Tile: repeats has {} entries for an input of rank {}; it needs one per axis", repeats->size(),
                 *rank);
  return KernelMatch::supported(copy_cost(ctx));
}

class TileKernel final : public Kernel {
 public:
  explicit TileKernel(int64_t opset) : opset_(opset) {}
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    auto repeats = tile_repeats(ctx, opset_, static_cast<int64_t>(x.shape().size()));
    if (!repeats) return std::unexpected(std::move(repeats.error()));
    Shape out = x.shape();
    for (std::size_t d = 0; d < out.size(); ++d) {
      const int64_t r = (*repeats)[d];
      if (r < 0)
        return fail(ErrorCode::kRuntime, fmt::format("Tile: repeat count {} for axis {} is negative", r, d),
                    "repeat counts are 0 or more", "fix the repeats input");
      out[d] *= r;
    }
    auto y = ctx.output(0, x.dtype(), std::move(out));
    if (!y) return std::unexpected(std::move(y.error()));
    tile_copy(ctx, x, *y);
    return {};
  }
  std::string_view variant() const override { return "rows"; }

 private:
  int64_t opset_;
};

KernelDef tile_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Tile", since}, until, check_tile,
                   [](const NodeContext& ctx) { return make_kernel<TileKernel>(ctx.opset()); }};
}

}  // namespace

std::vector<KernelDef> expand_tile_kernels() {
  auto expand = [](const NodeContext&) { return make_kernel<ExpandKernel>(); };
  return {
      {{"", "Expand", 8}, 12, check_expand, expand},
      {{"", "Expand", 13}, 0, check_expand, expand},
      tile_def(1, 5),
      tile_def(6, 12),
      tile_def(13, 0),
  };
}

}  // namespace nxrt::cpu
