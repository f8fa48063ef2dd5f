// The host cuBLASLt and cuDNN: descriptors are plain structs behind the libraries' handle
// types, and each operation validates its descriptors the way the documentation states
// before computing in float.
#ifdef NXRT_HAVE_CUDA
#include "cuda_host_libraries.h"

#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

namespace nxrt::test {
namespace {

// The element types the host libraries compute on (in float).
enum class Element { kFloat, kHalf, kBFloat16 };

// Element i of a buffer of `e`, as float; and back (bfloat16 rounded to nearest even).
float load(const void* data, Element e, int64_t i) {
  switch (e) {
    case Element::kHalf: return static_cast<float>(static_cast<const _Float16*>(data)[i]);
    case Element::kBFloat16: return std::bit_cast<float>(static_cast<uint32_t>(static_cast<const uint16_t*>(data)[i]) << 16);
    case Element::kFloat: break;
  }
  return static_cast<const float*>(data)[i];
}
void store(void* data, Element e, int64_t i, float v) {
  switch (e) {
    case Element::kHalf: static_cast<_Float16*>(data)[i] = static_cast<_Float16>(v); return;
    case Element::kBFloat16: {
      const auto bits = std::bit_cast<uint32_t>(v);
      static_cast<uint16_t*>(data)[i] = std::isnan(v) ? static_cast<uint16_t>((bits >> 16) | 0x40u)
                                                      : static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
      return;
    }
    case Element::kFloat: static_cast<float*>(data)[i] = v; return;
  }
}

// Reads an attribute value of exactly type T, as the libraries check sizeInBytes.
template <class T>
bool read_attribute(const void* buf, std::size_t size, T& out) {
  if (!buf || size != sizeof(T)) return false;
  std::memcpy(&out, buf, sizeof(T));
  return true;
}

// ---- cuBLASLt -----------------------------------------------------------------------------

std::atomic<std::size_t> heuristic_queries{0}, matmuls{0}, live_descriptors{0};
std::atomic<uint32_t> heuristic_min_alignment{0};  // set_host_blas_min_alignment

// A descriptor of type T made with new, counted while it lives.
template <class T, class Handle, class... Args>
Handle make_descriptor(Args&&... args) {
  ++live_descriptors;
  return reinterpret_cast<Handle>(new T{std::forward<Args>(args)...});
}
template <class T>
void delete_descriptor(T* p) {
  --live_descriptors;
  delete p;
}

struct Layout {
  cudaDataType type;
  int64_t rows, cols, ld;
  int32_t batch = 1;
  int64_t stride = 0;
};
struct MatmulDesc {
  int32_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
};
// Like cuBLASLt's, an algorithm the heuristic returns may assume every operand is aligned to
// the preference's minimum (256 bytes unless the caller says less); cublasLtMatmul refuses
// operands the algorithm cannot read, as a GPU kernel would fault on them.
struct Preference {
  uint64_t max_workspace = 0;
  std::array<uint32_t, 4> min_alignment{256, 256, 256, 256};  // A, B, C, D
};

Layout* of(cublasLtMatrixLayout_t l) { return reinterpret_cast<Layout*>(l); }
MatmulDesc* of(cublasLtMatmulDesc_t d) { return reinterpret_cast<MatmulDesc*>(d); }
Preference* of(cublasLtMatmulPreference_t p) { return reinterpret_cast<Preference*>(p); }

// What the one algorithm the host library offers needs, and its mark in cublasLtMatmulAlgo_t.
constexpr std::size_t kMatmulWorkspace = 1024;
constexpr uint64_t kAlgoMark = 0x6e78727468627573;

cublasStatus_t lt_create(cublasLtHandle_t* h) {
  *h = host_blas_handle();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t lt_destroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }
const char* lt_status_string(cublasStatus_t s) {
  switch (s) {
    case CUBLAS_STATUS_INVALID_VALUE: return "an unsupported value or parameter was passed (host cuBLASLt)";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "the functionality requested is not supported (host cuBLASLt)";
    default: return "host cuBLASLt status";
  }
}

cublasStatus_t desc_create(cublasLtMatmulDesc_t* d, cublasComputeType_t compute, cudaDataType_t scale) {
  // The cuda EP accumulates in float, with float alpha and beta, for float, float16 and bfloat16 data.
  if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F) return CUBLAS_STATUS_NOT_SUPPORTED;
  *d = make_descriptor<MatmulDesc, cublasLtMatmulDesc_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_destroy(cublasLtMatmulDesc_t d) {
  delete_descriptor(of(d));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const void* buf, std::size_t size) {
  int32_t op = 0;
  if (attr != CUBLASLT_MATMUL_DESC_TRANSA && attr != CUBLASLT_MATMUL_DESC_TRANSB) return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!read_attribute(buf, size, op) || (op != CUBLAS_OP_N && op != CUBLAS_OP_T)) return CUBLAS_STATUS_INVALID_VALUE;
  (attr == CUBLASLT_MATMUL_DESC_TRANSA ? of(d)->trans_a : of(d)->trans_b) = op;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t layout_create(cublasLtMatrixLayout_t* l, cudaDataType type, uint64_t rows, uint64_t cols, int64_t ld) {
  if (type != CUDA_R_32F && type != CUDA_R_16F && type != CUDA_R_16BF) return CUBLAS_STATUS_NOT_SUPPORTED;
  // Column-major (the default order): a column of `rows` elements fits in the leading dim.
  if (ld < static_cast<int64_t>(rows) || ld < 1) return CUBLAS_STATUS_INVALID_VALUE;
  *l = make_descriptor<Layout, cublasLtMatrixLayout_t>(type, static_cast<int64_t>(rows), static_cast<int64_t>(cols), ld);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_destroy(cublasLtMatrixLayout_t l) {
  delete_descriptor(of(l));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t layout_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const void* buf, std::size_t size) {
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return read_attribute(buf, size, of(l)->batch) && of(l)->batch >= 1 ? CUBLAS_STATUS_SUCCESS
                                                                           : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return read_attribute(buf, size, of(l)->stride) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

cublasStatus_t pref_create(cublasLtMatmulPreference_t* p) {
  *p = make_descriptor<Preference, cublasLtMatmulPreference_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_destroy(cublasLtMatmulPreference_t p) {
  delete_descriptor(of(p));
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t pref_set(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                        std::size_t size) {
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      return read_attribute(buf, size, of(p)->max_workspace) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES: {
      const auto slot = static_cast<std::size_t>(attr - CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES);
      uint32_t bytes = 0;
      if (!read_attribute(buf, size, bytes) || bytes == 0) return CUBLAS_STATUS_INVALID_VALUE;
      of(p)->min_alignment[slot] = bytes;
      return CUBLAS_STATUS_SUCCESS;
    }
    default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
}

// D (m x n) = op(A) (m x k) · op(B) (k x n): the layouts must agree on m, n, k, the batch
// count and the type; C must be laid out as D.
struct Product {
  int64_t m, n, k;
};
bool describe_product(const MatmulDesc& d, const Layout& a, const Layout& b, const Layout& c, const Layout& out, Product& p) {
  const bool ta = d.trans_a == CUBLAS_OP_T, tb = d.trans_b == CUBLAS_OP_T;
  p.m = out.rows, p.n = out.cols;
  p.k = ta ? a.rows : a.cols;
  const int64_t a_m = ta ? a.cols : a.rows;
  const int64_t b_k = tb ? b.cols : b.rows, b_n = tb ? b.rows : b.cols;
  return a_m == p.m && b_k == p.k && b_n == p.n && c.rows == out.rows && c.cols == out.cols && a.type == out.type &&
         b.type == out.type && c.type == out.type && a.batch == out.batch && b.batch == out.batch &&
         c.batch == out.batch && p.k > 0;
}

cublasStatus_t heuristic(cublasLtHandle_t h, cublasLtMatmulDesc_t d, cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                         cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t out, cublasLtMatmulPreference_t pref,
                         int requested, cublasLtMatmulHeuristicResult_t results[], int* returned) {
  ++heuristic_queries;
  Product p{};
  if (h != host_blas_handle() || requested < 1 || !describe_product(*of(d), *of(a), *of(b), *of(c), *of(out), p))
    return CUBLAS_STATUS_INVALID_VALUE;
  *returned = 0;
  if (of(pref)->max_workspace < kMatmulWorkspace) return CUBLAS_STATUS_SUCCESS;  // no algorithm fits
  for (uint32_t alignment : of(pref)->min_alignment)
    if (alignment < heuristic_min_alignment) return CUBLAS_STATUS_SUCCESS;  // none for such operands
  results[0] = {};
  results[0].algo.data[0] = kAlgoMark;
  for (std::size_t i = 0; i < 4; ++i) results[0].algo.data[1 + i] = of(pref)->min_alignment[i];
  results[0].workspaceSize = kMatmulWorkspace;
  results[0].state = CUBLAS_STATUS_SUCCESS;
  *returned = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t matmul(cublasLtHandle_t h, cublasLtMatmulDesc_t desc, const void* alpha_p, const void* a_data,
                      cublasLtMatrixLayout_t a_desc, const void* b_data, cublasLtMatrixLayout_t b_desc, const void* beta_p,
                      const void* c_data, cublasLtMatrixLayout_t c_desc, void* d_data, cublasLtMatrixLayout_t d_desc,
                      const cublasLtMatmulAlgo_t* algo, void* workspace, std::size_t workspace_bytes, cudaStream_t) {
  ++matmuls;
  const MatmulDesc& d = *of(desc);
  const Layout &a = *of(a_desc), &b = *of(b_desc), &c = *of(c_desc), &out = *of(d_desc);
  Product p{};
  if (h != host_blas_handle() || !describe_product(d, a, b, c, out, p)) return CUBLAS_STATUS_INVALID_VALUE;
  if (!algo || algo->data[0] != kAlgoMark || !workspace || workspace_bytes < kMatmulWorkspace)
    return CUBLAS_STATUS_INVALID_VALUE;
  const std::array<const void*, 4> operands{a_data, b_data, c_data, d_data};
  for (std::size_t i = 0; i < 4; ++i)
    if (reinterpret_cast<uintptr_t>(operands[i]) % algo->data[1 + i] != 0) return CUBLAS_STATUS_NOT_SUPPORTED;
  const float alpha = *static_cast<const float*>(alpha_p), beta = *static_cast<const float*>(beta_p);
  const Element element = out.type == CUDA_R_16F ? Element::kHalf : out.type == CUDA_R_16BF ? Element::kBFloat16 : Element::kFloat;
  const bool ta = d.trans_a == CUBLAS_OP_T, tb = d.trans_b == CUBLAS_OP_T;
  for (int64_t batch = 0; batch < out.batch; ++batch)
    for (int64_t j = 0; j < p.n; ++j)
      for (int64_t i = 0; i < p.m; ++i) {
        float sum = 0;
        for (int64_t l = 0; l < p.k; ++l) {
          const int64_t ai = batch * a.stride + (ta ? l + i * a.ld : i + l * a.ld);
          const int64_t bi = batch * b.stride + (tb ? j + l * b.ld : l + j * b.ld);
          sum += load(a_data, element, ai) * load(b_data, element, bi);
        }
        const int64_t di = batch * out.stride + i + j * out.ld;
        const float prior = beta == 0 ? 0.f : beta * load(c_data, element, batch * c.stride + i + j * c.ld);
        store(d_data, element, di, alpha * sum + prior);
      }
  return CUBLAS_STATUS_SUCCESS;
}

// ---- cuDNN --------------------------------------------------------------------------------

constexpr int kMaxDims = 8;

struct TensorDesc {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int rank = 0;
  std::array<int, kMaxDims> dims{}, strides{};
};
struct FilterDesc {
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int rank = 0;
  std::array<int, kMaxDims> dims{};
};
struct ConvDesc {
  int spatial = 0;
  std::array<int, kMaxDims> pads{}, strides{}, dilations{};
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  int groups = 1;
  cudnnMathType_t math = CUDNN_DEFAULT_MATH;
};

TensorDesc* of(cudnnTensorDescriptor_t t) { return reinterpret_cast<TensorDesc*>(t); }
FilterDesc* of(cudnnFilterDescriptor_t f) { return reinterpret_cast<FilterDesc*>(f); }
ConvDesc* of(cudnnConvolutionDescriptor_t c) { return reinterpret_cast<ConvDesc*>(c); }

// The algorithm the host library runs, the workspace it asks for, and one it ranks first but
// cannot run (the EP must skip it).
constexpr cudnnConvolutionFwdAlgo_t kRunnableAlgo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
constexpr cudnnConvolutionFwdAlgo_t kUnrunnableAlgo = CUDNN_CONVOLUTION_FWD_ALGO_FFT;
constexpr std::size_t kConvWorkspace = 512;

// The workspace an algorithm needs depends on the math type the descriptor holds when it is
// asked and when the convolution runs: here default math needs twice the tensor-op one.
std::size_t conv_workspace(cudnnMathType_t math) { return math == CUDNN_DEFAULT_MATH ? 2 * kConvWorkspace : kConvWorkspace; }

bool is_data_type(cudnnDataType_t t) { return t == CUDNN_DATA_FLOAT || t == CUDNN_DATA_HALF; }

cudnnStatus_t dnn_create(cudnnHandle_t* h) {
  *h = host_dnn_handle();
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t dnn_destroy(cudnnHandle_t) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t set_stream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }
const char* dnn_error_string(cudnnStatus_t s) {
  switch (s) {
    case CUDNN_STATUS_BAD_PARAM: return "CUDNN_STATUS_BAD_PARAM (host cuDNN)";
    case CUDNN_STATUS_NOT_SUPPORTED: return "CUDNN_STATUS_NOT_SUPPORTED (host cuDNN)";
    default: return "host cuDNN status";
  }
}

template <class Desc, class Handle>
cudnnStatus_t create(Handle* h) {
  *h = reinterpret_cast<Handle>(new Desc);
  return CUDNN_STATUS_SUCCESS;
}
template <class Handle>
cudnnStatus_t destroy(Handle h) {
  delete of(h);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t set_tensor(cudnnTensorDescriptor_t t, cudnnDataType_t type, int rank, const int dims[], const int strides[]) {
  if (!is_data_type(type)) return CUDNN_STATUS_NOT_SUPPORTED;
  if (rank < 3 || rank > kMaxDims) return CUDNN_STATUS_BAD_PARAM;
  TensorDesc& d = *of(t);
  d.type = type, d.rank = rank;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] <= 0 || strides[i] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d.dims[i] = dims[i], d.strides[i] = strides[i];
  }
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t set_filter(cudnnFilterDescriptor_t f, cudnnDataType_t type, cudnnTensorFormat_t format, int rank, const int dims[]) {
  if (!is_data_type(type) || format != CUDNN_TENSOR_NCHW) return CUDNN_STATUS_NOT_SUPPORTED;
  if (rank < 3 || rank > kMaxDims) return CUDNN_STATUS_BAD_PARAM;
  FilterDesc& d = *of(f);
  d.type = type, d.rank = rank;
  for (int i = 0; i < rank; ++i) {
    if (dims[i] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d.dims[i] = dims[i];
  }
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t set_conv(cudnnConvolutionDescriptor_t c, int spatial, const int pads[], const int strides[], const int dilations[],
                       cudnnConvolutionMode_t mode, cudnnDataType_t compute) {
  if (spatial < 1 || spatial > kMaxDims - 2 || compute != CUDNN_DATA_FLOAT) return CUDNN_STATUS_BAD_PARAM;
  ConvDesc& d = *of(c);
  d.spatial = spatial, d.mode = mode;
  for (int i = 0; i < spatial; ++i) {
    if (pads[i] < 0 || strides[i] <= 0 || dilations[i] <= 0) return CUDNN_STATUS_BAD_PARAM;
    d.pads[i] = pads[i], d.strides[i] = strides[i], d.dilations[i] = dilations[i];
  }
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t set_groups(cudnnConvolutionDescriptor_t c, int groups) {
  if (groups < 1) return CUDNN_STATUS_BAD_PARAM;
  of(c)->groups = groups;
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t set_math(cudnnConvolutionDescriptor_t c, cudnnMathType_t math) {
  if (math != CUDNN_DEFAULT_MATH && math != CUDNN_TENSOR_OP_MATH && math != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
      math != CUDNN_FMA_MATH)
    return CUDNN_STATUS_BAD_PARAM;
  of(c)->math = math;
  return CUDNN_STATUS_SUCCESS;
}

// x [N, C, spatial...], w [K, C/groups, window...], y [N, K, out...] with
// out = (in + 2·pad - dilation·(window-1) - 1) / stride + 1; one data type throughout.
bool consistent(const TensorDesc& x, const FilterDesc& w, const ConvDesc& c, const TensorDesc& y) {
  const int rank = c.spatial + 2;
  if (x.rank != rank || w.rank != rank || y.rank != rank || x.type != w.type || x.type != y.type) return false;
  if (x.dims[1] != w.dims[1] * c.groups || w.dims[0] % c.groups != 0 || y.dims[0] != x.dims[0] || y.dims[1] != w.dims[0])
    return false;
  for (int s = 0; s < c.spatial; ++s) {
    const int reach = c.dilations[s] * (w.dims[2 + s] - 1) + 1;
    const int span = x.dims[2 + s] + 2 * c.pads[s] - reach;
    if (span < 0 || y.dims[2 + s] != span / c.strides[s] + 1) return false;
  }
  return true;
}

// The ranking the host library reports: first an algorithm it cannot run (the EP must skip it),
// then the one it runs, with its math type and workspace. For a descriptor asking for tensor-op
// math, that algorithm runs with default math (cuDNN may rank one without tensor cores first),
// so the EP must run it, and size its workspace, under the ranked math type.
template <class Perf, class Algo>
void rank_algorithms(Perf* results, int* returned, Algo unrunnable, Algo runnable, cudnnMathType_t descriptor_math) {
  results[0] = {};
  results[0].algo = unrunnable;
  results[0].status = CUDNN_STATUS_NOT_SUPPORTED;
  results[1] = {};
  results[1].algo = runnable;
  results[1].status = CUDNN_STATUS_SUCCESS;
  results[1].mathType = descriptor_math == CUDNN_TENSOR_OP_MATH ? CUDNN_DEFAULT_MATH : descriptor_math;
  results[1].memory = conv_workspace(results[1].mathType);
  *returned = 2;
}

cudnnStatus_t get_algorithms(cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, int requested, int* returned,
                             cudnnConvolutionFwdAlgoPerf_t* results) {
  if (h != host_dnn_handle() || requested < 2 || !consistent(*of(x), *of(w), *of(c), *of(y))) return CUDNN_STATUS_BAD_PARAM;
  rank_algorithms(results, returned, kUnrunnableAlgo, kRunnableAlgo, of(c)->math);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t workspace_size(cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                             cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, cudnnConvolutionFwdAlgo_t algo,
                             std::size_t* bytes) {
  if (h != host_dnn_handle() || !consistent(*of(x), *of(w), *of(c), *of(y))) return CUDNN_STATUS_BAD_PARAM;
  if (algo != kRunnableAlgo) return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = conv_workspace(of(c)->math);
  return CUDNN_STATUS_SUCCESS;
}

// The flat index of `index` (rank entries) under `strides`.
int64_t offset(const std::array<int, kMaxDims>& index, const std::array<int, kMaxDims>& strides, int rank) {
  int64_t o = 0;
  for (int i = 0; i < rank; ++i) o += static_cast<int64_t>(index[i]) * strides[i];
  return o;
}
// Advances `index` over `dims` (the last fastest); false after the last index.
bool next(std::array<int, kMaxDims>& index, const std::array<int, kMaxDims>& dims, int rank) {
  for (int i = rank - 1; i >= 0; --i) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

// Walks the forward convolution x -> y: for every element `out` of y, tap(out, xi, wi) for
// each window tap that lands inside x (xi indexes x, wi the weights), then done(out).
template <class Tap, class Done>
void walk_convolution(const TensorDesc& xd, const FilterDesc& wd, const ConvDesc& c, const TensorDesc& yd, Tap tap, Done done) {
  const int rank = c.spatial + 2;
  const int group_in = wd.dims[1], group_out = wd.dims[0] / c.groups;
  // The window's extent: one input channel of a group, then the window's spatial dims.
  std::array<int, kMaxDims> window{};
  window[0] = group_in;
  for (int s = 0; s < c.spatial; ++s) window[1 + s] = wd.dims[2 + s];
  std::array<int, kMaxDims> out{};
  do {
    const int n = out[0], k = out[1], first_channel = (k / group_out) * group_in;
    std::array<int, kMaxDims> at{};  // [channel in group, window position...]
    do {
      std::array<int, kMaxDims> xi{}, wi{};
      xi[0] = n, xi[1] = first_channel + at[0];
      wi[0] = k, wi[1] = at[0];
      bool inside = true;
      for (int s = 0; s < c.spatial; ++s) {
        const int r = at[1 + s];
        // Cross-correlation reads the window as stored; convolution reads it flipped.
        wi[2 + s] = c.mode == CUDNN_CONVOLUTION ? wd.dims[2 + s] - 1 - r : r;
        xi[2 + s] = out[2 + s] * c.strides[s] - c.pads[s] + r * c.dilations[s];
        inside = inside && xi[2 + s] >= 0 && xi[2 + s] < xd.dims[2 + s];
      }
      if (inside) tap(out, xi, wi);
    } while (next(at, window, c.spatial + 1));
    done(out);
  } while (next(out, yd.dims, rank));
}

// Packed strides of the filter (cuDNN's filters have no strides of their own).
std::array<int, kMaxDims> filter_strides(const FilterDesc& wd) {
  std::array<int, kMaxDims> strides{};
  for (int i = wd.rank - 1, s = 1; i >= 0; s *= wd.dims[i], --i) strides[i] = s;
  return strides;
}

cudnnStatus_t convolution_forward(cudnnHandle_t h, const void* alpha_p, cudnnTensorDescriptor_t x_desc, const void* x,
                                  cudnnFilterDescriptor_t w_desc, const void* w, cudnnConvolutionDescriptor_t c_desc,
                                  cudnnConvolutionFwdAlgo_t algo, void* workspace, std::size_t workspace_bytes,
                                  const void* beta_p, cudnnTensorDescriptor_t y_desc, void* y) {
  const TensorDesc &xd = *of(x_desc), &yd = *of(y_desc);
  const FilterDesc& wd = *of(w_desc);
  const ConvDesc& c = *of(c_desc);
  if (h != host_dnn_handle() || !consistent(xd, wd, c, yd)) return CUDNN_STATUS_BAD_PARAM;
  if (algo != kRunnableAlgo) return CUDNN_STATUS_NOT_SUPPORTED;
  if (!workspace || workspace_bytes < conv_workspace(c.math)) return CUDNN_STATUS_BAD_PARAM;
  const float alpha = *static_cast<const float*>(alpha_p), beta = *static_cast<const float*>(beta_p);
  const Element element = xd.type == CUDNN_DATA_HALF ? Element::kHalf : Element::kFloat;
  const int rank = c.spatial + 2;
  const auto w_strides = filter_strides(wd);
  float sum = 0;
  walk_convolution(
      xd, wd, c, yd,
      [&](const auto&, const auto& xi, const auto& wi) {
        sum += load(x, element, offset(xi, xd.strides, rank)) * load(w, element, offset(wi, w_strides, rank));
      },
      [&](const auto& out) {
        const int64_t yi = offset(out, yd.strides, rank);
        store(y, element, yi, alpha * sum + (beta == 0 ? 0.f : beta * load(y, element, yi)));
        sum = 0;
      });
  return CUDNN_STATUS_SUCCESS;
}

// The backward data pass (ConvTranspose): dx = alpha·(the transpose of the convolution
// dx -> dy applied to dy) + beta·dx, each dy element scattered through the taps that read it.
constexpr cudnnConvolutionBwdDataAlgo_t kRunnableBwdAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
constexpr cudnnConvolutionBwdDataAlgo_t kUnrunnableBwdAlgo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT;

cudnnStatus_t get_backward_data_algorithms(cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy,
                                           cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t dx, int requested,
                                           int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
  if (h != host_dnn_handle() || requested < 2 || !consistent(*of(dx), *of(w), *of(c), *of(dy))) return CUDNN_STATUS_BAD_PARAM;
  rank_algorithms(results, returned, kUnrunnableBwdAlgo, kRunnableBwdAlgo, of(c)->math);
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t backward_data_workspace_size(cudnnHandle_t h, cudnnFilterDescriptor_t w, cudnnTensorDescriptor_t dy,
                                           cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t dx,
                                           cudnnConvolutionBwdDataAlgo_t algo, std::size_t* bytes) {
  if (h != host_dnn_handle() || !consistent(*of(dx), *of(w), *of(c), *of(dy))) return CUDNN_STATUS_BAD_PARAM;
  if (algo != kRunnableBwdAlgo) return CUDNN_STATUS_NOT_SUPPORTED;
  *bytes = conv_workspace(of(c)->math);
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t convolution_backward_data(cudnnHandle_t h, const void* alpha_p, cudnnFilterDescriptor_t w_desc, const void* w,
                                        cudnnTensorDescriptor_t dy_desc, const void* dy, cudnnConvolutionDescriptor_t c_desc,
                                        cudnnConvolutionBwdDataAlgo_t algo, void* workspace, std::size_t workspace_bytes,
                                        const void* beta_p, cudnnTensorDescriptor_t dx_desc, void* dx) {
  const TensorDesc &dyd = *of(dy_desc), &dxd = *of(dx_desc);
  const FilterDesc& wd = *of(w_desc);
  const ConvDesc& c = *of(c_desc);
  if (h != host_dnn_handle() || !consistent(dxd, wd, c, dyd)) return CUDNN_STATUS_BAD_PARAM;
  if (algo != kRunnableBwdAlgo) return CUDNN_STATUS_NOT_SUPPORTED;
  if (!workspace || workspace_bytes < conv_workspace(c.math)) return CUDNN_STATUS_BAD_PARAM;
  const float alpha = *static_cast<const float*>(alpha_p), beta = *static_cast<const float*>(beta_p);
  const Element element = dxd.type == CUDNN_DATA_HALF ? Element::kHalf : Element::kFloat;
  const int rank = c.spatial + 2;
  const auto w_strides = filter_strides(wd);
  // Sums in float by dx's packed index, then scaled into dx.
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) count *= dxd.dims[i];
  std::array<int, kMaxDims> packed{};
  for (int i = rank - 1, s = 1; i >= 0; s *= dxd.dims[i], --i) packed[i] = s;
  std::vector<float> sums(static_cast<std::size_t>(count), 0.f);
  walk_convolution(
      dxd, wd, c, dyd,
      [&](const auto& out, const auto& xi, const auto& wi) {
        sums[static_cast<std::size_t>(offset(xi, packed, rank))] +=
            load(dy, element, offset(out, dyd.strides, rank)) * load(w, element, offset(wi, w_strides, rank));
      },
      [](const auto&) {});
  std::array<int, kMaxDims> index{};
  do {
    const int64_t at = offset(index, dxd.strides, rank);
    const float sum = sums[static_cast<std::size_t>(offset(index, packed, rank))];
    store(dx, element, at, alpha * sum + (beta == 0 ? 0.f : beta * load(dx, element, at)));
  } while (next(index, dxd.dims, rank));
  return CUDNN_STATUS_SUCCESS;
}

// C = alpha·A + beta·C, each dim of A equal to C's or 1 (broadcast).
cudnnStatus_t add_tensor(cudnnHandle_t h, const void* alpha_p, cudnnTensorDescriptor_t a_desc, const void* a,
                         const void* beta_p, cudnnTensorDescriptor_t c_desc, void* c) {
  const TensorDesc &ad = *of(a_desc), &cd = *of(c_desc);
  if (h != host_dnn_handle() || ad.rank != cd.rank || ad.type != cd.type) return CUDNN_STATUS_BAD_PARAM;
  for (int i = 0; i < ad.rank; ++i)
    if (ad.dims[i] != cd.dims[i] && ad.dims[i] != 1) return CUDNN_STATUS_BAD_PARAM;
  const float alpha = *static_cast<const float*>(alpha_p), beta = *static_cast<const float*>(beta_p);
  const Element element = cd.type == CUDNN_DATA_HALF ? Element::kHalf : Element::kFloat;
  std::array<int, kMaxDims> index{};
  do {
    std::array<int, kMaxDims> from{};
    for (int i = 0; i < ad.rank; ++i) from[i] = ad.dims[i] == 1 ? 0 : index[i];
    const int64_t ci = offset(index, cd.strides, cd.rank);
    store(c, element, ci, alpha * load(a, element, offset(from, ad.strides, ad.rank)) + beta * load(c, element, ci));
  } while (next(index, cd.dims, cd.rank));
  return CUDNN_STATUS_SUCCESS;
}

}  // namespace

cublasLtHandle_t host_blas_handle() {
  static cublasLtContext* const handle = reinterpret_cast<cublasLtContext*>(new char);
  return handle;
}
cudnnHandle_t host_dnn_handle() {
  static cudnnContext* const handle = reinterpret_cast<cudnnContext*>(new char);
  return handle;
}

HostBlasCounts host_blas_counts() { return {heuristic_queries.load(), matmuls.load(), live_descriptors.load()}; }
void set_host_blas_min_alignment(uint32_t bytes) { heuristic_min_alignment = bytes; }

const cuda::BlasApi& host_blas_api() {
  static const cuda::BlasApi api{
      .create = lt_create,
      .destroy = lt_destroy,
      .get_status_string = lt_status_string,
      .matmul_desc_create = desc_create,
      .matmul_desc_destroy = desc_destroy,
      .matmul_desc_set_attribute = desc_set,
      .matrix_layout_create = layout_create,
      .matrix_layout_destroy = layout_destroy,
      .matrix_layout_set_attribute = layout_set,
      .matmul_preference_create = pref_create,
      .matmul_preference_destroy = pref_destroy,
      .matmul_preference_set_attribute = pref_set,
      .matmul_algo_get_heuristic = heuristic,
      .matmul = matmul,
  };
  return api;
}

const cuda::DnnApi& host_dnn_api() {
  static const cuda::DnnApi api{
      .create = dnn_create,
      .destroy = dnn_destroy,
      .set_stream = set_stream,
      .get_error_string = dnn_error_string,
      .create_tensor_descriptor = create<TensorDesc, cudnnTensorDescriptor_t>,
      .destroy_tensor_descriptor = destroy<cudnnTensorDescriptor_t>,
      .set_tensor_nd_descriptor = set_tensor,
      .create_filter_descriptor = create<FilterDesc, cudnnFilterDescriptor_t>,
      .destroy_filter_descriptor = destroy<cudnnFilterDescriptor_t>,
      .set_filter_nd_descriptor = set_filter,
      .create_convolution_descriptor = create<ConvDesc, cudnnConvolutionDescriptor_t>,
      .destroy_convolution_descriptor = destroy<cudnnConvolutionDescriptor_t>,
      .set_convolution_nd_descriptor = set_conv,
      .set_convolution_group_count = set_groups,
      .set_convolution_math_type = set_math,
      .get_convolution_forward_algorithm_v7 = get_algorithms,
      .get_convolution_forward_workspace_size = workspace_size,
      .convolution_forward = convolution_forward,
      .get_convolution_backward_data_algorithm_v7 = get_backward_data_algorithms,
      .get_convolution_backward_data_workspace_size = backward_data_workspace_size,
      .convolution_backward_data = convolution_backward_data,
      .add_tensor = add_tensor,
  };
  return api;
}

}  // namespace nxrt::test
#endif  // NXRT_HAVE_CUDA
