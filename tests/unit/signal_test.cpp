// DFT, STFT, the cosine windows and MelWeightMatrix against known transforms and formulas.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <numbers>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("DFT of a known real signal, onesided and inverse", "[cpu][signal]") {
  // [1, 2, 3, 4] -> [10, -2+2i, -2, -2-2i]; batch of one, last dim 1 (real).
  const Tensor x = Tensor::from_vector<float>({1, 4, 1}, {1, 2, 3, 4});
  auto full = run_on_cpu({.op_type = "DFT", .inputs = {x}});
  REQUIRE(full);
  CHECK(compare_tensors((*full)[0], Tensor::from_vector<float>({1, 4, 2}, {10, 0, -2, 2, -2, 0, -2, -2})).empty());

  auto half = run_on_cpu({.op_type = "DFT", .inputs = {x}, .attrs = attrs({{"onesided", int64_t{1}}})});
  REQUIRE(half);
  CHECK(compare_tensors((*half)[0], Tensor::from_vector<float>({1, 3, 2}, {10, 0, -2, 2, -2, 0})).empty());

  // The inverse of the full spectrum gives the signal back (as complex values).
  auto back = run_on_cpu({.op_type = "DFT", .inputs = {(*full)[0]}, .attrs = attrs({{"inverse", int64_t{1}}})});
  REQUIRE(back);
  CHECK(compare_tensors((*back)[0], Tensor::from_vector<float>({1, 4, 2}, {1, 0, 2, 0, 3, 0, 4, 0}), 1e-5, 1e-5)
            .empty());

  // dft_length 2 truncates to [1, 2] -> [3, -1]; on axis 2 of a [1, 1, 4, 1] input.
  auto cut = run_on_cpu({.op_type = "DFT",
                         .inputs = {x.reshaped({1, 1, 4, 1}), Tensor::from_vector<int64_t>({}, {2})},
                         .attrs = attrs({{"axis", int64_t{2}}})});
  REQUIRE(cut);
  CHECK(compare_tensors((*cut)[0], Tensor::from_vector<float>({1, 1, 2, 2}, {3, 0, -1, 0})).empty());
}

TEST_CASE("STFT frames a signal and applies the window", "[cpu][signal]") {
  // Length 6, frame 4, step 2: two frames; window [0, 1, 1, 0] keeps the middle samples.
  const Tensor x = Tensor::from_vector<float>({1, 6, 1}, {1, 2, 3, 4, 5, 6});
  auto y = run_on_cpu({.op_type = "STFT",
                       .inputs = {x, Tensor::from_vector<int64_t>({}, {2}),
                                  Tensor::from_vector<float>({4}, {0, 1, 1, 0})}});
  REQUIRE(y);
  // Frame [0,2,3,0] -> bins 5, -3-2i... : X[k] = 2 e^{-i pi k/2} + 3 e^{-i pi k}.
  // k=0: 5; k=1: -2i - 3; k=2: -2 + 3 = 1. Frame [0,4,5,0]: 9; -5-4i; 1.
  CHECK(compare_tensors((*y)[0], Tensor::from_vector<float>({1, 2, 3, 2}, {5, 0, -3, -2, 1, 0, 9, 0, -5, -4, 1, 0}),
                        1e-5, 1e-5)
            .empty());
}

TEST_CASE("cosine windows follow the ONNX coefficients", "[cpu][signal]") {
  auto hann = run_on_cpu({.op_type = "HannWindow", .inputs = {Tensor::from_vector<int64_t>({}, {4})}});
  REQUIRE(hann);
  CHECK(compare_tensors((*hann)[0], Tensor::from_vector<float>({4}, {0, 0.5f, 1, 0.5f}), 1e-6, 1e-6).empty());

  auto sym = run_on_cpu({.op_type = "HannWindow",
                         .inputs = {Tensor::from_vector<int32_t>({}, {5})},
                         .attrs = attrs({{"periodic", int64_t{0}}, {"output_datatype", int64_t{11}}})});
  REQUIRE(sym);
  CHECK((*sym)[0].dtype() == DType::kFloat64);
  CHECK(compare_tensors((*sym)[0], Tensor::from_vector<double>({5}, {0, 0.5, 1, 0.5, 0}), 1e-9, 1e-9).empty());

  auto hamming = run_on_cpu({.op_type = "HammingWindow", .inputs = {Tensor::from_vector<int64_t>({}, {2})}});
  REQUIRE(hamming);
  CHECK(compare_tensors((*hamming)[0], Tensor::from_vector<float>({2}, {4.f / 46, 1})).empty());

  auto blackman = run_on_cpu({.op_type = "BlackmanWindow", .inputs = {Tensor::from_vector<int64_t>({}, {4})}});
  REQUIRE(blackman);
  // 0.42 - 0.5 cos(pi n / 2) + 0.08 cos(pi n): n=0: 0, n=1: 0.34, n=2: 1, n=3: 0.34.
  CHECK(compare_tensors((*blackman)[0], Tensor::from_vector<float>({4}, {0, 0.34f, 1, 0.34f}), 1e-5, 1e-6).empty());
}

TEST_CASE("MelWeightMatrix builds unit-peak triangles", "[cpu][signal]") {
  auto y = run_on_cpu({.op_type = "MelWeightMatrix",
                       .inputs = {Tensor::from_vector<int64_t>({}, {2}), Tensor::from_vector<int64_t>({}, {16}),
                                  Tensor::from_vector<int64_t>({}, {8192}), Tensor::from_vector<float>({}, {0}),
                                  Tensor::from_vector<float>({}, {4096})}});
  REQUIRE(y);
  REQUIRE((*y)[0].shape() == Shape{9, 2});
  // Edges at mel steps of mel(4096) / 4, mapped to bins floor(17 f / 8192).
  auto edge = [](int i) {
    const double mel = 2595 * std::log10(1 + 4096.0 / 700) / 4 * i;
    return static_cast<int>(std::floor(17 * 700 * (std::pow(10, mel / 2595) - 1) / 8192));
  };
  const float* w = (*y)[0].data_as<float>();
  for (int m = 0; m < 2; ++m) {
    CHECK(w[edge(m + 1) * 2 + m] == 1.f);  // the peak
    CHECK(w[edge(m) * 2 + m] == (edge(m) == edge(m + 1) ? 1.f : 0.f));
  }
}

TEST_CASE("MelWeightMatrix refuses edges that are not finite and keeps far edges to the rows", "[cpu][signal]") {
  auto mel = [](float lower, float upper) {
    return run_on_cpu({.op_type = "MelWeightMatrix",
                       .inputs = {Tensor::from_vector<int64_t>({}, {4}), Tensor::from_vector<int64_t>({}, {16}),
                                  Tensor::from_vector<int64_t>({}, {8000}), Tensor::from_vector<float>({}, {lower}),
                                  Tensor::from_vector<float>({}, {upper})}});
  };
  auto infinite = mel(0, std::numeric_limits<float>::infinity());
  REQUIRE_FALSE(infinite);
  CHECK_THAT(infinite.error().what, Catch::Contains("the edges 0 Hz and inf Hz are not finite"));
  // Edges far past the last row (bins beyond 1e30) give slopes too shallow to see there, quickly.
  auto far = mel(0, 1e30f);
  REQUIRE(far);
  REQUIRE((*far)[0].shape() == Shape{9, 4});
  const float* w = (*far)[0].data_as<float>();
  for (int64_t i = 0; i < 36; ++i) CHECK((w[i] >= 0.f && w[i] <= 1.f));
}

TEST_CASE("signal ops decline bad shapes and output types", "[cpu][signal][claim]") {
  auto dft = claim_on_cpu({.op_type = "DFT", .inputs = {Tensor::from_vector<float>({1, 2, 3}, {1, 2, 3, 4, 5, 6})}});
  REQUIRE_FALSE(dft);
  CHECK(dft.reason() == "DFT: the input's last dim is 3; it must be 1 (real) or 2 (complex)");
  auto win = claim_on_cpu({.op_type = "HannWindow",
                           .inputs = {Tensor::from_vector<int64_t>({}, {4})},
                           .attrs = attrs({{"output_datatype", int64_t{9}}})});
  REQUIRE_FALSE(win);
  CHECK(win.reason() ==
        "HannWindow: output_datatype 9 is not supported by the cpu EP; it supports the float and integer types");
}
