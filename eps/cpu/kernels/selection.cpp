// Ops that pick elements by value or mask, with output shapes that depend on the data:
// Compress, NonZero, Unique, TopK, and ReverseSequence (per-batch reversal of a prefix).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "common/layout_util.h"
#include "common/numeric_input.h"
#include "kernels/kernels.h"
#include "nxrt/ep/unique.h"

namespace nxrt::cpu {
namespace {

KernelMatch require_known_dtype(const NodeContext& ctx, std::size_t i) {
  NXRT_REQUIRE(ctx.input_dtype(i) != DType::kUndefined && dtype_size(ctx.input_dtype(i)) > 0,
               "{}: the type of input {} is unknown; run shape inference or give the model value_info for it",
               ctx.node().op_type, i);
  return KernelMatch::supported();
}

// The axis attribute resolved against x's shape at run time; an error naming the op when
// it is out of range (claims check it too, but only when the rank is known statically).
Expected<std::size_t> resolve_axis(std::string_view op, int64_t axis, const Shape& shape) {
  const auto rank = static_cast<int64_t>(shape.size());
  const auto resolved = normalize_axis(axis, rank);
  if (!resolved || rank == 0)
    return fail(ErrorCode::kRuntime,
                fmt::format("{}: axis {} is out of range for input shape {}", op, axis, shape_to_string(shape)),
                fmt::format("valid axes are [{}, {}]", -rank, rank - 1), "fix the axis attribute");
  return static_cast<std::size_t>(*resolved);
}

// ---- Compress -----------------------------------------------------------------------

// Compress: any element type, a 1-D bool condition; without axis the input is flattened.
KernelMatch check_compress(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_known_dtype(ctx, 0));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kBool}));
  if (const auto rank = ctx.input_rank(1)) {
    NXRT_REQUIRE(*rank == 1, "Compress: condition has rank {}; it must be 1-D", *rank);
  }
  if (const auto axis = ctx.attrs().get_int("axis")) NXRT_REQUIRE_MATCH(check_axis_attribute(ctx, *axis));
  return KernelMatch::supported();
}

class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(std::optional<int64_t> axis) : axis_(axis) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& condition = ctx.input(1);
    const bool* cond = condition.data_as<bool>();
    std::optional<std::size_t> axis;
    if (axis_) {
      auto resolved = resolve_axis("Compress", *axis_, x.shape());
      if (!resolved) return std::unexpected(std::move(resolved.error()));
      axis = *resolved;
    }
    const std::size_t ax = axis.value_or(0);
    const int64_t dim = axis ? x.shape()[ax] : x.numel();
    std::vector<int64_t> selected;
    for (int64_t i = 0; i < condition.numel(); ++i) {
      if (!cond[i]) continue;
      if (i >= dim)
        return fail(ErrorCode::kRuntime,
                    fmt::format("Compress: condition selects index {} but the {} has only {} entries", i,
                                axis ? fmt::format("axis {} of input shape {}", *axis, shape_to_string(x.shape()))
                                     : std::string("flattened input"),
                                dim),
                    "a condition may be shorter than the axis, not longer with true entries beyond it",
                    "fix the condition input");
      selected.push_back(i);
    }
    const auto count = static_cast<int64_t>(selected.size());
    Shape out_shape = {count};
    int64_t outer = 1, inner = 1;
    if (axis) {
      out_shape = x.shape();
      out_shape[ax] = count;
      outer = dims_product(x.shape(), 0, ax);
      inner = dims_product(x.shape(), ax + 1, x.shape().size());
    }
    auto y = ctx.output(0, x.dtype(), out_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const auto esize = static_cast<int64_t>(dtype_size(x.dtype()));
    const auto* src = static_cast<const char*>(x.view().data());
    auto* dst = static_cast<char*>(y->mut().data());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t s = 0; s < count; ++s)
        copy_elements(x.dtype(), dst + ((o * count + s) * inner) * esize,
                      src + ((o * dim + selected[s]) * inner) * esize, inner);
    }
    return {};
  }

 private:
  std::optional<int64_t> axis_;
};

KernelDef compress_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Compress", since}, until, check_compress, [](const NodeContext& ctx) {
                     return make_kernel<CompressKernel>(ctx.attrs().get_int("axis"));
                   }};
}

// ---- NonZero ------------------------------------------------------------------------

using NonZeroTypes =
    TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, bool>;

KernelMatch check_non_zero(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, NonZeroTypes{}));
  return KernelMatch::supported();
}

// Output [rank, count]: the coordinates of the non-zero elements in row-major order, one
// row per axis. A scalar counts as a 1-D tensor of one element, as numpy.nonzero does.
class NonZeroKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    std::vector<int64_t> found;
    auto collect = [&](auto tag) -> Expected<void> {
      using T = typename decltype(tag)::type;
      const T* p = x.data_as<T>();
      for (int64_t i = 0; i < x.numel(); ++i)
        if (static_cast<ComputeType<T>>(p[i]) != ComputeType<T>(0)) found.push_back(i);
      return {};
    };
    if (auto r = dispatch_dtype(NonZeroTypes{}, x.dtype(), collect); !r) return r;
    const Shape shape = x.shape().empty() ? Shape{1} : x.shape();
    const auto count = static_cast<int64_t>(found.size());
    auto y = ctx.output(0, DType::kInt64, {static_cast<int64_t>(shape.size()), count});
    if (!y) return std::unexpected(std::move(y.error()));
    int64_t* out = y->mut_as<int64_t>();
    for (int64_t n = 0; n < count; ++n) {
      int64_t rest = found[n];
      for (std::size_t d = shape.size(); d-- > 0;) {
        out[static_cast<int64_t>(d) * count + n] = rest % shape[d];
        rest /= shape[d];
      }
    }
    return {};
  }
};

// ---- Unique -------------------------------------------------------------------------

using UniqueTypes = TypeList<float, double, Half, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t,
                             uint64_t, bool, std::string>;

KernelMatch check_unique(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, UniqueTypes{}));
  if (const auto axis = ctx.attrs().get_int("axis")) NXRT_REQUIRE_MATCH(check_axis_attribute(ctx, *axis));
  return KernelMatch::supported();
}

class UniqueKernel final : public Kernel {
 public:
  UniqueKernel(std::optional<int64_t> axis, bool sorted) : axis_(axis), sorted_(sorted) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(UniqueTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  // The grouping is lib's (nxrt/ep/unique.h, shared with the cuda EP); the distinct slices
  // are copied here in T.
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    const Tensor& x = ctx.input(0);
    auto groups = find_unique(x, axis_, sorted_);
    if (!groups) return std::unexpected(std::move(groups.error()));
    const UniqueGroups& g = *groups;
    const auto unique = static_cast<int64_t>(g.first.size());
    auto y = ctx.output(0, x.dtype(), g.shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const T* in = x.data_as<T>();
    T* out = y->template mut_as<T>();
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t p = 0; p < unique; ++p)
        std::copy_n(in + (o * g.count + g.first[static_cast<std::size_t>(p)]) * g.inner, g.inner,
                    out + (o * unique + p) * g.inner);
    auto write = [&](std::size_t i, const std::vector<int64_t>& values) -> Expected<void> {
      if (!ctx.wants_output(i)) return {};
      auto t = ctx.output(i, DType::kInt64, {static_cast<int64_t>(values.size())});
      if (!t) return std::unexpected(std::move(t.error()));
      std::copy(values.begin(), values.end(), t->template mut_as<int64_t>());
      return {};
    };
    if (auto r = write(1, g.first); !r) return r;
    if (auto r = write(2, g.inverse); !r) return r;
    return write(3, g.counts);
  }

  std::optional<int64_t> axis_;
  bool sorted_;
};

// ---- TopK ---------------------------------------------------------------------------

using TopKFloatTypes = TypeList<float, double, Half>;

// TopK-1 takes k as an attribute; 10 as an input; 11 adds largest/sorted and integer types.
KernelMatch check_top_k(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  if (ctx.opset() >= 11)
    NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, AllNumericTypes{}));
  else
    NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, TopKFloatTypes{}));
  if (ctx.opset() < 10) {
    NXRT_REQUIRE(ctx.attrs().get_int("k").has_value(), "TopK: the k attribute is missing; TopK-1 requires it");
  } else {
    NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
    const auto n = static_numel(ctx.input_type(1));
    NXRT_REQUIRE(!n || *n == 1, "TopK: k has {} elements; it must hold one", *n);
  }
  const int64_t axis = ctx.attrs().int_or("axis", -1);
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(normalize_axis(axis, *rank).has_value() && *rank > 0,
                 "TopK: axis {} is out of range for an input of rank {}; valid axes are [{}, {}]", axis, *rank, -*rank,
                 *rank - 1);
  }
  return KernelMatch::supported();
}

class TopKKernel final : public Kernel {
 public:
  TopKKernel(std::optional<int64_t> k, int64_t axis, bool largest) : k_(k), axis_(axis), largest_(largest) {}

  Expected<void> compute(KernelContext& ctx) override {
    return dispatch_dtype(AllNumericTypes{}, ctx.input(0).dtype(),
                          [&](auto tag) { return run<typename decltype(tag)::type>(ctx); });
  }

 private:
  template <class T>
  Expected<void> run(KernelContext& ctx) {
    using C = ComputeType<T>;
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    const auto axis = resolve_axis("TopK", axis_, shape);
    if (!axis) return std::unexpected(std::move(axis.error()));
    const std::size_t ax = *axis;
    const int64_t n = shape[ax];
    int64_t k = 0;
    if (k_) {
      k = *k_;
    } else {
      const auto ks = ctx.input(1).to_int64_vector();
      if (ks.size() != 1)
        return fail(ErrorCode::kRuntime, fmt::format("TopK: k has {} elements", ks.size()), "k must hold one value",
                    "give k as a 1-element tensor");
      k = ks[0];
    }
    if (k < 0 || k > n)
      return fail(ErrorCode::kRuntime,
                  fmt::format("TopK: k is {} but axis {} of input shape {} has {} elements", k, *axis,
                              shape_to_string(shape), n),
                  "k must be in [0, the axis length]", "give a smaller k");
    Shape out_shape = shape;
    out_shape[ax] = k;
    auto values = ctx.output(0, x.dtype(), out_shape);
    if (!values) return std::unexpected(std::move(values.error()));
    auto indices = ctx.output(1, DType::kInt64, out_shape);
    if (!indices) return std::unexpected(std::move(indices.error()));
    const int64_t outer = dims_product(shape, 0, ax), inner = dims_product(shape, ax + 1, shape.size());
    const T* in = x.data_as<T>();
    T* out_v = values->template mut_as<T>();
    int64_t* out_i = indices->template mut_as<int64_t>();
    const bool largest = largest_;
    ctx.parallel().for_range(
        outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
          std::vector<std::pair<C, int64_t>> line(static_cast<std::size_t>(n));
          for (int64_t l = b; l < e; ++l) {
            const int64_t o = l / inner, j = l % inner;
            const T* src = in + o * n * inner + j;
            for (int64_t i = 0; i < n; ++i) line[i] = {static_cast<C>(src[i * inner]), i};
            // NaN ranks above every number (as numpy sorts it last); ties go to the lower index.
            auto before = [largest](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& c) {
              if constexpr (std::is_floating_point_v<C>) {
                const bool an = std::isnan(a.first), cn = std::isnan(c.first);
                if (an || cn) return an != cn ? (largest ? an : cn) : a.second < c.second;
              }
              if (a.first != c.first) return largest ? a.first > c.first : a.first < c.first;
              return a.second < c.second;
            };
            std::partial_sort(line.begin(), line.begin() + k, line.end(), before);
            T* dv = out_v + o * k * inner + j;
            int64_t* di = out_i + o * k * inner + j;
            for (int64_t i = 0; i < k; ++i) {
              dv[i * inner] = static_cast<T>(line[i].first);
              di[i * inner] = line[i].second;
            }
          }
        });
    return {};
  }

  std::optional<int64_t> k_;
  int64_t axis_;
  bool largest_;
};

KernelDef top_k_def(int64_t since, int64_t until) {
  return KernelDef{{"", "TopK", since}, until, check_top_k, [](const NodeContext& ctx) {
                     const std::optional<int64_t> k = ctx.opset() < 10 ? ctx.attrs().get_int("k") : std::nullopt;
                     const bool largest = ctx.opset() < 11 || ctx.attrs().int_or("largest", 1) != 0;
                     return make_kernel<TopKKernel>(k, ctx.attrs().int_or("axis", -1), largest);
                   }};
}

// ---- ReverseSequence ----------------------------------------------------------------

// ReverseSequence: any element type, rank >= 2, batch_axis and time_axis are 0 and 1.
KernelMatch check_reverse_sequence(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_tensor_inputs(ctx));
  NXRT_REQUIRE_MATCH(require_known_dtype(ctx, 0));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kInt64}));
  const int64_t batch_axis = ctx.attrs().int_or("batch_axis", 1);
  const int64_t time_axis = ctx.attrs().int_or("time_axis", 0);
  NXRT_REQUIRE((batch_axis == 0 && time_axis == 1) || (batch_axis == 1 && time_axis == 0),
               "ReverseSequence: batch_axis {} and time_axis {} must be 0 and 1 in some order", batch_axis, time_axis);
  if (const auto rank = ctx.input_rank(0)) {
    NXRT_REQUIRE(*rank >= 2, "ReverseSequence: input has rank {}; it must have rank 2 or more", *rank);
  }
  return KernelMatch::supported(copy_cost(ctx));
}

class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(bool batch_major) : batch_major_(batch_major) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Shape& shape = x.shape();
    if (shape.size() < 2)
      return fail(ErrorCode::kRuntime, fmt::format("ReverseSequence: input has shape {}", shape_to_string(shape)),
                  "the input needs a batch and a time axis", "give an input of rank 2 or more");
    const int64_t batch = shape[batch_major_ ? 0 : 1], time = shape[batch_major_ ? 1 : 0];
    const std::vector<int64_t> lens = ctx.input(1).to_int64_vector();
    if (static_cast<int64_t>(lens.size()) != batch)
      return fail(
          ErrorCode::kRuntime,
          fmt::format("ReverseSequence: sequence_lens has {} entries but the batch axis of input shape {} has {}",
                      lens.size(), shape_to_string(shape), batch),
          "there is one length per batch entry", "fix the sequence_lens input");
    for (std::size_t b = 0; b < lens.size(); ++b)
      if (lens[b] < 0 || lens[b] > time)
        return fail(
            ErrorCode::kRuntime,
            fmt::format("ReverseSequence: sequence_lens[{}] is {} but the time axis has {} steps", b, lens[b], time),
            "each length must be in [0, the time axis length]", "fix the sequence_lens input");
    auto y = ctx.output(0, x.dtype(), shape);
    if (!y) return std::unexpected(std::move(y.error()));
    const int64_t inner = dims_product(shape, 2, shape.size());
    const auto esize = static_cast<int64_t>(dtype_size(x.dtype()));
    const auto* src = static_cast<const char*>(x.view().data());
    auto* dst = static_cast<char*>(y->mut().data());
    auto offset = [&](int64_t b, int64_t t) { return (batch_major_ ? b * time + t : t * batch + b) * inner * esize; };
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < time; ++t) {
        const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
        copy_elements(x.dtype(), dst + offset(b, t), src + offset(b, from), inner);
      }
    return {};
  }

 private:
  bool batch_major_;
};

}  // namespace

std::vector<KernelDef> selection_kernels() {
  return {
      compress_def(9, 10),
      compress_def(11, 0),
      KernelDef{{"", "NonZero", 9}, 0, check_non_zero, [](const NodeContext&) { return make_kernel<NonZeroKernel>(); }},
      KernelDef{{"", "Unique", 11},
                0,
                check_unique,
                [](const NodeContext& ctx) {
                  return make_kernel<UniqueKernel>(ctx.attrs().get_int("axis"), ctx.attrs().int_or("sorted", 1) != 0);
                }},
      top_k_def(1, 9),
      top_k_def(10, 10),
      top_k_def(11, 0),
      KernelDef{{"", "ReverseSequence", 10},
                0,
                check_reverse_sequence,
                [](const NodeContext& ctx) {
                  return make_kernel<ReverseSequenceKernel>(ctx.attrs().int_or("batch_axis", 1) == 0);
                }},
  };
}

}  // namespace nxrt::cpu
