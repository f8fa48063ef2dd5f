// Table rendering.
#include "render/table.h"

#include <fmt/format.h>

#include <algorithm>

#include "nxrt/ep/error.h"

namespace nxrt::cli {
namespace {
// Display width of UTF-8 text (counts code points, not bytes).
std::size_t width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string markdown_cell(const std::string& cell) {
  std::string out;
  for (char c : printable_text(cell)) {
    switch (c) {
      case '|': out += "\\|"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '\n': out += "<br>"; break;
      default: out += c;
    }
  }
  return out;
}

std::string markdown_row(const std::vector<std::string>& row) {
  std::string l = "|";
  for (const auto& cell : row) {
    l += ' ';  // appended piece by piece: GCC 12 warns (-Wrestrict) on " " + cell + " |" by mistake
    l += markdown_cell(cell);
    l += " |";
  }
  return l + "\n";
}
}  // namespace

std::string Table::render_markdown() const {
  std::string out = markdown_row(header_) + "|";
  for (std::size_t i = 0; i < header_.size(); ++i) out += "---|";
  out += "\n";
  for (const auto& r : rows_) out += markdown_row(r);
  return out;
}

std::string Table::render() const {
  // Cells come from models (node and value names): escaped, a cell stays on one line and
  // cannot send terminal control sequences.
  std::vector<std::vector<std::string>> rows;
  rows.reserve(rows_.size() + 1);
  rows.push_back(header_);
  rows.insert(rows.end(), rows_.begin(), rows_.end());
  for (auto& row : rows)
    for (auto& cell : row) cell = printable_text(cell, /*keep_newlines=*/false);
  std::vector<std::size_t> widths(header_.size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i) widths[i] = std::max(widths[i], width(row[i]));
  std::string out;
  for (const auto& row : rows) {
    std::string l;
    for (std::size_t i = 0; i < row.size(); ++i) {
      l += row[i];
      if (i + 1 < row.size() && i < widths.size()) l += std::string(widths[i] - width(row[i]) + 2, ' ');
    }
    while (!l.empty() && l.back() == ' ') l.pop_back();
    out += l + "\n";
  }
  return out;
}

}  // namespace nxrt::cli
