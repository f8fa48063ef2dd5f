// Error rendering and context chaining.
#include "nxrt/ep/error.h"

#include <fmt/format.h>

namespace nxrt {

Error& Error::add_context(std::string line) & {
  context.push_back(std::move(line));
  return *this;
}

Error&& Error::add_context(std::string line) && {
  context.push_back(std::move(line));
  return std::move(*this);
}

std::string Error::render() const {
  std::string out = fmt::format("error: {}\n", printable_text(what));
  if (!why.empty()) out += fmt::format("  why: {}\n", printable_text(why));
  if (!how.empty()) out += fmt::format("  how to fix: {}\n", printable_text(how));
  // Outermost context first reads like a call stack from the user's command inward.
  for (auto it = context.rbegin(); it != context.rend(); ++it) out += fmt::format("  while {}\n", printable_text(*it));
  return out;
}

std::string printable_text(std::string_view text, bool keep_newlines) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool kept = keep_newlines && (c == '\n' || c == '\t');
    if ((c < 0x20 && !kept) || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[++i]));  // C1 control, U+0080..U+009F
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

}  // namespace nxrt
