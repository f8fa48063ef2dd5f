// Translation of RE2 patterns (the syntax ONNX's RegexFullMatch uses) into std::regex
// ECMAScript patterns of the same meaning over UTF-8 bytes, or the construct that has none.
#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace nxrt::cpu {

// The ECMAScript pattern that matches exactly the UTF-8 strings `re2` matches, or a reason
// naming the construct (and its byte offset) that RE2 rejects or that this translation
// cannot express: flags, Unicode classes, lookaround, backreferences, non-ASCII characters
// inside brackets. A character class or `.` consumes one code point, as in RE2.
std::expected<std::string, std::string> re2_to_ecmascript(std::string_view re2);

}  // namespace nxrt::cpu
