// The cuda EP's random ops on the host build of its kernels. Their numbers are not the cpu
// EP's, so each node is checked for what it must hold instead: the range, mean and spread of
// its draws, the same numbers from the same seed in a new plan, new numbers in the next run.
#ifdef NXRT_HAVE_CUDA
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "cuda/kernel_library.h"
#include "cuda_host_module.h"
#include "kernel_harness.h"
#include "lib_test_util.h"

using namespace nxrt;
using test::attrs;
using test::NodeSpec;

namespace {

// Three runs of a node: two of one plan (its runs 0 and 1), then the first of a second plan.
struct ThreeRuns {
  std::vector<Tensor> first, second, replanned;
};

// Runs each added node three times; the plans' modules are compiled in one compiler run.
class RandomRuns {
 public:
  std::size_t add(NodeSpec spec) {
    specs_.push_back(std::move(spec));
    return specs_.size() - 1;
  }

  std::vector<ThreeRuns> run() {
    std::vector<std::string> sources;
    for (const NodeSpec& spec : specs_) {
      std::string source;
      auto planned = test::run_partition_with(spec, "cuda", [&](const Partition& p, const std::vector<Tensor>&)
                                                                -> Expected<std::vector<Tensor>> {
        auto plan = test::plan_for_host(p);
        if (!plan) return std::unexpected(plan.error());
        source = plan->source;
        return std::vector<Tensor>{};
      });
      INFO(spec.op_type << ": " << (planned ? std::string() : planned.error().render()));
      REQUIRE(planned);
      sources.push_back(std::move(source));
    }
    auto modules = test::HostModule::compile_all(sources);
    INFO((modules ? std::string() : modules.error().render()));
    REQUIRE(modules);
    std::vector<ThreeRuns> all;
    for (std::size_t i = 0; i < specs_.size(); ++i) {
      ThreeRuns runs;
      auto status = test::run_partition_with(specs_[i], "cuda", [&](const Partition& p, const std::vector<Tensor>& inputs)
                                                                    -> Expected<std::vector<Tensor>> {
        auto plan = test::plan_for_host(p), again = test::plan_for_host(p);
        if (!plan || !again) return std::unexpected(plan ? again.error() : plan.error());
        for (auto [use, into] : {std::pair{&*plan, &runs.first}, {&*plan, &runs.second}, {&*again, &runs.replanned}}) {
          auto out = test::run_plan_on_host(*use, *(*modules)[i], p, inputs);
          if (!out) return std::unexpected(out.error());
          *into = std::move(*out);
        }
        return std::vector<Tensor>{};
      });
      INFO(specs_[i].op_type << " (node " << i << "): " << (status ? std::string() : status.error().render()));
      REQUIRE(status);
      all.push_back(std::move(runs));
    }
    return all;
  }

 private:
  std::vector<NodeSpec> specs_;
};

// A tensor's values as doubles (float, float16, double, bool and the integers).
std::vector<double> values_of(const Tensor& t) {
  const Tensor wide = t.dtype() == DType::kFloat16 || t.dtype() == DType::kBFloat16
                          ? test::run_one({.op_type = "Cast", .inputs = {t}, .attrs = attrs({{"to", int64_t{1}}})})
                          : t;
  std::vector<double> v(static_cast<std::size_t>(wide.numel()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    switch (wide.dtype()) {
      case DType::kFloat32: v[i] = wide.data_as<float>()[i]; break;
      case DType::kFloat64: v[i] = wide.data_as<double>()[i]; break;
      case DType::kBool: v[i] = wide.data_as<bool>()[i] ? 1 : 0; break;
      case DType::kInt32: v[i] = wide.data_as<int32_t>()[i]; break;
      case DType::kInt64: v[i] = static_cast<double>(wide.data_as<int64_t>()[i]); break;
      default: FAIL("values_of: unexpected type " << dtype_name(wide.dtype()));
    }
  }
  return v;
}

struct Moments {
  double mean, sd;
};
Moments moments(const std::vector<double>& v) {
  double sum = 0, squares = 0;
  for (double x : v) sum += x;
  const double mean = sum / static_cast<double>(v.size());
  for (double x : v) squares += (x - mean) * (x - mean);
  return {mean, std::sqrt(squares / static_cast<double>(v.size()))};
}

// The share of elements where two draws agree (new numbers: near 0).
double share_equal(const Tensor& a, const Tensor& b) {
  const auto x = values_of(a), y = values_of(b);
  std::size_t same = 0;
  for (std::size_t i = 0; i < x.size(); ++i) same += x[i] == y[i];
  return static_cast<double>(same) / static_cast<double>(x.size());
}

Tensor scalar_bool(bool v) {
  const uint8_t byte = v ? 1 : 0;
  return Tensor::from_bytes(DType::kBool, {}, std::as_bytes(std::span<const uint8_t>(&byte, 1)));
}

}  // namespace

// The generator itself against the known-answer vectors of Random123 (the authors' library),
// counter words (c0..c3) = (index low, index high, run low, run high), key = (k0, k1).
TEST_CASE("cuda's Philox4x32-10 gives Random123's known answers", "[cuda]") {
  const std::string source = std::string(cuda::kernel_library_source()) +
                             "extern \"C\" __global__ void philox_words(unsigned long long key, unsigned long long run, "
                             "unsigned long long index, unsigned* out) {\n"
                             "  const u32x4 r = philox(key, run, index);\n"
                             "  for (int k = 0; k < 4; ++k) out[k] = r.w[k];\n}\n";
  auto module = test::HostModule::compile(source);
  INFO((module ? std::string() : module.error().render()));
  REQUIRE(module);
  struct Known {
    uint32_t counter[4], key[2], words[4];
  };
  for (const Known& k : {Known{{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
                         Known{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff},
                               {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
                         Known{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0},
                               {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}}) {
    auto pair = [](uint32_t low, uint32_t high) { return (static_cast<uint64_t>(high) << 32) | low; };
    uint64_t key = pair(k.key[0], k.key[1]), run = pair(k.counter[2], k.counter[3]), index = pair(k.counter[0], k.counter[1]);
    uint32_t words[4] = {};
    uint32_t* out = words;
    void* args[] = {&key, &run, &index, &out};
    REQUIRE((*module)->launch("philox_words", 1, 1, args));
    for (int w = 0; w < 4; ++w) CHECK(words[w] == k.words[w]);
  }
}

TEST_CASE("cuda RandomUniform, RandomNormal and their Like forms draw on the host", "[cuda]") {
  RandomRuns runs;
  const auto uniform = runs.add({.op_type = "RandomUniform", .opset = 1, .inputs = {},
                                 .attrs = attrs({{"shape", std::vector<int64_t>{200, 250}}, {"low", -2.f}, {"high", 3.f},
                                                 {"seed", 1.5f}})});
  const auto normal = runs.add({.op_type = "RandomNormal", .opset = 1, .inputs = {},
                                .attrs = attrs({{"shape", std::vector<int64_t>{50000}}, {"mean", 1.f}, {"scale", 2.f},
                                                {"seed", 3.f}})});
  const Tensor half_input = test::run_one({.op_type = "Cast", .inputs = {test::random_tensor({100, 100}, 1)},
                                           .attrs = attrs({{"to", int64_t{10}}})});
  const auto normal_like = runs.add({.op_type = "RandomNormalLike", .opset = 1, .inputs = {half_input},
                                     .attrs = attrs({{"seed", 0.f}})});
  const auto uniform_double = runs.add({.op_type = "RandomUniformLike", .opset = 1, .inputs = {test::random_tensor({20000}, 2)},
                                        .attrs = attrs({{"dtype", int64_t{11}}})});
  const auto results = runs.run();

  {  // uniform draws cover [low, high) evenly
    const ThreeRuns& r = results[uniform];
    REQUIRE(r.first[0].shape() == Shape{200, 250});
    REQUIRE(r.first[0].dtype() == DType::kFloat32);
    const auto v = values_of(r.first[0]);
    CHECK(*std::min_element(v.begin(), v.end()) >= -2.0);
    CHECK(*std::max_element(v.begin(), v.end()) < 3.0);
    const Moments m = moments(v);
    CHECK(std::abs(m.mean - 0.5) < 0.03);                     // its standard error is 0.0065
    CHECK(std::abs(m.sd - 5 / std::sqrt(12.0)) < 0.02);        // 1.443
    // The seed gives a new plan the same numbers; the next run draws new ones.
    CHECK(test::compare_tensors(r.replanned[0], r.first[0], 0, 0) == "");
    CHECK(share_equal(r.first[0], r.second[0]) < 0.01);
  }
  {  // normal draws have the mean and scale asked for
    const ThreeRuns& r = results[normal];
    const auto v = values_of(r.first[0]);
    const Moments m = moments(v);
    CHECK(std::abs(m.mean - 1.0) < 0.04);  // standard error 0.009
    CHECK(std::abs(m.sd - 2.0) < 0.04);
    std::size_t within = 0;
    for (double x : v) within += std::abs(x - 1.0) < 2.0;
    CHECK(std::abs(static_cast<double>(within) / static_cast<double>(v.size()) - 0.6827) < 0.01);
    CHECK(test::compare_tensors(r.replanned[0], r.first[0], 0, 0) == "");
    CHECK(share_equal(r.first[0], r.second[0]) < 0.01);
  }
  {  // the Like forms take the input's shape and type, or dtype
    const ThreeRuns& like = results[normal_like];
    REQUIRE(like.first[0].dtype() == DType::kFloat16);
    CHECK(like.first[0].shape() == Shape{100, 100});
    CHECK(std::abs(moments(values_of(like.first[0])).mean) < 0.05);
    // Seed 0 is a seed too: its runs repeat in a new plan.
    CHECK(test::compare_tensors(like.replanned[0], like.first[0], 0, 0) == "");
    const ThreeRuns& wide = results[uniform_double];
    REQUIRE(wide.first[0].dtype() == DType::kFloat64);
    const auto v = values_of(wide.first[0]);
    CHECK(*std::min_element(v.begin(), v.end()) >= 0.0);
    CHECK(*std::max_element(v.begin(), v.end()) < 1.0);
    // Without a seed a new plan draws its own numbers.
    CHECK(share_equal(wide.replanned[0], wide.first[0]) < 0.01);
  }
}

TEST_CASE("cuda Bernoulli and Multinomial draw on the host", "[cuda]") {
  RandomRuns runs;
  std::vector<float> p;
  for (int i = 0; i < 30000; ++i) p.insert(p.end(), {0.f, 0.25f, 1.f});
  const Tensor probabilities = Tensor::from_vector<float>({30000, 3}, p);
  const auto as_float = runs.add({.op_type = "Bernoulli", .opset = 15, .inputs = {probabilities}, .attrs = attrs({{"seed", 7.f}})});
  const auto as_bool = runs.add({.op_type = "Bernoulli", .opset = 15, .inputs = {probabilities},
                                 .attrs = attrs({{"dtype", int64_t{9}}})});
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor logits = Tensor::from_vector<float>({2, 3}, {std::log(0.1f), std::log(0.2f), std::log(0.7f), 0.f, 0.f, -inf});
  const auto picks = runs.add({.op_type = "Multinomial", .opset = 7, .inputs = {logits},
                               .attrs = attrs({{"sample_size", int64_t{20000}}, {"dtype", int64_t{7}}, {"seed", 2.f}})});
  const auto results = runs.run();

  for (std::size_t node : {as_float, as_bool}) {
    const Tensor& y = results[node].first[0];
    INFO(dtype_name(y.dtype()));
    CHECK(y.dtype() == (node == as_bool ? DType::kBool : DType::kFloat32));
    const auto v = values_of(y);
    double zeros = 0, ones = 0, quarter = 0;
    for (std::size_t i = 0; i < v.size(); i += 3) {
      zeros += v[i];
      quarter += v[i + 1];
      ones += v[i + 2];
    }
    CHECK(zeros == 0);
    CHECK(ones == 30000);
    CHECK(std::abs(quarter / 30000 - 0.25) < 0.015);  // standard error 0.0025
    CHECK(share_equal(results[node].first[0], results[node].second[0]) < 0.9);
  }
  const Tensor& y = results[picks].first[0];
  REQUIRE(y.dtype() == DType::kInt64);
  REQUIRE(y.shape() == Shape{2, 20000});
  double counts[2][3] = {};
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t s = 0; s < 20000; ++s) {
      const int64_t c = y.data_as<int64_t>()[r * 20000 + s];
      REQUIRE((c >= 0 && c < 3));
      counts[r][c] += 1.0 / 20000;
    }
  CHECK(std::abs(counts[0][0] - 0.1) < 0.015);
  CHECK(std::abs(counts[0][1] - 0.2) < 0.015);
  CHECK(std::abs(counts[0][2] - 0.7) < 0.015);
  CHECK(std::abs(counts[1][0] - 0.5) < 0.02);
  CHECK(counts[1][2] == 0);  // probability 0: never drawn
  CHECK(test::compare_tensors(results[picks].replanned[0], y, 0, 0) == "");
}

TEST_CASE("cuda Dropout drops and scales in training, on the host", "[cuda]") {
  RandomRuns runs;
  const Tensor twos = Tensor::from_vector<float>({40000}, std::vector<float>(40000, 2.f));
  const Tensor quarter = Tensor::from_vector<float>({}, {0.25f});
  const auto training = runs.add({.op_type = "Dropout", .opset = 13, .inputs = {twos, quarter, scalar_bool(true)},
                                  .constant = {false, true, true}, .attrs = attrs({{"seed", 4.f}}), .outputs = 2});
  // training_mode and the ratio fed when running; false keeps the input as it is.
  const auto fed_off = runs.add({.op_type = "Dropout", .opset = 12, .inputs = {twos, quarter, scalar_bool(false)}, .outputs = 2});
  const auto fed_on = runs.add({.op_type = "Dropout", .opset = 12, .inputs = {twos, Tensor::from_vector<float>({}, {0.5f}),
                                                                                scalar_bool(true)}});
  // float16 data with a bfloat16 ratio fed when running (read on the host).
  const Tensor halves = test::run_one({.op_type = "Cast", .inputs = {twos}, .attrs = attrs({{"to", int64_t{10}}})});
  const Tensor half_ratio = test::run_one({.op_type = "Cast", .inputs = {Tensor::from_vector<float>({}, {0.5f})},
                                           .attrs = attrs({{"to", int64_t{16}}})});
  const auto narrow = runs.add({.op_type = "Dropout", .opset = 13, .inputs = {halves, half_ratio, scalar_bool(true)}});
  // Dropout-6 trains unless is_test is set; its mask has the data's type.
  const auto legacy = runs.add({.op_type = "Dropout", .opset = 6, .inputs = {twos}, .attrs = attrs({{"ratio", 0.1f}}),
                                .outputs = 2});
  // Dropout-7 never trains; its mask is all ones of the data's type.
  const auto no_training = runs.add({.op_type = "Dropout", .opset = 7, .inputs = {twos}, .outputs = 2});
  const auto results = runs.run();

  const float scale = 1 / (1 - 0.25f);
  {
    const auto y = values_of(results[training].first[0]), mask = values_of(results[training].first[1]);
    REQUIRE(results[training].first[1].dtype() == DType::kBool);
    double kept = 0;
    bool scaled = true;
    for (std::size_t i = 0; i < y.size(); ++i) {
      scaled = scaled && (mask[i] != 0 ? y[i] == static_cast<double>(2.f * scale) : y[i] == 0);
      kept += mask[i];
    }
    CHECK(scaled);
    CHECK(std::abs(kept / 40000 - 0.75) < 0.01);
    CHECK(test::compare_tensors(results[training].replanned[0], results[training].first[0], 0, 0) == "");
    CHECK(share_equal(results[training].first[1], results[training].second[1]) < 0.75);
  }
  CHECK(test::compare_tensors(results[fed_off].first[0], twos, 0, 0) == "");
  CHECK(moments(values_of(results[fed_off].first[1])).mean == 1.0);
  CHECK(std::abs(moments(values_of(results[fed_on].first[0])).mean - 2.0) < 0.05);  // half dropped, the rest doubled
  REQUIRE(results[narrow].first[0].dtype() == DType::kFloat16);
  std::size_t doubled = 0;
  for (double v : values_of(results[narrow].first[0])) doubled += v == 4.0;
  CHECK(std::abs(static_cast<double>(doubled) / 40000 - 0.5) < 0.01);  // the others are 0
  REQUIRE(results[legacy].first[1].dtype() == DType::kFloat32);
  CHECK(std::abs(moments(values_of(results[legacy].first[1])).mean - 0.9) < 0.01);
  CHECK(test::compare_tensors(results[no_training].first[0], twos, 0, 0) == "");
  CHECK(moments(values_of(results[no_training].first[1])).mean == 1.0);

  // A ratio outside [0, 1] fed when running is an error that says so.
  auto bad = test::run_partition_with({.op_type = "Dropout", .opset = 12,
                                       .inputs = {twos, Tensor::from_vector<float>({}, {1.5f}), scalar_bool(true)}},
                                      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().what.ends_with("ratio 1.5 is outside [0, 1]"));
  CHECK(bad.error().how == "feed a ratio in [0, 1)");
  // So is a ratio of more than one value.
  auto two = test::run_partition_with({.op_type = "Dropout", .opset = 12,
                                       .inputs = {twos, Tensor::from_vector<float>({2}, {0.1f, 0.2f}), scalar_bool(true)}},
                                      "cuda", test::run_partition_on_host);
  REQUIRE_FALSE(two);
  CHECK(two.error().what.ends_with("ratio holds 2 values; it must hold one"));
  CHECK(two.error().how == "give ratio as a scalar");
}

TEST_CASE("cuda declines random ops it cannot draw, saying why", "[cuda]") {
  auto reason = [](const NodeSpec& spec) {
    auto r = test::run_partition_with(spec, "cuda", [](const Partition& p, const std::vector<Tensor>&) -> Expected<std::vector<Tensor>> {
      auto plan = test::plan_for_host(p);
      if (!plan) return std::unexpected(plan.error());
      return std::vector<Tensor>{};
    });
    return r ? std::string("claimed") : r.error().why;
  };
  CHECK(reason({.op_type = "RandomUniform", .opset = 1, .inputs = {}}) == "RandomUniform: the ints attribute shape is required");
  CHECK(reason({.op_type = "RandomUniform", .opset = 1, .inputs = {},
                .attrs = attrs({{"shape", std::vector<int64_t>{2}}, {"low", 2.f}, {"high", 1.f}})}) ==
        "RandomUniform: low 2 is above high 1");
  CHECK(reason({.op_type = "RandomNormal", .opset = 1, .inputs = {},
                .attrs = attrs({{"shape", std::vector<int64_t>{2}}, {"dtype", int64_t{6}}})}) ==
        "RandomNormal: output type int32 is not supported; the cuda EP draws float, float16, bfloat16 and double");
  CHECK(reason({.op_type = "Multinomial", .opset = 7, .inputs = {test::random_tensor({2, 3, 4}, 3)}}) ==
        "Multinomial: input has rank 3; expected [batch_size, class_size]");
  CHECK(reason({.op_type = "Bernoulli", .opset = 15, .inputs = {test::random_tensor({4}, 4)},
                .attrs = attrs({{"dtype", int64_t{8}}})}) ==
        "Bernoulli: output type string is not supported; the cuda EP writes float, float16, bfloat16 and double, the 8- to "
        "64-bit integers and bool");
}
#endif  // NXRT_HAVE_CUDA
