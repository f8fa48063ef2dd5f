// RE2 → std::regex ECMAScript translation for RegexFullMatch (RE2 syntax as documented in
// RE2's Syntax wiki: UTF-8 text, ASCII-only \d \w \s \b, no backreferences or lookaround).
#include "common/re2_pattern.h"

#include <array>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "common/utf8.h"

namespace nxrt::cpu {
namespace {

using namespace std::string_view_literals;

// One code point of well-formed UTF-8, newline included / excluded (RE2's `.` without the
// s flag). std::regex sees bytes, so a code point is spelled as its byte sequences.
constexpr std::string_view kMultiByte =
    "|[\\xC2-\\xDF][\\x80-\\xBF]|[\\xE0-\\xEF][\\x80-\\xBF]{2}|[\\xF0-\\xF4][\\x80-\\xBF]{3})";
const std::string kAnyCodePoint = fmt::format("(?:[\\x00-\\x7F]{}", kMultiByte);
const std::string kDot = fmt::format("(?:[\\x00-\\x09\\x0B-\\x7F]{}", kMultiByte);

constexpr int kMaxRepeat = 1000;  // RE2 rejects larger repetition counts

// The members of RE2's Perl classes \d \w \s, as bracket-expression ranges.
std::optional<std::string_view> perl_class(char c) {
  switch (c) {
    case 'd': return "0-9";
    case 'w': return "0-9A-Za-z_";
    case 's': return "\t\n\f\r ";
    default: return std::nullopt;
  }
}

// RE2's (ASCII) POSIX classes, as bracket-expression members.
std::optional<std::string_view> posix_class(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 14> kClasses{{
      {"alnum", "0-9A-Za-z"}, {"alpha", "A-Za-z"}, {"ascii", "\x00-\x7f"sv}, {"blank", "\t "},
      {"cntrl", "\x00-\x1f\x7f"sv}, {"digit", "0-9"}, {"graph", "!-~"}, {"lower", "a-z"},
      {"print", " -~"}, {"punct", "!-/:-@[-`{-~"}, {"space", "\t\n\v\f\r "}, {"upper", "A-Z"},
      {"word", "0-9A-Za-z_"}, {"xdigit", "0-9A-Fa-f"},
  }};
  for (const auto& [n, members] : kClasses)
    if (n == name) return members;
  return std::nullopt;
}

std::string hex_byte(unsigned char b) { return fmt::format("\\x{:02X}", b); }

// Bracket members as escaped bytes, a '-' after the first staying a range: "0-9" → "\x30-\x39".
std::string escape_members(std::string_view members) {
  std::string out;
  for (char c : members) out += c == '-' && !out.empty() ? "-" : hex_byte(static_cast<unsigned char>(c));
  return out;
}

// One code point (newline included) that is not among the bracket members.
std::string outside(const std::string& members) { return fmt::format("(?:(?![{}]){})", members, kAnyCodePoint); }

bool is_ascii_punct(char c) {
  return (c >= '!' && c <= '/') || (c >= ':' && c <= '@') || (c >= '[' && c <= '`') || (c >= '{' && c <= '~');
}

using Failure = std::unexpected<std::string>;

class Translator {
 public:
  explicit Translator(std::string_view re) : re_(re) {}

  std::expected<std::string, std::string> run() {
    while (pos_ < re_.size()) {
      if (auto r = step(); !r) return std::unexpected(std::move(r.error()));
    }
    return std::move(out_);
  }

 private:
  Failure fail(std::size_t at, std::string_view construct, std::string_view why) const {
    return Failure(fmt::format("'{}' at offset {}: {}", construct, at, why));
  }

  bool next_is(std::string_view s) const { return re_.substr(pos_, s.size()) == s; }

  std::expected<void, std::string> step() {
    const std::size_t at = pos_;
    const char c = re_[pos_];
    switch (c) {
      case '\\': return escape();
      case '[': return bracket();
      case '(': return group();
      case '{': return repetition();
      case '.': ++pos_; out_ += kDot; return {};
      case ')': case '|': case '^': case '$': case '*': case '+': case '?':
        out_.push_back(c);
        ++pos_;
        return {};
      default: {
        auto cp = code_point();
        if (!cp) return fail(at, re_.substr(at, 1), "the pattern is not valid UTF-8, which RE2 rejects");
        literal(*cp);
        return {};
      }
    }
  }

  std::optional<char32_t> code_point() { return next_code_point(re_, pos_); }

  // A literal code point; a multi-byte one is grouped so that a quantifier repeats all of it.
  void literal(char32_t cp) {
    if (cp < 0x80) {
      const auto c = static_cast<char>(cp);
      out_ += (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z')
                  ? std::string(1, c)
                  : hex_byte(static_cast<unsigned char>(c));
      return;
    }
    std::string bytes;
    append_utf8(cp, bytes);
    out_ += "(?:";
    for (char b : bytes) out_ += hex_byte(static_cast<unsigned char>(b));
    out_ += ")";
  }

  // `(?:`, `(?P<name>`, `(?<name>` and `(` translate; flags and lookaround do not.
  std::expected<void, std::string> group() {
    const std::size_t at = pos_;
    ++pos_;
    if (!next_is("?")) {
      out_ += "(";
      return {};
    }
    if (next_is("?:")) {
      pos_ += 2;
      out_ += "(?:";
      return {};
    }
    if (next_is("?=") || next_is("?!") || next_is("?<=") || next_is("?<!"))
      return fail(at, re_.substr(at, next_is("?<") ? 4 : 3), "lookaround, which RE2 does not support");
    if (next_is("?P=")) return fail(at, "(?P=", "a backreference, which RE2 does not support");
    if (next_is("?P<") || next_is("?<")) {
      const std::size_t close = re_.find('>', pos_);
      if (close == std::string_view::npos) return fail(at, re_.substr(at, 3), "an unterminated group name");
      pos_ = close + 1;
      out_ += "(";  // a name does not change what the group matches
      return {};
    }
    const std::size_t end = re_.find_first_of(":)", pos_);
    return fail(at, re_.substr(at, end == std::string_view::npos ? 2 : end - at + 1),
                "inline flags (i, m, s, U), which std::regex cannot scope to part of a pattern");
  }

  // `{n}`, `{n,}` or `{n,m}` is a repetition; any other `{` is a literal, as in RE2.
  std::expected<void, std::string> repetition() {
    const std::size_t at = pos_;
    const std::size_t close = re_.find('}', pos_);
    auto number = [&](std::size_t& i) -> std::optional<int> {
      if (i >= close || re_[i] < '0' || re_[i] > '9') return std::nullopt;
      int n = 0;
      for (; i < close && re_[i] >= '0' && re_[i] <= '9'; ++i) n = std::min(n * 10 + (re_[i] - '0'), kMaxRepeat + 1);
      return n;
    };
    std::size_t i = pos_ + 1;
    std::optional<int> lo = close == std::string_view::npos ? std::nullopt : number(i);
    std::optional<int> hi = lo;
    bool valid = lo.has_value();
    if (valid && i < close && re_[i] == ',') {
      ++i;
      hi = i == close ? std::optional<int>(kMaxRepeat) : number(i);
      valid = hi.has_value();
    }
    if (!valid || i != close) {
      ++pos_;
      out_ += hex_byte('{');
      return {};
    }
    const auto text = re_.substr(at, close - at + 1);
    if (*lo > kMaxRepeat || *hi > kMaxRepeat) return fail(at, text, "a repetition count above 1000, which RE2 rejects");
    if (*hi < *lo) return fail(at, text, "a repetition whose maximum is below its minimum, which RE2 rejects");
    out_ += text;
    pos_ = close + 1;
    return {};
  }

  std::expected<void, std::string> escape() {
    const std::size_t at = pos_;
    if (pos_ + 1 >= re_.size()) return fail(at, "\\", "a trailing backslash, which RE2 rejects");
    const char c = re_[pos_ + 1];
    pos_ += 2;
    if (auto members = perl_class(c)) {
      out_ += fmt::format("[{}]", escape_members(*members));
      return {};
    }
    if (c == 'D' || c == 'W' || c == 'S') {
      const char lower = static_cast<char>(c - 'A' + 'a');
      out_ += outside(escape_members(*perl_class(lower)));
      return {};
    }
    switch (c) {
      case 'b': out_ += "\\b"; return {};
      case 'B': out_ += "\\B"; return {};
      case 'A': out_ += "^"; return {};
      case 'z': out_ += "$"; return {};
      case 'Q': return quoted();
      case 'x': {
        auto cp = hex_escape(at);
        if (!cp) return std::unexpected(std::move(cp.error()));
        literal(*cp);
        return {};
      }
      case 'p': case 'P': return fail(at, re_.substr(at, 3), "a Unicode class, which std::regex cannot express");
      case 'C': return fail(at, "\\C", "a single byte inside a code point, which std::regex cannot express");
      default: break;
    }
    if (auto cp = control_escape(c)) {
      literal(*cp);
      return {};
    }
    if (c >= '0' && c <= '9')
      return fail(at, re_.substr(at, 2), "an octal escape or backreference, which this translation does not support");
    if (is_ascii_punct(c)) {
      literal(static_cast<char32_t>(c));
      return {};
    }
    return fail(at, re_.substr(at, 2), "an escape RE2 does not define");
  }

  static std::optional<char32_t> control_escape(char c) {
    switch (c) {
      case 'a': return 0x07;
      case 'f': return 0x0C;
      case 't': return 0x09;
      case 'n': return 0x0A;
      case 'r': return 0x0D;
      case 'v': return 0x0B;
      default: return std::nullopt;
    }
  }

  // \Q...\E: everything up to \E (or the end) is literal.
  std::expected<void, std::string> quoted() {
    const std::size_t end = re_.find("\\E", pos_);
    const std::size_t stop = end == std::string_view::npos ? re_.size() : end;
    while (pos_ < stop) {
      const std::size_t at = pos_;
      auto cp = code_point();
      if (!cp) return fail(at, re_.substr(at, 1), "the pattern is not valid UTF-8, which RE2 rejects");
      literal(*cp);
    }
    if (end != std::string_view::npos) pos_ += 2;
    return {};
  }

  // `\xHH` or `\x{H...}` after pos_ moved past `\x`.
  std::expected<char32_t, std::string> hex_escape(std::size_t at) {
    const bool braced = next_is("{");
    const std::size_t begin = pos_ + (braced ? 1 : 0);
    const std::size_t end = braced ? re_.find('}', begin) : begin + 2;
    if (end == std::string_view::npos || end > re_.size() || end == begin)
      return Failure(fmt::format("'{}' at offset {}: a malformed hex escape, which RE2 rejects", re_.substr(at), at));
    char32_t cp = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const char h = re_[i];
      const int v = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
      if (v < 0 || cp > 0x10FFFF)
        return Failure(fmt::format("'{}' at offset {}: a malformed hex escape, which RE2 rejects",
                                   re_.substr(at, end + (braced ? 1 : 0) - at), at));
      cp = cp * 16 + static_cast<char32_t>(v);
    }
    if (cp > 0x10FFFF) return Failure(fmt::format("'\\x' at offset {}: a code point above U+10FFFF", at));
    pos_ = end + (braced ? 1 : 0);
    return cp;
  }

  // One member of a bracket expression: a code point, or the members of \d \w \s.
  struct Member {
    std::optional<char32_t> cp;
    std::string_view members;
  };

  std::expected<Member, std::string> bracket_member() {
    const std::size_t at = pos_;
    if (re_[pos_] != '\\') {
      auto cp = code_point();
      if (!cp) return fail(at, re_.substr(at, 1), "the pattern is not valid UTF-8, which RE2 rejects");
      return Member{cp, {}};
    }
    if (pos_ + 1 >= re_.size()) return fail(at, "\\", "a trailing backslash, which RE2 rejects");
    const char c = re_[pos_ + 1];
    pos_ += 2;
    if (auto members = perl_class(c)) return Member{std::nullopt, *members};
    if (c == 'x') {
      auto cp = hex_escape(at);
      if (!cp) return std::unexpected(std::move(cp.error()));
      return Member{*cp, {}};
    }
    if (auto cp = control_escape(c)) return Member{cp, {}};
    if (is_ascii_punct(c)) return Member{static_cast<char32_t>(c), {}};
    return fail(at, re_.substr(at, 2), "an escape this translation does not support inside brackets");
  }

  std::expected<void, std::string> bracket() {
    const std::size_t at = pos_;
    ++pos_;
    const bool negated = next_is("^");
    if (negated) ++pos_;
    std::string members;
    auto ascii_only = [&](char32_t cp, std::size_t where) -> std::expected<void, std::string> {
      if (cp < 0x80) return {};
      return fail(where, re_.substr(where, pos_ - where),
                  fmt::format("the non-ASCII character U+{:04X} inside brackets; std::regex matches bytes, "
                              "not code points", static_cast<uint32_t>(cp)));
    };
    for (bool first = true;; first = false) {
      if (pos_ >= re_.size()) return fail(at, re_.substr(at), "a bracket expression without its ']', which RE2 rejects");
      if (re_[pos_] == ']' && !first) {
        ++pos_;
        break;
      }
      if (next_is("[:")) {
        const std::size_t close = re_.find(":]", pos_ + 2);
        const auto name = close == std::string_view::npos ? std::string_view{} : re_.substr(pos_ + 2, close - pos_ - 2);
        auto cls = posix_class(name);
        if (!cls)
          return fail(pos_, re_.substr(pos_, close == std::string_view::npos ? 2 : close + 2 - pos_),
                      "a POSIX class this translation does not support");
        members += escape_members(*cls);
        pos_ = close + 2;
        continue;
      }
      const std::size_t member_at = pos_;
      auto lo = bracket_member();
      if (!lo) return std::unexpected(std::move(lo.error()));
      if (!lo->cp) {
        members += escape_members(lo->members);
        continue;
      }
      if (auto r = ascii_only(*lo->cp, member_at); !r) return r;
      members += hex_byte(static_cast<unsigned char>(*lo->cp));
      if (!next_is("-") || pos_ + 1 >= re_.size() || re_[pos_ + 1] == ']') continue;
      ++pos_;
      const std::size_t hi_at = pos_;
      auto hi = bracket_member();
      if (!hi) return std::unexpected(std::move(hi.error()));
      if (!hi->cp) return fail(member_at, re_.substr(member_at, pos_ - member_at), "a range ending in a class, which RE2 rejects");
      if (auto r = ascii_only(*hi->cp, hi_at); !r) return r;
      if (*hi->cp < *lo->cp) return fail(member_at, re_.substr(member_at, pos_ - member_at), "a reversed range, which RE2 rejects");
      members += fmt::format("-{}", hex_byte(static_cast<unsigned char>(*hi->cp)));
    }
    // A negated class consumes one code point (newline included) outside the set.
    out_ += negated ? outside(members) : fmt::format("[{}]", members);
    return {};
  }

  std::string_view re_;
  std::size_t pos_ = 0;
  std::string out_;
};

}  // namespace

std::expected<std::string, std::string> re2_to_ecmascript(std::string_view re2) { return Translator(re2).run(); }

}  // namespace nxrt::cpu
