// NumPy .npy reader and writer: a hand-written parser for the header's small dict grammar.
#include "nxrt/io/npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <string_view>
#include <system_error>

#include "nxrt/io/atomic_file.h"

namespace nxrt {
namespace {

// .npy data is little-endian and is copied as is.
static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr std::size_t kMagicBytes = 6;
constexpr std::size_t kVersion1PrefixBytes = 10;  // magic, major, minor, uint16 header length
constexpr std::size_t kVersion2PrefixBytes = 12;  // magic, major, minor, uint32 header length
// numpy itself refuses headers over 10000 bytes by default; any real header is far smaller,
// and the cap keeps a forged length from costing a large read.
constexpr std::size_t kMaxHeaderBytes = 1 << 20;
constexpr std::size_t kMaxRank = 64;  // numpy 2's limit (numpy 1: 32)
constexpr std::size_t kAlign = 64;    // numpy pads magic + header to this
constexpr std::size_t kGrowthAxisMaxDigits = 21;  // numpy's spare room to grow axis 0 in place

constexpr std::string_view kResaveHow = "re-save the array with numpy.save(path, array)";
constexpr std::string_view kHeaderExample = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";

struct NpyType {
  DType dtype;
  std::string_view descr;  // as numpy writes it
};

constexpr NpyType kTypes[] = {
    {DType::kFloat16, "<f2"}, {DType::kFloat32, "<f4"}, {DType::kFloat64, "<f8"},
    {DType::kInt8, "|i1"},    {DType::kInt16, "<i2"},   {DType::kInt32, "<i4"},
    {DType::kInt64, "<i8"},   {DType::kUInt8, "|u1"},   {DType::kUInt16, "<u2"},
    {DType::kUInt32, "<u4"},  {DType::kUInt64, "<u8"},  {DType::kBool, "|b1"},
};

constexpr std::string_view kSupportedDescrs =
    "'<f2', '<f4', '<f8', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8', '|b1'";

std::unexpected<Error> invalid(const std::string& context, std::string what, std::string why,
                               std::string_view how = kResaveHow) {
  return fail(ErrorCode::kInvalidInput, fmt::format("'{}': {}", context, what), std::move(why), std::string(how));
}

// Header text as Python would show it, shortened: safe to print whatever the bytes are.
std::string quote_header(std::string_view text) {
  constexpr std::size_t kShown = 160;
  std::string out;
  for (char c : text.substr(0, kShown)) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n') out += "\\n";
    else if (u < 0x20 || u >= 0x7f) out += fmt::format("\\x{:02x}", u);
    else out += c;
  }
  if (text.size() > kShown) out += "...";
  return out;
}

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes) out += fmt::format("\\x{:02x}", static_cast<unsigned>(b));
  return out;
}

// Where the header text lies, from the fixed prefix.
struct Prefix {
  int major = 0;
  std::size_t header_begin = 0;
  std::size_t header_bytes = 0;
};

// `head` holds the file's first bytes (at least the 12-byte prefix when the file has them);
// `total` is the size of the whole file.
Expected<Prefix> parse_prefix(std::span<const std::byte> head, std::size_t total, const std::string& context) {
  if (total < kVersion1PrefixBytes)
    return invalid(context, fmt::format("truncated .npy file: {} bytes, the fixed prefix alone takes {}", total,
                                        kVersion1PrefixBytes),
                   "a .npy file starts with the magic \\x93NUMPY, a version and the header's length",
                   "copy the file again in full, or re-save it with numpy.save(path, array)");
  const std::span<const std::byte> magic = head.first(kMagicBytes);
  if (std::memcmp(magic.data(), kMagic.data(), kMagicBytes) != 0) {
    const bool zip = std::memcmp(magic.data(), "PK\x03\x04", 4) == 0;
    return invalid(context, fmt::format("not a .npy file: it starts with {} instead of \\x93NUMPY", hex_bytes(magic)),
                   zip ? "it is a zip archive, probably a .npz file holding several arrays"
                       : "it may be a TensorProto (.pb), raw bytes or another format",
                   zip ? "extract one array with numpy.load(path)[name] and numpy.save it on its own"
                       : "save arrays with numpy.save(path, array); give TensorProto files the .pb extension");
  }
  Prefix p;
  p.major = static_cast<int>(head[6]);
  const int minor = static_cast<int>(head[7]);
  if ((p.major != 1 && p.major != 2 && p.major != 3) || minor != 0)
    return invalid(context, fmt::format(".npy format version {}.{} is not supported", p.major, minor),
                   "nxrt reads format versions 1.0, 2.0 and 3.0");
  if (p.major == 1) {
    p.header_begin = kVersion1PrefixBytes;
    p.header_bytes = static_cast<std::size_t>(head[8]) | static_cast<std::size_t>(head[9]) << 8;
  } else {
    if (total < kVersion2PrefixBytes)
      return invalid(context, fmt::format("truncated .npy file: {} bytes, a version {}.0 prefix takes {}", total,
                                          p.major, kVersion2PrefixBytes),
                     "the file ends inside the header length field");
    p.header_begin = kVersion2PrefixBytes;
    p.header_bytes = 0;
    for (int i = 3; i >= 0; --i) p.header_bytes = p.header_bytes << 8 | static_cast<std::size_t>(head[8 + i]);
  }
  if (p.header_bytes > kMaxHeaderBytes)
    return invalid(context, fmt::format(".npy header length {} is larger than the {} bytes nxrt accepts",
                                        p.header_bytes, kMaxHeaderBytes),
                   "a header describes one array in well under 1 KiB; the length field is corrupt");
  if (p.header_bytes > total - p.header_begin)
    return invalid(context, fmt::format("truncated .npy file: the header needs {} bytes, {} follow the prefix",
                                        p.header_bytes, total - p.header_begin),
                   "the file ends inside the header", "copy the file again in full, or re-save it with numpy.save(path, array)");
  return p;
}

struct HeaderFields {
  DType dtype = DType::kUndefined;
  Shape shape;
};

// Maps a 'descr' string; only the types of kTypes, little-endian (any order for one byte).
Expected<DType> dtype_from_descr(std::string_view descr, const std::string& context) {
  const auto unsupported = [&](std::string why, std::string_view how) {
    return invalid(context, fmt::format("element type '{}' is not supported", descr), std::move(why), how);
  };
  constexpr std::string_view kConvertHow =
      "convert it first, e.g. numpy.save(path, array.astype(numpy.float32)), to one of the types listed";
  if (descr.size() < 3)
    return unsupported(fmt::format("nxrt reads {}", kSupportedDescrs), kConvertHow);
  const char order = descr[0];
  const std::string_view kind_size = descr.substr(1);
  for (const NpyType& t : kTypes) {
    if (kind_size != t.descr.substr(1)) continue;
    const bool one_byte = dtype_size(t.dtype) == 1;
    if (order == '<' || (one_byte && (order == '|' || order == '>'))) return t.dtype;
    if (order == '>')
      return unsupported("the data is big-endian; nxrt reads little-endian data only",
                         "save a little-endian copy: array.astype(array.dtype.newbyteorder('<'))");
    return unsupported(fmt::format("byte order '{}' is not one numpy writes for a {}-byte type (expected '<')",
                                   order, dtype_size(t.dtype)),
                       kResaveHow);
  }
  return unsupported(fmt::format("nxrt reads {}", kSupportedDescrs), kConvertHow);
}

// A recursive-descent parser for the header: a Python dict literal with the keys 'descr'
// (a string), 'fortran_order' (True or False) and 'shape' (a tuple of non-negative ints),
// e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } followed by spaces and
// a newline. Python 2 writers added an 'L' to integers ("(3L,)"); numpy accepts it, so do we.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& context) : text_(text), context_(context) {}

  Expected<HeaderFields> parse() {
    std::optional<std::string> descr;
    std::optional<bool> fortran_order;
    std::optional<Shape> shape;
    skip_space();
    if (!consume('{')) return syntax_error("the header is not a Python dict literal: expected '{'");
    skip_space();
    while (!consume('}')) {
      auto key = parse_string();
      if (!key) return std::unexpected(std::move(key.error()));
      skip_space();
      if (!consume(':')) return syntax_error(fmt::format("expected ':' after the key '{}'", *key));
      skip_space();
      const auto duplicate = [&] { return syntax_error(fmt::format("the key '{}' appears twice", *key)); };
      if (*key == "descr") {
        if (descr) return duplicate();
        if (peek() == '[')
          return invalid(context_, "structured (record) arrays are not supported",
                         "'descr' is a list of fields; nxrt reads plain numeric arrays",
                         "save each field as its own array: numpy.save(path, array[field])");
        auto value = parse_string();
        if (!value) return std::unexpected(std::move(value.error()));
        descr = std::move(*value);
      } else if (*key == "fortran_order") {
        if (fortran_order) return duplicate();
        auto value = parse_bool();
        if (!value) return std::unexpected(std::move(value.error()));
        fortran_order = *value;
      } else if (*key == "shape") {
        if (shape) return duplicate();
        auto value = parse_shape();
        if (!value) return std::unexpected(std::move(value.error()));
        shape = std::move(*value);
      } else {
        return syntax_error(
            fmt::format("unknown key '{}'; a .npy header has exactly 'descr', 'fortran_order' and 'shape'", *key));
      }
      skip_space();
      if (consume(',')) {
        skip_space();
        continue;
      }
      if (peek() != '}') return syntax_error("expected ',' or '}' after a value");
    }
    skip_space();
    if (pos_ != text_.size()) return syntax_error("unexpected text after the closing '}'");
    if (!descr || !fortran_order || !shape)
      return syntax_error(fmt::format("the key '{}' is missing", !descr ? "descr" : !fortran_order ? "fortran_order" : "shape"));
    if (*fortran_order)
      return invalid(context_, "the array is stored in Fortran (column-major) order",
                     "nxrt reads C-order (row-major) arrays only",
                     "save a C-order copy: numpy.save(path, numpy.ascontiguousarray(array))");
    auto dtype = dtype_from_descr(*descr, context_);
    if (!dtype) return std::unexpected(std::move(dtype.error()));
    return HeaderFields{*dtype, std::move(*shape)};
  }

 private:
  // Python's whitespace between tokens.
  void skip_space() {
    while (pos_ < text_.size() && std::string_view(" \t\n\r\f\v").find(text_[pos_]) != std::string_view::npos) ++pos_;
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool consume(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }
  bool consume_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    const std::size_t end = pos_ + word.size();
    // "Truex" is a name, not True.
    if (end < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) return false;
    pos_ = end;
    return true;
  }

  std::unexpected<Error> syntax_error(std::string problem) const {
    const std::string found = pos_ < text_.size() ? fmt::format("'{}'", quote_header(text_.substr(pos_, 1))) : "the end";
    return invalid(context_, fmt::format("malformed .npy header: {} (at offset {}, found {})", problem, pos_, found),
                   fmt::format("the header reads \"{}\"; numpy writes e.g. \"{}\"", quote_header(text_), kHeaderExample));
  }

  // 'text' or "text"; the header's strings never need escapes, so none are accepted.
  Expected<std::string> parse_string() {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return syntax_error("expected a quoted string");
    const std::size_t begin = ++pos_;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\') return syntax_error("escape sequences are not supported in header strings");
      if (text_[pos_] == '\n') return syntax_error("the string is not closed on its line");
      ++pos_;
    }
    if (pos_ >= text_.size()) return syntax_error("the string is not closed");
    std::string value(text_.substr(begin, pos_ - begin));
    ++pos_;
    return value;
  }

  Expected<bool> parse_bool() {
    if (consume_word("True")) return true;
    if (consume_word("False")) return false;
    return syntax_error("'fortran_order' must be True or False");
  }

  // A non-negative decimal integer that fits int64, with Python 2's optional 'L'.
  Expected<int64_t> parse_dim() {
    if (peek() == '-') return syntax_error("shape dimensions must be non-negative");
    if (!std::isdigit(static_cast<unsigned char>(peek()))) return syntax_error("expected an integer dimension");
    int64_t value = 0;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      const int digit = peek() - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10)
        return syntax_error("a shape dimension does not fit in a signed 64-bit integer");
      value = value * 10 + digit;
      ++pos_;
    }
    consume('L');
    return value;
  }

  // () or (n,) or (n, m, ...) with an optional trailing comma; (n) is an int in Python.
  Expected<Shape> parse_shape() {
    if (!consume('(')) return syntax_error("'shape' must be a tuple such as (2, 3)");
    Shape shape;
    bool trailing_comma = false;
    skip_space();
    while (!consume(')')) {
      if (shape.size() == kMaxRank) return syntax_error(fmt::format("the shape has more than {} dimensions", kMaxRank));
      auto dim = parse_dim();
      if (!dim) return std::unexpected(std::move(dim.error()));
      shape.push_back(*dim);
      skip_space();
      trailing_comma = consume(',');
      skip_space();
      if (!trailing_comma && peek() != ')') return syntax_error("expected ',' or ')' in the shape tuple");
    }
    if (shape.size() == 1 && !trailing_comma)
      return syntax_error(fmt::format("'shape' ({}) is an integer, not a tuple; one dimension is written ({},)",
                                      shape[0], shape[0]));
    return shape;
  }

  std::string_view text_;
  const std::string& context_;
  std::size_t pos_ = 0;
};

// Bytes the data of `fields` takes, or an error when the shape overflows.
Expected<std::size_t> data_bytes(const HeaderFields& fields, const std::string& context) {
  const int64_t numel = shape_numel(fields.shape);
  const std::size_t esize = dtype_size(fields.dtype);
  if (numel < 0 || static_cast<uint64_t>(numel) > std::numeric_limits<std::size_t>::max() / esize)
    return invalid(context, fmt::format("shape {} has more elements than a 64-bit size can count",
                                        shape_to_string(fields.shape)),
                   "the header is corrupt");
  return static_cast<std::size_t>(numel) * esize;
}

// Parses the header in bytes[prefix.header_begin, +header_bytes) and checks that exactly
// the data it describes follows, out of `total` bytes in all.
Expected<HeaderFields> parse_header(std::span<const std::byte> header, const Prefix& prefix, std::size_t total,
                                    std::size_t* data_offset, const std::string& context) {
  const std::string_view text(reinterpret_cast<const char*>(header.data()), header.size());
  auto fields = HeaderParser(text, context).parse();
  if (!fields) return fields;
  auto needed = data_bytes(*fields, context);
  if (!needed) return std::unexpected(std::move(needed.error()));
  *data_offset = prefix.header_begin + prefix.header_bytes;
  const std::size_t present = total - *data_offset;
  if (present != *needed)
    return invalid(context,
                   fmt::format("the data does not match the header: shape {} of {} needs {} bytes, the file has {} "
                               "after its {}-byte header",
                               shape_to_string(fields->shape), dtype_name(fields->dtype), *needed, present,
                               *data_offset),
                   present < *needed ? "the file is truncated" : "the file has trailing bytes or a wrong shape",
                   "copy the file again in full, or re-save it with numpy.save(path, array)");
  return fields;
}

// numpy's bool is one byte, 0 or 1; any other byte would be undefined behaviour as a C++
// bool, and numpy reads it as True.
void normalize_bools(Tensor& tensor) {
  if (tensor.dtype() != DType::kBool) return;
  auto* bytes = static_cast<unsigned char*>(tensor.mut().data());
  for (std::size_t i = 0; i < tensor.nbytes(); ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
}

std::string_view descr_of(DType dtype) {
  for (const NpyType& t : kTypes)
    if (t.dtype == dtype) return t.descr;
  return {};
}

// Python's repr of a shape tuple: (), (3,), (2, 3).
std::string python_shape(const Shape& shape) {
  if (shape.size() == 1) return fmt::format("({},)", shape[0]);
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", shape[i]);
  return out + ")";
}

// The prefix and padded header numpy.save writes (numpy 1.24's _write_array_header).
std::string encode_header(DType dtype, const Shape& shape) {
  std::string dict =
      fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr_of(dtype), python_shape(shape));
  if (!shape.empty()) {
    const std::size_t digits = fmt::formatted_size("{}", shape[0]);
    dict.append(kGrowthAxisMaxDigits - std::min(digits, kGrowthAxisMaxDigits), ' ');
  }
  // Version 1.0 unless its 16-bit length field cannot hold the padded header.
  const auto padded_bytes = [&](std::size_t prefix_bytes) {
    return dict.size() + 1 + kAlign - (prefix_bytes + dict.size() + 1) % kAlign;
  };
  const bool v1 = padded_bytes(kVersion1PrefixBytes) <= 0xffff;
  const std::size_t header_bytes = padded_bytes(v1 ? kVersion1PrefixBytes : kVersion2PrefixBytes);
  const std::size_t length_field_bytes = v1 ? 2 : 4;
  std::string out(kMagic);
  out += static_cast<char>(v1 ? 1 : 2);
  out += '\0';
  for (std::size_t i = 0; i < length_field_bytes; ++i) out += static_cast<char>(header_bytes >> (8 * i) & 0xff);
  out += dict;
  out.append(header_bytes - dict.size() - 1, ' ');
  out += '\n';
  return out;
}

}  // namespace

bool npy_supports(DType dtype) { return !descr_of(dtype).empty(); }

Expected<Tensor> parse_npy(std::span<const std::byte> bytes, const std::string& context) {
  auto prefix = parse_prefix(bytes.first(std::min(bytes.size(), kVersion2PrefixBytes)), bytes.size(), context);
  if (!prefix) return std::unexpected(std::move(prefix.error()));
  std::size_t data_offset = 0;
  auto fields = parse_header(bytes.subspan(prefix->header_begin, prefix->header_bytes), *prefix, bytes.size(),
                             &data_offset, context);
  if (!fields) return std::unexpected(std::move(fields.error()));
  Tensor tensor = Tensor::empty(fields->dtype, std::move(fields->shape));
  if (tensor.nbytes() > 0) std::memcpy(tensor.mut().data(), bytes.data() + data_offset, tensor.nbytes());
  normalize_bools(tensor);
  return tensor;
}

Expected<Tensor> read_npy(const std::filesystem::path& path) {
  const std::string context = path.string();
  const auto cannot_read = [&](std::string why) {
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot read '{}'", context), std::move(why),
                "check the path and the file's permissions");
  };
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return cannot_read("it is a folder, not a .npy file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return cannot_read(std::strerror(errno));
  const std::uintmax_t file_size = std::filesystem::file_size(path, ec);
  if (ec) return cannot_read(ec.message());
  const std::size_t total = static_cast<std::size_t>(file_size);

  std::byte head[kVersion2PrefixBytes] = {};
  const std::size_t head_bytes = std::min(total, kVersion2PrefixBytes);
  if (!in.read(reinterpret_cast<char*>(head), static_cast<std::streamsize>(head_bytes)))
    return cannot_read("the file ended before its size said");
  auto prefix = parse_prefix(std::span<const std::byte>(head, head_bytes), total, context);
  if (!prefix) return std::unexpected(std::move(prefix.error()));

  std::vector<std::byte> header(prefix->header_bytes);
  in.seekg(static_cast<std::streamoff>(prefix->header_begin));
  if (!in.read(reinterpret_cast<char*>(header.data()), static_cast<std::streamsize>(header.size())))
    return cannot_read("the file ended before its size said");
  std::size_t data_offset = 0;
  auto fields = parse_header(header, *prefix, total, &data_offset, context);
  if (!fields) return std::unexpected(std::move(fields.error()));

  // Sizes agree with the file, so this allocation is no larger than the file itself.
  Tensor tensor = Tensor::empty(fields->dtype, std::move(fields->shape));
  if (!in.read(static_cast<char*>(tensor.mut().data()), static_cast<std::streamsize>(tensor.nbytes())))
    return cannot_read("the file ended before its size said; was it being written?");
  normalize_bools(tensor);
  return tensor;
}

std::vector<std::byte> encode_npy(const Tensor& tensor) {
  if (!tensor.defined() || !tensor.device().is_host() || !npy_supports(tensor.dtype())) return {};
  const std::string header = encode_header(tensor.dtype(), tensor.shape());
  const auto* data = static_cast<const std::byte*>(tensor.view().data());
  std::vector<std::byte> out(header.size() + tensor.nbytes());
  std::memcpy(out.data(), header.data(), header.size());
  if (tensor.nbytes() > 0) std::memcpy(out.data() + header.size(), data, tensor.nbytes());
  return out;
}

Expected<void> write_npy(const std::filesystem::path& path, const Tensor& tensor) {
  const auto refuse = [&](std::string why, std::string how) {
    return fail(ErrorCode::kInvalidInput, fmt::format("cannot write '{}' as .npy", path.string()), std::move(why),
                std::move(how));
  };
  if (!tensor.defined()) return refuse("the tensor has no data", "pass a tensor that holds values");
  if (!tensor.device().is_host())
    return refuse(fmt::format("the tensor lives on {}", tensor.device().to_string()), "copy it to the host first");
  if (!npy_supports(tensor.dtype()))
    return refuse(fmt::format("element type {} has no .npy equivalent here; nxrt writes {}", dtype_name(tensor.dtype()),
                              kSupportedDescrs),
                  "save the output as a TensorProto (.pb) instead");

  if (auto written = write_file_atomically(path, encode_npy(tensor)); !written)
    return forward_error(std::move(written), fmt::format("writing '{}' as .npy", path.string()));
  return {};
}

}  // namespace nxrt
