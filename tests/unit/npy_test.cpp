// The .npy reader and writer: round trips, files numpy wrote, and every malformed case.
#include <catch2/catch.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "nxrt/io/npy.h"

using namespace nxrt;
namespace fs = std::filesystem;

namespace {

// tests/unit/data/make_npy.py wrote these files with numpy 1.24.
fs::path data_file(std::string_view name) { return fs::path(NXRT_SOURCE_DIR) / "tests/unit/data" / name; }

std::vector<std::byte> file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  const std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

std::vector<std::byte> to_bytes(std::string_view s) {
  const auto* p = reinterpret_cast<const std::byte*>(s.data());
  return {p, p + s.size()};
}

// A .npy file with the given header text and data, unpadded (readers must not need padding).
std::vector<std::byte> npy_file(std::string_view header, std::string_view data, int major = 1) {
  std::string s("\x93NUMPY", 6);
  s += static_cast<char>(major);
  s += '\0';
  const int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) s += static_cast<char>(header.size() >> (8 * i) & 0xff);
  s += header;
  s += data;
  return to_bytes(s);
}

std::string float_data(std::initializer_list<float> values) {
  std::string s(values.size() * sizeof(float), '\0');
  std::memcpy(s.data(), std::data(values), s.size());
  return s;
}

// Tensor::from_vector<bool> cannot take std::vector<bool> (packed bits): build from bytes.
Tensor bool_tensor(Shape shape, std::initializer_list<uint8_t> values) {
  return Tensor::from_bytes(DType::kBool, std::move(shape), std::as_bytes(std::span(std::data(values), values.size())));
}

bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || a.nbytes() != b.nbytes()) return false;
  return a.nbytes() == 0 || std::memcmp(a.view().data(), b.view().data(), a.nbytes()) == 0;
}

// Parses bytes that must be refused; returns the error for the caller to inspect.
Error refused(std::span<const std::byte> bytes) {
  auto t = parse_npy(bytes, "case.npy");
  REQUIRE_FALSE(t);
  CHECK(t.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(t.error().what, Catch::StartsWith("'case.npy': "));
  CHECK_FALSE(t.error().how.empty());
  return t.error();
}

Error refused_header(std::string_view header, std::string_view data = "") {
  return refused(npy_file(header, data));
}

// A fresh folder under the system's temporary folder, removed with the object.
struct NpyFolder {
  fs::path path = fs::temp_directory_path() / ("nxrt_npy_test_" + std::to_string(::getpid()));
  NpyFolder() {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~NpyFolder() { fs::remove_all(path); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(path)) names.push_back(e.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }
};

template <class T>
Tensor extremes(Shape shape) {
  std::vector<T> v;
  const auto n = static_cast<std::size_t>(shape_numel(shape));
  for (std::size_t i = 0; i < n; ++i) {
    if (i % 3 == 0) v.push_back(std::numeric_limits<T>::lowest());
    else if (i % 3 == 1) v.push_back(std::numeric_limits<T>::max());
    else v.push_back(static_cast<T>(i));
  }
  return Tensor::from_vector<T>(std::move(shape), v);
}

}  // namespace

TEST_CASE("every supported dtype survives encode and parse, in memory and on disk", "[io][npy]") {
  std::vector<Tensor> tensors = {
      extremes<float>({2, 3}),         extremes<double>({5}),          extremes<int8_t>({3, 1, 2}),
      extremes<int16_t>({4}),          extremes<int32_t>({2, 2}),      extremes<int64_t>({}),
      extremes<uint8_t>({7}),          extremes<uint16_t>({1, 3}),     extremes<uint32_t>({2}),
      extremes<uint64_t>({3}),         Tensor::empty(DType::kFloat32, {0, 4}),
      bool_tensor({2, 2}, {1, 0, 0, 1}),
  };
  // float16 has no C++ type here: raw bits of 1.0, -2.0, 65504 and NaN.
  const std::vector<uint16_t> half_bits = {0x3c00, 0xc000, 0x7bff, 0x7e00};
  tensors.push_back(Tensor::from_bytes(DType::kFloat16, {2, 2}, std::as_bytes(std::span(half_bits))));

  NpyFolder dir;
  for (const Tensor& t : tensors) {
    INFO("dtype " << dtype_name(t.dtype()) << " shape " << shape_to_string(t.shape()));
    REQUIRE(npy_supports(t.dtype()));
    const std::vector<std::byte> bytes = encode_npy(t);
    REQUIRE_FALSE(bytes.empty());
    // numpy's layout: the data starts on a 64-byte boundary after a newline-terminated header.
    const std::size_t data_offset = bytes.size() - t.nbytes();
    CHECK(data_offset % 64 == 0);
    CHECK(static_cast<char>(bytes[data_offset - 1]) == '\n');
    auto back = parse_npy(bytes, "memory");
    REQUIRE(back);
    CHECK(same_tensor(*back, t));

    const fs::path file = dir.path / "t.npy";
    REQUIRE(write_npy(file, t));
    CHECK(file_bytes(file) == bytes);
    auto read = read_npy(file);
    REQUIRE(read);
    CHECK(same_tensor(*read, t));
  }
  // Only the final file remains: the temporary one was renamed, never left beside it.
  CHECK(dir.entries() == std::vector<std::string>{"t.npy"});
}

TEST_CASE("encode_npy writes the same bytes as numpy.save", "[io][npy]") {
  const Tensor f = Tensor::from_vector<float>({2, 3}, {-1, -0.5f, 0, 0.5f, 1, 1.5f});
  CHECK(encode_npy(f) == file_bytes(data_file("numpy_f4_2x3.npy")));
  CHECK(encode_npy(Tensor::from_vector<int64_t>({}, {-7})) == file_bytes(data_file("numpy_i8_scalar.npy")));
  CHECK(encode_npy(bool_tensor({4}, {1, 0, 0, 1})) ==
        file_bytes(data_file("numpy_b1_4.npy")));
}

TEST_CASE("files written by numpy, format versions 1.0, 2.0 and 3.0, are read", "[io][npy]") {
  auto f = read_npy(data_file("numpy_f4_2x3.npy"));
  REQUIRE(f);
  CHECK(same_tensor(*f, Tensor::from_vector<float>({2, 3}, {-1, -0.5f, 0, 0.5f, 1, 1.5f})));

  auto scalar = read_npy(data_file("numpy_i8_scalar.npy"));
  REQUIRE(scalar);
  CHECK(scalar->shape().empty());
  CHECK(scalar->data_as<int64_t>()[0] == -7);

  auto half = read_npy(data_file("numpy_f2_v2.npy"));
  REQUIRE(half);
  CHECK(half->dtype() == DType::kFloat16);
  CHECK(half->shape() == Shape{3});
  const auto* bits = static_cast<const uint16_t*>(half->view().data());
  CHECK(bits[0] == 0x3e00);  // 1.5
  CHECK(bits[1] == 0xc000);  // -2.0
  CHECK(bits[2] == 0x7bff);  // 65504

  auto u16 = read_npy(data_file("numpy_u2_v3.npy"));
  REQUIRE(u16);
  CHECK(same_tensor(*u16, Tensor::from_vector<uint16_t>({1, 2}, {1, 65535})));

  // The same bytes in memory parse to the same tensor.
  auto mem = parse_npy(file_bytes(data_file("numpy_u2_v3.npy")), "numpy_u2_v3.npy");
  REQUIRE(mem);
  CHECK(same_tensor(*mem, *u16));
}

TEST_CASE("header spellings numpy accepts are read", "[io][npy]") {
  const std::string data = float_data({1, 2, 3});
  for (std::string_view header : {
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }",
           "{\"shape\":(3,),\"descr\":\"<f4\",\"fortran_order\":False}\n",
           "  { 'descr' : '<f4' ,\t'fortran_order' : False , 'shape' : ( 3 , ) }   \n",
           "{'descr': '<f4', 'fortran_order': False, 'shape': (3L,), }",  // Python 2
       }) {
    INFO(header);
    auto t = parse_npy(npy_file(header, data), "case.npy");
    REQUIRE(t);
    CHECK(same_tensor(*t, Tensor::from_vector<float>({3}, {1, 2, 3})));
  }
  auto i8 = parse_npy(npy_file("{'descr': '<i1', 'fortran_order': False, 'shape': (2,)}", "\x01\xff"), "x");
  REQUIRE(i8);
  CHECK(same_tensor(*i8, Tensor::from_vector<int8_t>({2}, {1, -1})));
  auto empty = parse_npy(npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 0, 3)}", ""), "x");
  REQUIRE(empty);
  CHECK(empty->shape() == Shape{2, 0, 3});
}

TEST_CASE("bool bytes other than 0 and 1 read as true", "[io][npy]") {
  auto t = parse_npy(npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (3,)}", std::string("\x00\x02\xff", 3)),
                     "x");
  REQUIRE(t);
  const auto* b = static_cast<const unsigned char*>(t->view().data());
  CHECK(b[0] == 0);
  CHECK(b[1] == 1);
  CHECK(b[2] == 1);
}

TEST_CASE("truncated files and bad prefixes are refused", "[io][npy]") {
  CHECK_THAT(refused({}).what, Catch::Contains("truncated .npy file: 0 bytes"));
  CHECK_THAT(refused(to_bytes("\x93NUMPY\x01")).what, Catch::Contains("truncated"));

  const Error magic = refused(to_bytes("P5\n2 2\n255\n\x01\x02\x03\x04"));
  CHECK_THAT(magic.what, Catch::Contains("not a .npy file: it starts with \\x50\\x35"));
  CHECK_THAT(magic.how, Catch::Contains("numpy.save"));
  CHECK_THAT(refused(to_bytes(std::string("PK\x03\x04\x14\x00\x00\x00\x00\x00\x00\x00", 12))).why, Catch::Contains(".npz"));

  std::vector<std::byte> v4 = npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (0,)}", "");
  v4[6] = std::byte{4};
  CHECK_THAT(refused(v4).what, Catch::Contains("version 4.0 is not supported"));

  // The header length points past the end of the file.
  std::vector<std::byte> long_header = npy_file("{'descr': '<f4'}", "");
  long_header[8] = std::byte{0xff};
  CHECK_THAT(refused(long_header).what, Catch::Contains("the header needs 255 bytes, 16 follow"));

  // A version 2.0 length of 4 GiB is refused before anything is read or allocated.
  std::vector<std::byte> huge = npy_file("{}", "", 2);
  for (int i = 8; i < 12; ++i) huge[static_cast<std::size_t>(i)] = std::byte{0xff};
  CHECK_THAT(refused(huge).what, Catch::Contains("header length 4294967295 is larger than"));
  CHECK_THAT(refused(to_bytes(std::string("\x93NUMPY\x02\x00\x00\x00\x00", 11))).what, Catch::Contains("version 2.0 prefix"));

  // Every prefix of a valid file is refused, never read past its end.
  const std::vector<std::byte> good = encode_npy(Tensor::from_vector<float>({2, 2}, {1, 2, 3, 4}));
  for (std::size_t n = 0; n < good.size(); ++n) {
    INFO("first " << n << " bytes");
    CHECK_FALSE(parse_npy(std::span(good).first(n), "case.npy"));
  }
}

TEST_CASE("malformed headers are refused with the offending text", "[io][npy]") {
  const Error list = refused_header("[1, 2, 3]");
  CHECK_THAT(list.what, Catch::Contains("malformed .npy header: the header is not a Python dict literal"));
  CHECK_THAT(list.why, Catch::Contains("[1, 2, 3]"));
  struct Case {
    std::string_view header;
    std::string_view message;
  };
  for (const Case& c : {
           Case{"{'descr': '<f4', 'fortran_order': False}", "the key 'shape' is missing"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "unknown key 'x'"},
           Case{"{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': ()}",
                "the key 'descr' appears twice"},
           Case{"{'descr': '<f4', 'fortran_order': 0, 'shape': ()}", "'fortran_order' must be True or False"},
           Case{"{'descr': '<f4', 'fortran_order': Falsey, 'shape': ()}", "'fortran_order' must be True or False"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3]}", "'shape' must be a tuple"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}",
                "'shape' (3) is an integer, not a tuple; one dimension is written (3,)"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}", "shape dimensions must be non-negative"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", "expected ',' or ')'"},
           Case{"{'descr': '<f4' 'fortran_order': False, 'shape': ()}", "expected ',' or '}'"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': ()} x",
                "unexpected text after the closing '}' (at offset 54, found 'x')"},
           Case{"{'descr: '<f4'", "expected ':' after the key 'descr: '"},
           Case{"{'descr': '<f4", "the string is not closed"},
           Case{"{'descr': '\\x3cf4', 'fortran_order': False, 'shape': ()}", "escape sequences are not supported"},
           Case{"{'descr': '<f4', 'fortran_order': False, 'shape': (1,", "found the end"},
       }) {
    INFO(c.header);
    const Error e = refused_header(c.header);
    CHECK_THAT(e.what, Catch::Contains(std::string(c.message)));
    CHECK_THAT(e.why, Catch::Contains("numpy writes e.g."));
  }
  // Bytes that are not text are shown escaped, not printed raw.
  CHECK_THAT(refused_header(std::string("{\x01\xfe}", 4)).why, Catch::Contains("{\\x01\\xfe}"));
}

TEST_CASE("shapes that overflow or disagree with the data are refused before allocating", "[io][npy]") {
  const Error overflow = refused_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}");
  CHECK_THAT(overflow.what, Catch::Contains("shape [4294967296,4294967296] has more elements than"));
  // Fits int64 as a count, not as a byte size.
  CHECK_THAT(refused_header("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,)}").what,
             Catch::Contains("has more elements than a 64-bit size can count"));
  CHECK_THAT(refused_header("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}").what,
             Catch::Contains("does not fit in a signed 64-bit integer"));
  // A plausible but huge shape over a small file: refused by size, nothing allocated.
  const Error big = refused_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,)}", "abcd");
  CHECK_THAT(big.what, Catch::Contains("needs 4000000000000 bytes, the file has 4 after its 77-byte header"));
  CHECK_THAT(big.why, Catch::Contains("truncated"));

  const std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2)}";
  const Error short_data = refused_header(header, float_data({1, 2, 3}));
  CHECK_THAT(short_data.what, Catch::Contains("shape [2,2] of float needs 16 bytes, the file has 12"));
  const Error long_data = refused_header(header, float_data({1, 2, 3, 4, 5}));
  CHECK_THAT(long_data.what, Catch::Contains("needs 16 bytes, the file has 20"));
  CHECK_THAT(long_data.why, Catch::Contains("trailing bytes"));

  std::string deep = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 65; ++i) deep += "1, ";
  CHECK_THAT(refused_header(deep + ")}", float_data({1})).what, Catch::Contains("more than 64 dimensions"));
}

TEST_CASE("unsupported element types, Fortran order and big-endian data are refused", "[io][npy]") {
  for (std::string_view descr : {"<c8", "|O", "<U3", "|S4", "<M8[ns]", "<f16", "", "f4"}) {
    INFO(descr);
    const Error e = refused_header(fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ()}}", descr));
    CHECK_THAT(e.what, Catch::Contains(fmt::format("element type '{}' is not supported", descr)));
    CHECK_THAT(e.why, Catch::Contains("'<f4'"));
    CHECK_THAT(e.how, Catch::Contains("astype"));
  }
  const Error structured = refused_header("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': ()}");
  CHECK_THAT(structured.what, Catch::Contains("structured (record) arrays are not supported"));
  CHECK_THAT(refused_header("{'descr': '|f4', 'fortran_order': False, 'shape': ()}").why,
             Catch::Contains("byte order '|'"));

  auto fortran = read_npy(data_file("numpy_fortran.npy"));
  REQUIRE_FALSE(fortran);
  CHECK(fortran.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(fortran.error().what, Catch::Contains("numpy_fortran.npy': the array is stored in Fortran"));
  CHECK_THAT(fortran.error().how, Catch::Contains("numpy.ascontiguousarray"));

  auto big = read_npy(data_file("numpy_big_endian.npy"));
  REQUIRE_FALSE(big);
  CHECK_THAT(big.error().what, Catch::Contains("numpy_big_endian.npy': element type '>f4' is not supported"));
  CHECK_THAT(big.error().why, Catch::Contains("big-endian"));
  CHECK_THAT(big.error().how, Catch::Contains("newbyteorder('<')"));
}

TEST_CASE("no single corrupted byte crashes the parser", "[io][npy]") {
  const std::vector<std::byte> good = encode_npy(Tensor::from_vector<int16_t>({2, 3}, {1, 2, 3, 4, 5, 6}));
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (unsigned value : {0x00u, 0x20u, 0x27u, 0x28u, 0x29u, 0x2cu, 0x39u, 0x7bu, 0x7du, 0xffu}) {
      std::vector<std::byte> bad = good;
      bad[i] = static_cast<std::byte>(value);
      auto t = parse_npy(bad, "case.npy");
      if (t) {
        CHECK(t->nbytes() + 128 == bad.size());
      } else {
        CHECK(t.error().code == ErrorCode::kInvalidInput);
      }
    }
  }
}

TEST_CASE("read_npy and write_npy report file problems with the path", "[io][npy]") {
  NpyFolder dir;
  auto missing = read_npy(dir.path / "nope.npy");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(missing.error().what, Catch::Contains("cannot read '") && Catch::Contains("nope.npy'"));
  CHECK_THAT(missing.error().why, Catch::Contains("No such file"));

  auto folder = read_npy(dir.path);
  REQUIRE_FALSE(folder);
  CHECK_THAT(folder.error().why, Catch::Contains("folder"));

  const fs::path truncated = dir.path / "short.npy";
  {
    const std::vector<std::byte> bytes = encode_npy(Tensor::from_vector<float>({4}, {1, 2, 3, 4}));
    std::ofstream(truncated, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 130);
  }
  auto t = read_npy(truncated);
  REQUIRE_FALSE(t);
  CHECK_THAT(t.error().what, Catch::Contains("short.npy': the data does not match the header"));

  const Tensor x = Tensor::from_vector<float>({1}, {1});
  auto no_folder = write_npy(dir.path / "absent" / "x.npy", x);
  REQUIRE_FALSE(no_folder);
  CHECK_THAT(no_folder.error().what, Catch::Contains("cannot write '") && Catch::Contains("absent/x.npy'"));
  CHECK_THAT(no_folder.error().why, Catch::Contains("absent'") && Catch::Contains("No such file or directory"));
  REQUIRE(no_folder.error().context.size() == 1);
  CHECK_THAT(no_folder.error().context[0], Catch::Contains("writing '") && Catch::Contains("absent/x.npy' as .npy"));

  // A failed rename (the target is a folder) leaves no temporary file behind.
  fs::create_directories(dir.path / "taken.npy" / "inner");
  auto onto_folder = write_npy(dir.path / "taken.npy", x);
  REQUIRE_FALSE(onto_folder);
  CHECK_THAT(onto_folder.error().what, Catch::Contains("taken.npy'"));
  CHECK(dir.entries() == std::vector<std::string>{"short.npy", "taken.npy"});

  // Overwriting replaces the file whole.
  const fs::path out = dir.path / "out.npy";
  REQUIRE(write_npy(out, Tensor::from_vector<float>({3}, {1, 2, 3})));
  REQUIRE(write_npy(out, x));
  auto back = read_npy(out);
  REQUIRE(back);
  CHECK(same_tensor(*back, x));
}

TEST_CASE("tensors .npy cannot hold are refused by write_npy and encode to nothing", "[io][npy]") {
  NpyFolder dir;
  CHECK_FALSE(npy_supports(DType::kString));
  CHECK_FALSE(npy_supports(DType::kBFloat16));
  const Tensor bf16 = Tensor::empty(DType::kBFloat16, {2});
  CHECK(encode_npy(bf16).empty());
  CHECK(encode_npy(Tensor()).empty());
  auto w = write_npy(dir.path / "b.npy", bf16);
  REQUIRE_FALSE(w);
  CHECK_THAT(w.error().why, Catch::Contains("element type bfloat16 has no .npy equivalent"));
  CHECK_THAT(w.error().how, Catch::Contains(".pb"));
  auto u = write_npy(dir.path / "u.npy", Tensor());
  REQUIRE_FALSE(u);
  CHECK_THAT(u.error().why, Catch::Contains("no data"));
  CHECK(dir.entries().empty());
}
