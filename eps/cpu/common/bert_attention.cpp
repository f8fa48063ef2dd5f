#include "common/bert_attention.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "common/gemm.h"
#include "common/vector_math.h"

namespace nxrt::cpu {

Expected<void> read_key_mask(std::string_view op, const Tensor& mask, bool end_start, bool dummy, BertAttention& a) {
  auto form = bert_key_mask_form(op, mask.shape(), a.batch, a.q_seq, a.total, end_start, dummy);
  if (!form) return std::unexpected(form.error());
  a.mask_form = *form;
  a.mask = mask.data_as<int32_t>();
  if (a.mask_form != KeyMaskForm::kKeyLengths && a.mask_form != KeyMaskForm::kEndStart) return {};
  const int64_t n = a.mask_form == KeyMaskForm::kEndStart ? 2 * a.batch : a.batch;
  for (int64_t i = 0; i < n; ++i)
    if (a.mask[i] < 0)
      return fail(ErrorCode::kRuntime, fmt::format("{}: mask value {} at index {} is negative", op, a.mask[i], i),
                  "a 1-D mask holds key lengths (or ends and starts)", "give lengths of 0 or more");
  return {};
}

Expected<void> read_attention_bias(std::string_view op, const Tensor& bias, BertAttention& a) {
  auto strides = bert_attention_bias_strides(op, bias.shape(), a.batch, a.heads, a.q_seq, a.total);
  if (!strides) return std::unexpected(strides.error());
  a.bias = bias.data_as<float>();
  a.bias_batch_stride = strides->batch;
  a.bias_head_stride = strides->head;
  return {};
}

namespace {

constexpr int64_t kCausalBlock = 32;  // queries scored together when causal

// Query s's scores before the product: attention_bias plus the mask term, causal keys lowest.
void bert_initial_row(const BertAttention& a, int64_t b, int64_t h, int64_t s, float* row) {
  const int64_t total = a.total;
  if (a.bias) {
    std::copy_n(a.bias + b * a.bias_batch_stride + h * a.bias_head_stride + s * total, total, row);
  } else {
    std::fill_n(row, total, 0.f);
  }
  const float hidden = a.mask_filter_value;
  switch (a.mask_form) {
    case KeyMaskForm::kNone:
      break;
    case KeyMaskForm::kKeyLengths:
      for (int64_t t = std::max<int64_t>(a.mask[b], 0); t < total; ++t) row[t] += hidden;
      break;
    case KeyMaskForm::kEndStart: {
      const int64_t end = a.mask[b], start = std::min<int64_t>(a.mask[a.batch + b], total);
      for (int64_t t = 0; t < total; ++t)
        if (t >= end || t < start) row[t] += hidden;
      break;
    }
    case KeyMaskForm::kRaw2D:
    case KeyMaskForm::kRaw3D: {
      const int32_t* m = a.mask + (a.mask_form == KeyMaskForm::kRaw2D ? b : b * a.q_seq + s) * total;
      for (int64_t t = 0; t < total; ++t)
        if (m[t] <= 0) row[t] += hidden;
      break;
    }
  }
  if (a.causal && a.q_seq > 1)
    std::fill(row + std::min(total, a.past + s + 1), row + total, std::numeric_limits<float>::lowest());
}

void bert_softmax_row(float* row, int64_t n) {
  exp_shifted(row, lane_max(row, n), row, n);
  const float inv = 1.f / lane_sum<float>(row, n);
  for (int64_t t = 0; t < n; ++t) row[t] *= inv;
}

}  // namespace

void attend(const BertAttention& a, const Parallel& parallel) {
  const bool initial = a.bias || a.mask_form != KeyMaskForm::kNone || (a.causal && a.q_seq > 1);
  const int64_t rows = a.q_seq, keys = a.total, y_row = a.heads * a.v_head_size;
  // Causal attention without a qk output goes in blocks of queries, each over the keys its last
  // query sees (a prompt's later keys are the lowest float for the block's queries: their
  // probabilities are 0), about half the products of a prompt.
  const bool blocks = a.causal && rows > 1 && !a.qk;
  const int64_t block = blocks ? kCausalBlock : std::max<int64_t>(rows, 1);
  auto one_pair = [&](int64_t pair, std::vector<float>& scores, const Parallel& par) {
    const int64_t b = pair / a.heads, h = pair % a.heads;
    scores.resize(static_cast<std::size_t>(rows * keys));
    float* s = scores.data();
    if (initial)
      for (int64_t r = 0; r < rows; ++r) bert_initial_row(a, b, h, r, s + r * keys);
    for (int64_t r0 = 0; r0 < rows; r0 += block) {
      const int64_t n = std::min(block, rows - r0), cols = blocks ? std::min(keys, a.past + r0 + n) : keys;
      float* sb = s + r0 * keys;
      gemm(n, cols, a.head_size, a.scale, GemmOperand::matrix(a.q.at(b, h) + r0 * a.q.row_stride, a.q.row_stride),
           GemmOperand::matrix(a.k.at(b, h), a.k.row_stride, true), initial ? 1.f : 0.f, sb, keys, par);
      if (a.qk) std::copy_n(sb, n * keys, a.qk + (pair * rows + r0) * keys);
      for (int64_t r = 0; r < n; ++r) bert_softmax_row(sb + r * keys, cols);
      gemm(n, a.v_head_size, cols, 1.f, GemmOperand::matrix(sb, keys),
           GemmOperand::matrix(a.v.at(b, h), a.v.row_stride), 0.f,
           a.y + (b * rows + r0) * y_row + h * a.v_head_size, y_row, par);
    }
  };
  const int64_t pairs = a.batch * a.heads;
  if (keys == 0) std::fill_n(a.y, a.batch * rows * y_row, 0.f);  // no key to attend to
  if (keys == 0 || rows == 0) return;
  if (pairs >= parallel.threads()) {
    parallel.for_range(pairs, 1, [&](int64_t begin, int64_t end) {
      const SerialParallel serial;
      std::vector<float> scores;
      for (int64_t pair = begin; pair < end; ++pair) one_pair(pair, scores, serial);
    });
  } else {
    std::vector<float> scores;
    for (int64_t pair = 0; pair < pairs; ++pair) one_pair(pair, scores, parallel);
  }
}

}  // namespace nxrt::cpu
