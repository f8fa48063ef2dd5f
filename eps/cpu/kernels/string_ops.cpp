// String ops: StringNormalizer (case mapping, stopword removal), TfIdfVectorizer (n-gram
// counts over int or string tokens), and opset 20's StringConcat, StringSplit, RegexFullMatch.
#include <algorithm>
#include <locale>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/broadcast.h"
#include "common/kernel_util.h"
#include "common/large_stack.h"
#include "common/re2_pattern.h"
#include "common/utf8.h"
#include "kernels/kernels.h"

namespace nxrt::cpu {
namespace {

// ---- StringNormalizer ------------------------------------------------------------------

enum class CaseChange { kNone, kLower, kUpper };

std::optional<CaseChange> parse_case_change(const std::string& s) {
  if (s == "NONE") return CaseChange::kNone;
  if (s == "LOWER") return CaseChange::kLower;
  if (s == "UPPER") return CaseChange::kUpper;
  return std::nullopt;
}

// The named locale's UTF-8 variant when installed, else C.UTF-8, else the classic locale
// (whose wide ctype maps ASCII only).
std::locale find_locale(const std::string& name) {
  for (const std::string& candidate : {name + ".UTF-8", name + ".utf8", name, std::string("C.UTF-8")}) {
    try {
      return std::locale(candidate);
    } catch (const std::runtime_error&) {
    }
  }
  return std::locale::classic();
}

// Decodes UTF-8 into code points; nullopt when the bytes are not valid UTF-8.
std::optional<std::u32string> decode_utf8(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto cp = next_code_point(s, i);
    if (!cp) return std::nullopt;
    out.push_back(*cp);
  }
  return out;
}

// Maps the case of UTF-8 text with a locale's wide ctype facet; bytes that are not valid
// UTF-8 get ASCII-only mapping so that no input is rejected or mangled.
class CaseMapper {
 public:
  explicit CaseMapper(const std::string& locale_name)
      : locale_(find_locale(locale_name)), ctype_(std::use_facet<std::ctype<wchar_t>>(locale_)) {}

  std::string map(const std::string& s, CaseChange change) const {
    if (change == CaseChange::kNone) return s;
    const bool upper = change == CaseChange::kUpper;
    const auto cps = decode_utf8(s);
    if (!cps) {
      std::string out = s;
      for (char& c : out) c = upper ? ascii_upper(c) : ascii_lower(c);
      return out;
    }
    std::string out;
    out.reserve(s.size());
    for (char32_t cp : *cps) {
      const auto w = static_cast<wchar_t>(cp);
      append_utf8(static_cast<char32_t>(upper ? ctype_.toupper(w) : ctype_.tolower(w)), out);
    }
    return out;
  }

 private:
  static char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }
  static char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

  std::locale locale_;
  const std::ctype<wchar_t>& ctype_;
};

KernelMatch check_string_normalizer(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kString}));
  const auto action = ctx.attrs().string_or("case_change_action", "NONE");
  NXRT_REQUIRE(parse_case_change(action), "StringNormalizer: case_change_action '{}' is not one of LOWER, UPPER, NONE",
               action);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 1 || *rank == 2, "StringNormalizer: input has rank {}; the spec allows [C] or [1, C]",
               *rank);
  const auto shape = ctx.input_static_shape(0);
  NXRT_REQUIRE(!shape || shape->size() != 2 || (*shape)[0] == 1,
               "StringNormalizer: input shape {} is 2-D with a first dim other than 1; the spec allows [C] or [1, C]",
               shape_to_string(*shape));
  return KernelMatch::supported();
}

class StringNormalizerKernel final : public Kernel {
 public:
  StringNormalizerKernel(CaseChange change, bool case_sensitive, const std::vector<std::string>& stopwords,
                         const std::string& locale)
      : change_(change), case_sensitive_(case_sensitive), mapper_(locale) {
    for (const auto& w : stopwords) stopwords_.insert(comparable(w));
  }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().size() == 2 && x.shape()[0] != 1)
      return fail(ErrorCode::kRuntime,
                  fmt::format("StringNormalizer: input shape {} has a first dim other than 1", shape_to_string(x.shape())),
                  "the spec allows inputs of shape [C] or [1, C]", "feed one row of strings");
    const std::string* in = x.data_as<std::string>();
    std::vector<std::string> kept;
    for (int64_t i = 0; i < x.numel(); ++i)
      if (!stopwords_.contains(comparable(in[i]))) kept.push_back(mapper_.map(in[i], change_));
    // Everything filtered: the spec's single empty string keeps the output non-empty.
    if (kept.empty()) kept.emplace_back();
    const auto n = static_cast<int64_t>(kept.size());
    auto y = ctx.output(0, DType::kString, x.shape().size() == 2 ? Shape{1, n} : Shape{n});
    if (!y) return std::unexpected(std::move(y.error()));
    std::move(kept.begin(), kept.end(), y->mut_as<std::string>());
    return {};
  }

 private:
  std::string comparable(const std::string& s) const {
    return case_sensitive_ ? s : mapper_.map(s, CaseChange::kLower);
  }

  CaseChange change_;
  bool case_sensitive_;
  CaseMapper mapper_;
  std::set<std::string> stopwords_;
};

// ---- TfIdfVectorizer ---------------------------------------------------------------------

enum class TfIdfMode { kTf, kIdf, kTfIdf };

std::optional<TfIdfMode> parse_tfidf_mode(const std::string& s) {
  if (s == "TF") return TfIdfMode::kTf;
  if (s == "IDF") return TfIdfMode::kIdf;
  if (s == "TFIDF") return TfIdfMode::kTfIdf;
  return std::nullopt;
}

// Number of n-grams the pool holds: ngram_counts[k] is where the (k+1)-grams start.
std::optional<int64_t> pool_ngram_count(const std::vector<int64_t>& counts, int64_t pool_size) {
  int64_t total = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    const int64_t begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : pool_size;
    const auto n = static_cast<int64_t>(k) + 1;
    if (begin < 0 || end < begin || end > pool_size || (end - begin) % n != 0) return std::nullopt;
    total += (end - begin) / n;
  }
  return total;
}

KernelMatch check_tfidf(const NodeContext& ctx) {
  const auto& a = ctx.attrs();
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kString, DType::kInt32, DType::kInt64}));
  const auto mode = a.string_or("mode", "");
  NXRT_REQUIRE(parse_tfidf_mode(mode), "TfIdfVectorizer: mode '{}' is not one of TF, IDF, TFIDF", mode);
  const auto min_n = a.get_int("min_gram_length"), max_n = a.get_int("max_gram_length");
  const auto skip = a.get_int("max_skip_count");
  NXRT_REQUIRE(min_n && max_n && skip,
               "TfIdfVectorizer: the attributes min_gram_length, max_gram_length and max_skip_count are required");
  NXRT_REQUIRE(*min_n >= 1 && *max_n >= *min_n,
               "TfIdfVectorizer: gram lengths [{}, {}] must satisfy 1 <= min_gram_length <= max_gram_length", *min_n,
               *max_n);
  NXRT_REQUIRE(*skip >= 0, "TfIdfVectorizer: max_skip_count {} is negative", *skip);
  const bool strings = ctx.input_dtype(0) == DType::kString;
  NXRT_REQUIRE(strings ? a.has("pool_strings") : a.has("pool_int64s"),
               "TfIdfVectorizer: {} input needs the {} attribute", dtype_name(ctx.input_dtype(0)),
               strings ? "pool_strings" : "pool_int64s");
  const auto pool_size = static_cast<int64_t>(strings ? a.get_strings("pool_strings")->size()
                                                      : a.get_ints("pool_int64s")->size());
  const auto counts = a.ints_or("ngram_counts", {});
  const auto indexes = a.ints_or("ngram_indexes", {});
  const auto ngrams = pool_ngram_count(counts, pool_size);
  NXRT_REQUIRE(ngrams, "TfIdfVectorizer: ngram_counts {} do not split a pool of {} tokens into n-grams", counts,
               pool_size);
  NXRT_REQUIRE(static_cast<int64_t>(indexes.size()) == *ngrams,
               "TfIdfVectorizer: ngram_indexes has {} entries for {} n-grams in the pool", indexes.size(), *ngrams);
  NXRT_REQUIRE(std::ranges::all_of(indexes, [](int64_t i) { return i >= 0; }),
               "TfIdfVectorizer: ngram_indexes {} has a negative entry", indexes);
  const int64_t width = indexes.empty() ? 0 : std::ranges::max(indexes) + 1;
  const auto weights = a.get_floats("weights");
  NXRT_REQUIRE(!weights || static_cast<int64_t>(weights->size()) >= width,
               "TfIdfVectorizer: weights has {} entries for {} output columns", weights->size(), width);
  const auto rank = ctx.input_rank(0);
  NXRT_REQUIRE(!rank || *rank == 1 || *rank == 2, "TfIdfVectorizer: input has rank {}; the spec allows [C] or [N, C]",
               *rank);
  return KernelMatch::supported();
}

// Counts the pool's n-grams in rows of tokens of type K (int64_t or std::string).
template <class K>
class NgramCounter {
 public:
  NgramCounter(const std::vector<K>& pool, const std::vector<int64_t>& counts, const std::vector<int64_t>& indexes) {
    std::size_t next = 0;
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const auto n = static_cast<int64_t>(k) + 1;
      const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
      for (int64_t p = counts[k]; p < end; p += n)
        columns_[std::vector<K>(pool.begin() + p, pool.begin() + p + n)] = indexes[next++];
    }
  }

  // Adds to freq[column] every n-gram of length [min_n, max_n] with gaps of up to
  // max_skip tokens between its items. Unigrams have no gaps, so they count only once.
  template <class T>
  void count_row(const T* row, int64_t len, int64_t min_n, int64_t max_n, int64_t max_skip, float* freq) const {
    std::vector<K> gram;
    for (int64_t skip = 0; skip <= max_skip; ++skip) {
      const int64_t stride = skip + 1;
      for (int64_t start = 0; start < len; ++start) {
        gram.clear();
        for (int64_t n = 1; n <= max_n && start + (n - 1) * stride < len; ++n) {
          gram.push_back(static_cast<K>(row[start + (n - 1) * stride]));
          if (n < min_n || (n == 1 && skip > 0)) continue;
          if (auto it = columns_.find(gram); it != columns_.end()) freq[it->second] += 1;
        }
      }
    }
  }

 private:
  std::map<std::vector<K>, int64_t> columns_;
};

class TfIdfKernel final : public Kernel {
 public:
  explicit TfIdfKernel(const AttributeMap& a)
      : mode_(*parse_tfidf_mode(a.string_or("mode", ""))),
        min_n_(*a.get_int("min_gram_length")),
        max_n_(*a.get_int("max_gram_length")),
        max_skip_(*a.get_int("max_skip_count")),
        weights_(a.get_floats("weights").value_or(std::vector<float>{})) {
    const auto counts = a.ints_or("ngram_counts", {});
    const auto indexes = a.ints_or("ngram_indexes", {});
    width_ = indexes.empty() ? 0 : std::ranges::max(indexes) + 1;
    if (a.has("pool_strings")) strings_.emplace(*a.get_strings("pool_strings"), counts, indexes);
    if (a.has("pool_int64s")) ints_.emplace(*a.get_ints("pool_int64s"), counts, indexes);
  }

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const bool batched = x.shape().size() == 2;
    const int64_t rows = batched ? x.shape()[0] : 1;
    const int64_t len = x.shape().empty() ? 1 : x.shape().back();
    auto y = ctx.output(0, DType::kFloat32, batched ? Shape{rows, width_} : Shape{width_});
    if (!y) return std::unexpected(std::move(y.error()));
    float* out = y->mut_as<float>();
    std::fill_n(out, rows * width_, 0.0f);
    ctx.parallel().for_range(rows, 1, [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) count_row(x, r * len, len, out + r * width_);
    });
    return {};
  }

 private:
  void count_row(const Tensor& x, int64_t offset, int64_t len, float* freq) const {
    if (x.dtype() == DType::kString)
      strings_->count_row(x.data_as<std::string>() + offset, len, min_n_, max_n_, max_skip_, freq);
    else if (x.dtype() == DType::kInt32)
      ints_->count_row(x.data_as<int32_t>() + offset, len, min_n_, max_n_, max_skip_, freq);
    else
      ints_->count_row(x.data_as<int64_t>() + offset, len, min_n_, max_n_, max_skip_, freq);
    weigh(freq);
  }

  // TF keeps counts; IDF replaces a non-zero count by its weight (1 without weights);
  // TFIDF scales counts by their weights.
  void weigh(float* freq) const {
    for (int64_t c = 0; c < width_; ++c) {
      const float w = weights_.empty() ? 1.0f : weights_[static_cast<std::size_t>(c)];
      if (mode_ == TfIdfMode::kIdf) freq[c] = freq[c] > 0 ? w : 0.0f;
      else if (mode_ == TfIdfMode::kTfIdf) freq[c] *= w;
    }
  }

  TfIdfMode mode_;
  int64_t min_n_, max_n_, max_skip_, width_ = 0;
  std::vector<float> weights_;
  std::optional<NgramCounter<std::string>> strings_;
  std::optional<NgramCounter<int64_t>> ints_;
};


// ---- StringConcat (opset 20) -------------------------------------------------------------

KernelMatch check_string_concat(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kString}));
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 1, {DType::kString}));
  NXRT_REQUIRE_MATCH(require_broadcastable(ctx, {0, 1}));
  return KernelMatch::supported();
}

class StringConcatKernel final : public Kernel {
 public:
  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    auto bc = Broadcast<2>::make("StringConcat", {&a.shape(), &b.shape()});
    if (!bc) return std::unexpected(std::move(bc.error()));
    auto y = ctx.output(0, DType::kString, bc->shape());
    if (!y) return std::unexpected(std::move(y.error()));
    const std::string* pa = a.data_as<std::string>();
    const std::string* pb = b.data_as<std::string>();
    std::string* out = y->mut_as<std::string>();
    parallel_runs(ctx.parallel(), *bc, [&](int64_t o, const auto& in, const auto& step, int64_t count) {
      for (int64_t i = 0; i < count; ++i) out[o + i] = pa[in[0] + i * step[0]] + pb[in[1] + i * step[1]];
    });
    return {};
  }
};

// ---- StringSplit (opset 20) --------------------------------------------------------------

// Splits like Python's str.split, with two choices where the spec is silent, both as ONNX
// Runtime makes them: an empty string has no substrings, and without a delimiter the
// unsplit remainder loses its trailing whitespace as well ("leading and trailing whitespace
// is ignored"). Whitespace is ASCII's: space, \t, \n, \v, \f, \r.
class Splitter {
 public:
  Splitter(std::string delimiter, int64_t maxsplit) : delimiter_(std::move(delimiter)), maxsplit_(maxsplit) {}

  std::vector<std::string_view> split(std::string_view s) const {
    std::vector<std::string_view> parts;
    if (s.empty()) return parts;
    return delimiter_.empty() ? split_whitespace(s, parts) : split_delimiter(s, parts);
  }

 private:
  static constexpr std::string_view kWhitespace = " \t\n\v\f\r";

  bool may_split(const std::vector<std::string_view>& parts) const {
    return maxsplit_ < 0 || static_cast<int64_t>(parts.size()) < maxsplit_;
  }

  std::vector<std::string_view>& split_whitespace(std::string_view s, std::vector<std::string_view>& parts) const {
    std::size_t pos = s.find_first_not_of(kWhitespace);
    while (pos != std::string_view::npos) {
      std::size_t end = s.find_first_of(kWhitespace, pos);
      if (!may_split(parts)) end = s.find_last_not_of(kWhitespace) + 1;
      parts.push_back(s.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos));
      pos = end == std::string_view::npos ? end : s.find_first_not_of(kWhitespace, end);
    }
    return parts;
  }

  std::vector<std::string_view>& split_delimiter(std::string_view s, std::vector<std::string_view>& parts) const {
    std::size_t pos = 0;
    for (std::size_t hit; may_split(parts) && (hit = s.find(delimiter_, pos)) != std::string_view::npos;
         pos = hit + delimiter_.size())
      parts.push_back(s.substr(pos, hit - pos));
    parts.push_back(s.substr(pos));
    return parts;
  }

  std::string delimiter_;
  int64_t maxsplit_;  // negative: no limit
};

KernelMatch check_string_split(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kString}));
  NXRT_REQUIRE(ctx.output_count() == 2, "StringSplit: the node has {} outputs; the spec has 2 (substrings, counts)",
               ctx.output_count());
  return KernelMatch::supported();
}

class StringSplitKernel final : public Kernel {
 public:
  explicit StringSplitKernel(Splitter splitter) : splitter_(std::move(splitter)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string* in = x.data_as<std::string>();
    std::vector<std::vector<std::string_view>> parts(static_cast<std::size_t>(x.numel()));
    int64_t width = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      parts[i] = splitter_.split(in[i]);
      width = std::max(width, static_cast<int64_t>(parts[i].size()));
    }
    Shape y_shape = x.shape();
    y_shape.push_back(width);
    auto y = ctx.output(0, DType::kString, y_shape);
    if (!y) return std::unexpected(std::move(y.error()));
    auto counts = ctx.output(1, DType::kInt64, x.shape());
    if (!counts) return std::unexpected(std::move(counts.error()));
    std::string* out = y->mut_as<std::string>();
    int64_t* n = counts->mut_as<int64_t>();
    for (std::size_t i = 0; i < parts.size(); ++i) {
      n[i] = static_cast<int64_t>(parts[i].size());
      std::string* row = out + static_cast<int64_t>(i) * width;
      for (std::size_t k = 0; k < parts[i].size(); ++k) row[k] = parts[i][k];
    }
    return {};
  }

 private:
  Splitter splitter_;
};

// ---- RegexFullMatch (opset 20) -----------------------------------------------------------

// The pattern's std::regex, or why the cpu EP cannot run it with RE2's meaning.
std::expected<std::regex, std::string> compile_re2(const std::string& pattern) {
  auto ecma = re2_to_ecmascript(pattern);
  if (!ecma) return std::unexpected(std::move(ecma.error()));
  try {
    return std::regex(*ecma, std::regex::ECMAScript | std::regex::optimize);
  } catch (const std::regex_error& e) {
    return std::unexpected(fmt::format("std::regex rejects it ({}); RE2 most likely rejects it too", e.what()));
  }
}

KernelMatch check_regex_full_match(const NodeContext& ctx) {
  NXRT_REQUIRE_MATCH(require_input_dtype(ctx, 0, {DType::kString}));
  const auto pattern = ctx.attrs().get_string("pattern");
  NXRT_REQUIRE(pattern, "RegexFullMatch: the pattern attribute is required");
  const auto re = compile_re2(*pattern);
  NXRT_REQUIRE(re,
               "RegexFullMatch: the cpu EP runs RE2 patterns with std::regex and cannot run '{}': {}; rewrite the "
               "pattern without that construct",
               *pattern, re.error());
  return KernelMatch::supported();
}

class RegexFullMatchKernel final : public Kernel {
 public:
  explicit RegexFullMatchKernel(std::regex re) : re_(std::move(re)) {}

  Expected<void> compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const std::string* in = x.data_as<std::string>();
    for (int64_t i = 0; i < x.numel(); ++i)
      if (in[i].size() > kMaxLength)
        return fail(ErrorCode::kRuntime, fmt::format("RegexFullMatch: element {} is {} bytes long", i, in[i].size()),
                    fmt::format("the cpu EP matches with std::regex, whose recursion depth grows with the string; "
                                "it accepts strings of up to {} bytes",
                                kMaxLength),
                    "shorten the strings or run the node on another EP");
    auto y = ctx.output(0, DType::kBool, x.shape());
    if (!y) return std::unexpected(std::move(y.error()));
    bool* out = y->mut_as<bool>();
    auto matched = run_on_large_stack(kStackBytes, [&] {
      for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::regex_match(in[i], re_);
    });
    if (!matched) return forward_error(std::move(matched), "matching RegexFullMatch's pattern with std::regex");
    return {};
  }

 private:
  // libstdc++'s backtracking matcher recurses per character and per nested group: 8 MiB of
  // stack matched 8 KiB strings with `.*` and 2 KiB ones under nine nested groups, so a
  // 256 MiB stack (committed only as deep as it gets) leaves 16 KiB strings a wide margin.
  static constexpr std::size_t kMaxLength = 16384;
  static constexpr std::size_t kStackBytes = std::size_t{256} << 20;

  std::regex re_;
};

}  // namespace

std::vector<KernelDef> string_ops_kernels() {
  return {
      KernelDef{{"", "StringNormalizer", 10}, 0, check_string_normalizer,
                [](const NodeContext& ctx) {
                  const auto& a = ctx.attrs();
                  return make_kernel<StringNormalizerKernel>(
                      *parse_case_change(a.string_or("case_change_action", "NONE")),
                      a.int_or("is_case_sensitive", 0) != 0, a.get_strings("stopwords").value_or(std::vector<std::string>{}),
                      a.string_or("locale", "en_US"));
                }},
      KernelDef{{"", "TfIdfVectorizer", 9}, 0, check_tfidf,
                [](const NodeContext& ctx) { return make_kernel<TfIdfKernel>(ctx.attrs()); }},
      KernelDef{{"", "StringConcat", 20}, 0, check_string_concat,
                [](const NodeContext&) { return make_kernel<StringConcatKernel>(); }},
      KernelDef{{"", "StringSplit", 20}, 0, check_string_split,
                [](const NodeContext& ctx) {
                  const auto& a = ctx.attrs();
                  return make_kernel<StringSplitKernel>(Splitter(a.string_or("delimiter", ""), a.int_or("maxsplit", -1)));
                }},
      KernelDef{{"", "RegexFullMatch", 20}, 0, check_regex_full_match,
                [](const NodeContext& ctx) {
                  return make_kernel<RegexFullMatchKernel>(*compile_re2(*ctx.attrs().get_string("pattern")));
                }},
  };
}

}  // namespace nxrt::cpu
