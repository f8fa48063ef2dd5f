// MergeDuplicateNodes: repeated computations become one node; what may differ or must stay
// visible is left alone.
#include <catch2/catch.hpp>

#include "lib_test_util.h"
#include "nxrt/ir/passes.h"

namespace {

using nxrt::DType;
using nxrt::Graph;
using nxrt::test::input_name;
using nxrt::test::node_names;

std::vector<std::string> merge_duplicates(Graph& g) {
  auto changes = nxrt::MergeDuplicateNodes().run(g);
  REQUIRE(changes);
  return *changes;
}

}  // namespace

TEST_CASE("merge-duplicate-nodes: three DynamicQuantizeLinear of one activation become one", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  for (const char* p : {"q", "k", "v"}) {
    const std::string s = p;
    b.node("dql_" + s, "DynamicQuantizeLinear", {"x"}, {s + "_xq", s + "_xs", s + "_xz"}, DType::kUInt8);
    b.node("mm_" + s, "MatMulInteger", {s + "_xq", "w_" + s, s + "_xz"}, {s + "_y"}, DType::kInt32);
    b.node("mul_" + s, "Mul", {s + "_xs", "scale"}, {s + "_s"});
    b.output(s + "_y");
    b.output(s + "_s");
  }
  Graph& g = b.finish();
  const auto changes = merge_duplicates(g);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0] == "merged DynamicQuantizeLinear 'dql_k' into 'dql_q': the same inputs and attributes");
  CHECK(node_names(g) == std::vector<std::string>{"dql_q", "mm_q", "mul_q", "mm_k", "mul_k", "mm_v", "mul_v"});
  CHECK(input_name(g, "mm_v", 0) == "q_xq");
  CHECK(input_name(g, "mm_v", 2) == "q_xz");
  CHECK(input_name(g, "mul_k", 0) == "q_xs");
  // Links follow: the kept node's outputs have every reader.
  CHECK(g.value(*g.find_value("q_xq")).consumers.size() == 3);
}

TEST_CASE("merge-duplicate-nodes: merges chains, whose inputs become the same once the first merge is done",
          "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("relu_a", "Relu", {"x"}, {"a"});
  b.node("relu_b", "Relu", {"x"}, {"b"});
  b.node("neg_a", "Neg", {"a"}, {"na"});
  b.node("neg_b", "Neg", {"b"}, {"nb"});
  b.node("add", "Add", {"na", "nb"}, {"y"});
  b.output("y");
  Graph& g = b.finish();
  CHECK(merge_duplicates(g).size() == 2);
  CHECK(node_names(g) == std::vector<std::string>{"relu_a", "neg_a", "add"});
  CHECK(input_name(g, "add", 0) == "na");
  CHECK(input_name(g, "add", 1) == "na");
}

TEST_CASE("merge-duplicate-nodes: leaves apart what differs, draws random values or must stay visible", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("softmax_0", "Softmax", {"x"}, {"s0"});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{0}});
  b.node("softmax_1", "Softmax", {"x"}, {"s1"});
  b.graph.nodes.back().attributes.set("axis", nxrt::Attribute{int64_t{-1}});
  b.node("leaky_0", "LeakyRelu", {"x"}, {"l0"});
  b.graph.nodes.back().attributes.set("alpha", nxrt::Attribute{0.1f});
  b.node("leaky_1", "LeakyRelu", {"x"}, {"l1"});
  b.graph.nodes.back().attributes.set("alpha", nxrt::Attribute{0.2f});
  b.node("random_0", "RandomUniformLike", {"x"}, {"r0"});
  b.node("random_1", "RandomUniformLike", {"x"}, {"r1"});
  b.node("custom_0", "Gelu", {"x"}, {"c0"});
  b.graph.nodes.back().domain = "com.microsoft";
  b.node("custom_1", "Gelu", {"x"}, {"c1"});
  b.graph.nodes.back().domain = "com.microsoft";
  b.node("abs_0", "Abs", {"x"}, {"a0"});
  b.node("abs_1", "Abs", {"x"}, {"a1"});  // its output is a graph output of its own
  for (const char* out : {"s0", "s1", "l0", "l1", "r0", "r1", "c0", "c1", "a0", "a1"}) b.output(out);
  Graph& g = b.finish();
  const auto before = node_names(g);
  CHECK(merge_duplicates(g).empty());
  CHECK(node_names(g) == before);
}
