// UTF-8 encoding and decoding of single code points, for the string kernels.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace nxrt::cpu {

// The code point that starts at s[pos], advancing pos past it; nullopt (pos unchanged) when
// the bytes there are not a UTF-8 sequence.
std::optional<char32_t> next_code_point(std::string_view s, std::size_t& pos);

// Appends the UTF-8 bytes of cp.
void append_utf8(char32_t cp, std::string& out);

}  // namespace nxrt::cpu
