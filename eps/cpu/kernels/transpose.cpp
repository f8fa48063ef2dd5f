// Transpose of any dtype: axes that stay adjacent are merged, the data moves in cache-sized
// 2-D tiles (or whole rows when the last axis stays last), in parallel over the outer axes.
// Tiles of one-byte elements move 16 x 16 at a time in vector registers (transpose_bytes), of
// four-byte ones 4 x 4 (transpose_words).
#include <algorithm>
#include <numeric>
#include <type_traits>

#include "common/block_transpose.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

constexpr int64_t kTile = 32;  // elements per side of a 2-D tile
constexpr int64_t kMicro = 4;  // elements per side of a block held in registers

// The smallest problem equivalent to a transpose: size-1 axes dropped and runs of input
// axes that stay adjacent and in order merged. perm maps output axis -> input axis.
struct ReducedTranspose {
  Shape in_shape;
  std::vector<int64_t> perm;
};

ReducedTranspose reduce_transpose(const Shape& in, std::span<const int64_t> perm) {
  std::vector<int64_t> renumbered(in.size(), -1);
  Shape kept;
  for (std::size_t d = 0; d < in.size(); ++d) {
    if (in[d] == 1) continue;
    renumbered[d] = static_cast<int64_t>(kept.size());
    kept.push_back(in[d]);
  }
  struct Group {
    int64_t first_axis;
    int64_t size;
  };
  std::vector<Group> groups;  // in output order
  int64_t previous = -2;
  for (int64_t p : perm) {
    const int64_t axis = renumbered[static_cast<std::size_t>(p)];
    if (axis < 0) continue;
    if (axis == previous + 1)
      groups.back().size *= kept[static_cast<std::size_t>(axis)];
    else
      groups.push_back({axis, kept[static_cast<std::size_t>(axis)]});
    previous = axis;
  }
  std::vector<std::size_t> by_input(groups.size());
  std::iota(by_input.begin(), by_input.end(), std::size_t{0});
  std::sort(by_input.begin(), by_input.end(),
            [&](std::size_t a, std::size_t b) { return groups[a].first_axis < groups[b].first_axis; });
  ReducedTranspose r{Shape(groups.size()), std::vector<int64_t>(groups.size())};
  for (std::size_t k = 0; k < groups.size(); ++k) {
    r.in_shape[k] = groups[by_input[k]].size;
    r.perm[by_input[k]] = static_cast<int64_t>(k);
  }
  return r;
}

// The layout of a reduced transpose of rank >= 2.
struct Plan {
  const ReducedTranspose& r;
  Shape in_strides, out_strides;
  explicit Plan(const ReducedTranspose& reduced) : r(reduced) {
    in_strides = contiguous_strides(r.in_shape);
    Shape out_shape;
    for (int64_t p : r.perm) out_shape.push_back(r.in_shape[static_cast<std::size_t>(p)]);
    out_strides = contiguous_strides(out_shape);
  }
  // Outer axes: every output axis except those in `skip`.
  OuterAxes outer(std::initializer_list<std::size_t> skip) const {
    OuterAxes o;
    for (std::size_t j = 0; j < r.perm.size(); ++j) {
      if (std::find(skip.begin(), skip.end(), j) != skip.end()) continue;
      const auto p = static_cast<std::size_t>(r.perm[j]);
      o.sizes.push_back(r.in_shape[p]);
      o.in_strides.push_back(in_strides[p]);
      o.out_strides.push_back(out_strides[j]);
    }
    return o;
  }
};

// The last input axis stays last: every output row is a contiguous input row.
template <class T>
void transpose_rows(const Plan& plan, const T* in, T* out, const Parallel& parallel) {
  const std::size_t last = plan.r.perm.size() - 1;
  const int64_t row = plan.r.in_shape[last];
  const OuterAxes outer = plan.outer({last});
  parallel.for_range(outer.count(), std::max<int64_t>(1, kGrainElements / row), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const auto [src, dst] = outer.offsets(i);
      std::copy_n(in + src, row, out + dst);
    }
  });
}

// Moves the tile [b0,b1) x [a0,a1): out[a * a_stride + b] = in[b * b_stride + a].
template <class T>
void move_tile(const T* in, T* out, int64_t b_stride, int64_t a_stride, int64_t a0, int64_t a1, int64_t b0,
               int64_t b1) {
  if constexpr (sizeof(T) == 1 && std::is_trivially_copyable_v<T>) {
    transpose_bytes(reinterpret_cast<const uint8_t*>(in + b0 * b_stride + a0), b_stride, b1 - b0, a1 - a0,
                    reinterpret_cast<uint8_t*>(out + a0 * a_stride + b0), a_stride);
    return;
  }
  if constexpr (sizeof(T) == 4 && std::is_trivially_copyable_v<T>) {
    transpose_words(reinterpret_cast<const uint32_t*>(in + b0 * b_stride + a0), b_stride, b1 - b0, a1 - a0,
                    reinterpret_cast<uint32_t*>(out + a0 * a_stride + b0), a_stride);
    return;
  }
  int64_t a = a0;
  if constexpr (std::is_trivially_copyable_v<T>) {
    // kMicro x kMicro blocks stay in registers, so loads and stores are both kMicro wide
    // (measured 1.6x faster than element by element for float on AVX2).
    for (; a + kMicro <= a1; a += kMicro) {
      int64_t b = b0;
      for (; b + kMicro <= b1; b += kMicro) {
        T block[kMicro][kMicro];
        for (int64_t i = 0; i < kMicro; ++i)
          for (int64_t k = 0; k < kMicro; ++k) block[k][i] = in[(b + i) * b_stride + a + k];
        for (int64_t k = 0; k < kMicro; ++k)
          for (int64_t i = 0; i < kMicro; ++i) out[(a + k) * a_stride + b + i] = block[k][i];
      }
      for (; b < b1; ++b)
        for (int64_t k = 0; k < kMicro; ++k) out[(a + k) * a_stride + b] = in[b * b_stride + a + k];
    }
  }
  for (; a < a1; ++a)
    for (int64_t b = b0; b < b1; ++b) out[a * a_stride + b] = in[b * b_stride + a];
}

// The input's last axis `a` and the output's last axis `b` differ: each work item moves
// one kTile x kTile tile, so its reads and writes both stay in cache.
template <class T>
void transpose_tiles(const Plan& plan, const T* in, T* out, const Parallel& parallel) {
  const std::size_t last = plan.r.perm.size() - 1;
  const auto a_pos = static_cast<std::size_t>(
      std::find(plan.r.perm.begin(), plan.r.perm.end(), static_cast<int64_t>(last)) - plan.r.perm.begin());
  const auto b = static_cast<std::size_t>(plan.r.perm[last]);
  const int64_t na = plan.r.in_shape[last], nb = plan.r.in_shape[b];
  const int64_t b_stride = plan.in_strides[b], a_stride = plan.out_strides[a_pos];
  const OuterAxes outer = plan.outer({a_pos, last});
  const int64_t a_tiles = (na + kTile - 1) / kTile, b_tiles = (nb + kTile - 1) / kTile;
  const int64_t tiles = a_tiles * b_tiles;
  parallel.for_range(outer.count() * tiles, std::max<int64_t>(1, kGrainElements / (kTile * kTile)),
                     [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const auto [src, dst] = outer.offsets(item / tiles);
      const int64_t tile = item % tiles;
      const int64_t b0 = tile / a_tiles * kTile, a0 = tile % a_tiles * kTile;
      move_tile(in + src, out + dst, b_stride, a_stride, a0, std::min(na, a0 + kTile), b0, std::min(nb, b0 + kTile));
    }
  });
}

// Perm as given, or the reversed axes when the attribute is absent.
std::vector<int64_t> effective_perm(const std::optional<std::vector<int64_t>>& perm, std::size_t rank) {
  if (perm) return *perm;
  std::vector<int64_t> reversed(rank);
  std::iota(reversed.rbegin(), reversed.rend(), int64_t{0});
  return reversed;
}

bool is_permutation(std::vector<int64_t> perm) {
  std::sort(perm.begin(), perm.end());
  for (std::size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

class TransposeKernel final : public Kernel {
 public:
  explicit TransposeKernel(std::optional<std::vector<int64_t>> perm) : perm_(std::move(perm)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::vector<int64_t> perm = effective_perm(perm_, x.shape().size());
    if (perm.size() != x.shape().size())
      return fail(ErrorCode::kRuntime,
                  fmt::format("Transpose: perm [{}] has {} entries but the input has shape {}", fmt::join(perm, ","),
                              perm.size(), shape_to_string(x.shape())),
                  "perm needs one entry per input axis", "fix the perm attribute or the input's rank");
    Shape out_shape;
    for (int64_t p : perm) out_shape.push_back(x.shape()[static_cast<std::size_t>(p)]);
    const ReducedTranspose reduced = reduce_transpose(x.shape(), perm);
    // Moving only size-1 axes keeps the element order: the output is a view.
    if (reduced.perm.size() <= 1 || x.numel() == 0) {
      ctx.set_output(0, x.reshaped(std::move(out_shape)));
      return {};
    }
    auto y = ctx.output(0, x.dtype(), std::move(out_shape));
    if (!y) return std::unexpected(std::move(y.error()));
    const Plan plan(reduced);
    const bool rows = reduced.perm.back() == static_cast<int64_t>(reduced.perm.size() - 1);
    visit_element_type(x.dtype(), [&]<class T>(std::type_identity<T>) {
      if (rows)
        transpose_rows(plan, x.data_as<T>(), y->mut_as<T>(), ctx.parallel());
      else
        transpose_tiles(plan, x.data_as<T>(), y->mut_as<T>(), ctx.parallel());
    });
    return {};
  }
  std::string_view variant() const override { return "tiled"; }

 private:
  std::optional<std::vector<int64_t>> perm_;
};

KernelMatch check_transpose(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.has_input(0), "Transpose: input 0 (data) is missing; it is required");
  const auto perm = ctx.attrs().get_ints("perm");
  const auto rank = ctx.input_rank(0);
  if (perm) {
    NXRT_REQUIRE(!rank || static_cast<int64_t>(perm->size()) == *rank,
                 "Transpose: perm [{}] has {} entries for an input of rank {}; it needs one per axis",
                 fmt::join(*perm, ","), perm->size(), *rank);
    NXRT_REQUIRE(is_permutation(*perm), "Transpose: perm [{}] is not a permutation of the axes 0..{}",
                 fmt::join(*perm, ","), static_cast<int64_t>(perm->size()) - 1);
  }
  auto shape = ctx.input_static_shape(0);
  if (shape && reduce_transpose(*shape, effective_perm(perm, shape->size())).perm.size() <= 1)
    return KernelMatch::supported();
  return KernelMatch::supported(copy_cost(ctx));
}

}  // namespace

std::vector<KernelDef> transpose_kernels() {
  return {
      KernelDef{{"", "Transpose", 1}, 0, check_transpose,
                [](const NodeContext& ctx) { return make_kernel<TransposeKernel>(ctx.attrs().get_ints("perm")); }},
  };
}

}  // namespace nxrt::cpu
