// The CUDA C prelude of every generated module, compiled by NVRTC (and for the host by the
// unit tests, which run the generated kernels without a GPU: tests/unit/cuda_on_host.h).
#include "kernel_library.h"

namespace nxrt::cuda {

std::string_view kernel_library_source() {
  // kMaxRank is 8: Dims holds 8 extents or strides.
  return R"CUDA(
typedef long long i64;
struct Dims { i64 d[8]; };
struct __align__(2) h16 { unsigned short x; };
struct __align__(2) b16 { unsigned short x; };  // bfloat16

// f16 <-> f32 in PTX (the unit tests compile this library for the host, with their own pair).
#ifndef NXRT_CUDA_ON_HOST
__device__ __forceinline__ float half_to_float(unsigned short h) {
  float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h)); return f;
}
__device__ __forceinline__ unsigned short float_to_half(float v) {
  unsigned short h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(v)); return h;
}
#endif

__device__ __forceinline__ float ld(const float* p, i64 i) { return p[i]; }
__device__ __forceinline__ float ld(const h16* p, i64 i) { return half_to_float(p[i].x); }
__device__ __forceinline__ void st(float* p, i64 i, float v) { p[i] = v; }
__device__ __forceinline__ void st(h16* p, i64 i, float v) { p[i].x = float_to_half(v); }
__device__ __forceinline__ float round_h(float v) { return half_to_float(float_to_half(v)); }
// bfloat16: the top half of a float, rounded to nearest even (NaN stays a quiet NaN).
__device__ __forceinline__ float bfloat16_to_float(unsigned short b) { return __int_as_float((int)((unsigned)b << 16)); }
__device__ __forceinline__ unsigned short float_to_bfloat16(float v) {
  const unsigned x = (unsigned)__float_as_int(v);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  return (unsigned short)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
__device__ __forceinline__ float ld(const b16* p, i64 i) { return bfloat16_to_float(p[i].x); }
__device__ __forceinline__ void st(b16* p, i64 i, float v) { p[i].x = float_to_bfloat16(v); }
__device__ __forceinline__ float round_b(float v) { return bfloat16_to_float(float_to_bfloat16(v)); }
__device__ __forceinline__ int ld(const int* p, i64 i) { return p[i]; }
__device__ __forceinline__ i64 ld(const i64* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(int* p, i64 i, int v) { p[i] = v; }
__device__ __forceinline__ void st(i64* p, i64 i, i64 v) { p[i] = v; }
__device__ __forceinline__ double ld(const double* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(double* p, i64 i, double v) { p[i] = v; }
__device__ __forceinline__ bool ld(const bool* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(bool* p, i64 i, bool v) { p[i] = v; }
// 8- and 16-bit integers compute in int; a store wraps to the type, as ONNX Runtime's
// arithmetic does.
__device__ __forceinline__ int ld(const signed char* p, i64 i) { return p[i]; }
__device__ __forceinline__ int ld(const unsigned char* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(signed char* p, i64 i, int v) { p[i] = (signed char)v; }
__device__ __forceinline__ void st(unsigned char* p, i64 i, int v) { p[i] = (unsigned char)v; }
__device__ __forceinline__ int ld(const short* p, i64 i) { return p[i]; }
__device__ __forceinline__ int ld(const unsigned short* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(short* p, i64 i, int v) { p[i] = (short)v; }
__device__ __forceinline__ void st(unsigned short* p, i64 i, int v) { p[i] = (unsigned short)v; }
__device__ __forceinline__ unsigned int ld(const unsigned int* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(unsigned int* p, i64 i, unsigned int v) { p[i] = v; }
__device__ __forceinline__ unsigned long long ld(const unsigned long long* p, i64 i) { return p[i]; }
__device__ __forceinline__ void st(unsigned long long* p, i64 i, unsigned long long v) { p[i] = v; }

// Max, Min, Abs and Div for every value type of the chains (float keeps fmaxf's NaN rule).
__device__ __forceinline__ float vmax(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float vmin(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ float vabs(float a) { return fabsf(a); }
__device__ __forceinline__ float vdiv(float a, float b) { return a / b; }
__device__ __forceinline__ double vmax(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ double vmin(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ double vabs(double a) { return fabs(a); }
__device__ __forceinline__ double vdiv(double a, double b) { return a / b; }
// exp, log and sqrt in the value's own precision (the reductions).
__device__ __forceinline__ float vexp(float a) { return expf(a); }
__device__ __forceinline__ double vexp(double a) { return exp(a); }
__device__ __forceinline__ float vlog(float a) { return logf(a); }
__device__ __forceinline__ double vlog(double a) { return log(a); }
__device__ __forceinline__ float vsqrt(float a) { return sqrtf(a); }
__device__ __forceinline__ double vsqrt(double a) { return sqrt(a); }
template <class I> __device__ __forceinline__ I vmax(I a, I b) { return a > b ? a : b; }
template <class I> __device__ __forceinline__ I vmin(I a, I b) { return a < b ? a : b; }
// Whether an integer is negative (false for every unsigned value, without a comparison that
// is always false).
template <class I> __device__ __forceinline__ bool is_negative(I a) { return (I)-1 < (I)0 && (long long)a < 0; }
template <class I> __device__ __forceinline__ I vabs(I a) { return is_negative(a) ? (I)(0 - (unsigned long long)a) : a; }
// Integer division truncates toward zero; a signed x / -1 wraps like ONNX Runtime's; a zero
// divisor, which the cpu EP reports as an error, gives 0 here (a kernel cannot stop the run).
template <class I> __device__ __forceinline__ bool is_minus_one(I b) { return (I)-1 < (I)0 && b == (I)-1; }
template <class I> __device__ __forceinline__ I vdiv(I a, I b) {
  return b == 0 ? (I)0 : is_minus_one(b) ? (I)(0 - (unsigned long long)a) : (I)(a / b);
}
// Mod: fmod=1 takes the dividend's sign (C's fmodf and %), fmod=0 (integers only) the
// divisor's. A zero divisor gives 0, as in vdiv.
__device__ __forceinline__ float vfmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double vfmod(double a, double b) { return fmod(a, b); }
template <class I> __device__ __forceinline__ I vfmod(I a, I b) { return b == 0 || is_minus_one(b) ? (I)0 : (I)(a % b); }
template <class I> __device__ __forceinline__ I vmod(I a, I b) {
  I r = vfmod(a, b);
  return r != 0 && (is_negative(r) != is_negative(b)) ? (I)(r + b) : r;
}
// Pow as the cpu EP computes it: a float base in its own precision; an integer base with a
// float exponent through double; an integer base and exponent by repeated squaring, wrapped to
// the base's type (a negative exponent gives 0 unless the base is 1 or -1).
template <class T> struct is_float_value { static constexpr bool value = false; };
template <> struct is_float_value<float> { static constexpr bool value = true; };
template <> struct is_float_value<double> { static constexpr bool value = true; };
template <class B, class E> __device__ __forceinline__ B vpow(B a, E b) {
  if constexpr (is_float_value<B>::value) {
    if constexpr (sizeof(B) == 4) return powf(a, (float)b);
    else return pow(a, (double)b);
  } else if constexpr (is_float_value<E>::value) {
    return (B)pow((double)a, (double)b);
  } else {
    if (is_negative(b)) return a == (B)1 ? (B)1 : a == (B)-1 ? (B)((b & 1) ? -1 : 1) : (B)0;
    unsigned long long r = 1, f = (unsigned long long)a;
    for (unsigned long long n = (unsigned long long)b; n != 0; n >>= 1) {
      if (n & 1) r *= f;
      f *= f;
    }
    return (B)r;
  }
}
// BitShift of unsigned values; a shift by the type's width or more gives 0 (computed in the
// value type, which is int for 8- and 16-bit values: their store wraps).
template <class U> __device__ __forceinline__ U vshl(U a, U b) {
  return b >= (U)(sizeof(U) * 8) ? (U)0 : (U)((unsigned long long)a << b);
}
template <class U> __device__ __forceinline__ U vshr(U a, U b) { return b >= (U)(sizeof(U) * 8) ? (U)0 : (U)(a >> b); }
__device__ __forceinline__ float inf_f() { return __int_as_float(0x7f800000); }
// IsNaN and IsInf without the math library's isnan/isinf (ambiguous in host C++).
__device__ __forceinline__ bool is_nan(float v) { return v != v; }
__device__ __forceinline__ bool is_inf(float v) { return fabsf(v) == inf_f(); }

// int4, uint4, int2 and uint2, held one per byte (the signed ones sign-extended), computed in
// int. Cast to them keeps an integer's low `bits`, and rounds a float half away from zero first
// (NaN gives 0), as the cpu EP and ONNX Runtime do.
__device__ __forceinline__ int wrap_subbyte(i64 v, int bits, int is_signed) {
  const int k = (int)(v & ((1 << bits) - 1));
  return is_signed && (k >> (bits - 1)) ? k - (1 << bits) : k;
}
__device__ __forceinline__ int float_to_subbyte(double v, int bits, int is_signed) {
  if (v != v) return 0;
  const double r = fmin(fmax(round(v), -9223372036854775808.0), 9223372036854774784.0);
  return wrap_subbyte((i64)r, bits, is_signed);
}

// Floats held as bit patterns, by format code: the float8 types (0 E4M3FN, 1 E4M3FNUZ, 2 E5M2,
// 3 E5M2FNUZ), 4 float4e2m1 (held one per byte), 5 float8e8m0. A chain computes them in float:
// ld decodes; a node making one (Cast, CastLike) rounds its value with round_byte_float
// (chain.cpp) from the exact value, so st only encodes a value the format holds (or an infinity
// or NaN, which it keeps: E5M2's infinity, the others' NaN).
struct f8e4m3fn { unsigned char x; };
struct f8e4m3fnuz { unsigned char x; };
struct f8e5m2 { unsigned char x; };
struct f8e5m2fnuz { unsigned char x; };
struct f4e2m1 { unsigned char x; };
struct f8e8m0 { unsigned char x; };
__device__ __forceinline__ int f8_mantissa_bits(int f) { return f < 2 ? 3 : f == 4 ? 1 : 2; }
__device__ __forceinline__ int f8_bias(int f) { return f == 0 ? 7 : f == 1 ? 8 : f == 2 ? 15 : f == 3 ? 16 : 1; }
__device__ __forceinline__ bool f8_fnuz(int f) { return f == 1 || f == 3; }  // NaN 0x80, no -0, no infinity
// float8e8m0: 2^(b - 127), 0xFF NaN.
__device__ __forceinline__ float e8m0_decode(unsigned b) {
  return b == 0xffu ? __int_as_float(0x7fc00000) : ldexpf(1.f, (int)b - 127);
}
__device__ float byte_float_decode(unsigned b, int f) {
  if (f == 5) return e8m0_decode(b);
  const int mant = f8_mantissa_bits(f), bias = f8_bias(f);
  const unsigned sign_bit = f == 4 ? 0x8u : 0x80u, m = b & (sign_bit - 1u);
  const float sign = (b & sign_bit) ? -1.f : 1.f;
  const float nan = __int_as_float((int)(0x7fc00000u | (f8_fnuz(f) ? 0u : (b & 0x80u) << 24)));  // keeps its sign
  if (f8_fnuz(f) && b == 0x80u) return nan;
  if (f == 0 && m == 0x7fu) return nan;
  if (f == 2 && m >= 0x7cu) return m == 0x7cu ? sign * inf_f() : nan;
  const int e = (int)(m >> mant), q = (int)(m & ((1u << mant) - 1u));
  const float v = e == 0 ? ldexpf((float)q, 1 - bias - mant) : ldexpf((float)(q + (1 << mant)), e - bias - mant);
  return sign * v;
}
// float8e8m0 per Cast-24 (the cpu EP's float_to_float8e8m0): NaN stays NaN; above 2^127 the
// largest with `saturate`, else NaN; below 2^-127 (zero and negatives included) the smallest
// with `saturate`, else NaN; between, the power of two `mode` picks (0 up, 1 down, 2 nearest).
__device__ unsigned e8m0_encode(double v, int saturate, int mode) {
  if (v != v) return 0xffu;
  if (v > 1.7014118346046923e38) return saturate ? 0xfeu : 0xffu;  // 2^127
  if (!(v >= 5.877471754111438e-39)) return saturate ? 0x00u : 0xffu;  // 2^-127
  int e = 0;
  const double fraction = 2 * frexp(v, &e);
  const bool next = mode == 0 ? fraction > 1 : mode == 1 ? false : fraction >= 1.5;
  return (unsigned)(e - 1 + (next ? 1 : 0) + 127);
}
// The bits of v in format f, rounded to nearest even (in integer arithmetic on the double, so
// with no double rounding). Past the largest finite value, infinities included: the largest
// with `saturate` (float4e2m1 always), else E5M2's infinity or the other formats' NaN;
// float4e2m1 has no NaN and gives +6 for one.
__device__ unsigned byte_float_encode(double v, int f, int saturate, int e8m0_mode = 0) {
  if (f == 5) return e8m0_encode(v, saturate, e8m0_mode);
  const int mant = f8_mantissa_bits(f), bias = f8_bias(f);
  const bool fnuz = f8_fnuz(f), f4 = f == 4;
  const unsigned max_finite = f == 0 ? 0x7eu : f == 2 ? 0x7bu : f4 ? 0x7u : 0x7fu;
  const unsigned long long x = (unsigned long long)__double_as_longlong(v);
  const unsigned sign = (x >> 63) ? (f4 ? 0x8u : 0x80u) : 0u;
  if (v != v) return f4 ? 0x7u : fnuz ? 0x80u : (sign | 0x7fu);
  const unsigned overflow = saturate || f4 ? (sign | max_finite) : f == 2 ? (sign | 0x7cu) : fnuz ? 0x80u : (sign | 0x7fu);
  const unsigned long long magnitude = x & 0x7fffffffffffffffull;
  if (magnitude >= 0x7ff0000000000000ull) return overflow;
  const unsigned zero = fnuz ? 0u : sign;
  const int exponent = (int)(magnitude >> 52) - 1023;
  if (magnitude == 0 || exponent < -bias - mant) return zero;
  const unsigned long long mantissa = (magnitude & ((1ull << 52) - 1ull)) | (1ull << 52);
  int biased = exponent + bias, shift = 52 - mant;
  if (biased <= 0) { shift += 1 - biased; biased = 0; }
  unsigned long long q = mantissa >> shift;
  const unsigned long long rest = mantissa & ((1ull << shift) - 1ull), half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (q & 1ull))) ++q;
  const unsigned long long bits = biased > 0 ? ((unsigned long long)(biased - 1) << mant) + q : q;
  if (bits > max_finite) return overflow;
  return bits == 0 ? zero : (sign | (unsigned)bits);
}
__device__ __forceinline__ float round_byte_float(double v, int f, int saturate, int e8m0_mode) {
  return byte_float_decode(byte_float_encode(v, f, saturate, e8m0_mode), f);
}
__device__ __forceinline__ float ld(const f8e4m3fn* p, i64 i) { return byte_float_decode(p[i].x, 0); }
__device__ __forceinline__ float ld(const f8e4m3fnuz* p, i64 i) { return byte_float_decode(p[i].x, 1); }
__device__ __forceinline__ float ld(const f8e5m2* p, i64 i) { return byte_float_decode(p[i].x, 2); }
__device__ __forceinline__ float ld(const f8e5m2fnuz* p, i64 i) { return byte_float_decode(p[i].x, 3); }
__device__ __forceinline__ float ld(const f4e2m1* p, i64 i) { return byte_float_decode(p[i].x, 4); }
__device__ __forceinline__ float ld(const f8e8m0* p, i64 i) { return byte_float_decode(p[i].x, 5); }
__device__ __forceinline__ void st(f8e4m3fn* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 0, 0); }
__device__ __forceinline__ void st(f8e4m3fnuz* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 1, 0); }
__device__ __forceinline__ void st(f8e5m2* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 2, 0); }
__device__ __forceinline__ void st(f8e5m2fnuz* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 3, 0); }
__device__ __forceinline__ void st(f4e2m1* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 4, 1); }
__device__ __forceinline__ void st(f8e8m0* p, i64 i, float v) { p[i].x = (unsigned char)byte_float_encode(v, 5, 0); }
__device__ __forceinline__ i64 global_index() { return (i64)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ i64 global_stride() { return (i64)gridDim.x * blockDim.x; }

// Calls visit(d, c) with the coordinate c of linear index i of `shape` in each of its rank
// dimensions d, innermost first. A kernel that reads several tensors at one index splits the
// index once for all of them: each division is a long instruction sequence, at run time and
// for ptxas.
template <class Visit>
__device__ __forceinline__ void for_each_coordinate(i64 i, int rank, const Dims& shape, Visit visit) {
  for (int d = rank - 1; d >= 0; --d) { const i64 e = shape.d[d]; visit(d, i % e); i /= e; }
}

// Offset of linear index i of `shape` (rank dims) in a tensor with `strides`. A space the host
// merged to rank 1 or 0 (coalesce_dims) needs no division.
__device__ __forceinline__ i64 offset_of(i64 i, int rank, const Dims& shape, const Dims& strides) {
  if (rank <= 1) return i * strides.d[0];
  i64 off = 0;
  for_each_coordinate(i, rank, shape, [&](int d, i64 c) { off += c * strides.d[d]; });
  return off;
}

// Transpose, Slice, Expand, Concat (one input into its slice of the output), Gemm's C. The
// host merges the dimensions both tensors walk contiguously (coalesce_dims): a space of rank 1
// (or 0) needs no division.
template <class T>
__device__ void strided_copy(i64 n, int rank, Dims shape, Dims in_strides, i64 in_off, const T* in,
                             Dims out_strides, i64 out_off, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 from = i * in_strides.d[0], to = i * out_strides.d[0];
    if (rank > 1) {
      from = 0, to = 0;
      for_each_coordinate(i, rank, shape, [&](int d, i64 c) { from += c * in_strides.d[d]; to += c * out_strides.d[d]; });
    }
    out[out_off + to] = in[in_off + from];
  }
}

// Range: out[i] = start + i·delta, in T.
template <class T>
__device__ void range(i64 n, T start, T delta, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) out[i] = start + (T)i * delta;
}

// ConstantOfShape: every element is `value`.
template <class T>
__device__ void fill(i64 n, T value, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) out[i] = value;
}

// out[o, j, k] = data[o, idx[j], k]; indices out of range give 0 (the cpu EP reports them).
template <class T, class I>
__device__ void gather(i64 n, i64 inner, i64 axis_dim, i64 idx_count, const T* data, const I* idx, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 k = i % inner, t = i / inner, j = t % idx_count, o = t / idx_count;
    i64 at = (i64)idx[j];
    if (at < 0) at += axis_dim;
    if (at < 0 || at >= axis_dim) { out[i] = T(); continue; }
    out[i] = data[(o * axis_dim + at) * inner + k];
  }
}

// Tile: out[i] reads in at each coordinate modulo the input's extent.
template <class T>
__device__ void tile(i64 n, int rank, Dims out_shape, Dims in_shape, Dims in_strides, const T* in, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 rest = i, off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      off += (rest % out_shape.d[d]) % in_shape.d[d] * in_strides.d[d];
      rest /= out_shape.d[d];
    }
    out[i] = in[off];
  }
}

// Pad: output coordinate o reads input coordinate o - begin; outside the input, mode 0 writes
// *value (when value is null, `fill`: the element's bits, in the low bytes), 1 (edge) clamps,
// 2 (reflect) mirrors about the edge elements, 3 (wrap) wraps around. Negative begins crop.
template <class T>
__device__ void pad(i64 n, int rank, Dims out_shape, Dims in_shape, Dims begins, int mode, const T* value,
                    unsigned long long fill, const T* in, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 rest = i, off = 0, scale = 1;
    bool outside = false;
    for (int d = rank - 1; d >= 0; --d) {
      const i64 dim = in_shape.d[d];
      i64 c = rest % out_shape.d[d] - begins.d[d];
      rest /= out_shape.d[d];
      if (c < 0 || c >= dim) {
        if (mode == 1) c = c < 0 ? 0 : dim - 1;
        else if (mode == 2 && dim > 1) {
          const i64 period = 2 * (dim - 1);
          c = ((c % period) + period) % period;
          if (c >= dim) c = period - c;
        } else if (mode == 3 || mode == 2) c = ((c % dim) + dim) % dim;
        else outside = true;
      }
      off += c * scale;
      scale *= dim;
    }
    out[i] = outside ? (value ? *value : (T)fill) : in[off];
  }
}

// GatherElements: out[i] = data at out's coordinate i with the axis coordinate replaced by
// idx[i] (negative counts from the end; out of range gives T(), the cpu EP reports it).
// The offset in data of element i of the indices (shape idx_shape) with its axis coordinate
// replaced by `at`.
__device__ __forceinline__ i64 element_offset(i64 i, int rank, const Dims& idx_shape, const Dims& data_strides, int axis,
                                              i64 at) {
  i64 off = 0;
  for (int d = rank - 1; d >= 0; --d) {
    off += (d == axis ? at : i % idx_shape.d[d]) * data_strides.d[d];
    i /= idx_shape.d[d];
  }
  return off;
}

template <class T, class I>
__device__ void gather_elements(i64 n, int rank, Dims idx_shape, Dims data_strides, int axis, i64 axis_dim, const T* data,
                                const I* idx, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 at = (i64)idx[i];
    if (at < 0) at += axis_dim;
    out[i] = at >= 0 && at < axis_dim ? data[element_offset(i, rank, idx_shape, data_strides, axis, at)] : T();
  }
}

// GatherND: tuple t (q indices into the dims after the batch dims, negative from the end)
// picks a slice of `slice` elements of its batch; out of range gives T() (the cpu EP reports it).
// The offset index tuple t (q values, negative from the end) points at in a tensor of
// `shape` and `strides`; -1 when a value is out of range.
__device__ __forceinline__ i64 tuple_offset(const i64* idx, i64 t, int q, const Dims& shape, const Dims& strides) {
  i64 off = 0;
  for (int d = 0; d < q; ++d) {
    i64 v = idx[t * q + d];
    if (v < 0) v += shape.d[d];
    if (v < 0 || v >= shape.d[d]) return -1;
    off += v * strides.d[d];
  }
  return off;
}

template <class T>
__device__ void gather_nd(i64 n, i64 slice, int q, i64 tuples_per_batch, i64 batch_elements, Dims shape, Dims strides,
                          const i64* idx, const T* data, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 t = i / slice, off = tuple_offset(idx, t, q, shape, strides);
    out[i] = off < 0 ? T() : data[(t / tuples_per_batch) * batch_elements + off + i % slice];
  }
}

// The scatters' reductions: none (the update replaces the element), add, mul, max, min.
enum { kScatterNone = 0, kScatterAdd = 1, kScatterMul = 2, kScatterMax = 3, kScatterMin = 4 };

// a combined with b by reduction R, computed as loaded (float for h16 and b16, int for 8- and
// 16-bit integers) and stored back as T.
template <int R, class T>
__device__ __forceinline__ T scatter_combine(T a, T b) {
  const T in[2] = {a, b};
  const auto x = ld(in, 0), y = ld(in, 1);
  T r[1];
  st(r, 0, R == kScatterAdd ? x + y : R == kScatterMul ? x * y : R == kScatterMax ? (x > y ? x : y) : (x < y ? x : y));
  return r[0];
}

// The bytes of a T as the low bytes of an integer word, and back (GPUs are little-endian).
template <class T, class W>
__device__ __forceinline__ W bits_of(T v) {
  const unsigned char* b = (const unsigned char*)&v;
  W w = 0;
  for (int k = 0; k < (int)sizeof(T); ++k) w |= (W)b[k] << (8 * k);
  return w;
}
template <class T, class W>
__device__ __forceinline__ T from_bits(W w) {
  T v;
  unsigned char* b = (unsigned char*)&v;
  for (int k = 0; k < (int)sizeof(T); ++k) b[k] = (unsigned char)(w >> (8 * k));
  return v;
}

// *p = scatter_combine<R>(*p, v) atomically, as several updates may hit one element: a
// compare-and-swap loop on the aligned word that holds *p (8 bytes for a 64-bit T, else the
// 32-bit word around its 1, 2 or 4 bytes).
template <int R, class T>
__device__ void scatter_atomic(T* p, T v) {
  if constexpr (sizeof(T) == 8) {
    unsigned long long* word = (unsigned long long*)p;
    unsigned long long seen = *word, expected;
    do {
      expected = seen;
      const T now = scatter_combine<R>(from_bits<T, unsigned long long>(expected), v);
      seen = atomicCAS(word, expected, bits_of<T, unsigned long long>(now));
    } while (seen != expected);
  } else {
    unsigned* word = (unsigned*)((unsigned long long)p & ~3ull);
    const unsigned shift = (unsigned)((unsigned long long)p & 3ull) * 8u;
    const unsigned mask = (unsigned)((1ull << (8 * sizeof(T))) - 1ull) << shift;
    unsigned seen = *word, expected;
    do {
      expected = seen;
      const T now = scatter_combine<R>(from_bits<T, unsigned>((expected & mask) >> shift), v);
      seen = atomicCAS(word, expected, (expected & ~mask) | (bits_of<T, unsigned>(now) << shift));
    } while (seen != expected);
  }
}

// One update into its element: a plain store for reduction none (ONNX leaves duplicate indices
// undefined there), an atomic combine for the others.
template <int R, class T>
__device__ __forceinline__ void scatter_store(T* p, T v) {
  if constexpr (R == kScatterNone)
    *p = v;
  else
    scatter_atomic<R>(p, v);
}

// ScatterND, after out = data: tuple t (q indices into the first dims) puts its slice of
// `slice` elements from updates with reduction R; tuples out of range write nothing.
template <class T, int R>
__device__ void scatter_nd(i64 n, i64 slice, int q, Dims shape, Dims strides, const i64* idx, const T* updates, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 off = tuple_offset(idx, i / slice, q, shape, strides);
    if (off >= 0) scatter_store<R>(out + off + i % slice, updates[i]);
  }
}

// ScatterElements, after out = data: update i goes, with reduction R, to its own coordinate
// in the indices' shape with the axis coordinate taken from idx[i].
template <class T, class I, int R>
__device__ void scatter_elements(i64 n, int rank, Dims idx_shape, Dims data_strides, int axis, i64 axis_dim, const I* idx,
                                 const T* updates, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 at = (i64)idx[i];
    if (at < 0) at += axis_dim;
    if (at >= 0 && at < axis_dim) scatter_store<R>(out + element_offset(i, rank, idx_shape, data_strides, axis, at), updates[i]);
  }
}

// EyeLike: ones on diagonal k of a rows x cols matrix (col - row == k), zeros elsewhere.
template <class T>
__device__ void eye(i64 n, i64 cols, i64 k, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) st(out, i, i % cols - i / cols == k ? 1 : 0);
}

// HannWindow, HammingWindow, BlackmanWindow: w[i] = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N),
// computed in double.
template <class T>
__device__ void cosine_window(i64 n, double period, double a0, double a1, double a2, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const double angle = 6.283185307179586 * (double)i / period;
    st(out, i, a0 - a1 * cos(angle) + a2 * cos(2.0 * angle));
  }
}

// A table the host computed in double, stored as T (MelWeightMatrix's filter bank).
template <class T>
__device__ void store_doubles(i64 n, const double* in, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) st(out, i, in[i]);
}

// The twiddle e^(sign 2 pi i m / n) for 0 <= m < n. The transforms compute in double, as the
// cpu EP does: summed in float, bins that should be near zero came out up to 8e-5 off on the
// ONNX backend cases.
__device__ __forceinline__ void twiddle(i64 m, i64 n, double sign, double& c, double& s) {
  const double angle = 6.283185307179586 * (double)m / (double)n;
  c = cos(angle);
  s = sign * sin(angle);
}

// DFT of length n along one axis of x [outer, in_len, inner, components] (components 1: real,
// 2: re, im) into y [outer, out_len, inner, 2]: y[k] = scale sum_{j < used} x[j] e^(sign 2 pi i jk / n),
// the signal zero-padded or cut to n (used = min(in_len, n)). sign is -1 (+1 and scale 1/n
// when inverse). One thread per output bin; jk mod n is kept exactly in integers.
template <class T>
__device__ void dft(i64 total, i64 out_len, i64 inner, i64 in_len, i64 used, i64 n, int components, int inverse,
                    const T* x, T* y) {
  const double sign = inverse ? 1 : -1, scale = inverse ? 1.0 / (double)n : 1.0;
  for (i64 e = global_index(); e < total; e += global_stride()) {
    const i64 i = e % inner, k = (e / inner) % out_len, o = e / (inner * out_len);
    const i64 base = o * in_len * inner + i;
    double re = 0, im = 0, c, s;
    i64 m = 0;  // j k mod n
    for (i64 j = 0; j < used; ++j) {
      const i64 at = (base + j * inner) * components;
      const double xr = ld(x, at), xi = components == 2 ? ld(x, at + 1) : 0.0;
      twiddle(m, n, sign, c, s);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      m += k;
      if (m >= n) m -= n;
    }
    st(y, 2 * e, re * scale);
    st(y, 2 * e + 1, im * scale);
  }
}

// STFT of x [batch, length, components] into y [batch, frames, bins, 2]: frame f of batch b is
// x[b, f step + j] window[j] for j < frame_len (no window: ones), transformed as dft does with
// n = frame_len.
template <class T>
__device__ void stft(i64 total, i64 frames, i64 bins, i64 length, i64 step, i64 frame_len, int components,
                     const T* window, const T* x, T* y) {
  for (i64 e = global_index(); e < total; e += global_stride()) {
    const i64 k = e % bins, f = (e / bins) % frames, b = e / (bins * frames);
    const i64 base = b * length + f * step;
    double re = 0, im = 0, c, s;
    i64 m = 0;  // j k mod frame_len
    for (i64 j = 0; j < frame_len; ++j) {
      const i64 at = (base + j) * components;
      const double w = window ? ld(window, j) : 1.0;
      const double xr = ld(x, at) * w, xi = components == 2 ? ld(x, at + 1) * w : 0.0;
      twiddle(m, frame_len, -1.0, c, s);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      m += k;
      if (m >= frame_len) m -= frame_len;
    }
    st(y, 2 * e, re);
    st(y, 2 * e + 1, im);
  }
}

// OneHot: out[o, d, j] = values[1] where indices[o, j] (negative: from the end) is d, else
// values[0].
template <class T, class I>
__device__ void one_hot(i64 n, i64 depth, i64 inner, const I* indices, const T* values, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 j = i % inner, d = (i / inner) % depth, o = i / (inner * depth);
    i64 at = (i64)indices[o * inner + j];
    if (at < 0) at += depth;
    out[i] = at == d ? values[1] : values[0];
  }
}

// Trilu over the last two dims (rows x cols): keeps the elements on and above diagonal k
// (upper) or on and below it, zeroes the rest.
template <class T>
__device__ void trilu(i64 n, i64 rows, i64 cols, i64 k, int upper, const T* in, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 col = i % cols, row = (i / cols) % rows;
    const bool keep = upper ? col - row >= k : col - row <= k;
    out[i] = keep ? in[i] : T();
  }
}

// CumSum along an axis of `axis_dim` with stride `inner`, one thread per line; exclusive
// starts each sum at 0 before the element, reverse runs from the end.
template <class T>
__device__ void cumsum(i64 lines, i64 axis_dim, i64 inner, int exclusive, int reverse, const T* x, T* y) {
  for (i64 line = global_index(); line < lines; line += global_stride()) {
    const i64 base = (line / inner) * axis_dim * inner + line % inner;
    decltype(ld(x, 0)) acc = 0;
    for (i64 j = 0; j < axis_dim; ++j) {
      const i64 at = base + (reverse ? axis_dim - 1 - j : j) * inner;
      const auto v = ld(x, at);
      if (!exclusive) acc += v;
      st(y, at, acc);
      if (exclusive) acc += v;
    }
  }
}

// Resize from per-dim coordinate tables the host computed, from entry at[d] on for dim d. An
// index of -1 (tf_crop_and_resize) marks a coordinate outside the input: every output element
// on it takes `extrapolation`.
// Nearest: output coordinate o of dim d reads input index idx[at[d] + o].
template <class T>
__device__ void resize_nearest(i64 n, int rank, Dims out_shape, Dims in_strides, Dims at, const i64* idx, float extrapolation,
                               const T* x, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 rest = i, off = 0;
    bool outside = false;
    for (int d = rank - 1; d >= 0; --d) {
      const i64 k = idx[at.d[d] + rest % out_shape.d[d]];
      outside = outside || k < 0;
      off += k * in_strides.d[d];
      rest /= out_shape.d[d];
    }
    if (outside)
      st(y, i, extrapolation);
    else
      y[i] = x[off];
  }
}

// Linear and cubic: each output coordinate of dim d has `slots` (input index, weight) pairs in
// the tables, of which taps.d[d] are used (1 where the dim maps input elements exactly); an
// output element sums the products over every combination of its dims' taps.
template <class T>
__device__ void resize_weighted(i64 n, int rank, Dims out_shape, Dims in_strides, Dims at, Dims taps, int slots,
                                const i64* idx, const float* w, float extrapolation, const T* x, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 entry[8];
    i64 rest = i, combos = 1;
    bool outside = false;
    for (int d = rank - 1; d >= 0; --d) {
      entry[d] = at.d[d] + rest % out_shape.d[d];
      outside = outside || idx[entry[d] * slots] < 0;
      rest /= out_shape.d[d];
      combos *= taps.d[d];
    }
    if (outside) {
      st(y, i, extrapolation);
      continue;
    }
    float acc = 0.f;
    for (i64 c = 0; c < combos; ++c) {
      float weight = 1.f;
      i64 off = 0, r = c;
      for (int d = rank - 1; d >= 0; --d) {
        const i64 slot = entry[d] * slots + r % taps.d[d];
        r /= taps.d[d];
        weight *= w[slot];
        off += idx[slot] * in_strides.d[d];
      }
      acc += weight * ld(x, off);
    }
    st(y, i, acc);
  }
}

// Block-wide reductions (blockDim.x is a multiple of 32, at most 1024) of float, or of double
// where a kernel accumulates in double (LayerNormalization's stash_type 11).
template <class V>
__device__ V block_reduce(V v, bool is_max) {
  __shared__ V partial[32];
  for (int s = 16; s > 0; s >>= 1) {
    V o = __shfl_xor_sync(0xffffffffu, v, s);
    v = is_max ? vmax(v, o) : v + o;
  }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  int warps = blockDim.x >> 5;
  v = threadIdx.x < warps ? partial[threadIdx.x] : (is_max ? (V)-inf_f() : (V)0);
  if (warp == 0)
    for (int s = 16; s > 0; s >>= 1) {
      V o = __shfl_xor_sync(0xffffffffu, v, s);
      v = is_max ? vmax(v, o) : v + o;
    }
  if (threadIdx.x == 0) partial[0] = v;
  __syncthreads();
  V r = partial[0];
  __syncthreads();
  return r;
}

// Cubic convolution weights (coefficient a) of the neighbours floor(x)-1 .. floor(x)+2 of a
// coordinate with fraction t.
__device__ void cubic_weights(float t, float a, float* w) {
  const float d[4] = {t + 1.f, t, 1.f - t, 2.f - t};
  for (int k = 0; k < 4; ++k)
    w[k] = (k == 1 || k == 2) ? ((a + 2.f) * d[k] - (a + 3.f)) * d[k] * d[k] + 1.f
                              : ((a * d[k] - 5.f * a) * d[k] + 8.f * a) * d[k] - 4.f * a;
}

// GridSample's coordinate steps: a normalized coordinate in [-1, 1] to a pixel coordinate,
// and border or reflection padding of one (padding 0 zeros, 1 border, 2 reflection).
__device__ float grid_unnormalize(float coord, i64 size, int align) {
  const float n = (float)size;
  return align ? (coord + 1.f) / 2.f * (n - 1.f) : ((coord + 1.f) * n - 1.f) / 2.f;
}
__device__ float grid_reflect(float x, float twice_low, float twice_high) {
  if (twice_low == twice_high) return 0.f;
  const float low = twice_low / 2.f, span = (twice_high - twice_low) / 2.f;
  x = fabsf(x - low);
  const float extra = fmodf(x, span);
  const i64 flips = (i64)floorf(x / span);
  return flips % 2 == 0 ? extra + low : span - extra + low;
}
__device__ float grid_pad(float x, i64 size, int padding, int align) {
  const float hi = (float)(size - 1);
  if (padding == 1) return fminf(fmaxf(x, 0.f), hi);
  if (padding != 2) return x;
  x = align ? grid_reflect(x, 0.f, 2.f * hi) : grid_reflect(x, -1.f, 2.f * (float)size - 1.f);
  return fminf(fmaxf(x, 0.f), hi);
}

// GridSample, one thread per output element (n, c, point): the grid's last axis lists the
// coordinates innermost first. mode 0 linear (2^spatial corners), 1 nearest (halves to even),
// 2 cubic (2-D only, each of the 16 taps padded); taps outside X read as zero.
template <class T, class G>
__device__ void grid_sample(i64 n, int spatial, Dims size, i64 channels, i64 points, int mode, int padding, int align,
                            const T* x, const G* grid, T* y) {
  i64 volume = 1;
  for (int d = 0; d < spatial; ++d) volume *= size.d[d];
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 at = i % points, slice = i / points, b = slice / channels;
    const i64 g = (b * points + at) * spatial;
    float pixel[8];
    for (int d = 0; d < spatial; ++d) pixel[d] = grid_unnormalize(ld(grid, g + spatial - 1 - d), size.d[d], align);
    const i64 base = slice * volume;
    float v = 0.f;
    if (mode == 2) {
      const i64 h = size.d[0], w = size.d[1];
      const float y0 = floorf(pixel[0]), x0 = floorf(pixel[1]);
      float wy[4], wx[4];
      cubic_weights(pixel[0] - y0, -0.75f, wy);
      cubic_weights(pixel[1] - x0, -0.75f, wx);
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 4; ++c) {
          const i64 py = (i64)grid_pad(y0 - 1.f + (float)r, h, padding, align);
          const i64 px = (i64)grid_pad(x0 - 1.f + (float)c, w, padding, align);
          if (py >= 0 && py < h && px >= 0 && px < w) v += wy[r] * wx[c] * ld(x, base + py * w + px);
        }
    } else {
      for (int d = 0; d < spatial; ++d) pixel[d] = grid_pad(pixel[d], size.d[d], padding, align);
      if (mode == 1) {
        i64 off = 0;
        bool inside = true;
        for (int d = 0; d < spatial; ++d) {
          const i64 k = (i64)rintf(pixel[d]);
          inside = inside && k >= 0 && k < size.d[d];
          off = off * size.d[d] + k;
        }
        if (inside) v = ld(x, base + off);
      } else {
        for (int corner = 0; corner < (1 << spatial); ++corner) {
          i64 off = 0;
          float weight = 1.f;
          bool inside = true;
          for (int d = 0; d < spatial; ++d) {
            const int up = (corner >> (spatial - 1 - d)) & 1;
            const float low = floorf(pixel[d]);
            const i64 k = (i64)low + up;
            inside = inside && k >= 0 && k < size.d[d];
            off = off * size.d[d] + k;
            weight *= up ? pixel[d] - low : 1.f - (pixel[d] - low);
          }
          if (inside) v += weight * ld(x, base + off);
        }
      }
    }
    st(y, i, v);
  }
}

// Which scale (and zero point) element applies to element i of x: lib's ScaleMap
// (nxrt/ep/quantize_scale.h), per tensor, per index of an axis, or per block of the axis.
struct ScaleMap { i64 per_tensor, axis_size, inner, block, scale_axis_size; };
__device__ __forceinline__ i64 scale_index(const ScaleMap& m, i64 i) {
  if (m.per_tensor) return 0;
  const i64 a = (i / m.inner) % m.axis_size;
  if (m.block == 0) return a;
  return (i / (m.inner * m.axis_size) * m.scale_axis_size + a / m.block) * m.inner + i % m.inner;
}

// QuantizeLinear: y = saturate(round_half_even(x / scale) + zero_point) into [lo, hi].
// zero_point may be null (0).
template <class X, class Q>
__device__ void quantize(i64 n, ScaleMap m, const X* x, const X* scale, const Q* zero_point, int lo, int hi, Q* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = scale_index(m, i);
    const float q = rintf(ld(x, i) / ld(scale, c)) + (zero_point ? (float)zero_point[c] : 0.f);
    y[i] = (Q)fminf(fmaxf(q, (float)lo), (float)hi);
  }
}

// DequantizeLinear: y = (x - zero_point) * scale, of the scale's type Y (opset 23: output_dtype's).
template <class Q, class S, class Y>
__device__ void dequantize(i64 n, ScaleMap m, const Q* x, const S* scale, const Q* zero_point, Y* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = scale_index(m, i);
    const i64 shifted = (i64)x[i] - (zero_point ? (i64)zero_point[c] : 0);
    st(y, i, (float)shifted * ld(scale, c));
  }
}

// QuantizeLinear to float8 (opset 19) or float4e2m1 (23), format f: y = x / scale + zero_point
// rounded as Cast rounds, saturating with `saturate` (float4e2m1 always).
template <class X, class Q>
__device__ void quantize_byte_float(i64 n, ScaleMap m, const X* x, const X* scale, const Q* zero_point, int f,
                                    int saturate, Q* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = scale_index(m, i);
    const float v = ld(x, i) / ld(scale, c) + (zero_point ? ld(zero_point, c) : 0.f);
    y[i].x = (unsigned char)byte_float_encode(v, f, saturate);
  }
}

// DequantizeLinear of float8 or float4e2m1: y = (x - zero_point) * scale, the values decoded.
template <class Q, class S, class Y>
__device__ void dequantize_byte_float(i64 n, ScaleMap m, const Q* x, const S* scale, const Q* zero_point, Y* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = scale_index(m, i);
    st(y, i, (ld(x, i) - (zero_point ? ld(zero_point, c) : 0.f)) * ld(scale, c));
  }
}

// DynamicQuantizeLinear, one block: the uint8 scale and zero point covering
// [min(x, 0), max(x, 0)] (all zeros: scale 0 and zero point 0).
template <class X>
__device__ void dynamic_quantize_params(i64 n, const X* x, float* scale, unsigned char* zero_point) {
  float lo = 0.f, hi = 0.f;
  for (i64 i = threadIdx.x; i < n; i += blockDim.x) {
    lo = fminf(lo, ld(x, i));
    hi = fmaxf(hi, ld(x, i));
  }
  lo = -block_reduce(-lo, true);
  hi = block_reduce(hi, true);
  if (threadIdx.x == 0) {
    const float s = (hi - lo) / 255.f;
    *scale = s;
    *zero_point = s == 0.f ? 0 : (unsigned char)fminf(fmaxf(rintf(0.f - lo / s), 0.f), 255.f);
  }
}
// Then y = saturate(round_half_even(x / scale) + zero_point), reading both from the device.
template <class X>
__device__ void dynamic_quantize(i64 n, const X* x, const float* scale, const unsigned char* zero_point, unsigned char* y) {
  const float s = *scale, zp = (float)*zero_point;
  for (i64 i = global_index(); i < n; i += global_stride())
    y[i] = s == 0.f ? *zero_point : (unsigned char)fminf(fmaxf(rintf(ld(x, i) / s) + zp, 0.f), 255.f);
}

// Integer matrix products, a thread per output element of `batch` [m, n] products (a batch
// stride of 0 reuses one matrix): acc = sum over k of (A[m, k] - za[m]) · (B[k, n] - zb[n]) in
// int32, each zero point a scalar (count 1), one per row of A / column of B, or null.
// MatMulInteger (y_scale null) stores acc; QLinearMatMul stores
// saturate(round_half_even(acc · sa[m] · sb[n] / y_scale) + y_zp) into [lo, hi].
// The int32 sum of output element i of such a product.
template <class TA, class TB>
__device__ __forceinline__ int integer_dot(i64 i, i64 m, i64 n, i64 k, i64 stride_a, i64 stride_b, const TA* a,
                                           const TB* b, const TA* za, i64 za_count, const TB* zb, i64 zb_count) {
  const i64 col = i % n, row = (i / n) % m, at = i / (m * n);
  const int az = za ? (int)za[za_count == 1 ? 0 : row] : 0, bz = zb ? (int)zb[zb_count == 1 ? 0 : col] : 0;
  const TA* ar = a + at * stride_a + row * k;
  const TB* bc = b + at * stride_b + col;
  int acc = 0;
  for (i64 l = 0; l < k; ++l) acc += ((int)ar[l] - az) * ((int)bc[l * n] - bz);
  return acc;
}

template <class TA, class TB, class TY>
__device__ void matmul_integer(i64 batch, i64 m, i64 n, i64 k, i64 stride_a, i64 stride_b, const TA* a, const TB* b,
                               const TA* za, i64 za_count, const TB* zb, i64 zb_count, const float* sa, i64 sa_count,
                               const float* sb, i64 sb_count, const float* y_scale, const TY* y_zp, int lo, int hi, TY* y) {
  for (i64 i = global_index(); i < batch * m * n; i += global_stride()) {
    const i64 col = i % n, row = (i / n) % m;
    const int acc = integer_dot(i, m, n, k, stride_a, stride_b, a, b, za, za_count, zb, zb_count);
    if (!y_scale) {
      y[i] = (TY)acc;
      continue;
    }
    const float scale = sa[sa_count == 1 ? 0 : row] * sb[sb_count == 1 ? 0 : col] / *y_scale;
    y[i] = (TY)fminf(fmaxf(rintf((float)acc * scale) + (float)*y_zp, (float)lo), (float)hi);
  }
}

// ONNX Runtime's MatMulIntegerToFloat and DynamicQuantizeMatMul: the same int32 sums, scaled to
// float by a_scale (one value) times b_scale (one, or one per column), plus bias[col] when
// given.
template <class TA, class TB>
__device__ void matmul_integer_to_float(i64 batch, i64 m, i64 n, i64 k, i64 stride_a, i64 stride_b, const TA* a,
                                        const TB* b, const TA* za, const TB* zb, i64 zb_count, const float* sa,
                                        const float* sb, i64 sb_count, const float* bias, float* y) {
  for (i64 i = global_index(); i < batch * m * n; i += global_stride()) {
    const i64 col = i % n;
    const int acc = integer_dot(i, m, n, k, stride_a, stride_b, a, b, za, 1, zb, zb_count);
    y[i] = (float)acc * (*sa * sb[sb_count == 1 ? 0 : col]) + (bias ? bias[col] : 0.f);
  }
}

// ConvInteger and QLinearConv, one thread per output element: the int32 sum over its window of
// (x - x_zp)·(w - w_zp[oc]), padding adding nothing. The geometry is 3-D (a 1-D or 2-D window
// has leading dims of 1): in, out, kernel, stride, pad (begin) and dilation hold depth, height
// and width in d[0..2]. Without y_scale the sum is the output (ConvInteger); with it the bias is
// added and the sum requantized: times x_scale·w_scale[oc]/y_scale, rounded to nearest even,
// plus y_zp (after rounding, as the cpu EP and ONNX Runtime's MLAS add it), saturated to [lo, hi].
template <class TX, class TW, class TY>
__device__ void conv_integer(i64 n, i64 channels, i64 out_channels, i64 group, Dims in, Dims out, Dims kernel, Dims stride,
                             Dims pad, Dims dilation, const TX* x, const TW* w, const TX* xz, const TW* wz, i64 wz_count,
                             const float* xs, const float* ws, i64 ws_count, const float* y_scale, const TY* y_zp,
                             const int* bias, int lo, int hi, TY* y) {
  const i64 in_size = in.d[0] * in.d[1] * in.d[2], out_size = out.d[0] * out.d[1] * out.d[2];
  const i64 taps = kernel.d[0] * kernel.d[1] * kernel.d[2];
  const i64 group_in = channels / group, group_out = out_channels / group;
  const int x0 = xz ? (int)*xz : 0;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 pos = i % out_size, job = i / out_size, oc = job % out_channels, b = job / out_channels, g = oc / group_out;
    const i64 ow = pos % out.d[2], oh = pos / out.d[2] % out.d[1], od = pos / (out.d[2] * out.d[1]);
    const int w0 = wz ? (int)wz[wz_count == 1 ? 0 : oc] : 0;
    int acc = 0;
    for (i64 ic = 0; ic < group_in; ++ic) {
      const TX* xc = x + (b * channels + g * group_in + ic) * in_size;
      const TW* wc = w + (oc * group_in + ic) * taps;
      for (i64 kd = 0; kd < kernel.d[0]; ++kd) {
        const i64 id = od * stride.d[0] - pad.d[0] + kd * dilation.d[0];
        if (id < 0 || id >= in.d[0]) continue;
        for (i64 kh = 0; kh < kernel.d[1]; ++kh) {
          const i64 ih = oh * stride.d[1] - pad.d[1] + kh * dilation.d[1];
          if (ih < 0 || ih >= in.d[1]) continue;
          for (i64 kw = 0; kw < kernel.d[2]; ++kw) {
            const i64 iw = ow * stride.d[2] - pad.d[2] + kw * dilation.d[2];
            if (iw < 0 || iw >= in.d[2]) continue;
            acc += ((int)xc[(id * in.d[1] + ih) * in.d[2] + iw] - x0) * ((int)wc[(kd * kernel.d[1] + kh) * kernel.d[2] + kw] - w0);
          }
        }
      }
    }
    if (!y_scale) {
      y[i] = (TY)acc;
      continue;
    }
    const float scale = *xs * ws[ws_count == 1 ? 0 : oc] / *y_scale;
    const int sum = acc + (bias ? bias[oc] : 0);
    y[i] = (TY)fminf(fmaxf(rintf((float)sum * scale) + (float)*y_zp, (float)lo), (float)hi);
  }
}

// Einsum of one or two inputs, one thread per output element: the sum over the summed
// labels of the product of the inputs' elements, found by per-label strides (x1 is unused
// when inputs == 1).
template <class T>
__device__ void einsum(i64 n, int out_rank, Dims out_extents, int sum_rank, Dims sum_extents, i64 sum_total, int inputs,
                       const T* x0, Dims out_strides0, Dims sum_strides0, const T* x1, Dims out_strides1, Dims sum_strides1,
                       T* y) {
  typedef decltype(ld(x0, 0)) V;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 base0 = 0, base1 = 0, rest = i;
    for (int d = out_rank - 1; d >= 0; --d) {
      const i64 c = rest % out_extents.d[d];
      rest /= out_extents.d[d];
      base0 += c * out_strides0.d[d];
      base1 += c * out_strides1.d[d];
    }
    V acc = 0;
    for (i64 s = 0; s < sum_total; ++s) {
      i64 at0 = base0, at1 = base1, r = s;
      for (int d = sum_rank - 1; d >= 0; --d) {
        const i64 c = r % sum_extents.d[d];
        r /= sum_extents.d[d];
        at0 += c * sum_strides0.d[d];
        at1 += c * sum_strides1.d[d];
      }
      V p = ld(x0, at0);
      if (inputs == 2) p *= ld(x1, at1);
      acc += p;
    }
    st(y, i, acc);
  }
}

// TopK's order: a ranks before b when it is larger (smaller when !largest), NaN above every
// number, ties to the lower index; index -1 is "none", after everything.
template <class V>
__device__ bool topk_before(V a, i64 ia, V b, i64 ib, int largest) {
  if (ib < 0) return ia >= 0;
  if (ia < 0) return false;
  const bool a_nan = a != a, b_nan = b != b;
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// TopK, one block per (outer, inner) row of length `axis` with stride `inner`: k rounds, each
// a block-wide search for the first element ranking after the previous round's pick, so the
// k outputs come out in order (k·axis/blockDim steps a thread; blockDim a power of two).
template <class T>
__device__ void topk(i64 outer, i64 axis, i64 inner, i64 k, int largest, const T* x, T* values, i64* indices) {
  typedef decltype(ld(x, 0)) V;
  __shared__ V pick_value[1024];
  __shared__ i64 pick_index[1024];
  for (i64 row = blockIdx.x; row < outer * inner; row += gridDim.x) {
    const i64 in_base = (row / inner) * axis * inner + row % inner;
    const i64 out_base = (row / inner) * k * inner + row % inner;
    V prev = V();
    i64 prev_index = -1;
    for (i64 r = 0; r < k; ++r) {
      V best = V();
      i64 best_index = -1;
      for (i64 a = threadIdx.x; a < axis; a += blockDim.x) {
        const V v = ld(x, in_base + a * inner);
        if (prev_index >= 0 && !topk_before(prev, prev_index, v, a, largest)) continue;
        if (topk_before(v, a, best, best_index, largest)) {
          best = v;
          best_index = a;
        }
      }
      pick_value[threadIdx.x] = best;
      pick_index[threadIdx.x] = best_index;
      __syncthreads();
      for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s && topk_before(pick_value[threadIdx.x + s], pick_index[threadIdx.x + s], pick_value[threadIdx.x],
                                           pick_index[threadIdx.x], largest)) {
          pick_value[threadIdx.x] = pick_value[threadIdx.x + s];
          pick_index[threadIdx.x] = pick_index[threadIdx.x + s];
        }
        __syncthreads();
      }
      prev = pick_value[0];
      prev_index = pick_index[0];
      if (threadIdx.x == 0) {
        st(values, out_base + r * inner, prev);
        indices[out_base + r * inner] = prev_index;
      }
      __syncthreads();
    }
  }
}

// One block per (outer, inner) row of length `axis` with stride `inner`. mode 0: Softmax,
// 1: LogSoftmax, 2: Hardmax (1 at the row's first largest element, 0 elsewhere).
template <class T>
__device__ void softmax(i64 outer, i64 axis, i64 inner, const T* x, T* y, int mode) {
  for (i64 row = blockIdx.x; row < outer * inner; row += gridDim.x) {
    i64 base = (row / inner) * axis * inner + row % inner;
    float m = -inf_f();
    for (i64 a = threadIdx.x; a < axis; a += blockDim.x) m = fmaxf(m, ld(x, base + a * inner));
    m = block_reduce(m, true);
    if (mode == 2) {  // the first index holding m, as the largest of the negated indices
      float first = -inf_f();
      for (i64 a = threadIdx.x; a < axis; a += blockDim.x)
        if (ld(x, base + a * inner) == m) first = fmaxf(first, -(float)a);
      first = block_reduce(first, true);
      for (i64 a = threadIdx.x; a < axis; a += blockDim.x) st(y, base + a * inner, (float)a == -first ? 1.f : 0.f);
      continue;
    }
    float s = 0.f;
    for (i64 a = threadIdx.x; a < axis; a += blockDim.x) s += expf(ld(x, base + a * inner) - m);
    s = block_reduce(s, false);
    for (i64 a = threadIdx.x; a < axis; a += blockDim.x) {
      float v = ld(x, base + a * inner) - m;
      st(y, base + a * inner, mode == 1 ? v - logf(s) : expf(v) / s);
    }
  }
}

// NegativeLogLikelihoodLoss over log-probabilities lp (N, C, D), a thread per position p:
// loss[p] = -lp[n, t, d]·w[t] and weights[p] = w[t] (1 without weights; `weights` may be null).
// Both are 0 where t is the ignore_index, or out of range (the cpu EP reports that).
template <class T, class I, class L>
__device__ void nll_loss(i64 n, i64 classes, i64 d, const T* lp, const I* target, const T* weight, int has_ignore,
                         i64 ignore, L* loss, float* weights) {
  for (i64 p = global_index(); p < n * d; p += global_stride()) {
    const i64 t = (i64)target[p];
    const bool counted = !(has_ignore && t == ignore) && t >= 0 && t < classes;
    const float w = !counted ? 0.f : weight ? ld(weight, t) : 1.f;
    st(loss, p, counted ? -ld(lp, ((p / d) * classes + t) * d + p % d) * w : 0.f);
    if (weights) weights[p] = w;
  }
}

// One block: out[0] = the sum of loss[0, n), divided by the sum of `weights` when given (mean).
template <class T>
__device__ void loss_total(i64 n, const float* loss, const float* weights, T* out) {
  float s = 0.f, w = 0.f;
  for (i64 p = threadIdx.x; p < n; p += blockDim.x) {
    s += loss[p];
    if (weights) w += weights[p];
  }
  s = block_reduce(s, false);
  if (weights) w = block_reduce(w, false);
  if (threadIdx.x == 0) st(out, 0, weights ? s / w : s);
}

// The same with a thread per (outer, inner) row, for short axes: a block per row would leave
// most of its threads idle and wait at every reduction.
template <class T>
__device__ void softmax_short(i64 outer, i64 axis, i64 inner, const T* x, T* y, int mode) {
  for (i64 row = global_index(); row < outer * inner; row += global_stride()) {
    const i64 base = (row / inner) * axis * inner + row % inner;
    float m = -inf_f();
    i64 first = 0;
    for (i64 a = 0; a < axis; ++a) {
      const float v = ld(x, base + a * inner);
      if (v > m) { m = v; first = a; }
    }
    if (mode == 2) {
      for (i64 a = 0; a < axis; ++a) st(y, base + a * inner, a == first ? 1.f : 0.f);
      continue;
    }
    float s = 0.f;
    for (i64 a = 0; a < axis; ++a) s += expf(ld(x, base + a * inner) - m);
    const float log_s = logf(s);
    for (i64 a = 0; a < axis; ++a) {
      const float v = ld(x, base + a * inner) - m;
      st(y, base + a * inner, mode == 1 ? v - log_s : expf(v) / s);
    }
  }
}

// The mean of a block's row of `cols` values (value(c), in A: float, or double for stash_type
// 11), and 1/sqrt(variance + eps); with `centered` false the mean is 0 and the variance the mean
// square (RMS normalization). Every thread of the block calls it.
template <class A, class F>
__device__ void row_moments_of(F value, i64 cols, float eps, bool centered, A& mean, A& inv) {
  A s = 0;
  if (centered)
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x) s += value(c);
  mean = centered ? block_reduce(s, false) / (A)cols : (A)0;
  A q = 0;
  for (i64 c = threadIdx.x; c < cols; c += blockDim.x) { A d = value(c) - mean; q += d * d; }
  inv = (A)1 / vsqrt(block_reduce(q, false) / (A)cols + (A)eps);
}

// row_moments_of a row of `cols` elements of x from `base`.
template <class T, class A>
__device__ void row_moments(const T* x, i64 base, i64 cols, float eps, A& mean, A& inv) {
  row_moments_of([&](i64 c) { return (A)ld(x, base + c); }, cols, eps, true, mean, inv);
}

// One block per row of `cols`; scale/bias broadcast over rows (bias may be null). The row's
// mean and 1/stddev, computed in A (stash_type's float or double), go to `mean` and
// `inv_std_dev` when they are not null.
template <class T, class S, class A>
__device__ void layer_norm(i64 rows, i64 cols, const T* x, const S* scale, const S* bias, float eps, T* y,
                           A* mean_out, A* inv_out) {
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    i64 base = row * cols;
    A mean, inv;
    row_moments(x, base, cols, eps, mean, inv);
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_out) inv_out[row] = inv;
    }
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x) {
      A v = ((A)ld(x, base + c) - mean) * inv * (A)ld(scale, c);
      st(y, base + c, bias ? v + (A)ld(bias, c) : v);
    }
  }
}

// v rounded to T's precision, as a value stored in T reads back (float: v itself).
__device__ __forceinline__ float round_as(const float*, float v) { return v; }
__device__ __forceinline__ float round_as(const h16*, float v) { return round_h(v); }
__device__ __forceinline__ float round_as(const b16*, float v) { return round_b(v); }
__device__ __forceinline__ double round_as(const double*, double v) { return v; }

// RMSNormalization: one block per row of `cols`; y = x / sqrt(mean(x^2) + eps), rounded to T as
// the op's function body casts it back, times scale (broadcast over rows). The mean square in
// A: float, or double for stash_type 11 and double data.
template <class T, class A>
__device__ void rms_norm(i64 rows, i64 cols, const T* x, const T* scale, float eps, T* y) {
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 base = row * cols;
    A mean, inv;
    row_moments_of([&](i64 c) { return (A)ld(x, base + c); }, cols, eps, false, mean, inv);
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x)
      st(y, base + c, round_as(y, (A)ld(x, base + c) * inv) * ld(scale, c));
  }
}

// x + skip + bias at `c` of a row (bias may be null), in float.
template <class T>
__device__ __forceinline__ float skip_sum(const T* x, i64 base, const T* skip, i64 skip_base, const T* bias, i64 c) {
  return ld(x, base + c) + ld(skip, skip_base + c) + (bias ? ld(bias, c) : 0.f);
}

// ONNX Runtime's EmbedLayerNormalization (nxrt/ep/embed_layer_normalization.h): one block per token
// of `tokens` ([batch, seq]): e = the word row of its id + the position row (its position id,
// from a row of `seq` ids shared by the batch unless `ids_per_batch`, or s without them) + the
// segment row (its segment id, or 0 without segment_ids) when there is a segment table; an id
// outside its table adds zeros (the cpu EP reports it). y = (e - mean) / sqrt(variance + eps) ·
// gamma (+ beta), statistics in float; `sum_out` (when not null) gets e.
template <class T>
__device__ __forceinline__ float embed_row_value(const T* table, i64 rows, int id, i64 hidden, i64 c) {
  return table && id >= 0 && id < rows ? ld(table, id * hidden + c) : 0.f;
}
template <class T>
__device__ __forceinline__ float embedding_sum(const T* words, i64 word_rows, int word, const T* positions,
                                               i64 position_rows, int position, const T* segments, i64 segment_rows,
                                               int segment, i64 hidden, i64 c) {
  return embed_row_value(words, word_rows, word, hidden, c) +
         embed_row_value(positions, position_rows, position, hidden, c) +
         embed_row_value(segments, segment_rows, segment, hidden, c);
}
template <class T>
__device__ void embed_layer_norm(i64 tokens, i64 seq, i64 hidden, const int* ids, const int* segment_ids,
                                 const int* position_ids, int ids_per_batch, const T* words, i64 word_rows,
                                 const T* positions, i64 position_rows, const T* segments, i64 segment_rows,
                                 const T* gamma, const T* beta, float eps, T* y, T* sum_out) {
  for (i64 token = blockIdx.x; token < tokens; token += gridDim.x) {
    const i64 b = token / seq, s = token % seq;
    const int word = ids[token], segment = segment_ids ? segment_ids[token] : 0;
    const int position = position_ids ? position_ids[(ids_per_batch ? b * seq : 0) + s] : (int)s;
    auto e_at = [&](i64 c) {
      return embedding_sum(words, word_rows, word, positions, position_rows, position, segments, segment_rows,
                           segment, hidden, c);
    };
    float mean, inv;
    row_moments_of(e_at, hidden, eps, true, mean, inv);
    for (i64 c = threadIdx.x; c < hidden; c += blockDim.x) {
      const float e = e_at(c);
      const float v = (e - mean) * inv * ld(gamma, c);
      st(y, token * hidden + c, beta ? v + ld(beta, c) : v);
      if (sum_out) st(sum_out, token * hidden + c, e);
    }
  }
}

// EmbedLayerNormalization's mask_index: per batch entry (a thread each), how many of its `seq`
// mask values are exactly 1 (I: int).
template <class I>
__device__ void embed_mask_index(i64 batch, i64 seq, const I* mask, I* out) {
  for (i64 b = global_index(); b < batch; b += global_stride()) {
    I count = 0;
    for (i64 s = 0; s < seq; ++s) count += mask[b * seq + s] == 1;
    out[b] = count;
  }
}

// ONNX Runtime's SkipLayerNormalization and (`simplified`) SkipSimplifiedLayerNormalization: one
// block per row of `cols`. sum = x + skip (its row r % skip_rows: skip repeats over the leading
// dims) + bias, in float; y = (sum - mean) / sqrt(variance + eps) · gamma (+ beta), the mean 0
// when simplified (the mean square then). Null outputs are not written: mean and inv_std_var
// (float, one per row) and the sum (rounded to T).
template <class T>
__device__ void skip_layer_norm(i64 rows, i64 cols, i64 skip_rows, const T* x, const T* skip, const T* gamma,
                                const T* beta, const T* bias, float eps, int simplified, T* y, float* mean_out,
                                float* inv_out, T* sum_out) {
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 base = row * cols, skip_base = row % skip_rows * cols;
    float mean, inv;
    row_moments_of([&](i64 c) { return skip_sum(x, base, skip, skip_base, bias, c); }, cols, eps, !simplified, mean,
                   inv);
    if (threadIdx.x == 0) {
      if (mean_out) mean_out[row] = mean;
      if (inv_out) inv_out[row] = inv;
    }
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const float sum = skip_sum(x, base, skip, skip_base, bias, c);
      const float v = (sum - mean) * inv * ld(gamma, c);
      st(y, base + c, beta ? v + ld(beta, c) : v);
      if (sum_out) st(sum_out, base + c, sum);
    }
  }
}

// Channel c of the head at `x` rotated by a cache row (`cos_row` and `sin_row`, rotary / 2 values
// each; null: a position outside the caches, whose rotated channels are 0), in float: the first
// `rotary` channels in pairs (i, i + rotary / 2), or (2i, 2i + 1) when `interleaved`; the others
// as they are.
template <class T>
__device__ float rotated_channel(const T* x, i64 c, i64 rotary, int interleaved, const T* cos_row, const T* sin_row) {
  if (c >= rotary) return ld(x, c);
  const i64 half = rotary / 2, pair = interleaved ? c / 2 : c % half;
  const bool first = interleaved ? c % 2 == 0 : c < half;
  const i64 a = interleaved ? 2 * pair : pair, b = interleaved ? 2 * pair + 1 : pair + half;
  const float cs = cos_row ? ld(cos_row, pair) : 0.f, sn = sin_row ? ld(sin_row, pair) : 0.f;
  return first ? cs * ld(x, a) - sn * ld(x, b) : sn * ld(x, a) + cs * ld(x, b);
}

// RotaryEmbedding: one thread per element of X ([batch, seq, heads, head] through the strides).
// The first `rotary` channels of a head rotate in pairs (channel i with i + rotary/2, or 2i with
// 2i + 1 when `interleaved`) by the cos and sin of the token's cache row: its position id, or
// its own index (b * seq + s) without them; with `first_position_only` (com.microsoft's one
// position id) position_ids[0] + s. A position outside the caches gives zeros in the rotated
// channels (the cpu EP reports it); the others are copied.
template <class T>
__device__ void rotary_embedding(i64 n, i64 seq, i64 heads, i64 head, i64 rotary, int interleaved, i64 batch_stride,
                                 i64 seq_stride, i64 head_stride, const T* x, const T* cos_cache, const T* sin_cache,
                                 const i64* position_ids, int first_position_only, i64 cache_rows, T* y) {
  const i64 half = rotary / 2;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = i % head, rest = i / head, h = rest % heads, token = rest / heads;
    const i64 base = token / seq * batch_stride + token % seq * seq_stride + h * head_stride;
    const i64 row = !position_ids ? token : first_position_only ? position_ids[0] + token % seq : position_ids[token];
    const bool cached = row >= 0 && row < cache_rows;
    st(y, base + c,
       rotated_channel(x + base, c, rotary, interleaved, cached ? cos_cache + row * half : (const T*)0,
                       cached ? sin_cache + row * half : (const T*)0));
  }
}

// Attention: one block per (batch, query head, query) row, rows [row0, row0 + rows) (callers
// split the rows into chunks whose scores fit a scratch). Each thread scores its keys (scale *
// q.k; key t below `past` comes from past_key, the rest from K), then softcap, the mask (bool:
// hidden where false; float: added) and is_causal (key t hidden after past + s); each stage's
// scores are rounded to T as the op's function body holds them (not before softmax when
// `softmax_float`). Attention-24's `nonpad` (null when absent) hides each batch entry's keys
// from nonpad[b] on and aligns is_causal to its last valid key. The row's softmax goes to `scores` (the chunk's [rows, total] scratch), then
// each thread sums probability times value for its channels of Y. `qk` (when not null) gets the
// stage `qk_mode` names. A row whose keys are all hidden gives NaN, as the op's softmax does.
// Strides are [batch, head, seq] in elements; the channel stride is 1.
template <class T>
__device__ void attention(i64 row0, i64 rows, i64 q_heads, i64 q_seq, i64 kv_heads, i64 head, i64 v_head,
                          i64 total, i64 past, const T* q, Dims qs, const T* k, Dims ks, const T* v, Dims vs, const T* past_k,
                          const T* past_v, const T* fmask, const bool* bmask, Dims ms, const i64* nonpad,
                          float scale, float softcap, int causal, int softmax_float, float* scores, T* qk, int qk_mode,
                          T* y, Dims ys) {
  const i64 group = q_heads / kv_heads;
  for (i64 row = row0 + blockIdx.x; row < row0 + rows; row += gridDim.x) {
    const i64 s = row % q_seq, h = row / q_seq % q_heads, b = row / (q_seq * q_heads), g = h / group;
    const i64 valid = nonpad ? nonpad[b] : total, last = s + (nonpad ? valid - q_seq : past);
    const T* qr = q + b * qs.d[0] + h * qs.d[1] + s * qs.d[2];
    float* sc = scores + (row - row0) * total;
    T* snap = qk ? qk + row * total : (T*)0;
    float top = -inf_f();
    for (i64 t = threadIdx.x; t < total; t += blockDim.x) {
      const T* kr = t < past ? past_k + ((b * kv_heads + g) * past + t) * head
                             : k + b * ks.d[0] + g * ks.d[1] + (t - past) * ks.d[2];
      float dot = 0.f;
      for (i64 c = 0; c < head; ++c) dot += ld(qr, c) * ld(kr, c);
      float x = round_as(q, dot * scale);
      if (snap && qk_mode == 0) st(snap, t, x);
      if (softcap > 0.f) x = round_as(q, softcap * tanhf(x / softcap));
      if (snap && qk_mode == 1) st(snap, t, x);
      const i64 m = b * ms.d[0] + h * ms.d[1] + s * ms.d[2] + t * ms.d[3];
      if (bmask && !bmask[m]) x = -inf_f();
      if (fmask) x = round_as(q, x + ld(fmask, m));
      if (t >= valid || (causal && t > last)) x = -inf_f();
      if (snap && qk_mode == 2) st(snap, t, x);
      if (!softmax_float) x = round_as(q, x);
      sc[t] = x;
      top = fmaxf(top, x);
    }
    top = block_reduce(top, true);
    float sum = 0.f;
    for (i64 t = threadIdx.x; t < total; t += blockDim.x) {
      const float e = top > -inf_f() ? vexp(sc[t] - top) : __int_as_float(0x7fc00000);
      sc[t] = e;
      sum += e;
    }
    sum = block_reduce(sum, false);
    for (i64 t = threadIdx.x; t < total; t += blockDim.x) {
      const float p = round_as(q, sc[t] / sum);
      sc[t] = p;
      if (snap && qk_mode == 3) st(snap, t, p);
    }
    __syncthreads();
    for (i64 c = threadIdx.x; c < v_head; c += blockDim.x) {
      float acc = 0.f;
      for (i64 t = 0; t < total; ++t) {
        const T* vr = t < past ? past_v + ((b * kv_heads + g) * past + t) * v_head
                               : v + b * vs.d[0] + g * vs.d[1] + (t - past) * vs.d[2];
        acc += sc[t] * ld(vr, c);
      }
      st(y + b * ys.d[0] + h * ys.d[1] + s * ys.d[2], c, acc);
    }
    __syncthreads();
  }
}

// ---- Attention and MultiHeadAttention (com.microsoft; nxrt/ep/bert_attention.h) ----

// One block per (batch, head, query) row, rows [row0, row0 + rows): the scores of the `total`
// keys, scale * q.k + attention_bias (null: none; strides 0 where it broadcasts) + the mask term
// (mask_filter where the int32 mask hides a key: mask_form 1 key lengths [batch], 2 ends then
// starts [2 * batch], 3 raw [batch, total], 4 raw [batch, q_seq, total], > 0 keeps a key; 0 no
// mask), the keys after past + s the lowest float when causal and q_seq > 1; `qk` (when not
// null, [batch, heads, q_seq, total]) gets them; then the row's softmax and the weighted sum of
// the values. Strides are [batch, head, seq] in elements (the channel stride is 1); `scores`
// holds the chunk's [rows, total] floats.
template <class T>
__device__ void bert_attention(i64 row0, i64 rows, i64 batch, i64 heads, i64 q_seq, i64 total, i64 past, i64 head,
                               i64 v_head, const T* q, Dims qs, const T* k, Dims ks, const T* v, Dims vs,
                               int mask_form, const int* mask, const T* bias, i64 bias_batch, i64 bias_head,
                               float scale, float mask_filter, int causal, float* scores, T* qk, T* y, Dims ys) {
  for (i64 row = row0 + blockIdx.x; row < row0 + rows; row += gridDim.x) {
    const i64 s = row % q_seq, h = row / q_seq % heads, b = row / (q_seq * heads);
    const T* qr = q + b * qs.d[0] + h * qs.d[1] + s * qs.d[2];
    float* sc = scores + (row - row0) * total;
    float top = -inf_f();
    for (i64 t = threadIdx.x; t < total; t += blockDim.x) {
      const T* kr = k + b * ks.d[0] + h * ks.d[1] + t * ks.d[2];
      float dot = 0.f;
      for (i64 c = 0; c < head; ++c) dot += ld(qr, c) * ld(kr, c);
      float x = dot * scale;
      if (bias) x += ld(bias, b * bias_batch + h * bias_head + s * total + t);
      bool hidden = false;
      if (mask_form == 1) hidden = t >= (mask[b] > 0 ? mask[b] : 0);
      if (mask_form == 2) hidden = t >= mask[b] || t < mask[batch + b];
      if (mask_form == 3) hidden = mask[b * total + t] <= 0;
      if (mask_form == 4) hidden = mask[(b * q_seq + s) * total + t] <= 0;
      if (hidden) x += mask_filter;
      if (causal && q_seq > 1 && t > past + s) x = -3.40282347e38f;
      if (qk) st(qk + row * total, t, x);
      sc[t] = x;
      top = fmaxf(top, x);
    }
    top = block_reduce(top, true);
    float sum = 0.f;
    for (i64 t = threadIdx.x; t < total; t += blockDim.x) {
      const float e = expf(sc[t] - top);
      sc[t] = e;
      sum += e;
    }
    const float inv = 1.f / block_reduce(sum, false);
    for (i64 c = threadIdx.x; c < v_head; c += blockDim.x) {
      float acc = 0.f;
      for (i64 t = 0; t < total; ++t) acc += sc[t] * ld(v + b * vs.d[0] + h * vs.d[1] + t * vs.d[2], c);
      st(y + b * ys.d[0] + h * ys.d[1] + s * ys.d[2], c, acc * inv);
    }
    __syncthreads();
  }
}

// y = x + v over rows of `width` (v [width] repeated on every row), a thread per element.
template <class T>
__device__ void add_row_vector(i64 n, i64 width, const T* x, const T* v, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) st(y, i, ld(x, i) + ld(v, i % width));
}

// ---- MatMulNBits (com.microsoft; nxrt/ep/matmul_nbits.h) ----

// Weight W[n][k] in float: value k % block of column n's block k / block in `b` (`bits` per value,
// a byte's low bits first), less its zero point (typed `zeros`, or `packed_zeros` packed as b
// is, or 2^(bits - 1) without either), times its scale.
template <class T>
__device__ __forceinline__ float nbits_weight(const unsigned char* b, const T* scales,
                                              const unsigned char* packed_zeros, const T* zeros, i64 n, i64 k,
                                              i64 blocks, i64 block, int bits) {
  const i64 blk = k / block, j = k % block, fields = 8 / bits;
  const unsigned mask = (1u << bits) - 1u;
  const unsigned q = (b[(n * blocks + blk) * (block * bits / 8) + j / fields] >> (j % fields * bits)) & mask;
  float zero = (float)(1 << (bits - 1));
  if (zeros) {
    zero = ld(zeros, n * blocks + blk);
  } else if (packed_zeros) {
    const i64 zero_bytes = (blocks * bits + 7) / 8;
    zero = (float)((packed_zeros[n * zero_bytes + blk / fields] >> (blk % fields * bits)) & mask);
  }
  return ((float)q - zero) * ld(scales, n * blocks + blk);
}

// The weights W ([n_cols, k], in T) for a GEMM, a thread per element.
template <class T>
__device__ void nbits_dequantize(i64 n_cols, i64 k, i64 blocks, i64 block, int bits, const unsigned char* b,
                                 const T* scales, const unsigned char* packed_zeros, const T* zeros, T* w) {
  for (i64 i = global_index(); i < n_cols * k; i += global_stride())
    st(w, i, nbits_weight(b, scales, packed_zeros, zeros, i / k, i % k, blocks, block, bits));
}

// Y ([rows, n_cols]) = A ([rows, k]) · Wᵀ (+ bias) for a few rows (a decoding step): one block
// per column, the weights unpacked as they are read (a quarter or half of a float16 weight's
// bytes at 2 and 4 bits).
template <class T>
__device__ void nbits_gemv(i64 rows, i64 n_cols, i64 k, i64 blocks, i64 block, int bits, const T* a,
                           const unsigned char* b, const T* scales, const unsigned char* packed_zeros, const T* zeros,
                           const T* bias, T* y) {
  for (i64 n = blockIdx.x; n < n_cols; n += gridDim.x)
    for (i64 r = 0; r < rows; ++r) {
      float acc = 0.f;
      for (i64 c = threadIdx.x; c < k; c += blockDim.x)
        acc += ld(a, r * k + c) * nbits_weight(b, scales, packed_zeros, zeros, n, c, blocks, block, bits);
      acc = block_reduce(acc, false);
      if (threadIdx.x == 0) st(y, r * n_cols + n, bias ? acc + ld(bias, n) : acc);
    }
}

// ---- GatherBlockQuantized (com.microsoft; nxrt/ep/gather_block_quantized.h) ----

// Value k of a quantized row: `kind` 0 packs 8 / bits values per byte (low bits first), 1 holds
// one int4 per byte (sign-extended), 2 one uint4 per byte.
__device__ __forceinline__ int gbq_value(const unsigned char* row, i64 k, int kind, int bits) {
  if (kind == 1) return (int)(signed char)row[k];
  if (kind == 2 || bits == 8) return row[k];
  const i64 per_byte = 8 / bits;
  return (row[k / per_byte] >> (k % per_byte * bits)) & ((1 << bits) - 1);
}

// A thread per output element: output row r (of `width` values) is data's row index * slab + r %
// slab, the index indices[r / slab] (I: int or i64; negative ones count from the end; one outside
// the table gives zeros, where the cpu EP reports it), dequantized with its block's scale and
// zero point (`default_zero` without zero points).
template <class T, class I>
__device__ void gather_block_quantized(i64 n, i64 width, i64 slab, i64 table, i64 elements, i64 blocks,
                                       i64 zero_elements, i64 block, int bits, int kind, int default_zero,
                                       const unsigned char* data, const I* indices, const T* scales,
                                       const unsigned char* zeros, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 r = i / width, k = i % width;
    i64 index = (i64)indices[r / slab];
    if (index < 0) index += table;
    if (index < 0 || index >= table) {
      st(y, i, 0.f);
      continue;
    }
    const i64 row = index * slab + r % slab, blk = k / block;
    const int zero = zeros ? gbq_value(zeros + row * zero_elements, blk, kind, bits) : default_zero;
    st(y, i, (float)(gbq_value(data + row * elements, k, kind, bits) - zero) * ld(scales, row * blocks + blk));
  }
}

// ---- GroupQueryAttention (com.microsoft; nxrt/ep/group_query_attention.h) ----

// Entry b's cached rows: none in a first prompt, else its length (seqlens_k[b] + 1) less the
// `seq` new tokens.
__device__ __forceinline__ i64 gqa_cached(const int* seqlens, i64 b, i64 seq, int first_prompt) {
  return first_prompt ? 0 : (i64)seqlens[b] + 1 - seq;
}

// present ([batch, kv_heads, rows, head]), a thread per element: entry b's cached rows from
// `past` ([batch, kv_heads, past_rows, head]), its `seq` new ones from `fresh` (token t's heads
// at fresh + t * fresh_stride; rotated at their positions when `rotary` > 0: the keys), zeros
// after.
template <class T>
__device__ void gqa_present(i64 n, i64 kv_heads, i64 rows, i64 head, i64 seq, const T* past, i64 past_rows,
                            const T* fresh, i64 fresh_stride, const int* seqlens, int first_prompt, i64 rotary,
                            int interleaved, const T* cos_cache, const T* sin_cache, T* present) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = i % head, r = i / head % rows, bh = i / head / rows, b = bh / kv_heads, h = bh % kv_heads;
    const i64 cached = gqa_cached(seqlens, b, seq, first_prompt);
    if (r < cached) {
      st(present, i, ld(past, (bh * past_rows + r) * head + c));
    } else if (r < cached + seq) {
      const T* src = fresh + (b * seq + r - cached) * fresh_stride + h * head;
      const i64 at = r * (rotary / 2);  // the cache row of position r (rotary 0: no rotation)
      st(present, i, rotated_channel(src, c, rotary, interleaved, cos_cache + at, sin_cache + at));
    } else {
      st(present, i, 0.f);
    }
  }
}

// The new queries rotated at their positions into `out` ([batch, seq, heads, head]), a thread
// per element; token t's heads are at q + t * q_stride.
template <class T>
__device__ void gqa_rotate_query(i64 n, i64 heads, i64 head, i64 seq, const T* q, i64 q_stride, const int* seqlens,
                                 int first_prompt, i64 rotary, int interleaved, const T* cos_cache,
                                 const T* sin_cache, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = i % head, h = i / head % heads, token = i / head / heads;
    const i64 position = gqa_cached(seqlens, token / seq, seq, first_prompt) + token % seq;
    const i64 at = position * (rotary / 2);
    const T* row = q + token * q_stride + h * head;
    st(out, i, rotated_channel(row, c, rotary, interleaved, cos_cache + at, sin_cache + at));
  }
}

// One block per (batch, head, query) row, rows [row0, row0 + rows): query s of entry b sees
// the present keys up to its position (cached + s), the last `window` of them when window > 0;
// scores scale * q.k, softcap * tanh(score / softcap) when softcap > 0, softmax (`smooth`: one
// more logit of 0), then the weighted sum of the values. `scores` holds the chunk's
// [rows, present_rows] floats; y is [batch, seq, heads * head].
template <class T>
__device__ void gqa_attention(i64 row0, i64 rows, i64 heads, i64 seq, i64 kv_heads, i64 head, i64 present_rows,
                              const T* q, i64 q_stride, const T* keys, const T* values, const int* seqlens,
                              int first_prompt, i64 window, float scale, float softcap, int smooth, float* scores,
                              T* y) {
  const i64 group = heads / kv_heads;
  for (i64 row = row0 + blockIdx.x; row < row0 + rows; row += gridDim.x) {
    const i64 s = row % seq, h = row / seq % heads, b = row / (seq * heads);
    const i64 length = (i64)seqlens[b] + 1, cached = gqa_cached(seqlens, b, seq, first_prompt);
    const i64 end = cached + s + 1 < length ? cached + s + 1 : length;
    const i64 begin = window > 0 && end - window > 0 ? end - window : 0;
    const T* qr = q + (b * seq + s) * q_stride + h * head;
    const i64 kv_base = (b * kv_heads + h / group) * present_rows * head;
    float* sc = scores + (row - row0) * present_rows;
    float top = smooth ? 0.f : -inf_f();
    for (i64 t = begin + threadIdx.x; t < end; t += blockDim.x) {
      const T* kr = keys + kv_base + t * head;
      float dot = 0.f;
      for (i64 c = 0; c < head; ++c) dot += ld(qr, c) * ld(kr, c);
      float x = dot * scale;
      if (softcap > 0.f) x = softcap * tanhf(x / softcap);
      sc[t] = x;
      top = fmaxf(top, x);
    }
    top = block_reduce(top, true);
    float sum = 0.f;
    for (i64 t = begin + threadIdx.x; t < end; t += blockDim.x) {
      const float e = expf(sc[t] - top);
      sc[t] = e;
      sum += e;
    }
    sum = block_reduce(sum, false) + (smooth ? expf(-top) : 0.f);
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    for (i64 c = threadIdx.x; c < head; c += blockDim.x) {
      float acc = 0.f;
      for (i64 t = begin; t < end; ++t) acc += sc[t] * ld(values + kv_base + t * head, c);
      st(y + (b * seq + s) * heads * head + h * head, c, acc * inv);
    }
    __syncthreads();
  }
}

// TensorScatter: out (already past_cache) gets update's rows, one thread per element of update
// ([outer, update_len, inner]), at position write[b] + s along the axis (wrapped when
// `circular`; outside the cache in linear mode the row is skipped: the cpu EP reports it).
template <class T>
__device__ void tensor_scatter(i64 n, i64 per_batch, i64 cache_len, i64 update_len, i64 inner, int circular,
                               const i64* write, const T* update, T* out) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 k = i % inner, rest = i / inner, s = rest % update_len, o = rest / update_len;
    i64 p = (write ? write[o / per_batch] : 0) + s;
    if (circular) p = (p % cache_len + cache_len) % cache_len;
    else if (p < 0 || p >= cache_len) continue;
    out[(o * cache_len + p) * inner + k] = update[i];
  }
}

// InstanceNormalization: one block per (n, c) row of `cols` spatial elements, normalized and
// then scaled and shifted by the row's channel's scale and bias.
template <class T>
__device__ void instance_norm(i64 rows, i64 cols, i64 channels, const T* x, const T* scale, const T* bias, float eps, T* y) {
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    i64 base = row * cols;
    float mean, inv;
    row_moments(x, base, cols, eps, mean, inv);
    const float g = ld(scale, row % channels), b = ld(bias, row % channels);
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x) st(y, base + c, (ld(x, base + c) - mean) * inv * g + b);
  }
}

// GroupNormalization: one block per (n, group) row of `cols` elements, the group's channels'
// planes of `plane` elements each, normalized and then scaled and shifted by the group's scale
// and bias (opset 18) or by each channel's (`per_channel`, opset 21). Statistics in A: float,
// or double for opset 21's stash_type 11.
template <class T, class A>
__device__ void group_norm(i64 rows, i64 cols, i64 groups, i64 plane, int per_channel, const T* x, const T* scale,
                           const T* bias, float eps, T* y) {
  const i64 channels_per_group = cols / plane;
  for (i64 row = blockIdx.x; row < rows; row += gridDim.x) {
    const i64 base = row * cols, g = row % groups;
    A mean, inv;
    row_moments(x, base, cols, eps, mean, inv);
    for (i64 c = threadIdx.x; c < cols; c += blockDim.x) {
      const i64 k = per_channel ? g * channels_per_group + c / plane : g;
      st(y, base + c, ((A)ld(x, base + c) - mean) * inv * (A)ld(scale, k) + (A)ld(bias, k));
    }
  }
}

// LpNormalization, one block per line of `len` elements `inner` apart (outer·inner lines, the
// axis between): y = x / ||x||_p for p 1 or 2; a line of zeros stays zero.
template <class T>
__device__ void lp_norm(i64 lines, i64 len, i64 inner, int p, const T* x, T* y) {
  for (i64 line = blockIdx.x; line < lines; line += gridDim.x) {
    const i64 base = line / inner * len * inner + line % inner;
    float s = 0.f;
    for (i64 j = threadIdx.x; j < len; j += blockDim.x) {
      const float v = ld(x, base + j * inner);
      s += p == 1 ? fabsf(v) : v * v;
    }
    float norm = block_reduce(s, false);
    if (p == 2) norm = sqrtf(norm);
    for (i64 j = threadIdx.x; j < len; j += blockDim.x)
      st(y, base + j * inner, norm == 0.f ? 0.f : ld(x, base + j * inner) / norm);
  }
}

// BatchNormalization in training mode, one block per channel c: the batch's mean and biased
// variance over N and the spatial dims (`batch` runs of `inner` elements, channels·inner
// apart), y normalized with them and scaled and shifted by c's scale and bias, and the running
// statistics moved towards them: momentum·input + (1 - momentum)·batch's.
template <class T>
__device__ void batch_norm_training(i64 batch, i64 channels, i64 inner, const T* x, const T* scale, const T* bias,
                                    const T* mean_in, const T* var_in, float eps, float momentum, T* y,
                                    T* running_mean, T* running_var) {
  const i64 count = batch * inner;
  for (i64 c = blockIdx.x; c < channels; c += gridDim.x) {
    float s = 0.f;
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) {
      const i64 n = j / inner;
      s += ld(x, (n * channels + c) * inner + j - n * inner);
    }
    const float mean = block_reduce(s, false) / (float)count;
    float q = 0.f;
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) {
      const i64 n = j / inner;
      const float d = ld(x, (n * channels + c) * inner + j - n * inner) - mean;
      q += d * d;
    }
    const float var = block_reduce(q, false) / (float)count;
    const float g = ld(scale, c) * rsqrtf(var + eps), b = ld(bias, c);
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) {
      const i64 n = j / inner, at = (n * channels + c) * inner + j - n * inner;
      st(y, at, (ld(x, at) - mean) * g + b);
    }
    if (threadIdx.x == 0) {
      if (running_mean) st(running_mean, c, ld(mean_in, c) * momentum + mean * (1.f - momentum));
      if (running_var) st(running_var, c, ld(var_in, c) * momentum + var * (1.f - momentum));
    }
  }
}

// ai.onnx.preview.training's optimizers on one tensor of n elements, computed in double as the
// cpu EP does: rule 0 Adagrad (a0..a2: decay_factor, epsilon, norm_coefficient; s0: H), 1
// Momentum (alpha, beta, norm_coefficient; s0: V), 2 Adam (alpha, beta, epsilon,
// norm_coefficient, norm_coefficient_post; s0: V, s1: H). R and T are read here, on the device;
// a null output is not written.
template <class T>
__device__ void optimizer_step(i64 n, int rule, int nesterov, const T* r_in, const i64* t_in, double a0, double a1,
                               double a2, double a3, double a4, const T* x, const T* g, const T* s0, const T* s1,
                               T* x_new, T* s0_new, T* s1_new) {
  const double r = (double)r_in[0], t = (double)t_in[0];
  const double rate = rule == 0 ? r / (1. + t * a0) : rule == 2 && t > 0 ? r * sqrt(1. - pow(a1, t)) / (1. - pow(a0, t)) : r;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const double xi = (double)x[i];
    double out, v0, v1 = 0.;
    if (rule == 0) {
      const double gr = a2 * xi + (double)g[i];
      v0 = (double)s0[i] + gr * gr;
      out = xi - rate * gr / (sqrt(v0) + a1);
    } else if (rule == 1) {
      const double gr = a2 * xi + (double)g[i];
      v0 = a0 * (double)s0[i] + (t > 0 ? a1 : 1.) * gr;
      out = nesterov ? xi - r * (gr + a0 * v0) : xi - r * v0;
    } else {
      const double gr = a3 * xi + (double)g[i];
      v0 = a0 * (double)s0[i] + (1. - a0) * gr;
      v1 = a1 * (double)s1[i] + (1. - a1) * gr * gr;
      out = (1. - a4) * (xi - rate * v0 / (sqrt(v1) + a2));
    }
    if (x_new) x_new[i] = (T)out;
    if (s0_new) s0_new[i] = (T)v0;
    if (s1_new) s1_new[i] = (T)v1;
  }
}

// MeanVarianceNormalization, one block per group (a position over the kept dims: its offset in
// x from `kept_shape` and `kept_strides`) of `count` elements over the normalized dims (walked
// with `red_shape` and `red_strides`): y = (x - mean) / (std + 1e-9) with the biased std, as
// the op's function body defines it.
template <class T>
__device__ void mvn(i64 groups, int kept_rank, Dims kept_shape, Dims kept_strides, int red_rank, Dims red_shape,
                    Dims red_strides, i64 count, const T* x, T* y) {
  for (i64 g = blockIdx.x; g < groups; g += gridDim.x) {
    const i64 base = offset_of(g, kept_rank, kept_shape, kept_strides);
    float s = 0.f;
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) s += ld(x, base + offset_of(j, red_rank, red_shape, red_strides));
    const float mean = block_reduce(s, false) / (float)count;
    float q = 0.f;
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) {
      const float d = ld(x, base + offset_of(j, red_rank, red_shape, red_strides)) - mean;
      q += d * d;
    }
    const float scale = 1.f / (sqrtf(block_reduce(q, false) / (float)count) + 1e-9f);
    for (i64 j = threadIdx.x; j < count; j += blockDim.x) {
      const i64 at = base + offset_of(j, red_rank, red_shape, red_strides);
      st(y, at, (ld(x, at) - mean) * scale);
    }
  }
}

// LRN across channels: y = x / (bias + alpha / size · sum of x² over the channel window)^beta,
// the window from c - floor((size - 1) / 2) to c + ceil((size - 1) / 2).
template <class T>
__device__ void lrn(i64 n, i64 channels, i64 plane, int size, float alpha, float beta, float bias, const T* x, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 c = (i / plane) % channels, base = i - c * plane;
    const i64 first = c - (size - 1) / 2, last = c + size / 2;
    float sum = 0.f;
    for (i64 k = first < 0 ? 0 : first; k <= last && k < channels; ++k) { float v = ld(x, base + k * plane); sum += v * v; }
    st(y, i, ld(x, i) / powf(bias + alpha / (float)size * sum, beta));
  }
}

// One thread per output element; the reduced dims are walked with their own strides.
// op: 0 sum, 1 mean, 2 max, 3 min, 4 prod, 5 sum of squares, 6 L1, 7 L2, 8 log-sum-exp, 9 log-sum.
// float and float16 accumulate in float, double in double.
template <class T>
__device__ void reduce(i64 n, int rank, Dims out_shape, Dims kept_strides, int red_rank, Dims red_shape,
                       Dims red_strides, i64 red_count, int op, const T* x, T* y) {
  typedef decltype(ld(x, 0)) V;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 base = offset_of(i, rank, out_shape, kept_strides);
    V acc = op == 2 ? -inf_f() : op == 3 ? inf_f() : op == 4 ? 1 : 0;
    V m = -inf_f();
    if (op == 8)
      for (i64 r = 0; r < red_count; ++r) m = vmax(m, ld(x, base + offset_of(r, red_rank, red_shape, red_strides)));
    for (i64 r = 0; r < red_count; ++r) {
      V v = ld(x, base + offset_of(r, red_rank, red_shape, red_strides));
      switch (op) {
        case 2: acc = vmax(acc, v); break;
        case 3: acc = vmin(acc, v); break;
        case 4: acc *= v; break;
        case 5: case 7: acc += v * v; break;
        case 6: acc += vabs(v); break;
        case 8: acc += vexp(v - m); break;
        default: acc += v;
      }
    }
    if (op == 1) acc /= (V)red_count;
    if (op == 7) acc = vsqrt(acc);
    if (op == 8) acc = m + vlog(acc);
    if (op == 9) acc = vlog(acc);
    st(y, i, acc);
  }
}

// ReduceMax (is_max) and ReduceMin of integers and booleans, compared in their own type, one
// thread per output element; the host refuses an empty reduction, which has no identity here.
template <class T>
__device__ void reduce_extreme(i64 n, int rank, Dims out_shape, Dims kept_strides, int red_rank, Dims red_shape,
                               Dims red_strides, i64 red_count, int is_max, const T* x, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 base = offset_of(i, rank, out_shape, kept_strides);
    T acc = x[base];
    for (i64 r = 1; r < red_count; ++r) {
      const T v = x[base + offset_of(r, red_rank, red_shape, red_strides)];
      if (is_max ? v > acc : v < acc) acc = v;
    }
    y[i] = acc;
  }
}

// ArgMax (is_max) and ArgMin along an axis of `axis_dim` with stride `inner`: the first index
// of the extreme value, or the last with `last`.
template <class T>
__device__ void arg_reduce(i64 n, i64 axis_dim, i64 inner, const T* x, i64* y, int is_max, int last) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 base = (i / inner) * axis_dim * inner + i % inner;
    auto best = ld(x, base);
    i64 at = 0;
    for (i64 a = 1; a < axis_dim; ++a) {
      auto v = ld(x, base + a * inner);
      bool better = is_max ? (last ? v >= best : v > best) : (last ? v <= best : v < best);
      if (better) { best = v; at = a; }
    }
    y[i] = at;
  }
}

// Max, average and Lp pooling (`mode` 1, 0 and 2) over `sr` spatial dims of an N, C,
// spatial... tensor. MaxPool takes the first largest tap; its flat index into x goes to
// `indices` when that is not null, with the spatial dims in row-major order, or column-major
// when `column_major` is set. LpPool adds |x|^p over the taps inside the input (pads add
// nothing) and takes the p-th root.
template <class T>
__device__ void pool(i64 n, int sr, Dims in_sp, Dims out_sp, Dims kernel, Dims strides, Dims pads, Dims dilations,
                     int mode, float p, int count_include_pad, const T* x, T* y, int column_major, i64* indices) {
  const bool is_max = mode == 1, is_lp = mode == 2;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 in_plane = 1, out_plane = 1, win = 1;
    for (int d = 0; d < sr; ++d) { in_plane *= in_sp.d[d]; out_plane *= out_sp.d[d]; win *= kernel.d[d]; }
    i64 nc = i / out_plane, o = i % out_plane;
    i64 start[3];
    for (int d = sr - 1; d >= 0; --d) { start[d] = (o % out_sp.d[d]) * strides.d[d] - pads.d[d]; o /= out_sp.d[d]; }
    float acc = is_max ? -inf_f() : 0.f;
    i64 counted = 0, arg = -1;
    for (i64 w = 0; w < win; ++w) {
      i64 rem = w, off = 0, scale = 1, q[3];
      bool inside = true;
      for (int d = sr - 1; d >= 0; --d) {
        q[d] = start[d] + (rem % kernel.d[d]) * dilations.d[d];
        rem /= kernel.d[d];
        inside = inside && q[d] >= 0 && q[d] < in_sp.d[d];
        off += q[d] * scale;
        scale *= in_sp.d[d];
      }
      if (!inside) { if (count_include_pad && mode == 0) ++counted; continue; }
      float v = ld(x, nc * in_plane + off);
      if (is_lp) { acc += p == 2.f ? v * v : p == 1.f ? fabsf(v) : powf(fabsf(v), p); continue; }
      if (!is_max) { acc += v; ++counted; continue; }
      if (arg >= 0 && !(v > acc)) continue;
      acc = v;
      arg = off;
      if (column_major) {
        arg = 0;
        i64 s = 1;
        for (int d = 0; d < sr; ++d) { arg += q[d] * s; s *= in_sp.d[d]; }
      }
    }
    if (is_lp) st(y, i, p == 2.f ? sqrtf(acc) : p == 1.f ? acc : powf(acc, 1.f / p));
    else st(y, i, is_max ? acc : acc / (float)(counted > 0 ? counted : 1));
    if (indices) indices[i] = arg < 0 ? -1 : nc * in_plane + arg;
  }
}

// Col2Im, one thread per image element: the sum over the kernel offsets k whose block covers
// it. Along dim d, offset k_d comes from block position (p_d + pad_d - k_d·dilation_d) /
// stride_d where that divides evenly and lies within the `blocks` of the dim (the gather form of
// im2col's inverse: no atomics). x is [N, C·prod(block), prod(blocks)].
template <class T>
__device__ void col2im(i64 n, int sr, Dims image, Dims block, Dims blocks, Dims strides, Dims pads, Dims dilations,
                       const T* x, T* y) {
  typedef decltype(ld(x, 0)) V;
  i64 plane = 1, kernel = 1, columns = 1;
  for (int d = 0; d < sr; ++d) { plane *= image.d[d]; kernel *= block.d[d]; columns *= blocks.d[d]; }
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 nc = i / plane;
    i64 rest = i % plane, p[8];
    for (int d = sr - 1; d >= 0; --d) { p[d] = rest % image.d[d]; rest /= image.d[d]; }
    V acc = 0;
    for (i64 k = 0; k < kernel; ++k) {
      i64 kr = k, column = 0, scale = 1;
      bool covers = true;
      for (int d = sr - 1; d >= 0 && covers; --d) {
        const i64 q = p[d] + pads.d[d] - (kr % block.d[d]) * dilations.d[d];
        kr /= block.d[d];
        covers = q >= 0 && q % strides.d[d] == 0 && q / strides.d[d] < blocks.d[d];
        column += q / strides.d[d] * scale;
        scale *= blocks.d[d];
      }
      if (covers) acc += ld(x, (nc * kernel + k) * columns + column);
    }
    st(y, i, acc);
  }
}

// AffineGrid, one thread per point of the grid (batch b, spatial index p): theta[b]'s `dims`
// rows (dims + 1 columns each) times (x, y[, z], 1), x along the last spatial dim. A dim of
// `extent` points spans [-1, 1] from end point to end point (align_corners) or from the centre
// of the first of `extent` equal cells to that of the last.
template <class T>
__device__ void affine_grid(i64 n, int dims, Dims sizes, int align_corners, const T* theta, T* y) {
  i64 count = 1;
  for (int d = 0; d < dims; ++d) count *= sizes.d[d];
  for (i64 i = global_index(); i < n; i += global_stride()) {
    i64 rest = i % count;
    float coord[4];
    for (int d = 0; d < dims; ++d) {
      const i64 extent = sizes.d[dims - 1 - d], k = rest % extent;
      rest /= extent;
      coord[d] = align_corners ? (extent > 1 ? -1.f + 2.f * (float)k / (float)(extent - 1) : -1.f)
                               : (2.f * (float)k + 1.f) / (float)extent - 1.f;
    }
    coord[dims] = 1.f;
    const i64 matrix = i / count * dims * (dims + 1);
    for (int row = 0; row < dims; ++row) {
      float v = 0.f;
      for (int c = 0; c <= dims; ++c) v += ld(theta, matrix + row * (dims + 1) + c) * coord[c];
      st(y, i * dims + row, v);
    }
  }
}

// Det, one block per matrix of n x n: LU with partial pivoting in double (as the cpu EP) on
// the scratch copy `a`; thread 0 picks each pivot and keeps the product, the block swaps rows
// and eliminates the rows below. A zero pivot ends a matrix with determinant 0.
template <class T>
__device__ void det(i64 batch, i64 n, const T* x, double* a, T* y) {
  __shared__ double value;
  __shared__ i64 pivot;
  for (i64 m = blockIdx.x; m < batch; m += gridDim.x) {
    double* am = a + m * n * n;
    for (i64 i = threadIdx.x; i < n * n; i += blockDim.x) am[i] = (double)ld(x, m * n * n + i);
    if (threadIdx.x == 0) value = 1;
    __syncthreads();
    for (i64 c = 0; c < n; ++c) {
      if (threadIdx.x == 0) {
        i64 p = c;
        for (i64 r = c + 1; r < n; ++r)
          if (fabs(am[r * n + c]) > fabs(am[p * n + c])) p = r;
        pivot = p;
        value = am[p * n + c] == 0 ? 0 : (p != c ? -value : value) * am[p * n + c];
      }
      __syncthreads();
      if (value == 0) break;  // every thread reads the same value: the block leaves together
      const i64 p = pivot;
      if (p != c)
        for (i64 j = threadIdx.x; j < n; j += blockDim.x) {
          const double t = am[p * n + j];
          am[p * n + j] = am[c * n + j];
          am[c * n + j] = t;
        }
      __syncthreads();
      for (i64 r = c + 1 + threadIdx.x; r < n; r += blockDim.x) {
        const double f = am[r * n + c] / am[c * n + c];
        if (f != 0)
          for (i64 j = c + 1; j < n; ++j) am[r * n + j] -= f * am[c * n + j];
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) st(y, m, value);
    __syncthreads();
  }
}

// MaxRoiPool: output (r, c, ph, pw) is the maximum of its bin of roi r (batch index, x1, y1, x2,
// y2: scaled, rounded to pixels, at least one pixel each way), 0 for an empty bin or a batch
// index that is not an image of X.
template <class T>
__device__ void max_roi_pool(i64 n, i64 batch_size, i64 channels, i64 height, i64 width, i64 pooled_h, i64 pooled_w,
                             float scale, const T* x, const T* rois, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 pw = i % pooled_w, ph = i / pooled_w % pooled_h, c = i / (pooled_w * pooled_h) % channels;
    const i64 r = i / (pooled_w * pooled_h * channels);
    const float b = ld(rois, r * 5);
    if (!(b >= 0.f && b < (float)batch_size) || b != floorf(b)) {
      st(y, i, 0.0f);
      continue;
    }
    const i64 x1 = (i64)roundf(ld(rois, r * 5 + 1) * scale), y1 = (i64)roundf(ld(rois, r * 5 + 2) * scale);
    const i64 x2 = (i64)roundf(ld(rois, r * 5 + 3) * scale), y2 = (i64)roundf(ld(rois, r * 5 + 4) * scale);
    const double bin_h = (double)(y2 - y1 + 1 > 1 ? y2 - y1 + 1 : 1) / (double)pooled_h;
    const double bin_w = (double)(x2 - x1 + 1 > 1 ? x2 - x1 + 1 : 1) / (double)pooled_w;
    auto clamp = [](i64 v, i64 hi) { return v < 0 ? (i64)0 : v > hi ? hi : v; };
    const i64 h0 = clamp(y1 + (i64)floor((double)ph * bin_h), height), h1 = clamp(y1 + (i64)ceil((double)(ph + 1) * bin_h), height);
    const i64 w0 = clamp(x1 + (i64)floor((double)pw * bin_w), width), w1 = clamp(x1 + (i64)ceil((double)(pw + 1) * bin_w), width);
    const T* in = x + ((i64)b * channels + c) * height * width;
    float best = 0.f;
    if (h1 > h0 && w1 > w0) {
      best = ld(in, h0 * width + w0);
      for (i64 h = h0; h < h1; ++h)
        for (i64 w = w0; w < w1; ++w) best = fmaxf(best, ld(in, h * width + w));
    }
    st(y, i, best);
  }
}

// DeformConv's columns for image `img`: cols[(c * taps + tap) * pixels + p] is channel c
// sampled for kernel tap `tap` of output pixel p at the tap's place moved by its offset,
// bilinear between the four neighbours (one outside the image reads 0), times the tap's mask
// when there is one (mask null otherwise). The cpu EP's unrolling, one thread per column entry.
template <class T>
__device__ void deform_columns(i64 n, i64 img, i64 channels, i64 height, i64 width, i64 out_w, i64 kernel_w, i64 taps,
                               i64 stride_h, i64 stride_w, i64 pad_top, i64 pad_left, i64 dilation_h, i64 dilation_w,
                               i64 offset_groups, const T* x, const T* offset, const T* mask, T* cols) {
  const i64 pixels = n / (channels * taps), per_offset_group = channels / offset_groups;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 p = i % pixels, tap = i / pixels % taps, c = i / (pixels * taps);
    const i64 oh = p / out_w, ow = p % out_w, ki = tap / kernel_w, kj = tap % kernel_w;
    const i64 tap_at = (img * offset_groups + c / per_offset_group) * taps + tap;  // the tap's offset pair and mask
    const float h = (float)(oh * stride_h - pad_top + ki * dilation_h) + ld(offset, 2 * tap_at * pixels + p);
    const float w = (float)(ow * stride_w - pad_left + kj * dilation_w) + ld(offset, (2 * tap_at + 1) * pixels + p);
    const T* plane = x + (img * channels + c) * height * width;
    float v = 0.f;
    if (h > -1.f && h < (float)height && w > -1.f && w < (float)width) {
      const float h_floor = floorf(h), w_floor = floorf(w);
      const i64 h0 = (i64)h_floor, w0 = (i64)w_floor;
      const float dh = h - h_floor, dw = w - w_floor;
      auto at = [&](i64 r, i64 q) { return r >= 0 && r < height && q >= 0 && q < width ? ld(plane, r * width + q) : 0.f; };
      v = (1 - dh) * ((1 - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) + dh * ((1 - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
    }
    if (mask) v *= ld(mask, tap_at * pixels + p);
    st(cols, i, v);
  }
}

// y[i] = (y[i] when `accumulate`, else 0) + bias[channel of i] (0 when bias is null), over
// planes of `pixels` elements, `channels` planes an image.
template <class T>
__device__ void add_channel_bias(i64 n, i64 channels, i64 pixels, int accumulate, const T* bias, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride())
    st(y, i, (accumulate ? ld(y, i) : 0.f) + (bias ? ld(bias, i / pixels % channels) : 0.f));
}

// RoiAlign, one thread per output element (roi, channel, bin), in double as the cpu EP: the
// bilinear samples of a grid_h x grid_w grid in the bin (sampling_ratio, or ceil(roi size /
// bins) per side), averaged, or for max the largest weighted corner of any sample (ONNX
// Runtime's definition). A sample more than a pixel outside the map counts zero; others clamp
// to the border. A batch index out of range gives 0 (the cpu EP reports it).
template <class T>
__device__ void roi_align(i64 n, i64 channels, i64 height, i64 width, i64 out_h, i64 out_w, i64 ratio, double scale,
                          int half_pixel, int is_max, const T* x, const T* rois, const i64* batch, i64 batch_size, T* y) {
  const double offset = half_pixel ? 0.5 : 0.0;
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 pw = i % out_w, ph = i / out_w % out_h, c = i / (out_w * out_h) % channels, r = i / (out_w * out_h * channels);
    const i64 b = batch[r];
    if (b < 0 || b >= batch_size) {
      st(y, i, 0.0f);
      continue;
    }
    const double x0 = (double)ld(rois, r * 4) * scale - offset, y0 = (double)ld(rois, r * 4 + 1) * scale - offset;
    double roi_w = (double)ld(rois, r * 4 + 2) * scale - offset - x0, roi_h = (double)ld(rois, r * 4 + 3) * scale - offset - y0;
    if (!half_pixel) {  // output_half_pixel keeps the legacy minimum roi size of one pixel
      roi_w = fmax(roi_w, 1.0);
      roi_h = fmax(roi_h, 1.0);
    }
    const double bin_h = roi_h / (double)out_h, bin_w = roi_w / (double)out_w;
    const i64 grid_h = ratio > 0 ? ratio : (i64)ceil(roi_h / (double)out_h);
    const i64 grid_w = ratio > 0 ? ratio : (i64)ceil(roi_w / (double)out_w);
    const T* in = x + (b * channels + c) * height * width;
    double value = 0;
    for (i64 iy = 0; iy < grid_h; ++iy)
      for (i64 ix = 0; ix < grid_w; ++ix) {
        double sy = y0 + (double)ph * bin_h + ((double)iy + 0.5) * bin_h / (double)grid_h;
        double sx = x0 + (double)pw * bin_w + ((double)ix + 0.5) * bin_w / (double)grid_w;
        double v[4] = {0, 0, 0, 0};
        if (!(sy < -1.0 || sy > (double)height || sx < -1.0 || sx > (double)width)) {
          sy = fmax(sy, 0.0);
          sx = fmax(sx, 0.0);
          i64 y_low = (i64)sy, x_low = (i64)sx, y_high = y_low + 1, x_high = x_low + 1;
          if (y_low >= height - 1) y_high = y_low = height - 1, sy = (double)y_low;
          if (x_low >= width - 1) x_high = x_low = width - 1, sx = (double)x_low;
          const double ly = sy - (double)y_low, lx = sx - (double)x_low, hy = 1 - ly, hx = 1 - lx;
          v[0] = hy * hx * (double)ld(in, y_low * width + x_low);
          v[1] = hy * lx * (double)ld(in, y_low * width + x_high);
          v[2] = ly * hx * (double)ld(in, y_high * width + x_low);
          v[3] = ly * lx * (double)ld(in, y_high * width + x_high);
        }
        if (is_max) {
          const double m = fmax(fmax(v[0], v[1]), fmax(v[2], v[3]));
          value = iy == 0 && ix == 0 ? m : fmax(value, m);
        } else {
          value += v[0] + v[1] + v[2] + v[3];
        }
      }
    const double count = (double)(grid_h * grid_w > 1 ? grid_h * grid_w : 1);
    st(y, i, (float)(is_max ? value : value / count));
  }
}

// ReverseSequence: batch entry b's first lens[b] time steps reversed, the rest copied. The
// time and batch axes are 0 and 1 in some order (their strides in elements); a length out of
// [0, steps] copies the entry unchanged (the cpu EP reports it).
template <class T>
__device__ void reverse_sequence(i64 n, i64 steps, i64 time_stride, i64 batch, i64 batch_stride, const i64* lens, const T* x,
                                 T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const i64 t = i / time_stride % steps, len = lens[i / batch_stride % batch];
    y[i] = x[len >= 0 && len <= steps && t < len ? i + (len - 1 - 2 * t) * time_stride : i];
  }
}

// MaxUnpool, after y = 0: x[k] goes to flat position idx[k] of the unpooled shape `from`, at the
// same coordinates of `to` (an output_shape may be larger); an index outside `from` writes
// nothing (the cpu EP reports it).
template <class T>
__device__ void max_unpool(i64 n, int rank, Dims from, Dims to, i64 size, const i64* idx, const T* x, T* y) {
  for (i64 k = global_index(); k < n; k += global_stride()) {
    i64 at = idx[k];
    if (at < 0 || at >= size) continue;
    i64 out = 0, scale = 1;
    for (int d = rank - 1; d >= 0; --d) {
      out += at % from.d[d] * scale;
      at /= from.d[d];
      scale *= to.d[d];
    }
    y[out] = x[k];
  }
}

// ---- Random numbers --------------------------------------------------------------------------
// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): four
// 32-bit words from a 64-bit key and a 128-bit counter. The random ops count with (the run's
// number, the element's index), so every element of every run draws its own numbers and a
// launch's threads share no state.
struct u32x4 { unsigned w[4]; };
__device__ u32x4 philox(unsigned long long key, unsigned long long run, unsigned long long index) {
  unsigned k0 = (unsigned)key, k1 = (unsigned)(key >> 32);
  unsigned c0 = (unsigned)index, c1 = (unsigned)(index >> 32), c2 = (unsigned)run, c3 = (unsigned)(run >> 32);
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    const unsigned long long p0 = 0xD2511F53ull * c0, p1 = 0xCD9E8D57ull * c2;
    const unsigned hi0 = (unsigned)(p0 >> 32), lo0 = (unsigned)p0, hi1 = (unsigned)(p1 >> 32), lo1 = (unsigned)p1;
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
  }
  u32x4 r = {{c0, c1, c2, c3}};
  return r;
}
// A uniform double in [0, 1) from two words (53 bits), and one in (0, 1] for logarithms.
__device__ __forceinline__ double uniform_01(unsigned a, unsigned b) {
  return (double)((((unsigned long long)a << 32) | b) >> 11) * (1.0 / 9007199254740992.0);
}
__device__ __forceinline__ double uniform_0_1_open_low(unsigned a, unsigned b) { return 1.0 - uniform_01(a, b); }

// RandomUniform in [a, b) (normal == 0) or RandomNormal of mean a and scale b (Box-Muller), of
// element type T; one Philox call per element.
template <class T>
__device__ void random_fill(i64 n, unsigned long long key, unsigned long long run, int normal, double a, double b, T* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const u32x4 r = philox(key, run, (unsigned long long)i);
    double v;
    if (normal) {
      const double radius = sqrt(-2.0 * log(uniform_0_1_open_low(r.w[0], r.w[1])));
      v = a + b * radius * cos(6.283185307179586 * uniform_01(r.w[2], r.w[3]));
    } else {
      v = a + (b - a) * uniform_01(r.w[0], r.w[1]);
    }
    st(y, i, v);
  }
}

// Bernoulli: y = 1 with probability p (element-wise), else 0, of output type O.
template <class P, class O>
__device__ void bernoulli(i64 n, unsigned long long key, unsigned long long run, const P* p, O* y) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const u32x4 r = philox(key, run, (unsigned long long)i);
    st(y, i, uniform_01(r.w[0], r.w[1]) < (double)ld(p, i) ? 1 : 0);
  }
}

// Multinomial, one thread per (row, sample): rows of `classes` unnormalized log-probabilities;
// the sample is the first class whose cumulative exp(x - max) exceeds a uniform share of the
// row's total (the last class if rounding leaves none).
template <class X, class O>
__device__ void multinomial(i64 rows, i64 classes, i64 samples, unsigned long long key, unsigned long long run,
                            const X* x, O* y) {
  for (i64 i = global_index(); i < rows * samples; i += global_stride()) {
    const i64 base = i / samples * classes;
    double top = -(double)inf_f();
    for (i64 c = 0; c < classes; ++c) top = fmax(top, (double)ld(x, base + c));
    double total = 0;
    for (i64 c = 0; c < classes; ++c) total += exp((double)ld(x, base + c) - top);
    const u32x4 r = philox(key, run, (unsigned long long)i);
    const double target = uniform_01(r.w[0], r.w[1]) * total;
    i64 pick = classes - 1;
    double sum = 0;
    for (i64 c = 0; c < classes; ++c) {
      sum += exp((double)ld(x, base + c) - top);
      if (target < sum) {
        pick = c;
        break;
      }
    }
    y[i] = (O)pick;
  }
}

// Dropout in training: each element is kept with probability 1 - ratio and scaled by `scale`,
// else 0; `mask` (bool, or before opset 10 the data's type M; null when unused) says which.
template <class T, class M>
__device__ void dropout(i64 n, unsigned long long key, unsigned long long run, double ratio, float scale, const T* x, T* y,
                        M* mask) {
  for (i64 i = global_index(); i < n; i += global_stride()) {
    const u32x4 r = philox(key, run, (unsigned long long)i);
    const bool keep = uniform_01(r.w[0], r.w[1]) >= ratio;
    st(y, i, keep ? ld(x, i) * scale : 0.f);
    if (mask) st(mask, i, keep ? 1 : 0);
  }
}
)CUDA";
}

}  // namespace nxrt::cuda
