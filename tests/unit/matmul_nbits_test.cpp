// The cpu EP's com.microsoft MatMulNBits: what ONNX Runtime's outputs in testdata/com_microsoft
// leave out. Both multiplication paths (a few rows, many rows) against the definition computed
// here in double, over 2, 4 and 8 bits, every zero point form, K off the block, columns off the
// panel; weights read once (constants) or at every run; declines and run-time errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "common/vector_math.h"
#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

enum class Zeros { kNone, kPacked, kFloat };

// A MatMulNBits problem with random weights, and Y by the definition.
struct NBitsProblem {
  int64_t rows, k, n, bits, block;
  Zeros zeros;
  std::vector<uint8_t> q;  // [n][padded k] unpacked values
  std::vector<float> scales, zero_values, a;

  NBitsProblem(int64_t rows_, int64_t k_, int64_t n_, int64_t bits_, int64_t block_, Zeros zeros_, unsigned seed)
      : rows(rows_), k(k_), n(n_), bits(bits_), block(block_), zeros(zeros_) {
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> value(0, (1 << bits) - 1);
    q.resize(static_cast<std::size_t>(n * blocks() * block));
    for (auto& v : q) v = static_cast<uint8_t>(value(rng));
    scales = random_floats(static_cast<std::size_t>(n * blocks()), seed + 1, 0.01f, 0.05f);
    for (int64_t i = 0; i < n * blocks(); ++i)
      zero_values.push_back(zeros == Zeros::kNone    ? static_cast<float>(1 << (bits - 1))
                            : zeros == Zeros::kFloat ? static_cast<float>(value(rng)) + 0.25f
                                                     : static_cast<float>(value(rng)));
    a = random_floats(static_cast<std::size_t>(rows * k), seed + 2, -1.f, 1.f);
  }
  int64_t blocks() const { return (k + block - 1) / block; }

  // Values of `bits` bits packed low bits first into rows of `per_row` values.
  std::vector<uint8_t> pack(const std::vector<uint8_t>& values, int64_t rows_of, int64_t per_row) const {
    const int64_t per_byte = 8 / bits, bytes = (per_row + per_byte - 1) / per_byte;
    std::vector<uint8_t> out(static_cast<std::size_t>(rows_of * bytes));
    for (int64_t r = 0; r < rows_of; ++r)
      for (int64_t i = 0; i < per_row; ++i)
        out[static_cast<std::size_t>(r * bytes + i / per_byte)] |=
            static_cast<uint8_t>(values[static_cast<std::size_t>(r * per_row + i)] << (i % per_byte * bits));
    return out;
  }

  NodeSpec spec(bool constant_weights, std::vector<float> bias = {}, int64_t accuracy_level = 0) const {
    const int64_t block_bytes = block * bits / 8;
    std::vector<Tensor> inputs = {
        Tensor::from_vector<float>({rows, k}, a),
        Tensor::from_vector<uint8_t>({n, blocks(), block_bytes}, pack(q, n * blocks(), block)),
        Tensor::from_vector<float>({n, blocks()}, scales)};
    if (zeros == Zeros::kFloat) {
      inputs.push_back(Tensor::from_vector<float>({n, blocks()}, zero_values));
    } else if (zeros == Zeros::kPacked) {
      std::vector<uint8_t> z(zero_values.begin(), zero_values.end());
      inputs.push_back(Tensor::from_vector<uint8_t>({n, (blocks() * bits + 7) / 8}, pack(z, n, blocks())));
    } else if (!bias.empty()) {
      inputs.emplace_back();
    }
    if (!bias.empty()) {
      inputs.emplace_back();  // g_idx
      inputs.push_back(Tensor::from_vector<float>({n}, bias));
    }
    std::vector<bool> constant(inputs.size(), constant_weights);
    constant[0] = false;
    return {.op_type = "MatMulNBits", .domain = "com.microsoft", .opset = 1, .inputs = std::move(inputs),
            .constant = std::move(constant),
            .attrs = attrs({{"K", k}, {"N", n}, {"bits", bits}, {"block_size", block},
                            {"accuracy_level", accuracy_level}})};
  }

  // Y[r][c] = sum_k A[r][k] (q[c][k] - zero) * scale (+ bias[c]), in double.
  std::vector<double> expected(const std::vector<float>& bias = {}) const {
    std::vector<double> y(static_cast<std::size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < n; ++c) {
        double sum = bias.empty() ? 0.0 : bias[static_cast<std::size_t>(c)];
        for (int64_t i = 0; i < k; ++i) {
          const auto at = static_cast<std::size_t>(c * blocks() + i / block);
          const double w = (q[static_cast<std::size_t>(c * blocks() * block + i)] - double{zero_values[at]}) *
                           double{scales[at]};
          sum += double{a[static_cast<std::size_t>(r * k + i)]} * w;
        }
        y[static_cast<std::size_t>(r * n + c)] = sum;
      }
    return y;
  }
};

void check_close(const Tensor& y, const std::vector<double>& want) {
  REQUIRE(y.numel() == static_cast<int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    REQUIRE(std::abs(y.data_as<float>()[i] - want[i]) <= 1e-4 + 1e-5 * std::abs(want[i]));
  }
}

}  // namespace

TEST_CASE("MatMulNBits gives the definition's Y on both paths, every width and zero point form",
          "[cpu][matmul_nbits]") {
  struct Shape5 {
    int64_t rows, k, n, bits, block;
    Zeros zeros;
  };
  // Up to 4 rows take the direct path, more the GEMM panels (64 columns each; 100 and 70 leave a
  // partial panel and a partial strip); K 40, 160 and 200 end inside a block.
  const Shape5 shapes[] = {
      {1, 64, 24, 4, 32, Zeros::kPacked}, {4, 40, 10, 4, 16, Zeros::kNone},   {3, 160, 7, 4, 32, Zeros::kFloat},
      {2, 96, 5, 8, 32, Zeros::kPacked},  {1, 48, 12, 2, 16, Zeros::kPacked}, {5, 160, 100, 4, 32, Zeros::kPacked},
      {9, 200, 70, 2, 64, Zeros::kFloat}, {17, 96, 64, 8, 16, Zeros::kNone},  {6, 256, 33, 4, 128, Zeros::kPacked},
  };
  unsigned seed = 100;
  for (const Shape5& s : shapes) {
    INFO("rows " << s.rows << " K " << s.k << " N " << s.n << " bits " << s.bits << " block " << s.block);
    const NBitsProblem p(s.rows, s.k, s.n, s.bits, s.block, s.zeros, seed += 10);
    const std::vector<float> bias = random_floats(static_cast<std::size_t>(s.n), seed + 5);
    for (bool constant : {true, false}) {
      INFO((constant ? "constant weights" : "weights computed at run time"));
      check_close(run_one(p.spec(constant)), p.expected());
      check_close(run_one(p.spec(constant, bias)), p.expected(bias));
    }
  }
}

TEST_CASE("MatMulNBits at accuracy_level 4 stays within A's int8 quantization error of the definition",
          "[cpu][matmul_nbits]") {
  // Up to 8 rows of 4-bit weights may multiply as int8 (where the CPU has AVX-512 VNNI and VBMI;
  // elsewhere in float, which passes too). Each block of a row of A is quantized with a step of
  // max|a| / 127, so Y may move by half a step times the block's sum of |W|.
  for (const int64_t rows : {1, 3, 8, 17}) {  // 17: the GEMM panels, on A quantized and restored
    for (const Zeros zeros : {Zeros::kPacked, Zeros::kFloat, Zeros::kNone}) {
      INFO("rows " << rows << " zero points " << static_cast<int>(zeros));
      // 4 bits (the int8 path up to 8 rows), and 8 bits (A quantized, the float paths).
      const int64_t bits = rows == 3 ? 8 : 4;
      const NBitsProblem p(rows, 200, 37, bits, 32, zeros, 300 + static_cast<unsigned>(rows));
      const Tensor y = run_one(p.spec(true, {}, 4));
      const std::vector<double> want = p.expected();
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < p.n; ++c) {
          double bound = 1e-4;
          for (int64_t b = 0; b < p.blocks(); ++b) {
            double top = 0, weights = 0;
            for (int64_t i = b * p.block; i < std::min(p.k, (b + 1) * p.block); ++i) {
              const auto at = static_cast<std::size_t>(c * p.blocks() + b);
              top = std::max(top, std::abs(double{p.a[static_cast<std::size_t>(r * p.k + i)]}));
              weights += std::abs((p.q[static_cast<std::size_t>(c * p.blocks() * p.block + i)] -
                                   double{p.zero_values[at]}) * p.scales[at]);
            }
            bound += top / 127 / 2 * weights * 1.001;
          }
          const double got = y.data_as<float>()[r * p.n + c], exact = want[static_cast<std::size_t>(r * p.n + c)];
          INFO("row " << r << " column " << c << " got " << got << " exact " << exact << " bound " << bound);
          REQUIRE(std::abs(got - exact) <= bound);
        }
    }
  }
}

TEST_CASE("MatMulNBits keeps A's leading dims and computes float16 in float", "[cpu][matmul_nbits]") {
  const NBitsProblem p(6, 64, 20, 4, 32, Zeros::kPacked, 7);
  NodeSpec spec = p.spec(true);
  spec.inputs[0] = Tensor::from_vector<float>({2, 3, 64}, p.a);
  const Tensor y = run_one(spec);
  REQUIRE(y.shape() == Shape{2, 3, 20});
  check_close(y, p.expected());
  NodeSpec empty = spec;
  empty.inputs[0] = Tensor::from_vector<float>({2, 0, 64}, {});
  REQUIRE(run_one(empty).shape() == Shape{2, 0, 20});
  // float16: A, the scales and Y; the same problem within float16's rounding.
  auto halves = [](const Tensor& t) {
    std::vector<float> f(t.data_as<float>(), t.data_as<float>() + t.numel());
    Tensor h = Tensor::empty(DType::kFloat16, t.shape());
    cpu::floats_to_halves(f.data(), h.mut_as<uint16_t>(), t.numel());
    return h;
  };
  spec.inputs[0] = halves(spec.inputs[0]);
  spec.inputs[2] = halves(spec.inputs[2]);
  const Tensor yh = run_one(spec);
  REQUIRE(yh.dtype() == DType::kFloat16);
  std::vector<float> back(static_cast<std::size_t>(yh.numel()));
  cpu::halves_to_floats(yh.data_as<uint16_t>(), back.data(), yh.numel());
  const std::vector<double> want = p.expected();
  for (std::size_t i = 0; i < want.size(); ++i) REQUIRE(std::abs(back[i] - want[i]) <= 0.02 + 0.01 * std::abs(want[i]));
}

TEST_CASE("MatMulNBits declines what the cpu EP does not implement, with the reason", "[cpu][matmul_nbits][claim]") {
  const NBitsProblem p(2, 64, 8, 4, 32, Zeros::kPacked, 3);
  auto declined = [](NodeSpec spec) {
    const KernelMatch m = claim_on_cpu(spec);
    REQUIRE_FALSE(m);
    return m.reason();
  };
  NodeSpec bits = p.spec(true);
  bits.attrs = attrs({{"K", int64_t{64}}, {"N", int64_t{8}}, {"bits", int64_t{3}}, {"block_size", int64_t{32}}});
  CHECK(declined(bits) == "MatMulNBits: bits 3; the cpu EP implements 2, 4 and 8 (those ONNX Runtime supports)");
  NodeSpec block = p.spec(true);
  block.attrs = attrs({{"K", int64_t{64}}, {"N", int64_t{8}}, {"block_size", int64_t{24}}});
  CHECK(declined(block) == "MatMulNBits: block_size 24 must be a power of two of at least 16");
  NodeSpec no_n = p.spec(true);
  no_n.attrs = attrs({{"K", int64_t{64}}, {"block_size", int64_t{32}}});
  CHECK(declined(no_n) == "MatMulNBits: attributes K 64 and N 0 must both be given and positive");
  NodeSpec g_idx = p.spec(true);
  g_idx.inputs.push_back(Tensor::from_vector<int32_t>({64}, std::vector<int32_t>(64, 0)));
  g_idx.constant.push_back(true);
  CHECK_THAT(declined(g_idx), Catch::Matchers::StartsWith("MatMulNBits: g_idx (input 4, deprecated) is not "
                                                          "implemented by the cpu EP"));
  NodeSpec wrong_k = p.spec(true);
  wrong_k.inputs[0] = random_tensor({2, 60}, 5);
  CHECK(declined(wrong_k) == "MatMulNBits: A has shape [2,60]; its last dimension must be K 64");
  NodeSpec scales = p.spec(true);
  scales.inputs[2] = random_tensor({8, 3}, 6);
  CHECK(declined(scales) == "MatMulNBits: scales must hold N x ceil(K / block_size) = 8 x 2");
  NodeSpec prepacked = p.spec(true);
  prepacked.attrs = attrs({{"K", int64_t{64}}, {"N", int64_t{8}}, {"block_size", int64_t{32}},
                           {"weight_prepacked", int64_t{1}}});
  CHECK_THAT(declined(prepacked), Catch::Matchers::Contains("B is in a CUDA kernel's layout"));
  NodeSpec f64 = p.spec(true);
  f64.inputs[0] = Tensor::from_vector<double>({2, 64}, std::vector<double>(128, 1.0));
  CHECK(declined(f64) ==
        "MatMulNBits: A is double; the cpu EP implements float and float16 (bfloat16 is not implemented)");
}
