// Cast between float, double, the integer types, bool, float16, bfloat16, the float8 types,
// float4e2m1, float8e8m0, int4, uint4, int2 and uint2, and between string and the float and
// integer types.
#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/vector_math.h"
#include "kernels/kernels.h"
#include "nxrt/ep/cast_rounding.h"
#include "nxrt/ep/mx_float.h"
#include "nxrt/ep/narrow_float.h"
#include "nxrt/ep/subbyte.h"

namespace nxrt::cpu {
namespace {

// Dispatch tags of the 16-bit float types; their elements are handled as uint16_t bits.
struct Float16 {};
struct BFloat16 {};

template <class T>
constexpr bool kIsBits16 = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;

// The type a kernel reads and writes for element type T.
template <class T>
using Element = std::conditional_t<kIsBits16<T>, uint16_t, T>;

}  // namespace

template <>
struct ElementDType<Float16> {
  static constexpr DType kValue = DType::kFloat16;
};
template <>
struct ElementDType<BFloat16> {
  static constexpr DType kValue = DType::kBFloat16;
};

namespace {

// Rounds a double to the nearest-even float with kExpBits exponent and kMantBits mantissa
// bits (binary16: 5, 10; bfloat16: 8, 7) in integer arithmetic, so there is no double
// rounding through float. NaN stays a quiet NaN; overflow gives infinity.
template <int kExpBits, int kMantBits>
uint16_t round_to_narrow_float(double value) {
  constexpr uint32_t kInf = ((1u << kExpBits) - 1) << kMantBits;
  constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  const uint64_t x = std::bit_cast<uint64_t>(value);
  const auto sign = static_cast<uint16_t>((x >> 63) << (kExpBits + kMantBits));
  const uint64_t magnitude = x & ~(uint64_t{1} << 63);
  if (magnitude >= 0x7ff0000000000000) {
    const uint32_t quiet = magnitude > 0x7ff0000000000000 ? 1u << (kMantBits - 1) : 0;
    return static_cast<uint16_t>(sign | kInf | quiet);
  }
  const int exponent = static_cast<int>(magnitude >> 52) - 1023;
  if (exponent > kBias) return static_cast<uint16_t>(sign | kInf);
  // Zero, double subnormals and values below half the smallest subnormal round to (signed) zero.
  const uint64_t bits = round_to_narrow_float_bits(std::bit_cast<double>(magnitude), kMantBits, kBias);
  return static_cast<uint16_t>(sign | bits);
}

inline uint16_t float_to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat16_to_float(uint16_t b) { return std::bit_cast<float>(static_cast<uint32_t>(b) << 16); }

// One element from From to To (float16 sources are staged through float by the caller).
// Out-of-range float-to-integer conversions behave as the hardware's conversion
// instruction does, as in other ONNX runtimes.
template <class To, class From>
Element<To> convert(Element<From> v) {
  static_assert(!std::is_same_v<From, Float16>);
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, BFloat16>) {
    return convert<To, float>(bfloat16_to_float(v));
  } else if constexpr (std::is_same_v<To, Float16>) {
    return round_to_narrow_float<5, 10>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    if constexpr (std::is_same_v<From, float>) return float_to_bfloat16(v);
    else return round_to_narrow_float<8, 7>(static_cast<double>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

// Floats per staging block when a float16 source is widened to float first.
constexpr int64_t kStage = 1024;

// out[i] = in[i] as To for i < n; float <-> float16 run as vector conversions.
template <class From, class To>
void convert_range(const Element<From>* in, Element<To>* out, int64_t n) {
  if constexpr (std::is_same_v<From, float> && std::is_same_v<To, Float16>) {
    floats_to_halves(in, out, n);
  } else if constexpr (std::is_same_v<From, Float16> && std::is_same_v<To, float>) {
    halves_to_floats(in, out, n);
  } else if constexpr (std::is_same_v<From, Float16>) {
    float stage[kStage];
    for (int64_t b = 0; b < n; b += kStage) {
      const int64_t m = std::min(kStage, n - b);
      halves_to_floats(in + b, stage, m);
      for (int64_t i = 0; i < m; ++i) out[b + i] = convert<To, float>(stage[i]);
    }
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = convert<To, From>(in[i]);
  }
}

using CastTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                           int64_t, uint64_t, bool, Float16, BFloat16>;
// The types that convert to and from text.
using TextTypes = TypeList<float, double, int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t,
                           int64_t, uint64_t>;

template <class... Ts>
bool in_list(TypeList<Ts...>, DType t) {
  return ((ElementDType<Ts>::kValue == t) || ...);
}

template <class... Ts>
std::string list_names(TypeList<Ts...>) {
  return dtype_list({ElementDType<Ts>::kValue...});
}

// Floats held as bit patterns and sub-byte integers convert through the CastTypes (see
// CastKernel).
bool is_narrow(DType t) { return is_byte_float(t) || is_subbyte_integer(t); }

bool castable(DType t) { return in_list(CastTypes{}, t) || t == DType::kString || is_narrow(t); }

constexpr std::string_view kNarrowAndTextNames = "the float8 types, float4e2m1, float8e8m0, int4, uint4, int2, uint2, string";

// Integers print exactly, floats in the shortest text that reads back to the same value
// (numpy's str() for values of moderate size), specials as "nan", "inf", "-inf".
template <class T>
std::string format_element(T v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Accepts what ONNX allows: plain and scientific numbers, a leading '+', and "INF", "+INF",
// "-INF", "NaN" in any case; integer targets also take decimal text, truncated ("100.5" ->
// 100).
template <class T>
bool parse_element(const std::string& text, T& out) {
  const char* first = text.data();
  const char* last = first + text.size();
  if (first != last && *first == '+') ++first;
  if (first == last) return false;
  // Floats parse directly (no double rounding through double); integers exactly if they can.
  const auto r = std::from_chars(first, last, out);
  if (r.ec == std::errc() && r.ptr == last) return true;
  if constexpr (std::is_floating_point_v<T>) return false;
  double d = 0;
  const auto rd = std::from_chars(first, last, d);
  if (rd.ec != std::errc() || rd.ptr != last) return false;
  out = static_cast<T>(d);
  return true;
}

// The conversions this EP implements from `from` to `to`, named for `op`.
KernelMatch check_cast_types(const std::string& op, DType from, DType to) {
  NXRT_REQUIRE(castable(to), "{}: target type {} is not supported by the cpu EP; it casts between {}, {}", op,
               dtype_name(to), list_names(CastTypes{}), kNarrowAndTextNames);
  NXRT_REQUIRE(castable(from), "{}: input type {} is not supported by the cpu EP; it casts between {}, {}", op,
               dtype_name(from), list_names(CastTypes{}), kNarrowAndTextNames);
  NXRT_REQUIRE(from == to || (from != DType::kString && to != DType::kString) ||
                   in_list(TextTypes{}, from == DType::kString ? to : from),
               "{}: {} to {} is not supported by the cpu EP; string converts only to and from {}", op,
               dtype_name(from), dtype_name(to), list_names(TextTypes{}));
  return KernelMatch::supported();
}

// Cast-6+ names the target by its TensorProto code, Cast-1 by its TensorProto name
// ("FLOAT", "INT64"); nullopt when neither names a type nxrt knows.
std::optional<DType> cast_target(const Attribute& to) {
  if (to.type() == AttributeType::kInt) return dtype_from_onnx(static_cast<int32_t>(std::get<int64_t>(to.value)));
  if (to.type() != AttributeType::kString) return std::nullopt;
  std::string name = std::get<std::string>(to.value);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  return dtype_from_name(name);
}

// The narrow types arrived in opsets 19 to 25 (first_opset_with).
KernelMatch check_type_opset(const NodeContext& ctx, DType t) {
  NXRT_REQUIRE(ctx.opset() >= first_opset_with(t), "{}: type {} needs opset {} or later ({}-{} added it); the model "
               "imports opset {}", ctx.node().op_type, dtype_name(t), first_opset_with(t), ctx.node().op_type,
               first_opset_with(t), ctx.opset());
  return KernelMatch::supported();
}

KernelMatch check_cast(const NodeContext& ctx) {
  const DType from = ctx.input_dtype(0);
  const Attribute* to_attr = ctx.attrs().find("to");
  NXRT_REQUIRE(ctx.has_input(0), "Cast: input 0 is missing; it is required");
  NXRT_REQUIRE(from != DType::kUndefined,
               "Cast: the type of input 0 is unknown; run shape inference or give the model "
               "value_info for it");
  NXRT_REQUIRE(to_attr, "Cast: attribute 'to' is missing; it is required");
  const bool by_name = ctx.opset() < 6;
  NXRT_REQUIRE(to_attr->type() == (by_name ? AttributeType::kString : AttributeType::kInt),
               "Cast: attribute 'to' is a {}, expected {} at opset {}", to_attr->type_name(),
               by_name ? "a string" : "an int", ctx.opset());
  const std::optional<DType> to = cast_target(*to_attr);
  NXRT_REQUIRE(to.has_value(), "Cast: target type {} is unknown to nxrt",
               by_name ? std::get<std::string>(to_attr->value) : std::to_string(std::get<int64_t>(to_attr->value)));
  NXRT_REQUIRE_MATCH(check_cast_types("Cast", from, *to));
  NXRT_REQUIRE_MATCH(check_type_opset(ctx, from));
  NXRT_REQUIRE_MATCH(check_type_opset(ctx, *to));
  NXRT_REQUIRE_MATCH(check_cast_rounding(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// CastLike: the target is the type of input 1, whose values are unused.
KernelMatch check_cast_like(const NodeContext& ctx) {
  NXRT_REQUIRE(ctx.input_count() == 2, "CastLike: expected 2 inputs, got {}", ctx.input_count());
  NXRT_REQUIRE(ctx.input_dtype(0) != DType::kUndefined && ctx.input_dtype(1) != DType::kUndefined,
               "CastLike: the types of inputs 0 and 1 must be known; run shape inference or give the "
               "model value_info for them");
  NXRT_REQUIRE_MATCH(check_cast_types("CastLike", ctx.input_dtype(0), ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(check_type_opset(ctx, ctx.input_dtype(0)));
  NXRT_REQUIRE_MATCH(check_type_opset(ctx, ctx.input_dtype(1)));
  NXRT_REQUIRE_MATCH(check_cast_rounding(ctx));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

// x as a tensor of the CastTypes holding the same values: floats held as bit patterns widened
// to float (exact), sub-byte integers read as the int8 and uint8 they are held in.
Tensor widened(const Tensor& x) {
  if (!is_narrow(x.dtype())) return x;
  const Tensor c = x.view().is_contiguous() ? x : copy_to_contiguous(x.view());
  if (is_subbyte_integer(c.dtype())) {
    const bool is_signed = subbyte_min(c.dtype()) < 0;
    return Tensor(c.storage(), is_signed ? DType::kInt8 : DType::kUInt8, c.shape(), c.view().byte_offset);
  }
  Tensor wide = Tensor::empty(DType::kFloat32, c.shape());
  const uint8_t* in = c.data_as<uint8_t>();
  float* out = wide.mut_as<float>();
  for (int64_t i = 0; i < c.numel(); ++i) out[i] = byte_float_to_float(c.dtype(), in[i]);
  return wide;
}

// x (of the CastTypes) converted to `to` (of the CastTypes) in a new tensor.
Tensor converted(const Tensor& x, DType to, const Parallel& parallel) {
  const Tensor c = x.view().is_contiguous() ? x : copy_to_contiguous(x.view());
  Tensor out = Tensor::empty(to, c.shape());
  (void)dispatch_dtype(CastTypes{}, c.dtype(), [&](auto from) {
    using From = typename decltype(from)::type;
    return dispatch_dtype(CastTypes{}, to, [&](auto target) -> Expected<void> {
      using To = typename decltype(target)::type;
      const Element<From>* in = c.data_as<Element<From>>();
      Element<To>* o = out.mut_as<Element<To>>();
      parallel.for_range(c.numel(), kElementwiseGrain,
                         [&](int64_t b, int64_t e) { convert_range<From, To>(in + b, o + b, e - b); });
      return {};
    });
  });
  return out;
}

// A float rounded to the nearest integer (halves away from zero, as ONNX Runtime's Cast to
// int4 and int2 does), then wrapped to the sub-byte type; NaN gives 0 and the int64 range
// bounds the rest.
uint8_t float_to_subbyte(DType t, double v) {
  if (std::isnan(v)) return 0;
  const double r = std::clamp(std::round(v), -0x1p63, 0x1p63 - 1024);
  return wrap_to_subbyte(t, static_cast<int64_t>(r));
}

class CastKernel final : public Kernel {
 public:
  CastKernel(DType to, CastRounding rounding) : to_(to), rounding_(rounding) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() == to_) {
      ctx.set_output(0, x);
      return {};
    }
    if (is_narrow(x.dtype()) || is_narrow(to_)) return convert_narrow(ctx, widened(x));
    if (x.dtype() == DType::kString)
      return dispatch_dtype(TextTypes{}, to_, [&](auto to) { return parse<typename decltype(to)::type>(ctx); });
    if (to_ == DType::kString)
      return dispatch_dtype(TextTypes{}, x.dtype(), [&](auto from) { return format<typename decltype(from)::type>(ctx); });
    return dispatch_dtype(CastTypes{}, x.dtype(), [&](auto from) {
      return dispatch_dtype(CastTypes{}, to_, [&](auto to) {
        return convert_all<typename decltype(from)::type, typename decltype(to)::type>(ctx);
      });
    });
  }
  std::string_view variant() const override { return "elementwise"; }

 private:
  // Casts from or to the narrow types: `wide` holds x's values in one of the CastTypes. Float
  // targets round from double; sub-byte integer targets take integers' low bits and round floats.
  Expected<void> convert_narrow(KernelContext& ctx, const Tensor& wide) const {
    if (!is_narrow(to_)) {
      ctx.set_output(0, wide.dtype() == to_ ? wide : converted(wide, to_, ctx.parallel()));
      return {};
    }
    auto y = ctx.output(0, to_, wide.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    uint8_t* out = y->mut_as<uint8_t>();
    const bool from_integer = !is_floating(wide.dtype());
    const bool to_integer = is_subbyte_integer(to_);
    const Tensor values = converted(wide, to_integer && from_integer ? DType::kInt64 : DType::kFloat64, ctx.parallel());
    ctx.parallel().for_range(values.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        if (!to_integer)
          out[i] = float_to_byte_float(to_, values.data_as<double>()[i], rounding_.saturate, rounding_.e8m0);
        else if (from_integer)
          out[i] = wrap_to_subbyte(to_, values.data_as<int64_t>()[i]);
        else
          out[i] = float_to_subbyte(to_, values.data_as<double>()[i]);
      }
    });
    return {};
  }

  template <class From, class To>
  Expected<void> convert_all(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, to_, x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const Element<From>* in = x.data_as<Element<From>>();
    Element<To>* out = y->template mut_as<Element<To>>();
    ctx.parallel().for_range(x.numel(), kElementwiseGrain,
                             [&](int64_t b, int64_t e) { convert_range<From, To>(in + b, out + b, e - b); });
    return {};
  }

  template <class From>
  Expected<void> format(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, DType::kString, x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const From* in = x.data_as<From>();
    std::string* out = y->mut_as<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = format_element(in[i]);
    return {};
  }

  template <class To>
  Expected<void> parse(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    auto y = ctx.output(0, to_, x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const std::string* in = x.data_as<std::string>();
    To* out = y->mut_as<To>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      if (parse_element(in[i], out[i])) continue;
      return fail(ErrorCode::kRuntime,
                  fmt::format("Cast: element {} of the input, '{}', is not a number", i, in[i]),
                  fmt::format("casting string to {} needs decimal or scientific numbers, INF or NaN",
                              dtype_name(to_)),
                  "clean the input strings");
    }
    return {};
  }

  DType to_;
  CastRounding rounding_;
};

CastRounding rounding_of(const NodeContext& ctx) { return read_cast_rounding(ctx.attrs(), ctx.opset()); }

}  // namespace

std::vector<KernelDef> cast_kernels() {
  auto create_cast = [](const NodeContext& ctx) {
    return make_kernel<CastKernel>(*cast_target(*ctx.attrs().find("to")), rounding_of(ctx));
  };
  return {
      KernelDef{{"", "Cast", 1}, 5, check_cast, create_cast},
      KernelDef{{"", "Cast", 6}, 0, check_cast, create_cast},
      KernelDef{{"", "CastLike", 15}, 0, check_cast_like,
                [](const NodeContext& ctx) { return make_kernel<CastKernel>(ctx.input_dtype(1), rounding_of(ctx)); }},
  };
}

}  // namespace nxrt::cpu
