// GatherElements, GatherND (batch_dims), ScatterElements/Scatter and ScatterND (reductions)
// against hand-computed results, and their index and decline errors.
#include <catch2/catch.hpp>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor floats_of(Shape shape, std::vector<float> v) { return Tensor::from_vector<float>(std::move(shape), v); }

}  // namespace

TEST_CASE("GatherElements picks along an axis with negative indices", "[cpu][indexing]") {
  const Tensor data = floats_of({3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Tensor idx = int64s({1, 2, 0, 2, 0, 0});
  check_equal(run_one({.op_type = "GatherElements", .opset = 13, .inputs = {data, idx.reshaped({2, 3})}}),
              floats_of({2, 3}, {4, 8, 3, 7, 2, 3}));
  const Tensor neg = Tensor::from_vector<int32_t>({3, 2}, {-1, 0, 1, -3, 2, 2});
  check_equal(run_one({.op_type = "GatherElements", .opset = 11, .inputs = {data, neg}, .attrs = attrs({{"axis", int64_t{1}}})}),
              floats_of({3, 2}, {3, 1, 5, 4, 9, 9}));
  Tensor s = Tensor::empty(DType::kString, {2});
  // assign(n, c) rather than = "a": GCC 12 warns falsely (-Wrestrict) on literal assignment.
  s.mut_as<std::string>()[0].assign(1, 'a');
  s.mut_as<std::string>()[1].assign(1, 'b');
  const Tensor gs = run_one({.op_type = "GatherElements", .opset = 13, .inputs = {s, int64s({1, 1, 0})}});
  CHECK(gs.data_as<std::string>()[1] == "b");
  CHECK(gs.data_as<std::string>()[2] == "a");
}

TEST_CASE("GatherElements reports an out-of-range index", "[cpu][indexing]") {
  auto r = run_on_cpu({.op_type = "GatherElements", .opset = 13,
                       .inputs = {floats_of({2, 2}, {1, 2, 3, 4}), int64s({0, 1, 2, 0}).reshaped({2, 2})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kRuntime);
  CHECK(r.error().what == "GatherElements: index 2 at position 2 of the indices is out of range for axis 0 of size 2");
  CHECK(r.error().why == "GatherElements accepts indices in [-2, 1] for this axis");
  auto m = claim_on_cpu({.op_type = "GatherElements", .opset = 13, .inputs = {floats_of({2, 2}, {1, 2, 3, 4}), int64s({0})}});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "GatherElements: indices have rank 1 but data has rank 2; they must be equal");
}

TEST_CASE("GatherND gathers slices, with batch_dims from opset 12", "[cpu][indexing]") {
  const Tensor data = Tensor::from_vector<int32_t>({2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  // Tuples of length 2 address rows of the last axis.
  check_equal(run_one({.op_type = "GatherND", .opset = 11, .inputs = {data, int64s({0, 1, 1, 0}).reshaped({2, 2})}}),
              Tensor::from_vector<int32_t>({2, 2}, {2, 3, 4, 5}));
  // Full tuples address elements; negative components count from the back.
  check_equal(run_one({.op_type = "GatherND", .opset = 13, .inputs = {data, int64s({1, -1, 0}).reshaped({1, 3})}}),
              Tensor::from_vector<int32_t>({1}, {6}));
  // batch_dims=1: batch b takes data[b][index].
  check_equal(run_one({.op_type = "GatherND", .opset = 12, .inputs = {data, int64s({1, 0}).reshaped({2, 1})},
                       .attrs = attrs({{"batch_dims", int64_t{1}}})}),
              Tensor::from_vector<int32_t>({2, 2}, {2, 3, 4, 5}));
  auto r = run_on_cpu({.op_type = "GatherND", .opset = 13, .inputs = {data, int64s({0, 2}).reshaped({1, 2})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "GatherND: index 2 at position 1 of the indices is out of range for axis 1 of size 2");
  auto m = claim_on_cpu({.op_type = "GatherND", .opset = 11, .inputs = {data, int64s({0}).reshaped({1, 1})},
                         .attrs = attrs({{"batch_dims", int64_t{1}}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "GatherND: batch_dims is an attribute of GatherND-12 and later; this node has opset 11");
}

TEST_CASE("ScatterElements writes, or reduces with add/mul/max/min", "[cpu][indexing]") {
  const Tensor data = floats_of({1, 5}, {1, 2, 3, 4, 5});
  const Tensor idx = int64s({1, 3, 1}).reshaped({1, 3});
  const Tensor upd = floats_of({1, 3}, {10, 20, 30});
  auto scatter = [&](int64_t opset, const char* reduction) {
    return run_one({.op_type = "ScatterElements", .opset = opset, .inputs = {data, idx, upd},
                    .attrs = attrs({{"axis", int64_t{1}}, {"reduction", std::string(reduction)}})});
  };
  // Without a reduction the last duplicate wins.
  check_equal(scatter(13, "none"), floats_of({1, 5}, {1, 30, 3, 20, 5}));
  check_equal(scatter(16, "add"), floats_of({1, 5}, {1, 42, 3, 24, 5}));
  check_equal(scatter(16, "mul"), floats_of({1, 5}, {1, 600, 3, 80, 5}));
  check_equal(scatter(18, "max"), floats_of({1, 5}, {1, 30, 3, 20, 5}));
  check_equal(scatter(18, "min"), floats_of({1, 5}, {1, 2, 3, 4, 5}));
  // Scatter-9 is the same op under its deprecated name; ints and negative indices from 11.
  const Tensor ints_data = Tensor::from_vector<int64_t>({2, 2}, {0, 0, 0, 0});
  check_equal(run_one({.op_type = "Scatter", .opset = 9, .inputs = {ints_data, int64s({1, 0}).reshaped({1, 2}),
                                                                      Tensor::from_vector<int64_t>({1, 2}, {7, 8})}}),
              Tensor::from_vector<int64_t>({2, 2}, {0, 8, 7, 0}));
  check_equal(run_one({.op_type = "ScatterElements", .opset = 11, .inputs = {ints_data, int64s({-1}).reshaped({1, 1}),
                                                                               Tensor::from_vector<int64_t>({1, 1}, {5})},
                       .attrs = attrs({{"axis", int64_t{1}}})}),
              Tensor::from_vector<int64_t>({2, 2}, {0, 5, 0, 0}));
}

TEST_CASE("ScatterElements declines reductions outside their opset and type", "[cpu][indexing][claim]") {
  const Tensor data = floats_of({2}, {1, 2});
  auto m = claim_on_cpu({.op_type = "ScatterElements", .opset = 16, .inputs = {data, int64s({0}), floats_of({1}, {1})},
                         .attrs = attrs({{"reduction", std::string("max")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ScatterElements: reduction 'max' is not defined for ScatterElements-16; it takes none, add, mul");
  Tensor s = Tensor::empty(DType::kString, {2});
  Tensor su = Tensor::empty(DType::kString, {1});
  m = claim_on_cpu({.op_type = "ScatterElements", .opset = 18, .inputs = {s, int64s({0}), su},
                    .attrs = attrs({{"reduction", std::string("add")}})});
  REQUIRE_FALSE(m);
  CHECK(m.reason() == "ScatterElements: reduction 'add' on type string is not supported by the cpu EP; it reduces numeric types");
  auto r = run_on_cpu({.op_type = "ScatterElements", .opset = 13, .inputs = {data, int64s({0, 1}), floats_of({1}, {1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "ScatterElements: updates have shape [1] but indices have shape [2]");
  r = run_on_cpu({.op_type = "Scatter", .opset = 9, .inputs = {data, int64s({-1}), floats_of({1}, {1})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "Scatter: index -1 at position 0 of the indices is out of range for axis 0 of size 2");
  CHECK(r.error().why == "Scatter at this opset accepts indices in [0, 1] for this axis");
}

TEST_CASE("ScatterND updates slices, accumulating duplicates with add and mul", "[cpu][indexing]") {
  const Tensor data = floats_of({4, 2}, {1, 1, 2, 2, 3, 3, 4, 4});
  const Tensor idx = int64s({2, 0, 2}).reshaped({3, 1});
  const Tensor upd = floats_of({3, 2}, {10, 20, 5, 6, 2, 3});
  auto scatter = [&](int64_t opset, const char* reduction) {
    return run_one({.op_type = "ScatterND", .opset = opset, .inputs = {data, idx, upd},
                    .attrs = attrs({{"reduction", std::string(reduction)}})});
  };
  check_equal(scatter(13, "none"), floats_of({4, 2}, {5, 6, 2, 2, 2, 3, 4, 4}));
  check_equal(scatter(16, "add"), floats_of({4, 2}, {6, 7, 2, 2, 15, 26, 4, 4}));
  check_equal(scatter(16, "mul"), floats_of({4, 2}, {5, 6, 2, 2, 60, 180, 4, 4}));
  check_equal(scatter(18, "max"), floats_of({4, 2}, {5, 6, 2, 2, 10, 20, 4, 4}));
  // Element tuples.
  check_equal(run_one({.op_type = "ScatterND", .opset = 11, .inputs = {data, int64s({3, 1}).reshaped({1, 2}), floats_of({1}, {9})}}),
              floats_of({4, 2}, {1, 1, 2, 2, 3, 3, 4, 9}));
  auto r = run_on_cpu({.op_type = "ScatterND", .opset = 13, .inputs = {data, idx, floats_of({3}, {1, 2, 3})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "ScatterND: updates have shape [3], expected [3,2]");
  r = run_on_cpu({.op_type = "ScatterND", .opset = 13, .inputs = {data, int64s({4}).reshaped({1, 1}), floats_of({1, 2}, {1, 2})}});
  REQUIRE_FALSE(r);
  CHECK(r.error().what == "ScatterND: index 4 at position 0 of the indices is out of range for axis 0 of size 4");
}
