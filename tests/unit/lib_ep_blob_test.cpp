// The EPContext payload envelope: what start_ep_blob writes, open_ep_blob reads back, and each
// way a payload can be wrong is refused naming the EP and the node.
#include <catch2/catch.hpp>

#include "nxrt/io/ep_blob.h"

using namespace nxrt;

namespace {

constexpr char kTestMagic[8] = {'N', 'X', 'R', 'T', 'T', 'E', 'S', '\0'};
constexpr EpBlobKind kTestBlob{"test", kTestMagic, 7, "nxrt compile-epcontext --ep test"};

std::vector<std::byte> payload(const EpBlobKind& kind, const nlohmann::ordered_json& header) {
  BlobWriter w = start_ep_blob(kind, header);
  w.put_string("the EP's own field");
  return std::move(w).finish_with_checksum();
}

}  // namespace

TEST_CASE("ep_blob: the envelope round-trips the header and leaves the EP's fields to read", "[lib][epcontext]") {
  const std::vector<std::byte> bytes = payload(kTestBlob, {{"partition", "p0"}});
  auto opened = open_ep_blob(bytes, kTestBlob, "node 'n'");
  REQUIRE(opened);
  CHECK(opened->header.at("partition") == "p0");
  auto field = opened->fields.get_string();
  REQUIRE(field);
  CHECK(*field == "the EP's own field");
  CHECK_FALSE(opened->fields.get<uint32_t>());  // nothing after it
}

TEST_CASE("ep_blob: another EP's payload, a corrupted one, another format and a header that is not an object",
          "[lib][epcontext]") {
  auto refused = [](std::span<const std::byte> bytes) {
    auto r = open_ep_blob(bytes, kTestBlob, "node 'n'");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK(r.error().how == "recompile the model with nxrt compile-epcontext --ep test");
    return r.error();
  };
  constexpr char kOtherMagic[8] = {'N', 'X', 'R', 'T', 'O', 'T', 'H', 'R'};
  const EpBlobKind other{"other", kOtherMagic, 7, "x"};
  Error e = refused(payload(other, {{"partition", "p0"}}));
  CHECK(e.what == "the payload of node 'n' is not a test EPContext blob");
  CHECK(e.why == "it does not start with the NXRTTES magic");

  std::vector<std::byte> flipped = payload(kTestBlob, {{"partition", "p0"}});
  flipped[12] ^= std::byte{1};
  CHECK(refused(flipped).what == "the test EPContext payload of node 'n' is corrupted");

  const EpBlobKind older{"test", kTestMagic, 6, "x"};
  e = refused(payload(older, {{"partition", "p0"}}));
  CHECK(e.what == "the test EPContext payload of node 'n' has format 6");
  CHECK(e.why == "this nxrt reads format 7");

  e = refused(payload(kTestBlob, nlohmann::ordered_json::array({1, 2})));
  CHECK(e.what == "the test EPContext payload of node 'n' has an unreadable header");
}
