// DepthToSpace (DCR and CRD orderings) and SpaceToDepth against hand-computed layouts,
// their round trip, and decline texts.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("DepthToSpace orders channels DCR or CRD", "[cpu][indexing]") {
  // 8 channels of 1x1: channel k holds k. blocksize 2 gives 2 output channels of 2x2.
  const Tensor x = iota_float({1, 8, 1, 1});
  // DCR: output (c, bh, bw) reads channel (bh * 2 + bw) * 2 + c.
  check_equal(run_one({.op_type = "DepthToSpace", .opset = 13, .inputs = {x}, .attrs = attrs({{"blocksize", int64_t{2}}})}),
              Tensor::from_vector<float>({1, 2, 2, 2}, {0, 2, 4, 6, 1, 3, 5, 7}));
  // CRD: output (c, bh, bw) reads channel c * 4 + bh * 2 + bw.
  check_equal(run_one({.op_type = "DepthToSpace", .opset = 11, .inputs = {x},
                       .attrs = attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})}),
              Tensor::from_vector<float>({1, 2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_CASE("SpaceToDepth inverts DepthToSpace DCR", "[cpu][indexing]") {
  const Tensor x = iota_float({1, 1, 2, 4});
  // Channel (bh * 2 + bw) holds the pixels at (2i + bh, 2j + bw).
  const Tensor s2d = run_one({.op_type = "SpaceToDepth", .opset = 13, .inputs = {x}, .attrs = attrs({{"blocksize", int64_t{2}}})});
  check_equal(s2d, Tensor::from_vector<float>({1, 4, 1, 2}, {0, 2, 1, 3, 4, 6, 5, 7}));
  check_equal(run_one({.op_type = "DepthToSpace", .opset = 1, .inputs = {s2d}, .attrs = attrs({{"blocksize", int64_t{2}}})}), x);
  auto r = run_on_cpu({.op_type = "SpaceToDepth", .opset = 13, .inputs = {iota_float({1, 1, 3, 4})}, .attrs = attrs({{"blocksize", int64_t{2}}})});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "SpaceToDepth: input shape [1,1,3,4] does not fit the blocksize");
}

TEST_CASE("DepthToSpace declines CRD before opset 11 and non-4-D inputs", "[cpu][indexing][claim]") {
  auto m = claim_on_cpu({.op_type = "DepthToSpace", .opset = 1, .inputs = {iota_float({1, 4, 1, 1})},
                         .attrs = attrs({{"blocksize", int64_t{2}}, {"mode", std::string("CRD")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "DepthToSpace: mode 'CRD' is not supported for DepthToSpace-1; the modes are DCR (CRD from opset 11)");
  m = claim_on_cpu({.op_type = "SpaceToDepth", .opset = 13, .inputs = {iota_float({4, 2, 2})}, .attrs = attrs({{"blocksize", int64_t{2}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "SpaceToDepth: input 0 has rank 3; the cpu EP supports 4-D NCHW inputs");
}
