// The attention of ONNX Runtime's com.microsoft Attention and MultiHeadAttention once their
// inputs are heads (nxrt/ep/bert_attention.h states it), in float on the packed GEMM.
#pragma once

#include <cstdint>
#include <string>

#include "nxrt/ep/bert_attention.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ep/tensor.h"

namespace nxrt::cpu {

// One (batch, head)'s rows of a [batch, heads, rows, width]-like tensor: data + b * batch_stride
// + h * head_stride, rows row_stride apart.
struct HeadMatrix {
  const float* data = nullptr;
  int64_t batch_stride = 0, head_stride = 0, row_stride = 0;
  const float* at(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }
};

struct BertAttention {
  int64_t batch = 0, heads = 0, q_seq = 0, total = 0, past = 0, head_size = 0, v_head_size = 0;
  float scale = 1.f;
  float mask_filter_value = -10000.f;
  bool causal = false;  // key t hidden from query s when t > past + s (several queries only)
  HeadMatrix q, k, v;   // [.., q_seq, head_size], [.., total, head_size], [.., total, v_head_size]
  KeyMaskForm mask_form = KeyMaskForm::kNone;
  const int32_t* mask = nullptr;
  // attention_bias [batch or 1, heads or 1, q_seq, total]: strides 0 where broadcast.
  const float* bias = nullptr;
  int64_t bias_batch_stride = 0, bias_head_stride = 0;
  float* y = nullptr;   // [batch, q_seq, heads * v_head_size]
  float* qk = nullptr;  // optional [batch, heads, q_seq, total]: the scores before softmax
};

// Reads an int32 mask into `a`, whose sizes are set: its form, or an error naming `op` when its
// shape is none of them for those sizes or a key length is negative. `end_start`: [2 * batch]
// reads as ends and starts (Attention; MultiHeadAttention refuses it). `dummy`: a [batch or 1, 1]
// mask means no mask (Attention).
Expected<void> read_key_mask(std::string_view op, const Tensor& mask, bool end_start, bool dummy, BertAttention& a);

// Reads attention_bias ([batch or 1, heads or 1, q_seq, total]) into `a`, whose sizes are set, or
// an error naming `op` when its shape differs.
Expected<void> read_attention_bias(std::string_view op, const Tensor& bias, BertAttention& a);

void attend(const BertAttention& a, const Parallel& parallel);

}  // namespace nxrt::cpu
