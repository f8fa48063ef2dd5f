// Error (code, what, why, how to fix, context) and Expected<T>; the only error type of nxrt.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace nxrt {

// Exit codes of the nxrt command (ARCHITECTURE.md §5); the library only carries them.
enum class ErrorCode : int {
  kRuntime = 1,       // failure while running
  kUsage = 2,         // bad flags or arguments
  kInvalidInput = 3,  // invalid model or file
  kUnclaimed = 4,     // a node no EP claims
  kMismatch = 5,      // outputs differ from the expected ones
};

struct Error {
  ErrorCode code = ErrorCode::kRuntime;
  std::string what;                  // what went wrong, with actual values
  std::string why;                   // the cause, as far as known
  std::string how;                   // how to fix it
  std::vector<std::string> context;  // innermost first: one line added per layer

  // Adds one line of context ("while loading 'model.onnx'") and returns *this.
  Error& add_context(std::string line) &;
  Error&& add_context(std::string line) &&;
  int exit_code() const { return static_cast<int>(code); }
  // Multi-line text for people: "error: what\n  why: ...\n  how to fix: ...\n  while: ...",
  // with control characters escaped (see printable_text).
  std::string render() const;
};

// `text` safe to print on a terminal: control characters (C0 but newline and tab when
// `keep_newlines`, DEL, C1) become \xNN or \u00NN escapes, so a name in a hostile model
// cannot move the cursor or recolour the screen. Other UTF-8 passes through unchanged.
std::string printable_text(std::string_view text, bool keep_newlines = true);

template <class T>
using Expected = std::expected<T, Error>;

// Shorthand for `return fail(...)` in functions returning Expected<T>.
inline std::unexpected<Error> fail(ErrorCode code, std::string what, std::string why = {},
                                   std::string how = {}) {
  return std::unexpected(Error{code, std::move(what), std::move(why), std::move(how), {}});
}

inline std::unexpected<Error> fail(Error error) { return std::unexpected(std::move(error)); }

// Returns the error of an Expected with one more line of context.
template <class T>
std::unexpected<Error> forward_error(Expected<T>&& e, std::string context_line) {
  return std::unexpected(std::move(e.error()).add_context(std::move(context_line)));
}

}  // namespace nxrt
