// Error: rendering, exit codes and context chaining.
#include <catch2/catch.hpp>

#include "nxrt/ep/error.h"

using namespace nxrt;
using Catch::Matchers::Contains;

TEST_CASE("Error::render prints what, why, how and the context outermost first", "[lib][error]") {
  Error e{ErrorCode::kInvalidInput, "model.onnx: bad tensor", "raw_data is short", "re-export the model", {}};
  e.add_context("reading initializer 'W'");  // innermost, added first
  e.add_context("loading 'model.onnx'");      // outermost, added last
  CHECK(e.render() ==
        "error: model.onnx: bad tensor\n"
        "  why: raw_data is short\n"
        "  how to fix: re-export the model\n"
        "  while loading 'model.onnx'\n"
        "  while reading initializer 'W'\n");
}

TEST_CASE("Error::render leaves out empty why and how lines", "[lib][error]") {
  Error e{ErrorCode::kRuntime, "it broke", {}, {}, {}};
  CHECK(e.render() == "error: it broke\n");
  e.how = "try again";
  CHECK(e.render() == "error: it broke\n  how to fix: try again\n");
}

TEST_CASE("Error::exit_code follows the command's exit codes", "[lib][error]") {
  CHECK(Error{ErrorCode::kRuntime, "x", {}, {}, {}}.exit_code() == 1);
  CHECK(Error{ErrorCode::kUsage, "x", {}, {}, {}}.exit_code() == 2);
  CHECK(Error{ErrorCode::kInvalidInput, "x", {}, {}, {}}.exit_code() == 3);
  CHECK(Error{ErrorCode::kUnclaimed, "x", {}, {}, {}}.exit_code() == 4);
  CHECK(Error{ErrorCode::kMismatch, "x", {}, {}, {}}.exit_code() == 5);
}

namespace {

Expected<int> innermost() { return fail(ErrorCode::kUsage, "bad flag '--x'", "it is unknown", "see --help"); }

Expected<int> middle() {
  auto r = innermost();
  if (!r) return forward_error(std::move(r), "parsing flags");
  return r;
}

Expected<int> outer() {
  auto r = middle();
  if (!r) return forward_error(std::move(r), "running 'nxrt run'");
  return r;
}

}  // namespace

TEST_CASE("add_context chains one line per layer and keeps code, what, why and how", "[lib][error]") {
  auto r = outer();
  REQUIRE_FALSE(r);
  const Error& e = r.error();
  CHECK(e.code == ErrorCode::kUsage);
  CHECK(e.exit_code() == 2);
  CHECK(e.what == "bad flag '--x'");
  CHECK(e.why == "it is unknown");
  CHECK(e.how == "see --help");
  REQUIRE(e.context == std::vector<std::string>{"parsing flags", "running 'nxrt run'"});
  const std::string text = e.render();
  CHECK(text.find("while running 'nxrt run'") < text.find("while parsing flags"));

  // Both overloads return the error itself, so calls chain.
  Error lvalue{ErrorCode::kRuntime, "w", {}, {}, {}};
  lvalue.add_context("a").add_context("b");
  CHECK(lvalue.context == std::vector<std::string>{"a", "b"});
  Error rvalue = Error{ErrorCode::kRuntime, "w", {}, {}, {}}.add_context("c").add_context("d");
  CHECK(rvalue.context == std::vector<std::string>{"c", "d"});
  CHECK_THAT(rvalue.render(), Contains("  while d\n  while c\n"));
}

TEST_CASE("printable_text escapes control characters and keeps the rest", "[lib][error]") {
  CHECK(printable_text("plain name/with: ünïcode") == "plain name/with: ünïcode");
  CHECK(printable_text("a\x1b[31mred\x07") == "a\\x1b[31mred\\x07");
  CHECK(printable_text("del\x7f") == "del\\x7f");
  CHECK(printable_text("csi\xc2\x9b") == "csi\\u009b");  // C1 control, U+009B
  CHECK(printable_text("line\nnext\ttab") == "line\nnext\ttab");
  CHECK(printable_text("line\nnext\ttab", /*keep_newlines=*/false) == "line\\x0anext\\x09tab");
  const Error e{ErrorCode::kInvalidInput, "node 'x\x1b]0;t\x07'", "why\x1b", "how\x1b", {"ctx\x1b"}};
  CHECK(e.render().find('\x1b') == std::string::npos);
  CHECK_THAT(e.render(), Contains("node 'x\\x1b]0;t\\x07'"));
}
