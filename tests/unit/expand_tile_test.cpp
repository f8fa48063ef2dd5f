// Expand (bidirectional broadcast to a shape) and Tile (every opset's repeats) against
// hand-computed results, and their error texts.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

TEST_CASE("Expand broadcasts both ways", "[cpu][indexing]") {
  const Tensor col = Tensor::from_vector<float>({3, 1}, {1, 2, 3});
  check_equal(run_one({.op_type = "Expand", .opset = 13, .inputs = {col, int64s({2, 1, 2})}}),
              Tensor::from_vector<float>({2, 3, 2}, {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  // A target dim of 1 keeps the input's dim.
  check_equal(run_one({.op_type = "Expand", .opset = 8, .inputs = {Tensor::from_vector<int64_t>({1, 2}, {4, 5}), int64s({3, 1})}}),
              Tensor::from_vector<int64_t>({3, 2}, {4, 5, 4, 5, 4, 5}));
  auto r = run_on_cpu({.op_type = "Expand", .opset = 13, .inputs = {col, int64s({2, 2})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what.starts_with("Expand: "));
  auto m = claim_on_cpu({.op_type = "Expand", .opset = 13, .inputs = {col, Tensor::from_vector<int32_t>({1}, {2})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Expand: input 1 has type int32; the cpu EP supports int64 for Expand");
}

TEST_CASE("Tile repeats per axis, and along one axis in Tile-1", "[cpu][indexing]") {
  const Tensor x = Tensor::from_vector<int32_t>({2, 2}, {1, 2, 3, 4});
  check_equal(run_one({.op_type = "Tile", .opset = 13, .inputs = {x, int64s({2, 3})}}),
              Tensor::from_vector<int32_t>({4, 6}, {1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4,
                                                    1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}));
  check_equal(run_one({.op_type = "Tile", .opset = 6, .inputs = {x, int64s({1, 0})}}), Tensor::from_vector<int32_t>({2, 0}, {}));
  check_equal(run_one({.op_type = "Tile", .opset = 1, .inputs = {x, Tensor::from_vector<int64_t>({}, {2}), Tensor::from_vector<int64_t>({}, {0})}}),
              Tensor::from_vector<int32_t>({4, 2}, {1, 2, 3, 4, 1, 2, 3, 4}));
  auto m = claim_on_cpu({.op_type = "Tile", .opset = 13, .inputs = {x, int64s({2})}, .constant = {false, true}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "Tile: repeats has 1 entries for an input of rank 2; it needs one per axis");
  auto r = run_on_cpu({.op_type = "Tile", .opset = 13, .inputs = {x, int64s({2, -1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Tile: repeat count -1 for axis 1 is negative");
}
