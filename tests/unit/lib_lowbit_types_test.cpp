// The float8, int4 and uint4 element types: names and sizes, float8 rounding per ONNX's Cast
// tables, 4-bit packing, and TensorProto reading and writing.
#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "nxrt/ep/float8.h"
#include "nxrt/ep/int4.h"
#include "nxrt/ep/tensor.h"
#include "nxrt/model/tensor_proto.h"

using namespace nxrt;

namespace {

constexpr DType kE4M3FN = DType::kFloat8E4M3FN;
constexpr DType kE4M3FNUZ = DType::kFloat8E4M3FNUZ;
constexpr DType kE5M2 = DType::kFloat8E5M2;
constexpr DType kE5M2FNUZ = DType::kFloat8E5M2FNUZ;
constexpr double kInf = std::numeric_limits<double>::infinity();

float round_trip(DType t, double v, bool saturate = true) { return float8_to_float(t, float_to_float8(t, v, saturate)); }

}  // namespace

TEST_CASE("the low-bit types have ONNX's codes, names and sizes", "[lib][dtype]") {
  CHECK(dtype_from_onnx(17) == kE4M3FN);
  CHECK(dtype_from_onnx(20) == kE5M2FNUZ);
  CHECK(dtype_from_onnx(21) == DType::kUInt4);
  CHECK(dtype_from_onnx(22) == DType::kInt4);
  CHECK(dtype_name(kE4M3FNUZ) == "float8e4m3fnuz");
  CHECK(dtype_from_name("float8_e5m2") == kE5M2);
  CHECK(dtype_from_name("int4") == DType::kInt4);
  CHECK(dtype_size(kE5M2) == 1);
  CHECK(dtype_size(DType::kInt4) == 1);  // one element per byte in memory
  CHECK(dtype_packed_bytes(DType::kInt4, 5) == 3);
  CHECK(dtype_packed_bytes(DType::kUInt4, 4) == 2);
  CHECK(dtype_packed_bytes(kE4M3FN, 5) == 5);
  CHECK(is_floating(kE4M3FN));
  CHECK(is_integer(DType::kUInt4));
}

TEST_CASE("float8 decodes the largest values, subnormals and NaN of each type", "[lib][float8]") {
  CHECK(float8_to_float(kE4M3FN, 0x7e) == 448.f);
  CHECK(float8_to_float(kE4M3FN, 0x01) == std::ldexp(1.f, -9));
  CHECK(std::isnan(float8_to_float(kE4M3FN, 0xff)));
  CHECK(float8_to_float(kE4M3FNUZ, 0x7f) == 240.f);
  CHECK(float8_to_float(kE4M3FNUZ, 0x01) == std::ldexp(1.f, -10));
  CHECK(std::isnan(float8_to_float(kE4M3FNUZ, 0x80)));
  CHECK(float8_to_float(kE5M2, 0x7b) == 57344.f);
  CHECK(float8_to_float(kE5M2, 0xfc) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(float8_to_float(kE5M2, 0x7d)));
  CHECK(float8_to_float(kE5M2FNUZ, 0x7f) == 57344.f);
  CHECK(float8_to_float(kE5M2FNUZ, 0x01) == std::ldexp(1.f, -17));
  CHECK(float8_to_float(kE4M3FN, 0x38) == 1.f);
  CHECK(float8_to_float(kE4M3FN, 0xb8) == -1.f);
}

TEST_CASE("float8 rounds to nearest even, also between subnormals", "[lib][float8]") {
  CHECK(round_trip(kE4M3FN, 464) == 448.f);                     // a tie: 448 has the even mantissa
  CHECK(round_trip(kE4M3FN, 248) == 256.f);                     // a tie: up to 256
  CHECK(round_trip(kE4M3FN, std::ldexp(1.5, -9)) == std::ldexp(1.f, -8));
  CHECK(round_trip(kE4M3FN, std::ldexp(1.0, -10)) == 0.f);      // half the smallest subnormal
  CHECK(round_trip(kE4M3FN, std::ldexp(1.01, -10)) == std::ldexp(1.f, -9));
  CHECK(round_trip(kE5M2, 0.3) == 0.3125f);
  CHECK(round_trip(kE5M2FNUZ, std::ldexp(1.0, -18)) == 0.f);
}

TEST_CASE("float8 follows ONNX's saturate table for infinities and overflow", "[lib][float8]") {
  for (DType t : {kE4M3FN, kE4M3FNUZ, kE5M2, kE5M2FNUZ}) {
    const float max = float8_to_float(t, t == kE4M3FN ? 0x7e : t == kE5M2 ? 0x7b : 0x7f);
    CHECK(round_trip(t, kInf) == max);
    CHECK(round_trip(t, -kInf) == -max);
    CHECK(round_trip(t, 1e6) == max);
    CHECK(std::isnan(round_trip(t, std::nan(""))));
  }
  // Without saturation: E5M2 overflows to infinity, the others to NaN; [x] is the rounded value.
  CHECK(std::isnan(round_trip(kE4M3FN, 480, false)));
  CHECK(round_trip(kE4M3FN, 464, false) == 448.f);
  CHECK(std::isnan(round_trip(kE4M3FN, -kInf, false)));
  CHECK(std::isnan(round_trip(kE4M3FNUZ, 248, false)));
  CHECK(round_trip(kE5M2, 61440, false) == std::numeric_limits<float>::infinity());
  CHECK(round_trip(kE5M2, -kInf, false) == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(round_trip(kE5M2FNUZ, kInf, false)));
}

TEST_CASE("float8 keeps negative zero except in the FNUZ types", "[lib][float8]") {
  CHECK(float_to_float8(kE4M3FN, -0.0, true) == 0x80);
  CHECK(float_to_float8(kE5M2, -1e-30, true) == 0x80);
  CHECK(float_to_float8(kE4M3FNUZ, -0.0, true) == 0x00);
  CHECK(float_to_float8(kE5M2FNUZ, -1e-30, true) == 0x00);
  CHECK(float_to_float8(kE4M3FNUZ, std::nan(""), true) == 0x80);
}

TEST_CASE("4-bit elements pack two per byte, low nibble first", "[lib][int4]") {
  const uint8_t elements[] = {0xf8, 0x07, 0xff};  // int4 -8, 7, -1
  uint8_t packed[2] = {};
  pack_4bit(elements, 3, packed);
  CHECK(packed[0] == 0x78);
  CHECK(packed[1] == 0x0f);
  uint8_t back[3] = {};
  unpack_4bit(DType::kInt4, packed, 3, back);
  CHECK(static_cast<int8_t>(back[0]) == -8);
  CHECK(static_cast<int8_t>(back[1]) == 7);
  CHECK(static_cast<int8_t>(back[2]) == -1);
  unpack_4bit(DType::kUInt4, packed, 3, back);
  CHECK(back[0] == 8);
  CHECK(back[2] == 15);
  CHECK(static_cast<int8_t>(wrap_to_4bit(DType::kInt4, 9)) == -7);
  CHECK(wrap_to_4bit(DType::kUInt4, -1) == 15);
}

TEST_CASE("int4 TensorProtos read from raw_data and int32_data and write packed", "[lib][int4][tensor_proto]") {
  onnx::TensorProto raw;
  raw.set_data_type(22);
  raw.add_dims(3);
  raw.set_raw_data(std::string("\x78\x0f", 2));
  auto t = tensor_from_proto(raw, "test");
  REQUIRE(t);
  CHECK(t->dtype() == DType::kInt4);
  CHECK(t->to_int64_vector() == std::vector<int64_t>{-8, 7, -1});

  onnx::TensorProto fields;
  fields.set_data_type(21);
  fields.add_dims(3);
  fields.add_int32_data(0x78);
  fields.add_int32_data(0x0f);
  auto u = tensor_from_proto(fields, "test");
  REQUIRE(u);
  CHECK(u->to_int64_vector() == std::vector<int64_t>{8, 7, 15});

  onnx::TensorProto written;
  tensor_to_proto(*t, written);
  CHECK(written.raw_data() == std::string("\x78\x0f", 2));

  raw.set_raw_data(std::string("\x78\x0f\x00", 3));
  auto wrong = tensor_from_proto(raw, "initializer 'w'");
  REQUIRE_FALSE(wrong);
  CHECK(wrong.error().what == "initializer 'w': raw_data has 3 bytes; shape [3] of int4 needs 2");
  fields.add_int32_data(0);
  auto extra = tensor_from_proto(fields, "initializer 'u'");
  REQUIRE_FALSE(extra);
  CHECK(extra.error().what == "initializer 'u': holds 3 int32_data values for shape [3] of uint4; 3 elements packed "
                              "two per value need 2");
}

TEST_CASE("float8 TensorProtos read their bit patterns from raw_data and int32_data", "[lib][float8][tensor_proto]") {
  onnx::TensorProto fields;
  fields.set_data_type(17);
  fields.add_dims(2);
  fields.add_int32_data(0x38);
  fields.add_int32_data(0xb8);
  auto t = tensor_from_proto(fields, "test");
  REQUIRE(t);
  CHECK(t->dtype() == kE4M3FN);
  CHECK(float8_to_float(kE4M3FN, t->data_as<uint8_t>()[1]) == -1.f);
  onnx::TensorProto raw;
  tensor_to_proto(*t, raw);
  CHECK(raw.raw_data() == std::string("\x38\xb8", 2));
}

TEST_CASE("int4 external data is unpacked from its packed bytes", "[lib][int4][tensor_proto]") {
  const auto dir = std::filesystem::temp_directory_path() / "nxrt_lowbit_external";
  std::filesystem::create_directories(dir);
  {
    std::ofstream f(dir / "w.bin", std::ios::binary);
    f.write("\xff\x78\x0f", 3);  // one byte of padding, then -8, 7, -1 packed
  }
  onnx::TensorProto proto;
  proto.set_data_type(22);
  proto.add_dims(3);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [key, value] : {std::pair{"location", "w.bin"}, std::pair{"offset", "1"}, std::pair{"length", "2"}}) {
    auto* entry = proto.add_external_data();
    entry->set_key(key);
    entry->set_value(value);
  }
  MappedFileCache files;
  auto w = weight_from_proto(proto, dir, "initializer 'w'", files);
  REQUIRE(w);
  auto t = w->materialize();
  REQUIRE(t);
  CHECK(t->to_int64_vector() == std::vector<int64_t>{-8, 7, -1});
  std::filesystem::remove_all(dir);
}
