// The batch loop around the cpu EP's GEMM: small products run side by side on the OpenMP
// threads (--threads), a large one splits itself across them.
#include "native/matmul.h"

#include <omp.h>

#include <vector>

#include "common/gemm.h"  // the cpu EP's

namespace nxrt::onednn {
namespace {

// The cpu EP's GEMM splits its work through nxrt's Parallel; here on OpenMP's threads,
// which oneDNN's primitives use too.
class OpenMpParallel final : public Parallel {
 public:
  int threads() const override { return omp_get_max_threads(); }
  void for_range(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) const override {
    const int64_t chunk = std::max<int64_t>(grain, (n + threads() - 1) / std::max(threads(), 1));
    const int64_t chunks = chunk > 0 ? (n + chunk - 1) / chunk : 0;
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
  }
};

class MatMulKernel final : public NativeKernel {
 public:
  MatMulKernel(const Dims& a, const Dims& b, const Dims& c) {
    const std::size_t rank = c.size();
    m_ = c[rank - 2];
    n_ = c[rank - 1];
    k_ = a[rank - 1];
    // Offsets of each product's A and B, the batch dims walked in C's order.
    int64_t batch = 1;
    for (std::size_t i = 0; i + 2 < rank; ++i) batch *= c[i];
    for (int64_t index = 0; index < batch; ++index) {
      int64_t rest = index, a_off = 0, b_off = 0, a_stride = m_ * k_, b_stride = k_ * n_;
      for (std::size_t i = rank - 2; i-- > 0;) {
        const int64_t pos = rest % c[i];
        rest /= c[i];
        if (a[i] != 1) a_off += pos * a_stride;
        if (b[i] != 1) b_off += pos * b_stride;
        a_stride *= a[i];
        b_stride *= b[i];
      }
      offsets_.emplace_back(a_off, b_off);
    }
  }

  void execute(const std::unordered_map<int, dnnl::memory>& args) const override {
    const auto* a = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    const auto* b = static_cast<const float*>(args.at(DNNL_ARG_WEIGHTS).get_data_handle());
    auto* c = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const auto batch = static_cast<int64_t>(offsets_.size());
    auto product = [&](int64_t i, const Parallel& parallel) {
      const auto [a_off, b_off] = offsets_[static_cast<std::size_t>(i)];
      cpu::gemm(m_, n_, k_, 1.0f, cpu::GemmOperand::matrix(a + a_off, k_), cpu::GemmOperand::matrix(b + b_off, n_),
                0.0f, c + i * m_ * n_, n_, parallel);
    };
    if (batch > 1 && static_cast<double>(m_ * n_ * k_) < cpu::kSmallGemm) {
      const SerialParallel serial;
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < batch; ++i) product(i, serial);
      return;
    }
    const OpenMpParallel threads;
    for (int64_t i = 0; i < batch; ++i) product(i, threads);
  }

  std::string name() const override { return std::string("nxrt:cpu_gemm:") + cpu::gemm_isa(); }

 private:
  int64_t m_ = 0, n_ = 0, k_ = 0;
  std::vector<std::pair<int64_t, int64_t>> offsets_;  // per product: A's and B's first element
};

}  // namespace

std::shared_ptr<const NativeKernel> make_native_matmul(const Dims& a, const Dims& b, const Dims& c) {
  return std::make_shared<MatMulKernel>(a, b, c);
}

}  // namespace nxrt::onednn
