// The cpu EP's com.microsoft GatherBlockQuantized: what ONNX Runtime's outputs in
// testdata/com_microsoft leave out. A table of rank 3 (several rows per index) against the
// definition, declines, and the run-time errors for bad indices and scales.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

NodeSpec gather(std::vector<Tensor> inputs, std::vector<std::pair<std::string, Attribute::Value>> extra = {}) {
  std::vector<bool> constant(inputs.size(), true);
  constant[1] = false;  // indices
  std::vector<std::pair<std::string, Attribute::Value>> all = {{"bits", int64_t{4}}, {"block_size", int64_t{16}}};
  all.insert(all.end(), extra.begin(), extra.end());
  return {.op_type = "GatherBlockQuantized", .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
          .constant = std::move(constant), .attrs = attrs(std::move(all))};
}

}  // namespace

TEST_CASE("GatherBlockQuantized gathers every row of a table of rank 3 by the definition", "[cpu][gather_bq]") {
  // data [5, 2, 16] uint8: 32 4-bit values per row, two blocks of 16; scales [5, 2, 2].
  std::mt19937 rng(3);
  const Tensor data = random_ints<uint8_t>({5, 2, 16}, rng);
  const Tensor zeros = random_ints<uint8_t>({5, 2, 1}, rng);
  const Tensor scales = random_tensor({5, 2, 2}, 4, 0.01f, 0.1f);
  const Tensor indices = Tensor::from_vector<int64_t>({3}, {4, -5, 2});
  const Tensor y = run_one(gather({data, indices, scales, zeros}, {{"quantize_axis", int64_t{-1}}}));
  REQUIRE(y.shape() == Shape{3, 2, 32});
  const int64_t rows[3] = {4, 0, 2};
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t sub = 0; sub < 2; ++sub)
      for (int64_t k = 0; k < 32; ++k) {
        const int64_t row = rows[i] * 2 + sub;
        const uint8_t byte = data.data_as<uint8_t>()[row * 16 + k / 2];
        const int q = k % 2 ? byte >> 4 : byte & 15;
        const uint8_t zbyte = zeros.data_as<uint8_t>()[row];
        const int z = k / 16 ? zbyte >> 4 : zbyte & 15;
        const float want = static_cast<float>(q - z) * scales.data_as<float>()[row * 2 + k / 16];
        REQUIRE(y.data_as<float>()[(i * 2 + sub) * 32 + k] == want);
      }
}

TEST_CASE("GatherBlockQuantized declines what the cpu EP does not implement and names bad inputs",
          "[cpu][gather_bq][claim]") {
  std::mt19937 rng(5);
  const Tensor data = random_ints<uint8_t>({6, 16}, rng), scales = random_tensor({6, 2}, 6);
  const Tensor indices = Tensor::from_vector<int64_t>({2}, {1, 5});
  auto declined = [](const NodeSpec& spec) {
    const KernelMatch m = claim_on_cpu(spec);
    REQUIRE_FALSE(m);
    return m.reason();
  };
  CHECK(declined(gather({data, indices, scales}, {{"gather_axis", int64_t{1}}})) ==
        "GatherBlockQuantized: gather_axis 1 and quantize_axis 1 of data of rank 2; the cpu EP implements gathering "
        "along the first axis of a table quantized along its last (rank 2 or more)");
  CHECK(declined(gather({data, indices, scales, random_ints<int8_t>({6, 1}, rng)})) ==
        "GatherBlockQuantized: zero_points are int8 and data uint8; they must be one type");
  CHECK(declined(gather({data, indices, scales}, {{"block_size", int64_t{24}}})) ==
        "GatherBlockQuantized: block_size 24 must be a power of two of at least 16");
  auto out_of_range = run_on_cpu(gather({data, Tensor::from_vector<int64_t>({2}, {1, 6}), scales}));
  REQUIRE_FALSE(out_of_range);
  CHECK_THAT(out_of_range.error().render(),
             Catch::Matchers::Contains("GatherBlockQuantized: index 6 (element 1 of indices) is outside the table's "
                                       "6 rows"));
  auto wrong_scales = run_on_cpu(gather({data, indices, random_tensor({6, 3}, 7)}));
  REQUIRE_FALSE(wrong_scales);
  CHECK_THAT(wrong_scales.error().render(),
             Catch::Matchers::Contains("rows of 32 values in blocks of 16 need scales [6,2]"));
}
