// Einsum's equation parser and contraction planning (nxrt/ir/einsum.h).
#include "nxrt/ir/einsum.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

namespace nxrt {
namespace {

constexpr int kLetterLabels = 52;  // a-z then A-Z; ellipsis dims get labels from 52 on

int label_of(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

char letter_of(int label) { return static_cast<char>(label < 26 ? 'a' + label : 'A' + (label - 26)); }

Expected<EinsumTerm> parse_term(std::string_view text, std::string_view equation) {
  EinsumTerm term;
  bool ellipsis = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '.') {
      if (text.substr(i, 3) != "..." || ellipsis)
        return fail(
            ErrorCode::kInvalidInput,
            fmt::format("Einsum: equation '{}' has a stray '.' or a second ellipsis in term '{}'", equation, text),
            "each term may hold one '...'", "fix the equation attribute");
      ellipsis = true;
      term.push_back(-1);
      i += 2;
      continue;
    }
    const int label = label_of(text[i]);
    if (label < 0)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("Einsum: equation '{}' has character '{}' in term '{}'", equation, text[i], text),
                  "terms hold letters and '...'", "fix the equation attribute");
    term.push_back(label);
  }
  return term;
}

}  // namespace

Expected<EinsumEquation> parse_einsum_equation(std::string equation) {
  std::erase(equation, ' ');
  EinsumEquation eq;
  const std::size_t arrow = equation.find("->");
  const std::string_view lhs = std::string_view(equation).substr(0, arrow);
  for (std::size_t begin = 0;;) {
    const std::size_t comma = lhs.find(',', begin);
    auto term = parse_term(lhs.substr(begin, comma - begin), equation);
    if (!term) return std::unexpected(std::move(term.error()));
    eq.inputs.push_back(std::move(*term));
    if (comma == std::string_view::npos) break;
    begin = comma + 1;
  }
  if (arrow == std::string::npos) return eq;
  auto out = parse_term(std::string_view(equation).substr(arrow + 2), equation);
  if (!out) return std::unexpected(std::move(out.error()));
  std::array<bool, kLetterLabels> seen{};
  for (int label : *out) {
    if (label < 0) continue;
    bool in_inputs = false;
    for (const EinsumTerm& t : eq.inputs) in_inputs = in_inputs || std::find(t.begin(), t.end(), label) != t.end();
    if (seen[label] || !in_inputs)
      return fail(ErrorCode::kInvalidInput,
                  fmt::format("Einsum: output label '{}' of equation '{}' {}", letter_of(label), equation,
                              seen[label] ? "appears twice" : "appears in no input"),
                  "each output label must appear once on the right and in some input", "fix the equation attribute");
    seen[label] = true;
  }
  eq.output = std::move(*out);
  return eq;
}

Expected<EinsumPlan> plan_einsum(const EinsumEquation& eq, std::span<const Shape> shapes, std::string_view equation) {
  auto error = [&](std::string what, std::string why) {
    return fail(ErrorCode::kRuntime, fmt::format("Einsum: {} (equation '{}')", what, equation), std::move(why),
                "make the input shapes agree with the equation");
  };
  if (shapes.size() != eq.inputs.size())
    return error(
        fmt::format("the equation has {} input terms but the node has {} inputs", eq.inputs.size(), shapes.size()),
        "each input needs one term");
  // Ellipsis dims are right-aligned and broadcast like numpy's.
  std::size_t ellipsis_rank = 0;
  std::vector<std::size_t> term_ellipsis(shapes.size(), 0);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const EinsumTerm& t = eq.inputs[i];
    const bool has_ellipsis = std::find(t.begin(), t.end(), -1) != t.end();
    const std::size_t letters = t.size() - (has_ellipsis ? 1 : 0);
    if (shapes[i].size() < letters || (!has_ellipsis && shapes[i].size() != letters))
      return error(fmt::format("input {} has shape {} but its term has {} labels{}", i, shape_to_string(shapes[i]),
                               letters, has_ellipsis ? " and '...'" : ""),
                   "a term names each dim of its input");
    term_ellipsis[i] = shapes[i].size() - letters;
    ellipsis_rank = std::max(ellipsis_rank, term_ellipsis[i]);
  }
  const int labels = kLetterLabels + static_cast<int>(ellipsis_rank);
  std::vector<int64_t> extent(labels, -1);
  std::vector<int> occurrences(labels, 0);
  bool diagonal = false;
  // Per input and label: summed stride (a repeated label walks the diagonal).
  std::vector<std::vector<int64_t>> stride(shapes.size(), std::vector<int64_t>(labels, 0));
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const Shape strides = contiguous_strides(shapes[i]);
    std::size_t axis = 0;
    auto bind = [&](int label, std::size_t ax, bool broadcastable) -> Expected<void> {
      const int64_t d = shapes[i][ax];
      if (broadcastable && d == 1) {
        if (extent[label] < 0) extent[label] = 1;
        return {};
      }
      if (extent[label] >= 0 && extent[label] != d && !(broadcastable && extent[label] == 1))
        return error(fmt::format("dim {} of input {} (shape {}) has size {} but its label has size {} elsewhere", ax, i,
                                 shape_to_string(shapes[i]), d, extent[label]),
                     "dims with the same label must have the same size");
      extent[label] = d;
      if (stride[i][label] != 0) diagonal = true;
      stride[i][label] += strides[ax];
      return {};
    };
    for (int label : eq.inputs[i]) {
      if (label >= 0) {
        if (auto r = bind(label, axis++, false); !r) return std::unexpected(std::move(r.error()));
        ++occurrences[label];
        continue;
      }
      for (std::size_t e = 0; e < term_ellipsis[i]; ++e) {
        const int l = kLetterLabels + static_cast<int>(ellipsis_rank - term_ellipsis[i] + e);
        if (auto r = bind(l, axis++, true); !r) return std::unexpected(std::move(r.error()));
      }
    }
  }
  std::vector<int> out_labels;
  if (eq.output) {
    for (int label : *eq.output) {
      if (label >= 0) {
        out_labels.push_back(label);
        continue;
      }
      for (std::size_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
    }
  } else {
    // Implicit mode: the ellipsis dims, then the letters that occur exactly once in the
    // equation, in ASCII order ('A'-'Z', labels 26-51, before 'a'-'z').
    for (std::size_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
    std::vector<int> letters;
    for (int l = 26; l < kLetterLabels; ++l)
      if (occurrences[l] == 1) letters.push_back(l);
    for (int l = 0; l < 26; ++l)
      if (occurrences[l] == 1) letters.push_back(l);
    out_labels.insert(out_labels.end(), letters.begin(), letters.end());
  }
  EinsumPlan plan;
  plan.diagonal = diagonal;
  std::vector<bool> in_output(labels, false);
  for (int l : out_labels) {
    in_output[l] = true;
    plan.output_shape.push_back(extent[l]);
  }
  plan.out_strides.assign(shapes.size(), {});
  plan.sum_strides.assign(shapes.size(), {});
  for (int l : out_labels) {
    plan.out_extents.push_back(extent[l]);
    for (std::size_t i = 0; i < shapes.size(); ++i) plan.out_strides[i].push_back(stride[i][l]);
  }
  for (int l = 0; l < labels; ++l) {
    if (in_output[l] || extent[l] < 0) continue;
    plan.sum_extents.push_back(extent[l]);
    for (std::size_t i = 0; i < shapes.size(); ++i) plan.sum_strides[i].push_back(stride[i][l]);
  }
  return plan;
}

std::optional<EinsumGemm> plan_einsum_gemm(const EinsumPlan& plan) {
  if (plan.diagonal || plan.out_strides.size() != 2) return std::nullopt;
  struct Axis {
    int64_t extent, a, b, c;
  };
  std::vector<Axis> batch, m, n, k;
  const Shape out_strides = contiguous_strides(plan.output_shape);
  for (std::size_t p = 0; p < plan.out_extents.size(); ++p) {
    const Axis axis{plan.out_extents[p], plan.out_strides[0][p], plan.out_strides[1][p], out_strides[p]};
    if (axis.extent == 1) continue;
    if (axis.a != 0 && axis.b != 0)
      batch.push_back(axis);
    else if (axis.a != 0)
      m.push_back(axis);
    else if (axis.b != 0)
      n.push_back(axis);
    else
      return std::nullopt;
  }
  for (std::size_t q = 0; q < plan.sum_extents.size(); ++q) {
    const Axis axis{plan.sum_extents[q], plan.sum_strides[0][q], plan.sum_strides[1][q], 0};
    if (axis.extent == 1) continue;
    if (axis.extent == 0 || axis.a == 0 || axis.b == 0) return std::nullopt;
    k.push_back(axis);
  }
  EinsumGemm g;
  auto add = [](const std::vector<Axis>& axes, int64_t& size, std::vector<int64_t>& extents,
                std::vector<int64_t>& strides, int64_t Axis::*member) {
    for (const Axis& a : axes) {
      size *= a.extent;
      extents.push_back(a.extent);
      strides.push_back(a.*member);
    }
  };
  int64_t unused = 1;
  add(batch, g.batch, g.a_extents, g.a_strides, &Axis::a);
  add(m, g.m, g.a_extents, g.a_strides, &Axis::a);
  add(k, g.k, g.a_extents, g.a_strides, &Axis::a);
  add(batch, unused, g.b_extents, g.b_strides, &Axis::b);
  add(k, unused, g.b_extents, g.b_strides, &Axis::b);
  add(n, g.n, g.b_extents, g.b_strides, &Axis::b);
  add(batch, unused, g.c_extents, g.c_strides, &Axis::c);
  add(m, unused, g.c_extents, g.c_strides, &Axis::c);
  add(n, unused, g.c_extents, g.c_strides, &Axis::c);
  return g;
}


}  // namespace nxrt
