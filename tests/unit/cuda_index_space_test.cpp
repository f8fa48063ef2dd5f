// coalesce_dims: the merged index space gives every tensor the same offset at every index.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include "cuda/index_space.h"

using namespace nxrt;
using namespace nxrt::cuda;

namespace {

// Each tensor's offset at each linear index of `shape`, as offset_of computes it.
std::vector<std::vector<int64_t>> offsets(const Shape& shape, const std::vector<Shape>& strides) {
  std::vector<std::vector<int64_t>> out(strides.size());
  const int64_t n = shape_numel(shape);
  for (int64_t i = 0; i < n; ++i) {
    int64_t rest = i;
    std::vector<int64_t> off(strides.size(), 0);
    for (std::size_t d = shape.size(); d-- > 0;) {
      const int64_t c = rest % shape[d];
      rest /= shape[d];
      for (std::size_t k = 0; k < strides.size(); ++k) off[k] += c * strides[k][d];
    }
    for (std::size_t k = 0; k < strides.size(); ++k) out[k].push_back(off[k]);
  }
  return out;
}

struct Coalesced {
  Shape shape;
  std::vector<Shape> strides;
};

Coalesced coalesce_checked(Shape shape, std::vector<Shape> strides) {
  const auto before = offsets(shape, strides);
  coalesce_dims(shape, strides);
  for (const Shape& s : strides) REQUIRE(s.size() == shape.size());
  CHECK(offsets(shape, strides) == before);
  return {shape, strides};
}

}  // namespace

TEST_CASE("cuda coalesce_dims merges what every tensor walks contiguously", "[cuda]") {
  SECTION("same-shape operands become one dimension") {
    auto c = coalesce_checked({2, 3, 4}, {{12, 4, 1}, {12, 4, 1}});
    CHECK(c.shape == Shape{24});
    CHECK(c.strides == std::vector<Shape>{{1}, {1}});
  }
  SECTION("a per-channel operand keeps the channel apart from the pixels") {
    auto c = coalesce_checked({1, 8, 5, 5}, {{200, 25, 5, 1}, {0, 1, 0, 0}});
    CHECK(c.shape == Shape{8, 25});
    CHECK(c.strides == std::vector<Shape>{{25, 1}, {1, 0}});
  }
  SECTION("a scalar operand is stride 0 everywhere") {
    auto c = coalesce_checked({3, 4}, {{4, 1}, {0, 0}});
    CHECK(c.shape == Shape{12});
    CHECK(c.strides == std::vector<Shape>{{1}, {0}});
  }
  SECTION("a transpose cannot merge") {
    auto c = coalesce_checked({3, 4}, {{1, 3}, {4, 1}});
    CHECK(c.shape == Shape{3, 4});
  }
  SECTION("a slice merges its contiguous tail only") {
    // the first tensor's rows are 12 apart: only the inner two dimensions merge
    auto c = coalesce_checked({2, 3, 2}, {{6, 2, 1}, {6, 2, 1}});
    CHECK(c.shape == Shape{12});
    c = coalesce_checked({2, 3, 2}, {{12, 2, 1}, {6, 2, 1}});
    CHECK(c.shape == Shape{2, 6});
  }
  SECTION("extent-1 dimensions go; one element is rank 0") {
    auto c = coalesce_checked({1, 5, 1}, {{5, 1, 1}, {0, 0, 7}});
    CHECK(c.shape == Shape{5});
    CHECK(c.strides == std::vector<Shape>{{1}, {0}});
    c = coalesce_checked({1, 1}, {{1, 1}});
    CHECK(c.shape.empty());
    c = coalesce_checked({}, {{}});
    CHECK(c.shape.empty());
  }
  SECTION("broadcast in the middle") {
    auto c = coalesce_checked({2, 3, 4, 5}, {{60, 20, 5, 1}, {20, 0, 5, 1}, {0, 1, 0, 0}});
    CHECK(c.shape == Shape{2, 3, 20});
  }
}
#endif
