// The oneDNN EP's op table: every family's registrations in one list.
#include "ops/ops.h"

namespace nxrt::onednn {

std::vector<OnednnOpDef> all_ops() {
  std::vector<OnednnOpDef> out;
  for (auto family : {conv_ops, matmul_ops, pool_ops, normalization_ops, softmax_ops, eltwise_ops, binary_ops,
                      concat_ops, layout_ops, pattern_ops})
    for (OnednnOpDef& def : family()) out.push_back(std::move(def));
  return out;
}

}  // namespace nxrt::onednn
