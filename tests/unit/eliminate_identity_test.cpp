// EliminateIdentity: Identity nodes go, readers and graph outputs keep their values.
#include <catch2/catch.hpp>

#include "lib_test_util.h"
#include "nxrt/ir/passes.h"

namespace {

using nxrt::Graph;
using nxrt::test::input_name;
using nxrt::test::node_names;
using nxrt::test::output_name;

std::vector<std::string> eliminate_identity(Graph& g) {
  auto changes = nxrt::EliminateIdentity().run(g);
  REQUIRE(changes);
  return *changes;
}

}  // namespace

TEST_CASE("eliminate-identity: readers of an internal Identity read its input", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"r"});
  b.node("copy", "Identity", {"r"}, {"r2"});
  b.node("neg", "Neg", {"r2"}, {"n"});
  b.node("add", "Add", {"r2", "r"}, {"y"});
  b.output("y");
  b.output("n");
  Graph& g = b.finish();
  const auto changes = eliminate_identity(g);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "removed Identity 'copy': its readers read 'r' instead of 'r2'");
  CHECK(node_names(g) == std::vector<std::string>{"relu", "neg", "add"});
  CHECK(input_name(g, "neg", 0) == "r");
  CHECK(input_name(g, "add", 0) == "r");
  CHECK(g.value(b.id("r")).consumers.size() == 3);
}

TEST_CASE("eliminate-identity: a graph output keeps its name, written by the input's producer", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"r"});
  b.node("neg", "Neg", {"r"}, {"n"});
  b.node("copy", "Identity", {"r"}, {"y"});
  b.output("y");
  b.output("n");
  Graph& g = b.finish();
  const auto changes = eliminate_identity(g);
  REQUIRE(changes.size() == 1);
  CHECK(changes[0] == "removed Identity 'copy': 'relu' writes the graph output 'y' directly");
  CHECK(node_names(g) == std::vector<std::string>{"relu", "neg"});
  CHECK(output_name(g, "relu", 0) == "y");
  CHECK(input_name(g, "neg", 0) == "y");  // r's other reader follows
  CHECK(g.value(b.id("y")).producer == *g.find_node("relu"));
  CHECK(g.value(b.id("r")).consumers.empty());
}

TEST_CASE("eliminate-identity: copies of graph inputs and of other outputs stay", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("pass_through", "Identity", {"x"}, {"y"});  // a graph input to an output: the copy is the work
  b.node("relu", "Relu", {"x"}, {"r"});
  b.node("twin", "Identity", {"r"}, {"r_copy"});  // both r and r_copy are outputs
  b.node("first", "Identity", {"r"}, {"a"});      // then r is an output: a must stay a copy too
  b.output("y");
  b.output("r");
  b.output("r_copy");
  b.output("a");
  Graph& g = b.finish();
  CHECK(eliminate_identity(g).empty());
  CHECK(g.nodes.size() == 4);
}

TEST_CASE("eliminate-identity: a chain of Identities ending in a graph output leaves one producer", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"r"});
  b.node("first", "Identity", {"r"}, {"r1"});
  b.node("second", "Identity", {"r1"}, {"y"});
  b.node("third", "Identity", {"y"}, {"z"});  // y is an output by then: z stays a copy of it
  b.output("y");
  b.output("z");
  Graph& g = b.finish();
  CHECK(eliminate_identity(g).size() == 2);
  CHECK(node_names(g) == std::vector<std::string>{"relu", "third"});
  CHECK(output_name(g, "relu", 0) == "y");
  CHECK(input_name(g, "third", 0) == "y");
}

TEST_CASE("eliminate-identity: readers moved by one removal follow the next", "[passes]") {
  nxrt::test::GraphBuilder b;
  b.input("x");
  b.node("relu", "Relu", {"x"}, {"r"});
  b.node("copy", "Identity", {"r"}, {"r1"});  // internal: neg comes to read r
  b.node("neg", "Neg", {"r1"}, {"n"});
  b.node("out", "Identity", {"r"}, {"y"});    // then relu writes y, and neg reads y
  b.output("y");
  b.output("n");
  Graph& g = b.finish();
  CHECK(eliminate_identity(g).size() == 2);
  CHECK(node_names(g) == std::vector<std::string>{"relu", "neg"});
  CHECK(output_name(g, "relu", 0) == "y");
  CHECK(input_name(g, "neg", 0) == "y");
}
