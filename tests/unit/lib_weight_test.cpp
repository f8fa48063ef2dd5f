// WeightHandle (resident and mapped) and the path guard for files a model refers to.
#include <catch2/catch.hpp>

#include <cstring>

#include "lib_test_util.h"
#include "nxrt/ep/weight.h"
#include "nxrt/model/model.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

TEST_CASE("a resident WeightHandle materializes its own tensor", "[lib][weight]") {
  const Tensor t = Tensor::from_vector<float>({2}, {1.5f, -2});
  const WeightHandle w = WeightHandle::resident(t);
  CHECK(w.is_resident());
  CHECK(w.dtype() == DType::kFloat32);
  CHECK(w.shape() == Shape{2});
  CHECK(w.nbytes() == 8);
  CHECK(w.describe_location() == "inline");
  auto m = w.materialize();
  REQUIRE(m);
  CHECK(m->storage() == t.storage());
  CHECK(m->data_as<float>()[1] == -2);
}

TEST_CASE("a mapped WeightHandle reads its region without a copy and keeps the mapping alive", "[lib][weight]") {
  TempDir dir;
  // 16 bytes of header, then four floats.
  std::string bytes(16, 'h');
  const float values[4] = {1, 2, 3, 4};
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  write_bytes(dir / "weights.bin", bytes);

  Tensor t;
  const std::byte* map_begin = nullptr;
  std::size_t map_size = 0;
  {
    auto file = MappedFile::open(dir / "weights.bin");
    REQUIRE(file);
    map_begin = (*file)->data();
    map_size = (*file)->size();
    CHECK(map_size == bytes.size());
    const WeightHandle w = WeightHandle::mapped(*file, 16, sizeof(values), DType::kFloat32, {2, 2});
    CHECK_FALSE(w.is_resident());
    CHECK(w.nbytes() == 16);
    CHECK(w.describe_location() == "external: weights.bin @ 16 (+16 bytes)");
    auto m = w.materialize();
    REQUIRE(m);
    t = *m;
  }  // the handle and our reference to the file are gone; the tensor still holds the mapping

  CHECK(t.shape() == Shape{2, 2});
  const auto* data = static_cast<const std::byte*>(t.view().data());
  CHECK(data == map_begin + 16);  // zero-copy: inside the mapping
  CHECK(data + t.nbytes() <= map_begin + map_size);
  // The file can go away too: the mapping (not the path) keeps the bytes readable.
  std::filesystem::remove(dir / "weights.bin");
  CHECK(t.data_as<float>()[0] == 1);
  CHECK(t.data_as<float>()[3] == 4);
}

TEST_CASE("a misaligned mapped region is copied into aligned memory", "[lib][weight]") {
  TempDir dir;
  std::string bytes(3, 'h');
  const float values[2] = {7, 8};
  bytes.append(reinterpret_cast<const char*>(values), sizeof(values));
  write_bytes(dir / "w.bin", bytes);
  auto file = MappedFile::open(dir / "w.bin");
  REQUIRE(file);
  auto m = WeightHandle::mapped(*file, 3, 8, DType::kFloat32, {2}).materialize();
  REQUIRE(m);
  CHECK(reinterpret_cast<std::uintptr_t>(m->view().data()) % alignof(float) == 0);
  CHECK(m->data_as<float>()[0] == 7);
  CHECK(m->data_as<float>()[1] == 8);
}

TEST_CASE("MappedFile::open names a missing file", "[lib][weight]") {
  TempDir dir;
  auto r = MappedFile::open(dir / "missing.bin");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, Contains("missing.bin"));
}

TEST_CASE("guard_relative_path accepts files inside the model's folder", "[lib][path_guard]") {
  TempDir dir;
  write_bytes(dir / "w.bin", "x");
  std::filesystem::create_directory(dir / "sub");
  write_bytes(dir / "sub" / "v.bin", "y");

  auto plain = guard_relative_path(dir.path(), "w.bin", "external data");
  REQUIRE(plain);
  CHECK(std::filesystem::equivalent(*plain, dir / "w.bin"));
  auto nested = guard_relative_path(dir.path(), "sub/v.bin", "external data");
  REQUIRE(nested);
  CHECK(std::filesystem::equivalent(*nested, dir / "sub" / "v.bin"));
  // A link that stays inside the folder is fine.
  std::filesystem::create_symlink("sub/v.bin", dir / "inside-link");
  CHECK(guard_relative_path(dir.path(), "inside-link", "external data"));
}

TEST_CASE("guard_relative_path refuses absolute paths, '..' and links leading out", "[lib][path_guard]") {
  TempDir outside;
  write_bytes(outside / "secret.bin", "s");
  TempDir dir;
  std::filesystem::create_directory(dir / "sub");

  auto absolute = guard_relative_path(dir.path(), (outside / "secret.bin").string(), "external data");
  REQUIRE_FALSE(absolute);
  CHECK(absolute.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(absolute.error().what, Contains("is absolute"));
  CHECK_THAT(absolute.error().what, Contains("external data path"));

  for (const char* rel : {"../secret.bin", "sub/../w.bin", "sub/..", ".."}) {
    INFO(rel);
    auto r = guard_relative_path(dir.path(), rel, "external data");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().what, Contains("contains '..'"));
  }

  std::filesystem::create_symlink(outside / "secret.bin", dir / "sub" / "link.bin");
  auto link = guard_relative_path(dir.path(), "sub/link.bin", "EPContext");
  REQUIRE_FALSE(link);
  CHECK_THAT(link.error().what, Contains("leads outside the model's folder"));
  CHECK_THAT(link.error().how, Contains("store EPContext files beside the model"));

  // A linked folder leading out is refused too, even for a file that does not exist yet.
  std::filesystem::create_directory_symlink(outside.path(), dir / "out");
  CHECK_FALSE(guard_relative_path(dir.path(), "out/secret.bin", "external data"));
  CHECK_FALSE(guard_relative_path(dir.path(), "out/new.bin", "external data"));
  CHECK_FALSE(guard_relative_path(dir.path(), "", "external data"));
}
