// Multidirectional (numpy) broadcasting for the elementwise families: the output shape, an
// iteration over contiguous runs of the output, and the dtype dispatch those families share.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "common/kernel_util.h"
#include "nxrt/ep/claim.h"
#include "nxrt/ep/kernel.h"

namespace nxrt::cpu {

// Output elements per parallel chunk of an elementwise loop: below this, threads cost more
// than they save.
inline constexpr int64_t kElementwiseGrain = 16384;

// The shape numpy broadcasting gives `shapes`; an error naming `op`, the two shapes and the
// output axis where their dims differ and neither is 1.
Expected<Shape> broadcast_shape(std::string_view op, std::span<const Shape* const> shapes);

// Claim-time twin of broadcast_shape: declines when two statically known dims of the given
// inputs conflict; unknown ranks and symbolic dims pass (they are checked at run time).
KernelMatch require_broadcastable(const NodeContext& ctx, std::initializer_list<std::size_t> inputs);

// The iteration of N contiguous inputs broadcast to one output. Output axes of size 1 are
// dropped and adjacent axes that every input walks the same way are merged, so the same-
// shape and scalar cases become one flat run and bias-like operands become runs with a
// step of 0; the remaining loop advances an odometer per run instead of dividing per element.
template <std::size_t N>
class Broadcast {
 public:
  using Offsets = std::array<int64_t, N>;

  static Expected<Broadcast> make(std::string_view op, const std::array<const Shape*, N>& inputs);

  const Shape& shape() const { return shape_; }
  int64_t numel() const { return numel_; }

  // Calls run(out, in, step, count) for each maximal run of output elements in [begin, end):
  // output elements out..out+count-1 read input k at in[k] + i * step[k], step[k] in {0, 1}.
  template <class Run>
  void for_each_run(int64_t begin, int64_t end, Run&& run) const;

 private:
  Shape shape_;
  int64_t numel_ = 0;
  std::vector<int64_t> dims_;                    // merged axes, outermost first; never empty
  std::array<std::vector<int64_t>, N> strides_;  // per input, per merged axis; 0 = broadcast
};

template <std::size_t N>
Expected<Broadcast<N>> Broadcast<N>::make(std::string_view op,
                                          const std::array<const Shape*, N>& inputs) {
  auto shape = broadcast_shape(op, inputs);
  if (!shape) return std::unexpected(std::move(shape.error()));
  Broadcast b;
  b.shape_ = std::move(*shape);
  b.numel_ = shape_numel(b.shape_);
  const std::size_t rank = b.shape_.size();
  std::array<std::vector<int64_t>, N> full;
  for (std::size_t k = 0; k < N; ++k) {
    const Shape& s = *inputs[k];
    full[k].assign(rank, 0);
    int64_t stride = 1;
    for (std::size_t i = s.size(); i-- > 0;) {
      full[k][rank - s.size() + i] = s[i] == 1 ? 0 : stride;
      stride *= s[i];
    }
  }
  // Built innermost first, reversed at the end.
  for (std::size_t ax = rank; ax-- > 0;) {
    const int64_t d = b.shape_[ax];
    if (d == 1) continue;
    if (!b.dims_.empty()) {
      const int64_t inner = b.dims_.back();
      bool merge = true;
      for (std::size_t k = 0; k < N; ++k) merge = merge && full[k][ax] == b.strides_[k].back() * inner;
      if (merge) {
        b.dims_.back() *= d;
        continue;
      }
    }
    b.dims_.push_back(d);
    for (std::size_t k = 0; k < N; ++k) b.strides_[k].push_back(full[k][ax]);
  }
  if (b.dims_.empty()) {
    b.dims_.push_back(1);
    for (std::size_t k = 0; k < N; ++k) b.strides_[k].push_back(0);
  }
  std::reverse(b.dims_.begin(), b.dims_.end());
  for (auto& s : b.strides_) std::reverse(s.begin(), s.end());
  return b;
}

template <std::size_t N>
template <class Run>
void Broadcast<N>::for_each_run(int64_t begin, int64_t end, Run&& run) const {
  if (begin >= end) return;
  const std::size_t outer_rank = dims_.size() - 1;
  const int64_t inner = dims_.back();
  Offsets step{}, in{};
  for (std::size_t k = 0; k < N; ++k) step[k] = strides_[k].back();
  // The one division of the chunk: where `begin` lies.
  std::vector<int64_t> coord(outer_rank);
  int64_t pos = begin % inner;
  int64_t rest = begin / inner;
  for (std::size_t ax = outer_rank; ax-- > 0;) {
    coord[ax] = rest % dims_[ax];
    rest /= dims_[ax];
    for (std::size_t k = 0; k < N; ++k) in[k] += coord[ax] * strides_[k][ax];
  }
  for (std::size_t k = 0; k < N; ++k) in[k] += pos * step[k];
  for (int64_t out = begin;;) {
    const int64_t count = std::min(inner - pos, end - out);
    run(out, in, step, count);
    out += count;
    if (out >= end) return;
    for (std::size_t k = 0; k < N; ++k) in[k] -= pos * step[k];
    pos = 0;
    for (std::size_t ax = outer_rank; ax-- > 0;) {
      for (std::size_t k = 0; k < N; ++k) in[k] += strides_[k][ax];
      if (++coord[ax] < dims_[ax]) break;
      for (std::size_t k = 0; k < N; ++k) in[k] -= dims_[ax] * strides_[k][ax];
      coord[ax] = 0;
    }
  }
}

// Runs `run` (see Broadcast::for_each_run) over the whole output, in parallel chunks.
template <std::size_t N, class Run>
void parallel_runs(const Parallel& parallel, const Broadcast<N>& bc, Run&& run) {
  parallel.for_range(bc.numel(), kElementwiseGrain,
                     [&](int64_t begin, int64_t end) { bc.for_each_run(begin, end, run); });
}

// The DType of a kernel's C++ element type; families specialize it for their own types
// (a float16 wrapper, std::string).
template <class T>
struct ElementDType {
  static constexpr DType kValue = dtype_of<T>();
};
template <>
struct ElementDType<std::string> {
  static constexpr DType kValue = DType::kString;
};

// out[i] = op(a[i * sa], b[i * sb]) for i < n, sa and sb in {0, 1}. One branch per stride
// pattern gives the compiler unit-stride loops it can vectorize.
template <class A, class B, class O, class Op>
inline void binary_run(O* __restrict out, const A* __restrict a, int64_t sa,
                       const B* __restrict b, int64_t sb, int64_t n, Op op) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], b[i]);
  } else if (sa == 1) {
    const B bv = *b;
    for (int64_t i = 0; i < n; ++i) out[i] = op(a[i], bv);
  } else if (sb == 1) {
    const A av = *a;
    for (int64_t i = 0; i < n; ++i) out[i] = op(av, b[i]);
  } else {
    std::fill_n(out, n, static_cast<O>(op(*a, *b)));
  }
}

// Output 0 = op(a, b) with broadcasting; A and B are the input element types, O the
// output's.
template <class A, class B, class O, class Op>
Expected<void> broadcast_binary(KernelContext& ctx, std::string_view op_name, const Tensor& a,
                                const Tensor& b, Op op) {
  auto bc = Broadcast<2>::make(op_name, {&a.shape(), &b.shape()});
  if (!bc) return std::unexpected(std::move(bc.error()));
  Expected<Tensor> y = ctx.output(0, ElementDType<O>::kValue, bc->shape());
  if (!y) return std::unexpected(std::move(y.error()));
  const A* pa = a.data_as<A>();
  const B* pb = b.data_as<B>();
  O* py = y->mut_as<O>();
  parallel_runs(ctx.parallel(), *bc,
                [&](int64_t out, const std::array<int64_t, 2>& in,
                    const std::array<int64_t, 2>& step, int64_t n) {
                  binary_run(py + out, pa + in[0], step[0], pb + in[1], step[1], n, op);
                });
  return {};
}

// Output 0 = op(input 0, input 1) with broadcasting.
template <class A, class B, class O, class Op>
Expected<void> broadcast_binary(KernelContext& ctx, std::string_view op_name, Op op) {
  return broadcast_binary<A, B, O>(ctx, op_name, ctx.input(0), ctx.input(1), op);
}

template <class... Ts>
struct TypeList {};

template <class T>
struct TypeTag {
  using type = T;
};

using FloatTypes = TypeList<float, double>;
using NumericTypes =
    TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t>;

// Calls fn(TypeTag<T>{}) for the T of `types` whose dtype is `t` and returns its result.
// A dtype outside the list means a claim check let through what its kernel lacks.
template <class... Ts, class Fn>
Expected<void> dispatch_dtype(TypeList<Ts...>, DType t, Fn&& fn) {
  Expected<void> result;
  const bool matched = ((ElementDType<Ts>::kValue == t && (result = fn(TypeTag<Ts>{}), true)) || ...);
  if (!matched)
    return fail(ErrorCode::kRuntime,
                fmt::format("a cpu kernel received type {}, which it does not implement", dtype_name(t)),
                "its claim check accepted the type", "report this as a bug in the cpu EP");
  return result;
}

// require_input_dtype for the types of a TypeList.
template <class... Ts>
KernelMatch require_input_dtype_in(const NodeContext& ctx, std::size_t i, TypeList<Ts...>) {
  return require_input_dtype(ctx, i, {ElementDType<Ts>::kValue...});
}

}  // namespace nxrt::cpu
