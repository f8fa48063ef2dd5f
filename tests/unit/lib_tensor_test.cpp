// TensorView validation, strided copies, Tensor storage sharing, strings and DLPack.
#include <catch2/catch.hpp>
#include <dlpack/dlpack.h>

#include <cstdint>
#include <limits>
#include <numeric>

#include "nxrt/ep/buffer_pool.h"
#include "nxrt/ep/tensor.h"

using namespace nxrt;
using Catch::Matchers::Contains;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

std::vector<float> values_of(const Tensor& t) {
  const float* p = t.data_as<float>();
  return std::vector<float>(p, p + t.numel());
}

}  // namespace

TEST_CASE("TensorView::make refuses negative dims and numel overflow", "[lib][tensor]") {
  float data[4] = {};
  auto neg = TensorView::make(data, sizeof(data), DType::kFloat32, {2, -1}, {1, 1});
  REQUIRE_FALSE(neg);
  CHECK(neg.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(neg.error().what, Contains("[2,-1]"));

  auto overflow = TensorView::make(data, sizeof(data), DType::kFloat32, {kMax / 2, 3}, {3, 1});
  REQUIRE_FALSE(overflow);
  CHECK_THAT(overflow.error().what, Contains("overflows int64"));
}

TEST_CASE("TensorView::make refuses strides of another rank", "[lib][tensor]") {
  float data[6] = {};
  auto r = TensorView::make(data, sizeof(data), DType::kFloat32, {2, 3}, {1});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK(r.error().what == "strides of rank 1 for a shape of rank 2");
}

TEST_CASE("TensorView::make refuses byte ranges outside the data", "[lib][tensor]") {
  float data[6] = {};
  const std::size_t cap = sizeof(data);
  // Exactly fitting views are fine; one element more is not.
  CHECK(TensorView::make(data, cap, DType::kFloat32, {2, 3}, {3, 1}));
  CHECK_FALSE(TensorView::make(data, cap, DType::kFloat32, {7}, {1}));
  CHECK_FALSE(TensorView::make(data, cap, DType::kFloat32, {2, 3}, {3, 1}, 4));
  CHECK_FALSE(TensorView::make(data, cap, DType::kFloat32, {3}, {3}));  // reaches element 6
  CHECK(TensorView::make(data, cap, DType::kFloat32, {2}, {5}));         // elements 0 and 5

  // Negative strides address memory before element 0: the byte offset must cover them.
  auto reversed_ok = TensorView::make(data, cap, DType::kFloat32, {6}, {-1}, 5 * sizeof(float));
  REQUIRE(reversed_ok);
  CHECK(reversed_ok->data() == static_cast<const void*>(data + 5));
  auto before_start = TensorView::make(data, cap, DType::kFloat32, {6}, {-1}, 4 * sizeof(float));
  REQUIRE_FALSE(before_start);
  CHECK_THAT(before_start.error().what, Contains("reaches past its 24 bytes"));
  CHECK_FALSE(TensorView::make(data, cap, DType::kFloat32, {2, 3}, {3, -2}, 0));
  CHECK_FALSE(TensorView::make(data, cap, DType::kFloat32, {2}, {1}, -4));

  // An empty tensor addresses nothing, whatever its strides.
  CHECK(TensorView::make(data, 0, DType::kFloat32, {0, 5}, {5, 1}));
}

TEST_CASE("TensorView::make refuses huge strides whose byte extent overflows", "[lib][tensor]") {
  double data[4] = {};
  // (2^62 - 1) * (2^63 - 1) elements of 8 bytes: far beyond any 128-bit product check.
  auto up = TensorView::make(data, sizeof(data), DType::kFloat64, {int64_t{1} << 62}, {kMax});
  CHECK_FALSE(up);
  auto down = TensorView::make(data, sizeof(data), DType::kFloat64, {int64_t{1} << 62}, {-kMax}, 8);
  CHECK_FALSE(down);
  auto strings = TensorView::make(data, sizeof(data), DType::kString, {int64_t{1} << 61, 2}, {kMax, kMax});
  CHECK_FALSE(strings);
}

TEST_CASE("a valid strided view reads the right elements", "[lib][tensor]") {
  std::vector<float> data(12);
  std::iota(data.begin(), data.end(), 0.0f);
  // Every other column of the 3x4 matrix, starting at column 1: [[1,3],[5,7],[9,11]].
  auto v = TensorView::make(data.data(), data.size() * sizeof(float), DType::kFloat32, {3, 2}, {4, 2},
                            sizeof(float));
  REQUIRE(v);
  CHECK_FALSE(v->is_contiguous());
  CHECK(v->numel() == 6);
  const Tensor c = copy_to_contiguous(*v);
  CHECK(c.shape() == Shape{3, 2});
  CHECK(c.view().is_contiguous());
  CHECK(values_of(c) == std::vector<float>{1, 3, 5, 7, 9, 11});
}

TEST_CASE("copy_to_contiguous transposes a strided view", "[lib][tensor]") {
  const Tensor m = Tensor::from_vector<float>({2, 3}, {0, 1, 2, 3, 4, 5});
  TensorView t = m.view();
  t.shape = {3, 2};
  t.strides = {1, 3};  // the transpose, without a copy
  const Tensor c = copy_to_contiguous(t);
  CHECK(c.shape() == Shape{3, 2});
  CHECK(values_of(c) == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(c.storage() != m.storage());
}

TEST_CASE("Tensor::reshaped shares storage", "[lib][tensor]") {
  const Tensor a = Tensor::from_vector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = a.reshaped({3, 2});
  CHECK(b.shape() == Shape{3, 2});
  CHECK(b.storage() == a.storage());
  CHECK(b.view().data() == a.view().data());
  CHECK(b.view().strides == Shape{2, 1});
  a.mut_as<int32_t>()[5] = 60;
  CHECK(b.data_as<int32_t>()[5] == 60);
  CHECK(a.shape() == Shape{2, 3});  // the original keeps its shape
}

TEST_CASE("string tensors copy their strings", "[lib][tensor]") {
  Tensor s = Tensor::empty(DType::kString, {2, 2});
  auto* p = s.mut_as<std::string>();
  CHECK(p[3].empty());  // default-constructed
  const std::string long_text = "a string long enough to live on the heap, not in the small buffer";
  // Copy-assigned from std::string: g++ 12 warns falsely (-Wrestrict) on `= "literal"`.
  const std::vector<std::string> texts{"a", long_text, "c", "d"};
  for (int i = 0; i < 4; ++i) p[i] = texts[static_cast<std::size_t>(i)];
  TensorView transposed = s.view();
  transposed.strides = {1, 2};
  const Tensor copy = copy_to_contiguous(transposed);
  const auto* q = copy.data_as<std::string>();
  CHECK(q[0] == "a");
  CHECK(q[1] == "c");
  CHECK(q[2] == p[1]);
  CHECK(q[3] == "d");
  p[1] = texts[3];
  CHECK(q[2] == long_text);

  const Tensor plain = copy_to_contiguous(s.view());
  CHECK(plain.storage() != s.storage());
  CHECK(plain.data_as<std::string>()[1] == "d");
}

namespace {

// A producer-owned DLManagedTensor whose deleter counts its calls.
int g_deletes = 0;
void (*g_original_deleter)(DLManagedTensor*) = nullptr;

struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  DLManagedTensor managed{};
};

DLManagedTensor* produce(std::vector<float> data, std::vector<int64_t> shape, std::vector<int64_t> strides,
                         DLDeviceType device = kDLCPU) {
  auto* p = new Producer{std::move(data), std::move(shape), std::move(strides), {}};
  DLTensor& dl = p->managed.dl_tensor;
  dl.data = p->data.data();
  dl.device = DLDevice{device, 0};
  dl.ndim = static_cast<int32_t>(p->shape.size());
  dl.dtype = DLDataType{kDLFloat, 32, 1};
  dl.shape = p->shape.data();
  dl.strides = p->strides.empty() ? nullptr : p->strides.data();
  dl.byte_offset = 0;
  p->managed.manager_ctx = p;
  p->managed.deleter = [](DLManagedTensor* self) {
    ++g_deletes;
    delete static_cast<Producer*>(self->manager_ctx);
  };
  return &p->managed;
}

}  // namespace

TEST_CASE("DLPack round trip shares data and calls the deleter exactly once", "[lib][tensor][dlpack]") {
  g_deletes = 0;
  const Tensor t = Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto exported = to_dlpack(t);
  REQUIRE(exported);
  DLManagedTensor* m = *exported;
  CHECK(m->dl_tensor.ndim == 2);
  CHECK(m->dl_tensor.shape[0] == 2);
  CHECK(m->dl_tensor.shape[1] == 3);
  CHECK(m->dl_tensor.device.device_type == kDLCPU);
  // Count the exporter's deleter calls by wrapping it.
  g_original_deleter = m->deleter;
  m->deleter = [](DLManagedTensor* self) {
    ++g_deletes;
    g_original_deleter(self);
  };
  {
    auto imported = from_dlpack(m);
    REQUIRE(imported);
    CHECK(imported->dtype() == DType::kFloat32);
    CHECK(imported->shape() == Shape{2, 3});
    CHECK(values_of(*imported) == values_of(t));
    CHECK(imported->view().data() == t.view().data());  // no copy
    const Tensor second_owner = *imported;
    CHECK(g_deletes == 0);
  }
  CHECK(g_deletes == 1);
  CHECK(t.data_as<float>()[5] == 6);  // the original storage is still alive
}

TEST_CASE("DLPack import of a producer tensor releases it once", "[lib][tensor][dlpack]") {
  g_deletes = 0;
  {
    auto t = from_dlpack(produce({1, 2, 3, 4}, {4}, {}));
    REQUIRE(t);
    CHECK(values_of(*t) == std::vector<float>{1, 2, 3, 4});
    CHECK(g_deletes == 0);
  }
  CHECK(g_deletes == 1);
}

TEST_CASE("DLPack import of a non-contiguous tensor copies it into row-major order", "[lib][tensor][dlpack]") {
  g_deletes = 0;
  // Column-major 2x3: memory [0,1,2,3,4,5] holds rows [0,2,4] and [1,3,5].
  auto t = from_dlpack(produce({0, 1, 2, 3, 4, 5}, {2, 3}, {1, 2}));
  REQUIRE(t);
  CHECK(t->shape() == Shape{2, 3});
  CHECK(t->view().is_contiguous());
  CHECK(values_of(*t) == std::vector<float>{0, 2, 4, 1, 3, 5});
  CHECK(g_deletes == 1);  // the copy no longer needs the producer's memory
}

TEST_CASE("DLPack import refuses a non-CPU tensor and still releases it", "[lib][tensor][dlpack]") {
  g_deletes = 0;
  auto t = from_dlpack(produce({1, 2}, {2}, {}, kDLCUDA));
  REQUIRE_FALSE(t);
  CHECK(t.error().code == ErrorCode::kRuntime);
  CHECK_THAT(t.error().what, Contains("device type 2"));
  CHECK_THAT(t.error().why, Contains("host"));
  CHECK(g_deletes == 1);
}

TEST_CASE("an empty tensor whose other dimensions multiply past int64 has saturated strides", "[lib][tensor]") {
  // Found by fuzz_tensor_file: the strides of [0, 2^40, 2^40] overflowed (undefined behaviour).
  const Tensor t = Tensor::empty(DType::kFloat32, {0, int64_t{1} << 40, int64_t{1} << 40});
  CHECK(t.numel() == 0);
  CHECK(t.nbytes() == 0);
  CHECK(t.view().strides[0] == std::numeric_limits<int64_t>::max());
  CHECK(t.view().strides[1] == int64_t{1} << 40);
  CHECK(t.view().is_contiguous());
}

TEST_CASE("BufferPool gives a dropped tensor's block to the next tensor of its size", "[lib][tensor]") {
  auto pool = std::make_shared<BufferPool>();
  const void* block = nullptr;
  {
    Tensor t = pool->allocate(DType::kFloat32, {1000});
    block = t.data();
    CHECK(reinterpret_cast<std::uintptr_t>(block) % 64 == 0);
  }
  Tensor again = pool->allocate(DType::kInt32, {1000});  // 4000 bytes, as before
  CHECK(again.data() == block);
  CHECK(again.shape() == Shape{1000});
  Tensor busy = pool->allocate(DType::kFloat32, {1000});  // the block is taken: another one
  CHECK(busy.data() != block);
  Tensor larger = pool->allocate(DType::kFloat32, {1001});
  CHECK(larger.data() != block);
  // A tensor outliving its pool frees its own block (sanitizer builds see a leak or a double free).
  Tensor survivor = pool->allocate(DType::kFloat32, {16});
  pool.reset();
  survivor.mut_as<float>()[15] = 1.f;
  CHECK(survivor.data_as<float>()[15] == 1.f);
}

TEST_CASE("BufferPool gives a smaller tensor a free block up to twice its size", "[lib][tensor]") {
  auto pool = std::make_shared<BufferPool>();
  const void* block = nullptr;
  {
    Tensor t = pool->allocate(DType::kUInt8, {8000});
    block = t.data();
  }
  {
    Tensor small = pool->allocate(DType::kUInt8, {3000});  // 8000 is more than twice 3008: not this block
    CHECK(small.data() != block);
  }
  {
    Tensor half = pool->allocate(DType::kUInt8, {4000});  // within twice: the block
    CHECK(half.data() == block);
    CHECK(half.nbytes() == 4000);
  }
  Tensor whole = pool->allocate(DType::kUInt8, {8000});  // returned whole, it fits 8000 again
  CHECK(whole.data() == block);
}
