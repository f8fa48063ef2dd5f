// Random ops: RandomUniform(Like), RandomNormal(Like), Bernoulli, Multinomial, and Dropout
// (identity in inference, a Bernoulli mask in training mode).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "common/elementwise.h"
#include "common/kernel_util.h"
#include "kernels/kernels.h"
#include "nxrt/ep/random_ops.h"

namespace nxrt::cpu {
namespace {

using BernoulliTypes = TypeList<float, double, Half, int8_t, uint8_t, int16_t, int32_t, int64_t, bool>;
using MultinomialTypes = TypeList<int32_t, int64_t>;

// A generator seeded from the float `seed` attribute (its bits, so 0.5 and 0 differ), or
// from the random device when there is none. Its state carries over between runs, so
// repeated runs of one session draw new numbers.
std::mt19937 make_engine(const AttributeMap& a) {
  if (const auto seed = a.get_float("seed")) return std::mt19937(std::bit_cast<uint32_t>(*seed));
  return std::mt19937(std::random_device{}());
}

// A node's generator, shared by its session's runs: a run draws with it held, so runs on
// several threads never interleave their draws (each takes a contiguous stretch).
class SharedEngine {
 public:
  explicit SharedEngine(std::mt19937 generator) : generator_(generator) {}
  class Held {
   public:
    explicit Held(SharedEngine& shared) : lock_(shared.mutex_), generator_(shared.generator_) {}
    std::mt19937& operator*() const { return generator_; }

   private:
    std::lock_guard<std::mutex> lock_;
    std::mt19937& generator_;
  };
  Held hold() { return Held(*this); }

 private:
  std::mutex mutex_;
  std::mt19937 generator_;
};

// Fills `out` with draws of `dist`, converted to T.
template <class T, class Dist>
void fill_from(std::mt19937& engine, Dist dist, T* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(dist(engine));
}

// ---- RandomUniform, RandomNormal and their *Like forms ------------------------------------

// Uniform draws in [low, high) or normal draws with mean and scale.
struct Distribution {
  bool normal = false;
  float a = 0, b = 1;  // low, high or mean, scale

  static Distribution from(const NodeContext& ctx) {
    const bool normal = ctx.node().op_type.starts_with("RandomNormal");
    const auto& at = ctx.attrs();
    if (normal) return {true, at.float_or("mean", 0), at.float_or("scale", 1)};
    return {false, at.float_or("low", 0), at.float_or("high", 1)};
  }
};

KernelMatch check_random(const NodeContext& ctx) {
  const std::string& op = ctx.node().op_type;
  if (op.ends_with("Like"))
    NXRT_REQUIRE(ctx.input_type(0) && ctx.input_type(0)->kind == ValueType::Kind::kTensor,
                 "{}: input 0 is not a tensor; the cpu EP supports tensors only", op);
  NXRT_REQUIRE_MATCH(check_random_fill_node(ctx));
  const auto dtype = random_fill_dtype(ctx);
  NXRT_REQUIRE(dtype && (*dtype == DType::kFloat32 || *dtype == DType::kFloat64 || *dtype == DType::kFloat16),
               "{}: output type {} is not supported; the cpu EP draws float, double, float16", op,
               random_dtype_name(ctx, dtype));
  return KernelMatch::supported();
}

class RandomKernel final : public Kernel {
 public:
  RandomKernel(const NodeContext& ctx, DType dtype, std::optional<Shape> shape)
      : engine_(make_engine(ctx.attrs())), dist_(Distribution::from(ctx)), dtype_(dtype), shape_(std::move(shape)) {}

  Expected<void> compute(KernelContext& ctx) override {
    auto y = ctx.output(0, dtype_, shape_ ? *shape_ : ctx.input(0).shape());
    if (!y) return std::unexpected(std::move(y.error()));
    return dispatch_dtype(FloatHalfTypes{}, dtype_, [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto engine = engine_.hold();
      if (dist_.normal)
        fill_from(*engine, std::normal_distribution<double>(dist_.a, dist_.b), y->mut_as<T>(), y->numel());
      else
        fill_from(*engine, std::uniform_real_distribution<double>(dist_.a, dist_.b), y->mut_as<T>(), y->numel());
      return Expected<void>{};
    });
  }

 private:
  SharedEngine engine_;
  Distribution dist_;
  DType dtype_;
  std::optional<Shape> shape_;  // nullopt: the input's (the *Like ops)
};

KernelDef random_def(const char* op) {
  return KernelDef{{"", op, 1}, 0, check_random, [](const NodeContext& ctx) {
                     const bool like = ctx.node().op_type.ends_with("Like");
                     const DType dtype = *random_fill_dtype(ctx);
                     return make_kernel<RandomKernel>(ctx, dtype,
                                                      like ? std::nullopt : ctx.attrs().get_ints("shape"));
                   }};
}

// ---- Bernoulli -----------------------------------------------------------------------------

KernelMatch check_bernoulli(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  const auto dtype = random_dtype_attr(ctx.attrs(), ctx.input_dtype(0));
  NXRT_REQUIRE(dtype && std::ranges::count(std::initializer_list<DType>{DType::kFloat32, DType::kFloat64,
                                                                          DType::kFloat16, DType::kInt8, DType::kUInt8,
                                                                          DType::kInt16, DType::kInt32, DType::kInt64,
                                                                          DType::kBool},
                                           *dtype) == 1,
               "Bernoulli: output type {} is not supported; the cpu EP writes float, double, float16, int8, uint8, "
               "int16, int32, int64, bool",
               random_dtype_name(ctx, dtype));
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class BernoulliKernel final : public Kernel {
 public:
  BernoulliKernel(const NodeContext& ctx, DType dtype) : engine_(make_engine(ctx.attrs())), dtype_(dtype) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& p = ctx.input(0);
    auto y = ctx.output(0, dtype_, p.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    return dispatch_dtype(FloatHalfTypes{}, p.dtype(), [&](auto in_tag) {
      return dispatch_dtype(BernoulliTypes{}, dtype_, [&](auto out_tag) {
        using O = typename decltype(out_tag)::type;
        draw(p.data_as<typename decltype(in_tag)::type>(), y->mut_as<O>(), p.numel());
        return Expected<void>{};
      });
    });
  }

 private:
  template <class P, class O>
  void draw(const P* p, O* out, int64_t n) {
    std::uniform_real_distribution<double> uniform(0, 1);
    auto engine = engine_.hold();
    for (int64_t i = 0; i < n; ++i)
      out[i] = static_cast<O>(uniform(*engine) < static_cast<double>(static_cast<float>(p[i])) ? 1 : 0);
  }

  SharedEngine engine_;
  DType dtype_;
};

// ---- Multinomial ---------------------------------------------------------------------------

KernelMatch check_multinomial(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  NXRT_REQUIRE_MATCH(check_multinomial_node(ctx));
  const auto dtype = random_dtype_attr(ctx.attrs(), DType::kInt32);
  NXRT_REQUIRE(dtype && (*dtype == DType::kInt32 || *dtype == DType::kInt64),
               "Multinomial: output type {} is not supported; the spec allows int32, int64", random_dtype_name(ctx, dtype));
  return KernelMatch::supported();
}

class MultinomialKernel final : public Kernel {
 public:
  MultinomialKernel(const NodeContext& ctx, DType dtype)
      : engine_(make_engine(ctx.attrs())), dtype_(dtype), samples_(ctx.attrs().int_or("sample_size", 1)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().size() != 2 || x.shape()[1] < 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("Multinomial: input shape {} is not [batch_size, class_size]", shape_to_string(x.shape())),
                  "the input holds one row of class log-probabilities per batch item", "feed a 2-D input");
    auto y = ctx.output(0, dtype_, {x.shape()[0], samples_});
    if (!y) return std::unexpected(std::move(y.error()));
    return dispatch_dtype(FloatHalfTypes{}, x.dtype(), [&](auto in_tag) {
      return dispatch_dtype(MultinomialTypes{}, dtype_, [&](auto out_tag) {
        draw(x.data_as<typename decltype(in_tag)::type>(), x.shape()[0], x.shape()[1],
             y->mut_as<typename decltype(out_tag)::type>());
        return Expected<void>{};
      });
    });
  }

 private:
  // Each row holds unnormalized log-probabilities: draws invert the cumulative
  // distribution of exp(x - max).
  template <class X, class O>
  void draw(const X* x, int64_t rows, int64_t classes, O* out) {
    std::vector<double> cdf(static_cast<std::size_t>(classes));
    std::uniform_real_distribution<double> uniform(0, 1);
    auto engine = engine_.hold();
    for (int64_t r = 0; r < rows; ++r) {
      const X* row = x + r * classes;
      double top = -INFINITY;
      for (int64_t c = 0; c < classes; ++c) top = std::max(top, static_cast<double>(static_cast<float>(row[c])));
      double sum = 0;
      for (int64_t c = 0; c < classes; ++c)
        cdf[static_cast<std::size_t>(c)] = sum += std::exp(static_cast<double>(static_cast<float>(row[c])) - top);
      for (int64_t s = 0; s < samples_; ++s) {
        const auto it = std::upper_bound(cdf.begin(), cdf.end(), uniform(*engine) * sum);
        out[r * samples_ + s] = static_cast<O>(std::min<int64_t>(it - cdf.begin(), classes - 1));
      }
    }
  }

  SharedEngine engine_;
  DType dtype_;
  int64_t samples_;
};

// ---- Dropout ---------------------------------------------------------------------------------

// Dropout-1 and -6 choose training mode by is_test = 0 (their default); 7 to 11 have no
// training mode; 12+ take the ratio and training_mode as inputs. The mask is of the data's
// type before opset 10, bool from 10.
KernelMatch check_dropout(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 0, FloatHalfTypes{}));
  NXRT_REQUIRE_MATCH(check_dropout_node(ctx));
  if (ctx.opset() >= 12) {
    if (ctx.has_input(1)) NXRT_REQUIRE_MATCH(require_input_dtype_in(ctx, 1, FloatHalfTypes{}));
    if (ctx.has_input(2)) NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 2, {DType::kBool}));
  }
  return KernelMatch::supported(elementwise_cost(ctx, 1));
}

class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const NodeContext& ctx)
      : engine_(make_engine(ctx.attrs())),
        opset_(ctx.opset()),
        ratio_(ctx.attrs().float_or("ratio", 0.5f)),
        legacy_training_(ctx.opset() < 7 && ctx.attrs().int_or("is_test", 0) == 0) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    double ratio = ratio_;
    if (opset_ >= 12 && ctx.has_input(1) && ctx.input(1).numel() == 1)
      ratio = read_scalar(ctx.input(1));
    if (ratio < 0 || ratio > 1)
      return fail(ErrorCode::kRuntime, fmt::format("Dropout: ratio {} is outside [0, 1]", ratio),
                  "the ratio is the probability of dropping an element", "feed a ratio in [0, 1)");
    const bool training = opset_ >= 12 ? ctx.has_input(2) && ctx.input(2).data_as<bool>()[0] : legacy_training_;
    return dispatch_dtype(FloatHalfTypes{}, x.dtype(), [&](auto tag) {
      return run<typename decltype(tag)::type>(ctx, training ? ratio : 0.0);
    });
  }

 private:
  static double read_scalar(const Tensor& t) {
    if (t.dtype() == DType::kFloat64) return t.data_as<double>()[0];
    if (t.dtype() == DType::kFloat16) return static_cast<float>(t.data_as<Half>()[0]);
    return t.data_as<float>()[0];
  }

  // ratio 0 (inference, or nothing to drop): output is the input itself, mask all true.
  template <class T>
  Expected<void> run(KernelContext& ctx, double ratio) {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.numel();
    const bool bool_mask = opset_ >= 10;
    const bool want_mask = ctx.output_count() > 1 && ctx.wants_output(1);
    std::vector<char> keep(static_cast<std::size_t>(n), 1);
    if (ratio > 0) {
      std::uniform_real_distribution<double> uniform(0, 1);
      auto engine = engine_.hold();
      for (auto& k : keep) k = uniform(*engine) >= ratio;
    }
    if (ratio == 0) {
      ctx.set_output(0, x);
    } else {
      auto y = ctx.output(0, x.dtype(), x.shape());
      if (!y) return std::unexpected(std::move(y.error()));
      // ratio 1 drops everything; the scale would divide by zero.
      const double scale = ratio < 1 ? 1 / (1 - ratio) : 0;
      const T* in = x.data_as<T>();
      T* out = y->mut_as<T>();
      for (int64_t i = 0; i < n; ++i)
        out[i] = keep[static_cast<std::size_t>(i)] ? static_cast<T>(static_cast<double>(in[i]) * scale) : T(0.0f);
    }
    if (!want_mask) return {};
    auto m = ctx.output(1, bool_mask ? DType::kBool : x.dtype(), x.shape());
    if (!m) return std::unexpected(std::move(m.error()));
    if (bool_mask) std::copy(keep.begin(), keep.end(), m->mut_as<bool>());
    else std::transform(keep.begin(), keep.end(), m->mut_as<T>(), [](char k) { return T(k ? 1.0f : 0.0f); });
    return {};
  }

  SharedEngine engine_;
  int64_t opset_;
  float ratio_;
  bool legacy_training_;
};

KernelDef dropout_def(int64_t since, int64_t until) {
  return KernelDef{{"", "Dropout", since}, until, check_dropout,
                   [](const NodeContext& ctx) { return make_kernel<DropoutKernel>(ctx); }};
}

}  // namespace

std::vector<KernelDef> random_kernels() {
  return {
      random_def("RandomUniform"),
      random_def("RandomNormal"),
      random_def("RandomUniformLike"),
      random_def("RandomNormalLike"),
      KernelDef{{"", "Bernoulli", 15}, 0, check_bernoulli,
                [](const NodeContext& ctx) {
                  return make_kernel<BernoulliKernel>(ctx, *random_dtype_attr(ctx.attrs(), ctx.input_dtype(0)));
                }},
      KernelDef{{"", "Multinomial", 7}, 0, check_multinomial,
                [](const NodeContext& ctx) {
                  return make_kernel<MultinomialKernel>(ctx, *random_dtype_attr(ctx.attrs(), DType::kInt32));
                }},
      dropout_def(1, 6),
      dropout_def(7, 9),
      dropout_def(10, 11),
      dropout_def(12, 0),
  };
}

}  // namespace nxrt::cpu
