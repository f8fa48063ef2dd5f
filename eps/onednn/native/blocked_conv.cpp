// The blocked convolution: the input copied with its pads when it has any, then one blocked
// product (native/blocked_tiles.h) over the kernel's taps.
#include "native/blocked_conv.h"

#include "native/blocked_tiles.h"

namespace nxrt::onednn {
namespace {

class BlockedConv final : public NativeKernel {
 public:
  BlockedConv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue)
      : g_(blocked_geometry(shape)), epilogue_(epilogue) {}

  void execute(const std::unordered_map<int, dnnl::memory>& args) const override {
    const auto data = [&](int arg) { return static_cast<float*>(args.at(arg).get_data_handle()); };
    const float* src = data(DNNL_ARG_SRC);
    const float* bias = epilogue_.bias ? data(DNNL_ARG_BIAS) : nullptr;
    float* padded = g_.padded ? data(DNNL_ARG_SCRATCHPAD) : nullptr;
#pragma omp parallel
    {
      if (padded) pad_blocked_input(g_, src, padded);
      sum_blocked_product(g_, epilogue_, padded ? padded : src, data(DNNL_ARG_WEIGHTS), bias, data(DNNL_ARG_DST));
    }
  }

  std::string name() const override { return "nxrt:nChw8c"; }

 private:
  BlockedGeometry g_;
  BlockedConvEpilogue epilogue_;
};

}  // namespace
bool blocked_conv_fast_here() {
#if defined(__AVX2__) && defined(__FMA__)
  const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  return isa == dnnl::cpu_isa::avx2 || isa == dnnl::cpu_isa::avx2_vnni;
#else
  return false;
#endif
}

bool blocked_conv_supports(const BlockedConvShape& s) {
  return s.in_channels > 0 && s.in_channels % kBlock == 0 && s.out_channels > 0 && s.out_channels % kBlock == 0 &&
         s.batch > 0 && s.out_h > 0 && s.out_w > 0 && s.kernel_h > 0 && s.kernel_w > 0 && s.stride_h > 0 &&
         s.stride_w > 0 && s.pad_top >= 0 && s.pad_left >= 0;
}

int64_t blocked_conv_scratch_floats(const BlockedConvShape& shape) {
  const BlockedGeometry g = blocked_geometry(shape);
  return g.padded ? shape.batch * g.in_blocks * g.src_block : 0;
}

std::shared_ptr<const NativeKernel> make_blocked_conv(const BlockedConvShape& shape, BlockedConvEpilogue epilogue) {
  return std::make_shared<BlockedConv>(shape, epilogue);
}

}  // namespace nxrt::onednn
