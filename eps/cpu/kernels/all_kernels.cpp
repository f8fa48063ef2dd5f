// The CPU EP's kernel list: the concatenation of every family's table.
#include "kernels/kernels.h"

#include <iterator>

namespace nxrt::cpu {

std::vector<KernelDef> all_kernels() {
  std::vector<KernelDef> all;
  for (auto family : {unary_kernels, binary_kernels, compare_kernels, cast_kernels, softmax_kernels, normalization_kernels, reduce_kernels, matmul_kernels, conv_kernels, pool_kernels, shape_ops_kernels, transpose_kernels, concat_split_kernels, slice_gather_kernels, constant_kernels,
                      activation_kernels, variadic_kernels, bitwise_kernels, arg_reduce_kernels, cumulative_kernels, loss_kernels, training_kernels, gradient_kernels, random_kernels, string_ops_kernels, scatter_gather_kernels, pad_kernels, expand_tile_kernels, depth_space_kernels, generators_kernels, matrix_ops_kernels, selection_kernels, resize_kernels, grid_sample_kernels, detection_kernels, conv_transpose_kernels, rnn_kernels, signal_kernels, quantize_kernels, qlinear_kernels, qlinear_pool_kernels, matmul_nbits_kernels, skip_normalization_kernels, microsoft_activation_kernels, group_query_attention_kernels, gather_block_quantized_kernels, embed_layer_normalization_kernels, microsoft_attention_kernels, multi_head_attention_kernels, quantize_linear_kernels, sequence_kernels, optional_kernels, control_flow_kernels,
                      group_normalization_kernels, col2im_kernels, deform_conv_kernels, max_roi_pool_kernels, center_crop_pad_kernels, affine_grid_kernels, rotary_embedding_kernels,
                      attention_kernels, tensor_scatter_kernels}) {
    auto defs = family();
    std::move(defs.begin(), defs.end(), std::back_inserter(all));
  }
  return all;
}

}  // namespace nxrt::cpu
