// Every family's table, registered into the cuda EP's one OpTable.
#include <fmt/format.h>

#include "ops/ops.h"

namespace nxrt::cuda {

Expected<std::shared_ptr<const OpTable>> make_op_table() {
  auto table = std::make_shared<OpTable>();
  for (auto family : {elementwise_ops, matmul_ops, conv_ops, conv_transpose_ops, normalization_ops, reduce_ops, layout_ops,
                      gather_ops, pool_ops, shape_ops, pad_tile_ops, cumsum_ops, trilu_ops, resize_ops, depth_space_ops,
                      col2im_ops, scatter_ops, generator_ops, signal_ops, topk_ops, einsum_ops,
                      quantize_ops, grid_sample_ops, select_ops, recurrent_ops, loss_ops,
                      integer_matmul_ops, integer_conv_ops, det_ops, roi_align_ops, max_roi_pool_ops, deform_conv_ops,
                      reverse_sequence_ops, training_ops, random_ops, transformer_ops,
                      microsoft_activation_ops, microsoft_normalization_ops, embed_layer_normalization_ops,
                      microsoft_attention_ops,
                      group_query_attention_ops, matmul_nbits_ops, gather_block_quantized_ops})
    for (CudaOpDef& op : family()) {
      const OpKey key = op.def.key;
      if (op.elementwise) table->elementwise.emplace(key, std::move(*op.elementwise));
      if (op.build) table->builders.emplace(key, std::move(op.build));
      if (auto r = table->registry.add(std::move(op.def)); !r)
        return forward_error(std::move(r), fmt::format("registering {} in the cuda EP", key.to_string()));
    }
  return std::shared_ptr<const OpTable>(std::move(table));
}

const ElementwiseDef* OpTable::elementwise_def(const Node& node) const {
  const KernelDef* def = find(node);
  if (!def) return nullptr;
  auto it = elementwise.find(def->key);
  if (it == elementwise.end() || (it->second.applies && !it->second.applies(node))) return nullptr;
  return &it->second;
}

}  // namespace nxrt::cuda
