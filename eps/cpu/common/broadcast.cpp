// Broadcast output shapes, at run time and from the static shapes a claim sees.
#include "common/broadcast.h"

namespace nxrt::cpu {

Expected<Shape> broadcast_shape(std::string_view op, std::span<const Shape* const> shapes) {
  std::size_t rank = 0;
  for (const Shape* s : shapes) rank = std::max(rank, s->size());
  Shape out(rank, 1);
  // Per output axis, the input that set a dim other than 1, for the message.
  std::vector<std::size_t> owner(rank, 0);
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    const Shape& s = *shapes[k];
    for (std::size_t i = 0; i < s.size(); ++i) {
      const std::size_t ax = rank - s.size() + i;
      const int64_t d = s[i];
      if (d == 1 || d == out[ax]) continue;
      if (out[ax] == 1) {
        out[ax] = d;
        owner[ax] = k;
        continue;
      }
      return fail(ErrorCode::kRuntime,
                  fmt::format("{}: input shapes {} and {} are not broadcastable", op,
                              shape_to_string(*shapes[owner[ax]]), shape_to_string(s)),
                  fmt::format("at output axis {} input {} has {} and input {} has {}; numpy "
                              "broadcasting needs equal dims or 1", ax, owner[ax], out[ax], k, d),
                  "fix the shapes the model feeds to the node");
    }
  }
  return out;
}

KernelMatch require_broadcastable(const NodeContext& ctx, std::initializer_list<std::size_t> inputs) {
  std::size_t rank = 0;
  for (std::size_t i : inputs) {
    const ValueType* t = ctx.input_type(i);
    if (t && t->shape) rank = std::max(rank, t->shape->size());
  }
  std::vector<int64_t> known(rank, 1);
  std::vector<std::size_t> owner(rank, 0);
  for (std::size_t i : inputs) {
    const ValueType* t = ctx.input_type(i);
    if (!t || !t->shape) continue;
    const std::vector<Dim>& dims = *t->shape;
    for (std::size_t j = 0; j < dims.size(); ++j) {
      const std::size_t ax = rank - dims.size() + j;
      const int64_t d = dims[j].size;
      if (!dims[j].known() || d == 1 || d == known[ax]) continue;
      if (known[ax] == 1) {
        known[ax] = d;
        owner[ax] = i;
        continue;
      }
      return NXRT_DENY("{}: inputs {} ({}) and {} ({}) are not broadcastable: at output axis {} "
                       "they have {} and {}; fix the shapes the model feeds to the node",
                       ctx.node().op_type, owner[ax], ctx.input_type(owner[ax])->to_string(), i,
                       t->to_string(), ax, known[ax], d);
    }
  }
  return KernelMatch::supported();
}

}  // namespace nxrt::cpu
