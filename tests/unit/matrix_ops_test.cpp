// Trilu, Det and Einsum against hand-computed results and straightforward reference loops.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor einsum(const std::string& equation, std::vector<Tensor> inputs) {
  return run_one(
      {.op_type = "Einsum", .opset = 12, .inputs = std::move(inputs), .attrs = attrs({{"equation", equation}})});
}

}  // namespace

TEST_CASE("Trilu keeps the upper or lower triangle around diagonal k, per matrix of a batch",
          "[cpu][selection][matrix_ops]") {
  const Tensor x = Tensor::from_vector<int64_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const Tensor k1 = Tensor::from_vector<int64_t>({}, {1});
  const Tensor km1 = Tensor::from_vector<int64_t>({}, {-1});
  CHECK(compare_tensors(run_one({.op_type = "Trilu", .opset = 14, .inputs = {x}}),
                        Tensor::from_vector<int64_t>({3, 4}, {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}))
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Trilu", .opset = 14, .inputs = {x, k1}}),
                        Tensor::from_vector<int64_t>({3, 4}, {0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}))
            .empty());
  CHECK(compare_tensors(
            run_one({.op_type = "Trilu", .opset = 14, .inputs = {x, km1}, .attrs = attrs({{"upper", int64_t{0}}})}),
            Tensor::from_vector<int64_t>({3, 4}, {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}))
            .empty());
  CHECK(compare_tensors(
            run_one({.op_type = "Trilu", .opset = 14, .inputs = {x, k1}, .attrs = attrs({{"upper", int64_t{0}}})}),
            Tensor::from_vector<int64_t>({3, 4}, {1, 2, 0, 0, 5, 6, 7, 0, 9, 10, 11, 12}))
            .empty());
  // k beyond the matrix: everything (lower) or nothing (upper) is kept.
  const Tensor k9 = Tensor::from_vector<int64_t>({}, {9});
  CHECK(compare_tensors(
            run_one({.op_type = "Trilu", .opset = 14, .inputs = {x, k9}, .attrs = attrs({{"upper", int64_t{0}}})}), x)
            .empty());
  CHECK(compare_tensors(run_one({.op_type = "Trilu", .opset = 14, .inputs = {x, k9}}),
                        Tensor::from_vector<int64_t>({3, 4}, std::vector<int64_t>(12, 0)))
            .empty());
  // A batch of two float 2x2 matrices.
  CHECK(compare_tensors(run_one({.op_type = "Trilu",
                                 .opset = 14,
                                 .inputs = {iota_float({2, 2, 2})},
                                 .attrs = attrs({{"upper", int64_t{0}}})}),
                        Tensor::from_vector<float>({2, 2, 2}, {0, 0, 2, 3, 4, 0, 6, 7}))
            .empty());
  auto m = claim_on_cpu({.op_type = "Trilu", .opset = 14, .inputs = {iota_float({4})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Trilu: input has rank 1; it must be a matrix or a batch of matrices (rank >= 2)");
}

TEST_CASE("Det computes determinants of batched, pivoting and singular matrices", "[cpu][selection][matrix_ops]") {
  // [[1,2],[3,4]] -> -2; [[0,1],[1,0]] needs a row swap -> -1; [[1,2],[2,4]] is singular -> 0.
  const Tensor x = Tensor::from_vector<float>({3, 2, 2}, {1, 2, 3, 4, 0, 1, 1, 0, 1, 2, 2, 4});
  CHECK(compare_tensors(run_one({.op_type = "Det", .opset = 11, .inputs = {x}}),
                        Tensor::from_vector<float>({3}, {-2, -1, 0}))
            .empty());
  // 3x3: 2*(3*1-1*0) - 0 + 1*(1*0-3*4) = 6 - 12 = -6.
  const Tensor m3 = Tensor::from_vector<double>({3, 3}, {2, 0, 1, 1, 3, 1, 4, 0, 1});
  const Tensor d3 = run_one({.op_type = "Det", .opset = 11, .inputs = {m3}});
  CHECK(d3.shape().empty());
  CHECK(d3.data_as<double>()[0] == Approx(2 * (3 * 1 - 1 * 0) - 0 + 1 * (1 * 0 - 3 * 4)));
  auto r = claim_on_cpu({.op_type = "Det", .opset = 11, .inputs = {iota_float({2, 3})}});
  REQUIRE_FALSE(r);
  CHECK(r.reason() == "Det: input has shape [2,3]; it must be square matrices [*, M, M]");
  auto t = claim_on_cpu({.op_type = "Det", .opset = 11, .inputs = {Tensor::from_vector<int32_t>({1, 1}, {1})}});
  REQUIRE_FALSE(t);
  CHECK(t.reason() == "Det: input 0 has type int32; the cpu EP supports float, double, float16 for Det");
}

TEST_CASE("Einsum transposes, sums, takes diagonals and inner products", "[cpu][selection][matrix_ops]") {
  const Tensor x = iota_float({2, 3});  // [[0,1,2],[3,4,5]]
  CHECK(compare_tensors(einsum("ij->ji", {x}), Tensor::from_vector<float>({3, 2}, {0, 3, 1, 4, 2, 5})).empty());
  CHECK(compare_tensors(einsum("ij->i", {x}), Tensor::from_vector<float>({2}, {3, 12})).empty());
  CHECK(compare_tensors(einsum("ij->", {x}), Tensor::from_vector<float>({}, {15})).empty());
  // Implicit mode sorts the output letters: "ji" is a transpose too.
  CHECK(compare_tensors(einsum("ji", {x}), Tensor::from_vector<float>({3, 2}, {0, 3, 1, 4, 2, 5})).empty());
  const Tensor sq = iota_float({3, 3});
  CHECK(compare_tensors(einsum("ii->i", {sq}), Tensor::from_vector<float>({3}, {0, 4, 8})).empty());
  CHECK(compare_tensors(einsum("ii", {sq}), Tensor::from_vector<float>({}, {12})).empty());  // trace
  const Tensor v = Tensor::from_vector<float>({3}, {1, 2, 3});
  CHECK(compare_tensors(einsum("i,i", {v, v}), Tensor::from_vector<float>({}, {14})).empty());
  CHECK(compare_tensors(einsum("i, j -> ij", {v, Tensor::from_vector<float>({2}, {1, -1})}),
                        Tensor::from_vector<float>({3, 2}, {1, -1, 2, -2, 3, -3}))
            .empty());
  CHECK(compare_tensors(einsum("i,i,i->", {v, v, v}), Tensor::from_vector<float>({}, {36})).empty());
  // Batch diagonal with an ellipsis.
  const Tensor b = iota_float({2, 2, 2});
  CHECK(compare_tensors(einsum("...ii->...i", {b}), Tensor::from_vector<float>({2, 2}, {0, 3, 4, 7})).empty());
  const Tensor ints = Tensor::from_vector<int64_t>({2, 2}, {1, 2, 3, 4});
  CHECK(compare_tensors(einsum("ij,jk", {ints, ints}), Tensor::from_vector<int64_t>({2, 2}, {7, 10, 15, 22})).empty());
}

TEST_CASE("Einsum batch matmul matches a reference loop, with ellipsis broadcasting", "[cpu][selection][matrix_ops]") {
  const int64_t B = 3, M = 2, K = 4, N = 5;
  const Tensor a = Tensor::from_vector<double>({B, M, K}, [&] {
    std::vector<double> v;
    for (float f : random_floats(B * M * K, 1)) v.push_back(f);
    return v;
  }());
  const Tensor bm = Tensor::from_vector<double>({B, K, N}, [&] {
    std::vector<double> v;
    for (float f : random_floats(B * K * N, 2)) v.push_back(f);
    return v;
  }());
  std::vector<double> ref(B * M * N, 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k)
          ref[(b * M + i) * N + j] +=
              a.data_as<double>()[(b * M + i) * K + k] * bm.data_as<double>()[(b * K + k) * N + j];
  const Tensor expected = Tensor::from_vector<double>({B, M, N}, ref);
  CHECK(compare_tensors(einsum("bij, bjk -> bik", {a, bm}), expected).empty());
  CHECK(compare_tensors(einsum("...ij,...jk->...ik", {a, bm}), expected).empty());
  // Broadcasting: one [K, N] matrix against the batch of A; the implicit output keeps the
  // ellipsis first and then i, k.
  const Tensor b0 =
      Tensor::from_vector<double>({K, N}, std::vector<double>(bm.data_as<double>(), bm.data_as<double>() + K * N));
  std::vector<double> ref0(B * M * N, 0);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j)
        for (int64_t k = 0; k < K; ++k)
          ref0[(b * M + i) * N + j] += a.data_as<double>()[(b * M + i) * K + k] * b0.data_as<double>()[k * N + j];
  CHECK(compare_tensors(einsum("...ij,jk", {a, b0}), Tensor::from_vector<double>({B, M, N}, ref0)).empty());
  // Ellipsis dims of size 1 broadcast against the other input's.
  const Tensor a1 =
      Tensor::from_vector<double>({1, M, K}, std::vector<double>(a.data_as<double>(), a.data_as<double>() + M * K));
  const Tensor y = einsum("...ij,...jk->...ik", {a1, bm});
  CHECK(y.shape() == Shape{B, M, N});
}

TEST_CASE("Einsum on float pairs (the GEMM path) matches the double reference loop", "[cpu][selection][matrix_ops]") {
  auto random = [](Shape shape, unsigned seed) {
    return Tensor::from_vector<float>(shape, random_floats(static_cast<std::size_t>(shape_numel(shape)), seed));
  };
  auto as_double = [](const Tensor& t) {
    std::vector<double> v(t.data_as<float>(), t.data_as<float>() + t.numel());
    return Tensor::from_vector<double>(t.shape(), v);
  };
  struct Case {
    std::string equation;
    Shape a, b;
  };
  const std::vector<Case> cases = {
      {"bij,bjk->bik", {6, 3, 5}, {6, 5, 4}},           // small products: batch in parallel
      {"ij,jk->ik", {70, 64}, {64, 66}},                // one large product
      {"bij,bjk->kbi", {2, 3, 4}, {2, 4, 5}},           // permuted output
      {"ik,jk", {4, 7}, {3, 7}},                        // B transposed, implicit output
      {"...ij,jk->...ik", {2, 3, 4, 5}, {5, 6}},        // ellipsis only in A: it joins m
      {"bhqd,bhkd->bhqk", {2, 3, 4, 8}, {2, 3, 5, 8}},  // attention scores
      {"ij,j->", {3, 4}, {4}},                          // i summed in A alone: reference loop
      {"ii,i->i", {3, 3}, {3}},                         // diagonal: reference loop
      {"i,j->ij", {3}, {0}},                            // empty output
  };
  for (const Case& c : cases) {
    INFO(c.equation);
    const Tensor a = random(c.a, 3), b = random(c.b, 4);
    const Tensor y = einsum(c.equation, {a, b});
    const Tensor ref = einsum(c.equation, {as_double(a), as_double(b)});
    REQUIRE(y.shape() == ref.shape());
    for (int64_t i = 0; i < y.numel(); ++i)
      CHECK(y.data_as<float>()[i] == Approx(ref.data_as<double>()[i]).margin(1e-4));
  }
}

TEST_CASE("Einsum declines malformed equations and mismatched shapes", "[cpu][selection][matrix_ops]") {
  auto spec = [](std::string eq, std::vector<Tensor> in) {
    return NodeSpec{.op_type = "Einsum", .opset = 12, .inputs = std::move(in), .attrs = attrs({{"equation", eq}})};
  };
  const Tensor x = iota_float({2, 3});
  auto count = claim_on_cpu(spec("ij,jk->ik", {x}));
  REQUIRE_FALSE(count);
  CHECK(count.reason() == "Einsum: equation 'ij,jk->ik' has 2 input terms but the node has 1 inputs");
  auto chr = claim_on_cpu(spec("i1->i", {x}));
  REQUIRE_FALSE(chr);
  CHECK(chr.reason() == "Einsum: equation 'i1->i' has character '1' in term 'i1'; fix the equation attribute");
  auto out = claim_on_cpu(spec("ij->k", {x}));
  REQUIRE_FALSE(out);
  CHECK(out.reason() == "Einsum: output label 'k' of equation 'ij->k' appears in no input; fix the equation attribute");
  auto dims = claim_on_cpu(spec("ij,ij->i", {x, iota_float({3, 2})}));
  REQUIRE_FALSE(dims);
  CHECK(dims.reason() ==
        "Einsum: dim 0 of input 1 (shape [3,2]) has size 3 but its label has size 2 elsewhere (equation 'ij,ij->i'); "
        "make the input shapes agree with the equation");
  auto rank = claim_on_cpu(spec("ijk->i", {x}));
  REQUIRE_FALSE(rank);
  CHECK_THAT(rank.reason(), Catch::StartsWith("Einsum: input 0 has shape [2,3] but its term has 3 labels"));
}
