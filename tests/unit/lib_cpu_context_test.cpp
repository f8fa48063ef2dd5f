// The cpu EP's EPContext: save and load give the same outputs; damaged or foreign blobs
// are refused with a message that says to recompile.
#include <catch2/catch.hpp>

#include <cstring>

#include "cpu/context_blob.h"
#include "cpu_partition_fixture.h"
#include "kernel_harness.h"
#include "nxrt/io/blob_codec.h"
#include "lib_test_util.h"
#include "nxrt/ep/epcontext.h"
#include "nxrt/session/claims.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

namespace {

// The constant weight W travels inside the blob.
struct CpuContextFixture : CpuAddReluPartition {
  CpuContextFixture() { capable = dynamic_cast<ContextCapable*>(ep.get()); }

  EpContext saved() {
    auto compiled = ep->compile(partition);
    if (!compiled) throw std::runtime_error(compiled.error().render());
    auto ctx = capable->save_context(partition, **compiled);
    if (!ctx) throw std::runtime_error(ctx.error().render());
    return std::move(*ctx);
  }

  Expected<std::unique_ptr<CompiledPartition>> load(std::vector<std::byte> payload) {
    EpContext ctx;
    ctx.source = std::string(cpu::kContextSource);
    ctx.owned = std::move(payload);
    return capable->load_context(ctx, partition);
  }

  ContextCapable* capable = nullptr;
};

const Tensor kInput = Tensor::from_vector<float>({4}, {2, 3, -1, 1});

template <class T>
void put(std::vector<std::byte>& out, T v) {
  const auto* p = reinterpret_cast<const std::byte*>(&v);
  out.insert(out.end(), p, p + sizeof(T));
}

}  // namespace

TEST_CASE("a cpu EPContext round trip gives the original outputs", "[lib][epcontext][cpu]") {
  CpuContextFixture f;
  REQUIRE(f.capable);
  auto compiled = f.ep->compile(f.partition);
  REQUIRE(compiled);
  auto expected = (*compiled)->run(std::vector<RuntimeValue>{kInput});
  REQUIRE(expected);
  CHECK(compare_tensors((*expected)[0], Tensor::from_vector<float>({4}, {3, 2, 0, 0})) == "");

  auto ctx = f.capable->save_context(f.partition, **compiled);
  REQUIRE(ctx);
  CHECK(ctx->source == "nxrt.cpu");
  CHECK(ctx->partition_name == "cpu_0");
  CHECK(ctx->hardware_architecture == cpu::host_isa());
  CHECK_FALSE(ctx->payload().empty());

  auto restored = f.capable->load_context(*ctx, f.partition);
  REQUIRE(restored);
  auto actual = (*restored)->run(std::vector<RuntimeValue>{kInput});
  REQUIRE(actual);
  REQUIRE(actual->size() == 1);
  CHECK(compare_tensors((*actual)[0], (*expected)[0], 0, 0) == "");

  // Saving is deterministic: the same partition gives the same bytes.
  CHECK(f.saved().owned == ctx->owned);
}

TEST_CASE("a cpu EPContext payload with one flipped byte is refused", "[lib][epcontext][cpu]") {
  CpuContextFixture f;
  std::vector<std::byte> payload = f.saved().owned;
  for (std::size_t at : {std::size_t{9}, payload.size() / 2, payload.size() - 1}) {
    INFO("flipped byte " << at);
    std::vector<std::byte> damaged = payload;
    damaged[at] ^= std::byte{0x10};
    auto r = f.load(damaged);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK_THAT(r.error().what, Contains("is corrupted"));
    CHECK_THAT(r.error().why, Contains("checksum"));
    CHECK_THAT(r.error().how, Contains("recompile"));
  }
}

TEST_CASE("a truncated cpu EPContext payload is refused", "[lib][epcontext][cpu]") {
  CpuContextFixture f;
  const std::vector<std::byte> payload = f.saved().owned;
  for (std::size_t keep : {std::size_t{0}, std::size_t{7}, std::size_t{20}, payload.size() / 2, payload.size() - 1}) {
    INFO("kept " << keep << " bytes");
    auto r = f.load(std::vector<std::byte>(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(keep)));
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK_THAT(r.error().how, Contains("recompile"));
  }
}

TEST_CASE("a cpu EPContext payload whose sizes lie is refused even with a valid checksum", "[lib][epcontext][cpu]") {
  CpuContextFixture f;
  std::vector<std::byte> forged;
  for (char c : std::string("NXRTCPU", 8)) forged.push_back(static_cast<std::byte>(c));
  put<uint32_t>(forged, 2);  // the current format
  put<uint64_t>(forged, uint64_t{1} << 40);  // a header "longer" than the blob
  put<uint64_t>(forged, fnv1a(forged));
  auto r = f.load(forged);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, Contains("is truncated"));
  CHECK_THAT(r.error().how, Contains("recompile"));
}

TEST_CASE("a cpu EPContext blob compiled for another ISA is refused", "[lib][epcontext][cpu]") {
  CpuContextFixture f;
  auto blob = cpu::decode_blob(f.saved().owned, "test");
  REQUIRE(blob);
  CHECK(blob->isa == cpu::host_isa());
  CHECK(blob->partition_name == "cpu_0");
  blob->isa = "riscv64-rvv";
  auto r = f.load(cpu::encode_blob(*blob));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, Contains("was compiled for another host"));
  CHECK_THAT(r.error().why, Contains("compiled for"));
  CHECK_THAT(r.error().why, Contains("riscv64-rvv"));
  CHECK_THAT(r.error().how, Contains("recompile"));

  // The same blob with this host's ISA loads: only the header differed.
  blob->isa = cpu::host_isa();
  CHECK(f.load(cpu::encode_blob(*blob)));
}
