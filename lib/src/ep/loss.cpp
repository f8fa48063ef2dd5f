// The loss ops' claim checks (nxrt/ep/loss.h).
#include "nxrt/ep/loss.h"

#include <fmt/format.h>

namespace nxrt {

KernelMatch check_loss_node(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  const std::string reduction = ctx.attrs().string_or("reduction", "mean");
  NXRT_REQUIRE(reduction == "none" || reduction == "sum" || reduction == "mean",
               "{}: reduction '{}' is not one of none, sum, mean", op, reduction);
  const std::optional<int64_t> rank = ctx.input_rank(0), target_rank = ctx.input_rank(1);
  NXRT_REQUIRE(!rank || *rank >= 2, "{}: input 0 has rank {}; expected (N, C, d1..dk) of rank 2 or more", op,
               rank.value_or(0));
  NXRT_REQUIRE(!rank || !target_rank || *target_rank == *rank - 1,
               "{}: target (input 1) has rank {}; expected rank {}, one less than input 0", op, target_rank.value_or(0),
               rank.value_or(0) - 1);
  return KernelMatch::supported();
}

}  // namespace nxrt
