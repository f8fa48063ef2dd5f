// Atomic file writes (StagedFiles) and the output comparison rule.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "lib_test_util.h"
#include "nxrt/io/atomic_file.h"
#include "nxrt/io/compare.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

namespace {

std::span<const std::byte> bytes_of(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

std::vector<std::string> listing(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("StagedFiles::commit creates every file with its content", "[lib][io][atomic]") {
  TempDir dir;
  write_bytes(dir / "b.bin", "old contents");
  {
    StagedFiles files;
    REQUIRE(files.stage(dir / "a.onnx", bytes_of("model bytes")));
    REQUIRE(files.stage(dir / "b.bin", bytes_of("new")));
    CHECK(files.pending().size() == 2);
    // Nothing is visible under its final name before commit.
    CHECK_FALSE(std::filesystem::exists(dir / "a.onnx"));
    CHECK(read_bytes(dir / "b.bin") == "old contents");
    REQUIRE(files.commit());
    CHECK(files.pending().empty());
  }
  CHECK(read_bytes(dir / "a.onnx") == "model bytes");
  CHECK(read_bytes(dir / "b.bin") == "new");
  CHECK(listing(dir.path()) == std::vector<std::string>{"a.onnx", "b.bin"});
}

TEST_CASE("an uncommitted StagedFiles leaves nothing behind", "[lib][io][atomic]") {
  TempDir dir;
  write_bytes(dir / "keep.onnx", "previous");
  {
    StagedFiles files;
    REQUIRE(files.stage(dir / "keep.onnx", bytes_of("replacement")));
    REQUIRE(files.stage(dir / "side.bin", bytes_of("payload")));
    auto pending = files.pending();
    REQUIRE(pending.size() == 2);
    for (const auto& p : pending) {
      CHECK(std::filesystem::exists(p));
      CHECK(p.parent_path() == dir.path());  // beside the target: rename stays on one file system
    }
  }
  CHECK(listing(dir.path()) == std::vector<std::string>{"keep.onnx"});
  CHECK(read_bytes(dir / "keep.onnx") == "previous");
}

TEST_CASE("write_file_atomically writes one file and fails cleanly in a missing folder", "[lib][io][atomic]") {
  TempDir dir;
  REQUIRE(write_file_atomically(dir / "out.npy", bytes_of("abc")));
  CHECK(read_bytes(dir / "out.npy") == "abc");
  REQUIRE(write_file_atomically(dir / "out.npy", bytes_of("")));
  CHECK(read_bytes(dir / "out.npy").empty());
  CHECK(listing(dir.path()) == std::vector<std::string>{"out.npy"});

  auto r = write_file_atomically(dir / "no" / "such" / "out.npy", bytes_of("abc"));
  REQUIRE_FALSE(r);
  CHECK_THAT(r.error().what, Contains("cannot write '" + (dir / "no" / "such" / "out.npy").string() + "'"));
  CHECK_THAT(r.error().why, Contains("No such file or directory"));
  CHECK(listing(dir.path()) == std::vector<std::string>{"out.npy"});
}

TEST_CASE("compare_tensors treats NaN as equal to NaN", "[lib][io][compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor a = Tensor::from_vector<float>({3}, {nan, 1, inf});
  CHECK(compare_tensors(a, Tensor::from_vector<float>({3}, {nan, 1, inf})).ok);
  auto d = compare_tensors(a, Tensor::from_vector<float>({3}, {0, 1, inf}));
  CHECK_FALSE(d.ok);
  CHECK(d.mismatches == 1);
  CHECK(d.first_mismatch == 0);
  CHECK_FALSE(compare_tensors(a, Tensor::from_vector<float>({3}, {nan, 1, -inf})).ok);
  CHECK_FALSE(compare_tensors(Tensor::from_vector<float>({1}, {1e30f}), Tensor::from_vector<float>({1}, {inf})).ok);
}

TEST_CASE("compare_tensors uses |a - e| <= atol + rtol * |e|", "[lib][io][compare]") {
  const double rtol = 1e-2, atol = 1e-3;
  auto cmp = [&](float actual, float expected) {
    return compare_tensors(Tensor::from_vector<float>({1}, {actual}), Tensor::from_vector<float>({1}, {expected}), rtol,
                           atol);
  };
  // Tolerance at e = 100 is 1.001; at e = 0 it is atol alone.
  CHECK(cmp(101.0f, 100.0f).ok);
  CHECK_FALSE(cmp(101.01f, 100.0f).ok);
  CHECK(cmp(0.0009f, 0.0f).ok);
  CHECK_FALSE(cmp(0.0011f, 0.0f).ok);
  // The rule is relative to the expected value, not symmetric.
  CHECK(cmp(-101.0f, -100.0f).ok);
  CHECK_FALSE(cmp(100.0f, 98.9f).ok);

  auto d = compare_tensors(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 8}),
                           Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}), rtol, atol);
  CHECK_FALSE(d.ok);
  CHECK(d.problem.empty());
  CHECK(d.elements == 4);
  CHECK(d.mismatches == 1);
  CHECK(d.first_mismatch == 3);
  CHECK(d.max_abs == Approx(4));
  CHECK(d.max_rel == Approx(1));
  CHECK(d.actual_at_first == 8);
  CHECK(d.expected_at_first == 4);
}

TEST_CASE("compare_tensors compares integers exactly", "[lib][io][compare]") {
  // Beyond 2^53 doubles cannot tell these apart; the comparison must.
  const int64_t big = (int64_t{1} << 60) + 1;
  auto d = compare_tensors(Tensor::from_vector<int64_t>({2}, {big, 5}), Tensor::from_vector<int64_t>({2}, {big - 1, 5}),
                           1.0, 100.0);
  CHECK_FALSE(d.ok);
  CHECK(d.first_mismatch == 0);
  CHECK(compare_tensors(Tensor::from_vector<int32_t>({2}, {7, -7}), Tensor::from_vector<int32_t>({2}, {7, -7})).ok);
  CHECK_FALSE(compare_tensors(Tensor::from_vector<int32_t>({1}, {7}), Tensor::from_vector<int32_t>({1}, {8}), 1.0, 10.0).ok);
  const uint8_t b1[2] = {1, 0}, b2[2] = {1, 1};
  CHECK_FALSE(compare_tensors(Tensor::from_bytes(DType::kBool, {2}, std::as_bytes(std::span(b1))),
                              Tensor::from_bytes(DType::kBool, {2}, std::as_bytes(std::span(b2))))
                  .ok);
}

TEST_CASE("compare_tensors reports shape and type mismatches", "[lib][io][compare]") {
  auto shape = compare_tensors(Tensor::from_vector<float>({2, 3}, {0, 0, 0, 0, 0, 0}),
                               Tensor::from_vector<float>({3, 2}, {0, 0, 0, 0, 0, 0}));
  CHECK_FALSE(shape.ok);
  CHECK(shape.problem == "shape [2,3] where [3,2] was expected");
  auto type = compare_tensors(Tensor::from_vector<double>({1}, {0}), Tensor::from_vector<float>({1}, {0}));
  CHECK_FALSE(type.ok);
  CHECK(type.problem == "type double where float was expected");

  Tensor s1 = Tensor::empty(DType::kString, {2});
  Tensor s2 = Tensor::empty(DType::kString, {2});
  s1.mut_as<std::string>()[0] = s2.mut_as<std::string>()[0] = "same";
  s1.mut_as<std::string>()[1] = "left";
  s2.mut_as<std::string>()[1] = "right";
  auto strings = compare_tensors(s1, s2);
  CHECK_FALSE(strings.ok);
  CHECK(strings.first_mismatch == 1);
}

TEST_CASE("compare_values compares sequences item by item and optionals by presence", "[lib][io][compare]") {
  const Tensor a = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor b = Tensor::from_vector<float>({3}, {3, 4, 5});
  const RuntimeValue seq = RuntimeValue::sequence(DType::kFloat32, {a, b});
  CHECK(compare_values(seq, seq).ok);

  const TensorDiff shorter = compare_values(RuntimeValue::sequence(DType::kFloat32, {a}), seq);
  CHECK_FALSE(shorter.ok);
  CHECK(shorter.problem == "a sequence of 1 tensors where 2 were expected");

  // Flat indices run across the items: the mismatch is element 1 of item 1, index 3.
  const RuntimeValue off = RuntimeValue::sequence(DType::kFloat32, {a, Tensor::from_vector<float>({3}, {3, 9, 5})});
  const TensorDiff d = compare_values(off, seq);
  CHECK_FALSE(d.ok);
  CHECK(d.elements == 5);
  CHECK(d.mismatches == 1);
  CHECK(d.first_mismatch == 3);
  CHECK(d.max_abs == 5);

  CHECK(compare_values(RuntimeValue::none(), RuntimeValue::none()).ok);
  const TensorDiff kinds = compare_values(RuntimeValue::none(), a);
  CHECK_FALSE(kinds.ok);
  CHECK(kinds.problem == "none where tensor float[2] was expected");
}
