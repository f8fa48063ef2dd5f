// The float8, float4e2m1, float8e8m0, int4, uint4, int2 and uint2 element types: names and
// sizes, rounding per ONNX's Cast tables, sub-byte packing, and TensorProto reading and writing.
#include <onnx/onnx_pb.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "nxrt/ep/float8.h"
#include "nxrt/ep/mx_float.h"
#include "nxrt/ep/subbyte.h"
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

// A 1-D TensorProto of ONNX type `code` holding `n` elements as the bytes `raw`.
onnx::TensorProto raw_proto(int32_t code, int64_t n, std::string raw) {
  onnx::TensorProto proto;
  proto.set_data_type(code);
  proto.add_dims(n);
  proto.set_raw_data(std::move(raw));
  return proto;
}

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
  CHECK(dtype_from_onnx(23) == DType::kFloat4E2M1);
  CHECK(dtype_from_onnx(24) == DType::kFloat8E8M0);
  CHECK(dtype_from_onnx(25) == DType::kUInt2);
  CHECK(dtype_from_onnx(26) == DType::kInt2);
  CHECK(dtype_from_onnx(27) == std::nullopt);
  CHECK(dtype_name(DType::kFloat8E8M0) == "float8e8m0");
  CHECK(dtype_from_name("float4_e2m1fn") == DType::kFloat4E2M1);
  CHECK(dtype_from_name("i2") == DType::kInt2);
  CHECK(dtype_packed_bytes(DType::kFloat4E2M1, 3) == 2);
  CHECK(dtype_packed_bytes(DType::kInt2, 5) == 2);
  CHECK(dtype_packed_bytes(DType::kUInt2, 8) == 2);
  CHECK(dtype_packed_bytes(DType::kFloat8E8M0, 5) == 5);
  CHECK(subbyte_bits(DType::kFloat4E2M1) == 4);
  CHECK(subbyte_bits(DType::kUInt2) == 2);
  CHECK(subbyte_bits(DType::kInt8) == 0);
  CHECK(is_byte_float(DType::kFloat8E8M0));
  CHECK_FALSE(is_float8(DType::kFloat8E8M0));
  CHECK(is_floating(DType::kFloat4E2M1));
  CHECK(is_subbyte_integer(DType::kInt2));
  CHECK_FALSE(is_subbyte_integer(DType::kFloat4E2M1));
  CHECK(subbyte_min(DType::kInt2) == -2);
  CHECK(subbyte_max(DType::kInt2) == 1);
  CHECK(subbyte_max(DType::kUInt2) == 3);
  CHECK(subbyte_min(DType::kInt4) == -8);
  CHECK(subbyte_max(DType::kUInt4) == 15);
}

TEST_CASE("float4e2m1 holds 0 to 6 and rounds to nearest even, saturating", "[lib][float4]") {
  const float values[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (uint8_t bits = 0; bits < 8; ++bits) {
    CHECK(float4e2m1_to_float(bits) == values[bits]);
    CHECK(float4e2m1_to_float(static_cast<uint8_t>(bits | 0x8)) == -values[bits]);
    CHECK(float_to_float4e2m1(values[bits]) == bits);
  }
  // Ties go to the even mantissa: 0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4.
  CHECK(float_to_float4e2m1(0.25) == 0x0);
  CHECK(float_to_float4e2m1(0.26) == 0x1);
  CHECK(float_to_float4e2m1(0.75) == 0x2);
  CHECK(float_to_float4e2m1(1.25) == 0x2);
  CHECK(float_to_float4e2m1(1.75) == 0x4);
  CHECK(float_to_float4e2m1(2.5) == 0x4);
  CHECK(float_to_float4e2m1(3.5) == 0x6);
  CHECK(float_to_float4e2m1(5.0) == 0x6);
  CHECK(float_to_float4e2m1(5.01) == 0x7);
  CHECK(float_to_float4e2m1(-2.6) == 0xd);   // -3
  CHECK(float_to_float4e2m1(1e9) == 0x7);    // saturates to 6
  CHECK(float_to_float4e2m1(-kInf) == 0xf);  // -6
  CHECK(float_to_float4e2m1(std::nan("")) == 0x7);
  CHECK(float_to_float4e2m1(-0.0) == 0x8);
  CHECK(float_to_float4e2m1(-0.1) == 0x8);
}

TEST_CASE("float8e8m0 is 2^(bits - 127) and rounds as round_mode says", "[lib][e8m0]") {
  CHECK(float8e8m0_to_float(127) == 1.f);
  CHECK(float8e8m0_to_float(0) == std::ldexp(1.f, -127));
  CHECK(float8e8m0_to_float(254) == std::ldexp(1.f, 127));
  CHECK(std::isnan(float8e8m0_to_float(255)));
  const auto up = E8M0Rounding::kUp, down = E8M0Rounding::kDown, nearest = E8M0Rounding::kNearest;
  CHECK(e8m0_rounding_from_name("nearest") == nearest);
  CHECK(e8m0_rounding_from_name("even") == std::nullopt);
  // Between powers of two: up takes the larger, down the smaller, nearest the closer (ties up).
  CHECK(float_to_float8e8m0(1.0, true, up) == 127);
  CHECK(float_to_float8e8m0(1.2, true, up) == 128);
  CHECK(float_to_float8e8m0(1.9, true, down) == 127);
  CHECK(float_to_float8e8m0(1.49, true, nearest) == 127);
  CHECK(float_to_float8e8m0(1.5, true, nearest) == 128);
  CHECK(float_to_float8e8m0(2.5, true, nearest) == 128);
  CHECK(float_to_float8e8m0(std::ldexp(1.5, -127), true, up) == 1);  // a float subnormal
  CHECK(float_to_float8e8m0(std::ldexp(1.0, -127), false, up) == 0);
  // Beyond the range: saturate to the ends, or NaN without saturate (also for zero and negatives).
  CHECK(float_to_float8e8m0(kInf, true, up) == 254);
  CHECK(float_to_float8e8m0(std::ldexp(1.5, 127), true, down) == 254);
  CHECK(float_to_float8e8m0(std::ldexp(1.5, 127), false, down) == 255);
  CHECK(float_to_float8e8m0(0.0, true, up) == 0);
  CHECK(float_to_float8e8m0(0.0, false, up) == 255);
  CHECK(float_to_float8e8m0(-3.0, true, up) == 0);
  CHECK(float_to_float8e8m0(-3.0, false, nearest) == 255);
  CHECK(float_to_float8e8m0(1e-40, true, up) == 0);
  CHECK(float_to_float8e8m0(1e-40, false, up) == 255);
  CHECK(float_to_float8e8m0(std::nan(""), true, up) == 255);
  CHECK(float_to_byte_float(DType::kFloat8E8M0, 3.0, true, down) == 128);
  CHECK(byte_float_to_float(DType::kFloat4E2M1, 0xb) == -1.5f);
  CHECK(byte_float_to_float(kE5M2, 0x3c) == 1.f);
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
  pack_subbyte(DType::kInt4, elements, 3, packed);
  CHECK(packed[0] == 0x78);
  CHECK(packed[1] == 0x0f);
  uint8_t back[3] = {};
  unpack_subbyte(DType::kInt4, packed, 3, back);
  CHECK(static_cast<int8_t>(back[0]) == -8);
  CHECK(static_cast<int8_t>(back[1]) == 7);
  CHECK(static_cast<int8_t>(back[2]) == -1);
  unpack_subbyte(DType::kUInt4, packed, 3, back);
  CHECK(back[0] == 8);
  CHECK(back[2] == 15);
  unpack_subbyte(DType::kFloat4E2M1, packed, 3, back);  // bit patterns, not sign-extended
  CHECK(back[0] == 0x8);
  CHECK(back[1] == 0x7);
  CHECK(static_cast<int8_t>(wrap_to_subbyte(DType::kInt4, 9)) == -7);
  CHECK(wrap_to_subbyte(DType::kUInt4, -1) == 15);
}

TEST_CASE("2-bit elements pack four per byte, lowest bits first", "[lib][int2]") {
  const uint8_t elements[] = {0xfe, 0x01, 0xff, 0x00, 0x01};  // int2 -2, 1, -1, 0, 1
  uint8_t packed[2] = {};
  pack_subbyte(DType::kInt2, elements, 5, packed);
  CHECK(packed[0] == 0x36);  // 00 11 01 10
  CHECK(packed[1] == 0x01);
  uint8_t back[5] = {};
  unpack_subbyte(DType::kInt2, packed, 5, back);
  for (int i = 0; i < 5; ++i) CHECK(back[i] == elements[i]);
  unpack_subbyte(DType::kUInt2, packed, 5, back);
  CHECK(back[0] == 2);
  CHECK(back[2] == 3);
  CHECK(static_cast<int8_t>(wrap_to_subbyte(DType::kInt2, 6)) == -2);
  CHECK(static_cast<int8_t>(wrap_to_subbyte(DType::kInt2, -3)) == 1);
  CHECK(wrap_to_subbyte(DType::kUInt2, -1) == 3);
}

TEST_CASE("int2, uint2, float4e2m1 and float8e8m0 TensorProtos read and write ONNX's layout",
          "[lib][int2][tensor_proto]") {
  auto t = tensor_from_proto(raw_proto(26, 5, std::string("\x36\x01", 2)), "test");
  REQUIRE(t);
  CHECK(t->dtype() == DType::kInt2);
  CHECK(t->to_int64_vector() == std::vector<int64_t>{-2, 1, -1, 0, 1});
  onnx::TensorProto written;
  tensor_to_proto(*t, written);
  CHECK(written.raw_data() == std::string("\x36\x01", 2));

  onnx::TensorProto fields;
  fields.set_data_type(25);
  fields.add_dims(5);
  fields.add_int32_data(0x36);
  auto short_field = tensor_from_proto(fields, "initializer 'u'");
  REQUIRE_FALSE(short_field);
  CHECK(short_field.error().what ==
        "initializer 'u': holds 1 int32_data values for shape [5] of uint2; 5 elements "
        "packed 4 per value need 2");
  fields.add_int32_data(0x01);
  auto u = tensor_from_proto(fields, "test");
  REQUIRE(u);
  CHECK(u->to_int64_vector() == std::vector<int64_t>{2, 1, 3, 0, 1});

  auto f = tensor_from_proto(raw_proto(23, 3, std::string("\xb2\x0f", 2)), "test");  // 1, -1.5, -6
  REQUIRE(f);
  CHECK(float4e2m1_to_float(f->data_as<uint8_t>()[0]) == 1.f);
  CHECK(float4e2m1_to_float(f->data_as<uint8_t>()[1]) == -1.5f);
  CHECK(float4e2m1_to_float(f->data_as<uint8_t>()[2]) == -6.f);

  onnx::TensorProto e8;
  e8.set_data_type(24);
  e8.add_dims(2);
  e8.add_int32_data(127);
  e8.add_int32_data(255);
  auto e = tensor_from_proto(e8, "test");
  REQUIRE(e);
  CHECK(float8e8m0_to_float(e->data_as<uint8_t>()[0]) == 1.f);
  CHECK(std::isnan(float8e8m0_to_float(e->data_as<uint8_t>()[1])));
}

TEST_CASE("int4 TensorProtos read from raw_data and int32_data and write packed", "[lib][int4][tensor_proto]") {
  onnx::TensorProto raw = raw_proto(22, 3, std::string("\x78\x0f", 2));
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
  CHECK(extra.error().what ==
        "initializer 'u': holds 3 int32_data values for shape [3] of uint4; 3 elements packed "
        "2 per value need 2");
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
