// Cast between numeric types, bool, float16/bfloat16 (bit-exact rounding), the float8, float4
// and sub-byte integer types, and string.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernel_harness.h"

using namespace nxrt;
using namespace nxrt::test;

namespace {

Tensor cast(const Tensor& x, DType to, int64_t opset = 13) {
  auto r = run_on_cpu({.op_type = "Cast", .opset = opset, .inputs = {x},
                       .attrs = attrs({{"to", static_cast<int64_t>(to)}})});
  if (!r) FAIL(r.error().render());
  return (*r)[0];
}

Tensor bits16(DType t, const std::vector<uint16_t>& bits) {
  return Tensor::from_bytes(t, {static_cast<int64_t>(bits.size())}, std::as_bytes(std::span(bits)));
}

std::vector<uint16_t> bits_of(const Tensor& t) {
  return {t.data_as<uint16_t>(), t.data_as<uint16_t>() + t.numel()};
}

Tensor strings(const std::vector<std::string>& values) {
  Tensor t = Tensor::empty(DType::kString, {static_cast<int64_t>(values.size())});
  std::copy(values.begin(), values.end(), t.mut_as<std::string>());
  return t;
}

Tensor bools(std::vector<uint8_t> values) {
  return Tensor::from_bytes(DType::kBool, {static_cast<int64_t>(values.size())}, std::as_bytes(std::span(values)));
}

}  // namespace

TEST_CASE("Cast between numeric types truncates, wraps and maps to bool", "[cpu][cast]") {
  const Tensor f = Tensor::from_vector<float>({5}, {-2.7f, -0.5f, 0, 1.5f, 300.9f});
  CHECK(compare_tensors(cast(f, DType::kInt32), Tensor::from_vector<int32_t>({5}, {-2, 0, 0, 1, 300})).empty());
  CHECK(compare_tensors(cast(f, DType::kBool), bools({1, 1, 0, 1, 1})).empty());
  CHECK(compare_tensors(cast(f, DType::kFloat64, 6), Tensor::from_vector<double>({5}, {-2.7f, -0.5f, 0, 1.5f, 300.9f})).empty());
  CHECK(compare_tensors(cast(bools({1, 0}), DType::kFloat32), Tensor::from_vector<float>({2}, {1, 0})).empty());
  CHECK(compare_tensors(cast(Tensor::from_vector<int64_t>({3}, {300, -129, 5}), DType::kInt8),
                        Tensor::from_vector<int8_t>({3}, {44, 127, 5})).empty());
  CHECK(compare_tensors(cast(Tensor::from_vector<uint8_t>({2}, {255, 0}), DType::kInt64),
                        Tensor::from_vector<int64_t>({2}, {255, 0})).empty());
  CHECK(compare_tensors(cast(Tensor::from_vector<double>({2}, {0.1, 1e40}), DType::kFloat32),
                        Tensor::from_vector<float>({2}, {0.1f, std::numeric_limits<float>::infinity()})).empty());

  // A large tensor goes through the parallel path.
  std::vector<int32_t> big(100000);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<int32_t>(i) - 50000;
  const Tensor out = cast(Tensor::from_vector<int32_t>({100000}, big), DType::kFloat32);
  for (std::size_t i = 0; i < big.size(); i += 997) CHECK(out.data_as<float>()[i] == static_cast<float>(big[i]));
}

TEST_CASE("Cast to the same type returns the input", "[cpu][cast]") {
  const Tensor x = Tensor::from_vector<float>({2}, {1, 2});
  const Tensor y = cast(x, DType::kFloat32);
  CHECK(y.storage() == x.storage());
}

TEST_CASE("Cast to float16 rounds to nearest even and handles the special values", "[cpu][cast]") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // 1 + 2^-11 ties to 1 (even); 1 + 3 * 2^-11 ties up to 1 + 2^-9; 65504 is the largest
  // finite value and 65520 the first that rounds to infinity; 2^-24 is the smallest
  // subnormal, 2^-25 a tie that rounds to 0 and 1.5 * 2^-25 rounds up to it.
  const std::vector<float> values{1.0f, -2.0f, 1.0f + 0x1p-11f, 1.0f + 3 * 0x1p-11f, 65504.0f, 65519.0f, 65520.0f,
                                  0x1p-24f, 0x1p-25f, 1.5f * 0x1p-25f, -0.0f, inf, -inf, 1.0f / 3};
  const std::vector<uint16_t> expected{0x3c00, 0xc000, 0x3c00, 0x3c02, 0x7bff, 0x7bff, 0x7c00,
                                       0x0001, 0x0000, 0x0001, 0x8000, 0x7c00, 0xfc00, 0x3555};
  const Tensor xf = Tensor::from_vector<float>({static_cast<int64_t>(values.size())}, values);
  CHECK(bits_of(cast(xf, DType::kFloat16)) == expected);
  std::vector<double> dvalues(values.begin(), values.end());
  const Tensor xd = Tensor::from_vector<double>({static_cast<int64_t>(dvalues.size())}, dvalues);
  CHECK(bits_of(cast(xd, DType::kFloat16)) == expected);
  // A double just above a float16 tie must round up, which rounding through float would lose.
  const Tensor tie = Tensor::from_vector<double>({1}, {1.0 + 0x1p-11 + 0x1p-40});
  CHECK(bits_of(cast(tie, DType::kFloat16)) == std::vector<uint16_t>{0x3c01});

  const uint16_t h_nan = bits_of(cast(Tensor::from_vector<float>({1}, {nan}), DType::kFloat16))[0];
  CHECK((h_nan & 0x7c00) == 0x7c00);
  CHECK((h_nan & 0x03ff) != 0);
  CHECK(bits_of(cast(Tensor::from_vector<int32_t>({3}, {1, -70000, 2049}), DType::kFloat16)) ==
        std::vector<uint16_t>{0x3c00, 0xfc00, 0x6800});
}

TEST_CASE("Cast from float16 and bfloat16 is exact", "[cpu][cast]") {
  const Tensor h = bits16(DType::kFloat16, {0x3c00, 0x3555, 0x0001, 0x8400, 0x7bff, 0x7c00, 0xfc00, 0x7e00});
  const Tensor f = cast(h, DType::kFloat32);
  const float* v = f.data_as<float>();
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == 0.333251953125f);
  CHECK(v[2] == 0x1p-24f);
  CHECK(v[3] == -0x1p-14f);
  CHECK(v[4] == 65504.0f);
  CHECK(v[5] == std::numeric_limits<float>::infinity());
  CHECK(v[6] == -std::numeric_limits<float>::infinity());
  CHECK(std::isnan(v[7]));
  CHECK(compare_tensors(cast(bits16(DType::kFloat16, {0x4500, 0xc500}), DType::kInt32),
                        Tensor::from_vector<int32_t>({2}, {5, -5})).empty());

  // bfloat16: float's top half, rounded to nearest even.
  const Tensor bf = cast(Tensor::from_vector<float>({3}, {1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f}), DType::kBFloat16);
  CHECK(bits_of(bf) == std::vector<uint16_t>{0x3f80, 0x3f80, 0x3f82});
  CHECK(cast(bits16(DType::kBFloat16, {0x4049}), DType::kFloat32).data_as<float>()[0] == 3.140625f);
  CHECK(bits_of(cast(bits16(DType::kBFloat16, {0x3f80}), DType::kFloat16)) == std::vector<uint16_t>{0x3c00});
}

TEST_CASE("Cast parses and formats strings", "[cpu][cast]") {
  const Tensor parsed = cast(strings({"3.25", "+INF", "-inf", "1e-5", "-0.5"}), DType::kFloat32);
  CHECK(compare_tensors(parsed, Tensor::from_vector<float>({5}, {3.25f, std::numeric_limits<float>::infinity(),
                                                                  -std::numeric_limits<float>::infinity(), 1e-5f, -0.5f}))
            .empty());
  CHECK(std::isnan(cast(strings({"NaN"}), DType::kFloat64).data_as<double>()[0]));
  CHECK(compare_tensors(cast(strings({"-42", "100.5", "7e2"}), DType::kInt64),
                        Tensor::from_vector<int64_t>({3}, {-42, 100, 700})).empty());

  const Tensor text = cast(Tensor::from_vector<float>({4}, {0.5f, -3, 0.1f, std::numeric_limits<float>::infinity()}),
                           DType::kString);
  CHECK(compare_tensors(text, strings({"0.5", "-3", "0.1", "inf"})).empty());
  CHECK(compare_tensors(cast(Tensor::from_vector<int64_t>({2}, {-9007199254740993LL, 0}), DType::kString),
                        strings({"-9007199254740993", "0"})).empty());

  auto bad = run_on_cpu({.op_type = "Cast", .inputs = {strings({"1", "one"})},
                         .attrs = attrs({{"to", static_cast<int64_t>(DType::kInt32)}})});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what == "Cast: element 1 of the input, 'one', is not a number");
}

TEST_CASE("Cast declines what it does not convert", "[cpu][cast][claim]") {
  auto to_string = claim_on_cpu({.op_type = "Cast", .inputs = {bools({1})},
                                 .attrs = attrs({{"to", static_cast<int64_t>(DType::kString)}})});
  REQUIRE_FALSE(to_string);
  CHECK(to_string.reason() == "Cast: bool to string is not supported by the cpu EP; string converts only to and "
                              "from float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64");
  auto unknown = claim_on_cpu({.op_type = "Cast",
                               .inputs = {Tensor::from_vector<float>({1}, {1})},
                               .attrs = attrs({{"to", int64_t{14}}})});  // complex64
  REQUIRE_FALSE(unknown);
  CHECK(unknown.reason() == "Cast: target type 14 is unknown to nxrt");
  auto like = claim_on_cpu({.op_type = "CastLike", .opset = 15, .inputs = {bools({1}), strings({"1"})}});
  REQUIRE_FALSE(like);
  CHECK(like.reason() == "CastLike: bool to string is not supported by the cpu EP; string converts only to and "
                         "from float, double, int8, uint8, int16, uint16, int32, uint32, int64, uint64");
  auto missing = claim_on_cpu({.op_type = "Cast", .inputs = {Tensor::from_vector<float>({1}, {1})}});
  REQUIRE_FALSE(missing);
  CHECK(missing.reason() == "Cast: attribute 'to' is missing; it is required");
}

TEST_CASE("CastLike takes the type of input 1; Cast-1 names the type in text", "[cpu][cast][elementwise]") {
  auto like = run_on_cpu({.op_type = "CastLike", .opset = 15, .inputs = {Tensor::from_vector<float>({3}, {1.9f, -2.5f, 0}),
                                                                          Tensor::from_vector<int32_t>({1}, {0})}});
  REQUIRE(like);
  CHECK(compare_tensors((*like)[0], Tensor::from_vector<int32_t>({3}, {1, -2, 0})).empty());
  auto old = run_on_cpu({.op_type = "Cast", .opset = 1, .inputs = {Tensor::from_vector<int64_t>({2}, {3, -4})},
                         .attrs = attrs({{"to", std::string("DOUBLE")}})});
  REQUIRE(old);
  CHECK(compare_tensors((*old)[0], Tensor::from_vector<double>({2}, {3, -4})).empty());
}

namespace {

Tensor cast_with(const Tensor& x, DType to, int64_t saturate, int64_t opset = 21) {
  auto r = run_on_cpu({.op_type = "Cast", .opset = opset, .inputs = {x},
                       .attrs = attrs({{"to", static_cast<int64_t>(to)}, {"saturate", saturate}})});
  if (!r) FAIL(r.error().render());
  return (*r)[0];
}

std::vector<uint8_t> bytes_of(const Tensor& t) { return {t.data_as<uint8_t>(), t.data_as<uint8_t>() + t.numel()}; }

}  // namespace

TEST_CASE("Cast to float8 rounds to nearest even and saturates unless told not to", "[cpu][cast][float8]") {
  const Tensor x = Tensor::from_vector<float>({5}, {1.0f, 464, 480, -1e6f, 0.3f});
  // E4M3FN: 1 = 0x38; 464 ties to 448 (0x7e); 480 and -1e6 overflow; 0.3 rounds to 0.3125 (0x2a).
  CHECK(bytes_of(cast_with(x, DType::kFloat8E4M3FN, 1)) == std::vector<uint8_t>{0x38, 0x7e, 0x7e, 0xfe, 0x2a});
  CHECK(bytes_of(cast_with(x, DType::kFloat8E4M3FN, 0)) == std::vector<uint8_t>{0x38, 0x7e, 0x7f, 0xff, 0x2a});
  const Tensor big = Tensor::from_vector<float>({2}, {61440, std::numeric_limits<float>::infinity()});
  CHECK(bytes_of(cast_with(big, DType::kFloat8E5M2, 0)) == std::vector<uint8_t>{0x7c, 0x7c});  // infinity
  CHECK(bytes_of(cast_with(big, DType::kFloat8E5M2, 1)) == std::vector<uint8_t>{0x7b, 0x7b});  // 57344
  CHECK(bytes_of(cast_with(big, DType::kFloat8E5M2FNUZ, 0)) == std::vector<uint8_t>{0x80, 0x80});  // NaN
}

TEST_CASE("Cast from float8 is exact into every float type", "[cpu][cast][float8]") {
  const Tensor f8 = Tensor::from_bytes(DType::kFloat8E4M3FNUZ, {3}, std::as_bytes(std::span<const uint8_t>(
                                                                         std::vector<uint8_t>{0x7f, 0x80, 0x01})));
  const Tensor y = cast(f8, DType::kFloat64, 19);
  CHECK(y.data_as<double>()[0] == 240.0);
  CHECK(std::isnan(y.data_as<double>()[1]));
  CHECK(y.data_as<double>()[2] == std::ldexp(1.0, -10));
  CHECK(bits_of(cast(f8, DType::kFloat16, 19))[0] == 0x5b80);  // 240 as float16
  CHECK(bytes_of(cast(f8, DType::kFloat8E4M3FN, 19)) == std::vector<uint8_t>{0x77, 0x7f, 0x00});  // 2^-10 ties to 0
}

TEST_CASE("Cast to int4 wraps integers and rounds floats half away from zero", "[cpu][cast][int4]") {
  const Tensor i = Tensor::from_vector<int32_t>({5}, {-9, 8, 17, -1, 7});
  CHECK(cast(i, DType::kInt4, 21).to_int64_vector() == std::vector<int64_t>{7, -8, 1, -1, 7});
  CHECK(cast(i, DType::kUInt4, 21).to_int64_vector() == std::vector<int64_t>{7, 8, 1, 15, 7});
  const Tensor f = Tensor::from_vector<float>({4}, {2.5f, -0.5f, 7.6f, -3.7f});
  CHECK(cast(f, DType::kInt4, 21).to_int64_vector() == std::vector<int64_t>{3, -1, -8, -4});
  const Tensor i4 = cast(i, DType::kInt4, 21);
  CHECK(cast(i4, DType::kFloat32, 21).to_int64_vector().size() == 5);
  CHECK(cast(i4, DType::kInt64, 21).to_int64_vector() == std::vector<int64_t>{7, -8, 1, -1, 7});
  CHECK(cast(i4, DType::kUInt4, 21).to_int64_vector() == std::vector<int64_t>{7, 8, 1, 15, 7});
}

TEST_CASE("Cast declines float8 before opset 19, int4 before 21 and string to int4", "[cpu][cast][claim]") {
  const Tensor x = Tensor::from_vector<float>({1}, {1});
  auto f8 = claim_on_cpu({.op_type = "Cast", .opset = 17, .inputs = {x},
                          .attrs = attrs({{"to", static_cast<int64_t>(DType::kFloat8E5M2)}})});
  REQUIRE_FALSE(f8);
  CHECK(f8.reason() == "Cast: type float8e5m2 needs opset 19 or later (Cast-19 added it); the model imports opset 17");
  auto i4 = claim_on_cpu({.op_type = "Cast", .opset = 19, .inputs = {x},
                          .attrs = attrs({{"to", static_cast<int64_t>(DType::kInt4)}})});
  REQUIRE_FALSE(i4);
  CHECK(i4.reason() == "Cast: type int4 needs opset 21 or later (Cast-21 added it); the model imports opset 19");
  auto text = claim_on_cpu({.op_type = "Cast", .opset = 21, .inputs = {strings({"1"})},
                            .attrs = attrs({{"to", static_cast<int64_t>(DType::kInt4)}})});
  REQUIRE_FALSE(text);
  CHECK_THAT(text.reason(), Catch::StartsWith("Cast: string to int4 is not supported by the cpu EP"));
}

namespace {

Tensor cast_e8m0(const Tensor& x, const std::string& round_mode, int64_t saturate) {
  auto r = run_on_cpu(
      {.op_type = "Cast",
       .opset = 24,
       .inputs = {x},
       .attrs = attrs(
           {{"to", static_cast<int64_t>(DType::kFloat8E8M0)}, {"saturate", saturate}, {"round_mode", round_mode}})});
  if (!r) FAIL(r.error().render());
  return (*r)[0];
}

}  // namespace

TEST_CASE("Cast to float4e2m1 rounds to nearest even and saturates; back to float is exact", "[cpu][cast][float4]") {
  const Tensor x = Tensor::from_vector<float>({8}, {0.25f, 0.75f, 2.5f, -2.6f, 5.0f, 100.f, -0.f, NAN});
  const Tensor f4 = cast(x, DType::kFloat4E2M1, 23);
  CHECK(f4.dtype() == DType::kFloat4E2M1);
  CHECK(bytes_of(f4) == std::vector<uint8_t>{0x0, 0x2, 0x4, 0xd, 0x6, 0x7, 0x8, 0x7});
  const Tensor back = cast(f4, DType::kFloat32, 23);
  CHECK(compare_tensors(back, Tensor::from_vector<float>({8}, {0, 1, 2, -3, 4, 6, -0.f, 6})).empty());
  // Between float4 and the other narrow types, through float.
  CHECK(bytes_of(cast(f4, DType::kFloat8E4M3FN, 23))[5] == 0x4c);  // 6
  CHECK(cast(f4, DType::kInt4, 23).to_int64_vector() == std::vector<int64_t>{0, 1, 2, -3, 4, 6, 0, 6});
}

TEST_CASE("Cast to float8e8m0 rounds as round_mode says and saturates unless told not to", "[cpu][cast][e8m0]") {
  const Tensor x = Tensor::from_vector<float>({7}, {1.5f, 2.5f, 3.f, 0.f, -2.f, INFINITY, 0x1.8p127f});
  CHECK(bytes_of(cast_e8m0(x, "up", 1)) == std::vector<uint8_t>{128, 129, 129, 0, 0, 254, 254});
  CHECK(bytes_of(cast_e8m0(x, "down", 1)) == std::vector<uint8_t>{127, 128, 128, 0, 0, 254, 254});
  CHECK(bytes_of(cast_e8m0(x, "nearest", 1)) == std::vector<uint8_t>{128, 128, 129, 0, 0, 254, 254});
  CHECK(bytes_of(cast_e8m0(x, "nearest", 0)) == std::vector<uint8_t>{128, 128, 129, 255, 255, 255, 255});
  // The default round_mode is up; integers round from their exact value (2^30 + 1 up is 2^31,
  // where rounding through float would give 2^30); back to float exact.
  const Tensor ints = Tensor::from_vector<int32_t>({4}, {1, 3, 1024, (1 << 30) + 1});
  const Tensor e8 = cast(ints, DType::kFloat8E8M0, 24);
  CHECK(bytes_of(e8) == std::vector<uint8_t>{127, 129, 137, 158});
  CHECK(compare_tensors(cast(e8, DType::kFloat32, 24), Tensor::from_vector<float>({4}, {1, 4, 1024, 0x1p31f})).empty());
  auto bad = claim_on_cpu({.op_type = "Cast",
                           .opset = 24,
                           .inputs = {x},
                           .attrs = attrs({{"to", static_cast<int64_t>(DType::kFloat8E8M0)}, {"round_mode", "even"}})});
  REQUIRE_FALSE(bad);
  CHECK(bad.reason() == "Cast: round_mode 'even' is not one of 'up', 'down', 'nearest'");
}

TEST_CASE("Cast to int2 and uint2 wraps integers and rounds floats half away from zero", "[cpu][cast][int2]") {
  const Tensor i = Tensor::from_vector<int32_t>({5}, {-3, 2, 5, -1, 1});
  CHECK(cast(i, DType::kInt2, 25).to_int64_vector() == std::vector<int64_t>{1, -2, 1, -1, 1});
  CHECK(cast(i, DType::kUInt2, 25).to_int64_vector() == std::vector<int64_t>{1, 2, 1, 3, 1});
  const Tensor f = Tensor::from_vector<float>({5}, {0.5f, 1.5f, 2.5f, -0.5f, NAN});
  CHECK(cast(f, DType::kInt2, 25).to_int64_vector() == std::vector<int64_t>{1, -2, -1, -1, 0});
  CHECK(cast(f, DType::kUInt2, 25).to_int64_vector() == std::vector<int64_t>{1, 2, 3, 3, 0});
  const Tensor i2 = cast(i, DType::kInt2, 25);
  CHECK(cast(i2, DType::kInt32, 25).to_int64_vector() == std::vector<int64_t>{1, -2, 1, -1, 1});
  CHECK(cast(i2, DType::kUInt4, 25).to_int64_vector() == std::vector<int64_t>{1, 14, 1, 15, 1});
}

TEST_CASE("Cast declines float4e2m1 before opset 23, float8e8m0 before 24 and int2 before 25", "[cpu][cast][claim]") {
  const Tensor x = Tensor::from_vector<float>({1}, {1});
  for (auto [type, opset, name, since] :
       {std::tuple{DType::kFloat4E2M1, 22, "float4e2m1", 23}, std::tuple{DType::kFloat8E8M0, 23, "float8e8m0", 24},
        std::tuple{DType::kUInt2, 24, "uint2", 25}}) {
    auto m = claim_on_cpu(
        {.op_type = "Cast", .opset = opset, .inputs = {x}, .attrs = attrs({{"to", static_cast<int64_t>(type)}})});
    REQUIRE_FALSE(m);
    CHECK(m.reason() == fmt::format("Cast: type {} needs opset {} or later (Cast-{} added it); the model imports "
                                    "opset {}",
                                    name, since, since, opset));
  }
}
