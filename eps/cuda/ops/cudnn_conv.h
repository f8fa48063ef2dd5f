// What Conv and ConvTranspose share in cuDNN: descriptors, status checks, the algorithm
// cache, the bias add, and the claim checks of the window attributes.
#pragma once

#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include "libraries.h"
#include "nxrt/ep/kernel.h"
#include "nxrt/ir/window.h"
#include "runtime.h"

namespace nxrt::cuda {

// The most scratch memory one convolution may take (cuDNN's FFT algorithms can ask for GiBs).
inline constexpr std::size_t kMaxWorkspaceBytes = std::size_t{256} << 20;

using TensorDesc = ApiHandle<cudnnTensorDescriptor_t, cudnnStatus_t>;
using FilterDesc = ApiHandle<cudnnFilterDescriptor_t, cudnnStatus_t>;
using ConvDesc = ApiHandle<cudnnConvolutionDescriptor_t, cudnnStatus_t>;

// Turns a cuDNN status into the step's error; `call` names the function.
Expected<void> check_dnn(const DnnApi& api, const StepContext& ctx, cudnnStatus_t s, std::string_view call);

// A packed NCHW-style descriptor of `shape` (refused at 2^31 elements: cuDNN counts in int).
Expected<TensorDesc> tensor_desc(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& shape);

// Conv and ConvTranspose: float types, 1 to 3 spatial dims and valid window attributes.
KernelMatch check_conv_common(const NodeContext& ctx);

// One forward convolution as cuDNN describes it, from x (its input) to y (its output), with
// weights w; 1-D is widened to 2-D (cuDNN wants at least 4-D tensors). ConvTranspose is the
// backward data pass of the convolution from its output to its input.
struct ConvDescriptors {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  cudnnDataType_t type;  // of x, w and y
};
Expected<ConvDescriptors> describe(const DnnApi& api, const StepContext& ctx, cudnnDataType_t type, const Shape& xs,
                                   const Shape& ws, const Shape& ys, const Window3& window, std::size_t spatial,
                                   int64_t group);

// cuDNN's choice for one convolution: the algorithm (a cudnnConvolutionFwdAlgo_t or
// cudnnConvolutionBwdDataAlgo_t), the math type it runs with, and its workspace.
struct ConvAlgorithm {
  int algo;
  cudnnMathType_t math;
  std::size_t workspace;
};

// Sets the math type cuDNN ranked an algorithm with on a float16 convolution, before asking for
// that algorithm's workspace (which depends on it) and before running it. A float convolution
// keeps FMA_MATH (no TF32), which cuDNN's ranking for it never leaves.
Expected<void> use_ranked_math(const DnnApi& api, const StepContext& ctx, const ConvDescriptors& d, cudnnMathType_t math);

// The index of the first of cuDNN's ranked algorithms (best first) that it can run here within
// kMaxWorkspaceBytes; the ranking may list ones whose status is not SUCCESS. -1 when none.
template <class Perf>
int first_runnable(const Perf* ranked, int found) {
  for (int i = 0; i < found; ++i)
    if (ranked[i].status == CUDNN_STATUS_SUCCESS && ranked[i].memory <= kMaxWorkspaceBytes) return i;
  return -1;
}

// The algorithms a step chose, by input and weight shape: cuDNN's heuristic runs once per
// shape, not on every run.
class AlgorithmCache {
 public:
  template <class Choose>
  Expected<ConvAlgorithm> get(const Shape& x, const Shape& w, Choose choose) {
    std::lock_guard lock(mutex_);
    const auto key = std::pair(x, w);
    if (auto it = chosen_.find(key); it != chosen_.end()) return it->second;
    auto made = choose();
    if (made) chosen_.emplace(key, *made);
    return made;
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<Shape, Shape>, ConvAlgorithm> chosen_;
};

// What one run of a Conv or ConvTranspose step hands cuDNN: the library, the element type, the
// descriptors of the forward convolution from x to y, the algorithm the step's cache holds for
// these shapes (chosen by `choose` the first time; on float16 its math type is set, as it may
// differ from the one asked for), and a workspace for it.
struct PreparedConvolution {
  DnnLibrary library;
  ConvDescriptors d;  // d.type: the data type of the convolution
  ConvAlgorithm algorithm;
  Tensor workspace;
};
using ChooseAlgorithm = Expected<ConvAlgorithm> (*)(const DnnApi&, cudnnHandle_t, const StepContext&, const ConvDescriptors&);
Expected<PreparedConvolution> prepare_convolution(StepContext& ctx, DType dtype, const Shape& xs, const Shape& ws,
                                                  const Shape& ys, const Window3& window, std::size_t spatial, int64_t group,
                                                  AlgorithmCache& cache, ChooseAlgorithm choose);

// y += bias broadcast along channels (y is described by `y_desc`, `spatial` dims before widening).
Expected<void> add_channel_bias(const DnnApi& api, cudnnHandle_t h, const StepContext& ctx, cudnnDataType_t type,
                                const Tensor& bias, int64_t channels, std::size_t spatial, const TensorDesc& y_desc, void* y);

}  // namespace nxrt::cuda
