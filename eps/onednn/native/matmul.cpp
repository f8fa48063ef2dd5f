// The batch loop around the cpu EP's GEMM: small products run side by side on the OpenMP
// threads (--threads), a large one splits itself across them.
#include "native/matmul.h"

#include <omp.h>

#include "common/gemm.h"  // the cpu EP's
#include "common/matmul_plan.h"

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
  explicit MatMulKernel(cpu::MatMulPlan plan) : plan_(std::move(plan)) {}

  void execute(const std::unordered_map<int, dnnl::memory>& args) const override {
    const auto* a = static_cast<const float*>(args.at(DNNL_ARG_SRC).get_data_handle());
    const auto* b = static_cast<const float*>(args.at(DNNL_ARG_WEIGHTS).get_data_handle());
    auto* c = static_cast<float*>(args.at(DNNL_ARG_DST).get_data_handle());
    const cpu::MatMulPlan& p = plan_;
    const auto batch = static_cast<int64_t>(p.a_offsets.size());
    auto product = [&](int64_t i, const Parallel& parallel) {
      const auto at = static_cast<std::size_t>(i);
      cpu::gemm(p.m, p.n, p.k, 1.0f, cpu::GemmOperand::matrix(a + p.a_offsets[at], p.k),
                cpu::GemmOperand::matrix(b + p.b_offsets[at], p.n), 0.0f, c + i * p.m * p.n, p.n, parallel);
    };
    if (batch > 1 && static_cast<double>(p.m * p.n * p.k) < cpu::kSmallGemm) {
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
  cpu::MatMulPlan plan_;
};

}  // namespace

Expected<std::shared_ptr<const NativeKernel>> make_native_matmul(const Dims& a, const Dims& b) {
  auto plan = cpu::plan_matmul(a, b);
  if (!plan) return std::unexpected(std::move(plan.error()));
  return std::make_shared<const MatMulKernel>(std::move(*plan));
}

}  // namespace nxrt::onednn
