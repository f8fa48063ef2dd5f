// A plain-text table for people: left-aligned columns sized to their widest cell.
#pragma once

#include <string>
#include <vector>

namespace nxrt::cli {

class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  bool empty() const { return rows_.empty(); }
  // Renders with two spaces between columns; the last column is not padded.
  std::string render() const;
  // The same as a GitHub-flavoured Markdown table; `|`, `<`, `>` and newlines in cells are escaped.
  std::string render_markdown() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nxrt::cli
