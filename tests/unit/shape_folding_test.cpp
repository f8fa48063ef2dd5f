// FoldShapeComputations: which shape chains become initializers at load time, with which
// values, and which stay for the EPs.
#include <catch2/catch.hpp>

#include "lib_test_util.h"
#include "nxrt/ir/passes.h"

using namespace nxrt;

namespace {

Tensor int64_tensor(Shape shape, std::vector<int64_t> v) {
  return Tensor::from_vector<int64_t>(std::move(shape), std::move(v));
}

std::vector<std::string> run_pass(Graph& g) {
  auto changes = FoldShapeComputations().run(g);
  REQUIRE(changes);
  return *changes;
}

// The folded value of `name`, as int64 values.
std::vector<int64_t> folded(const Graph& g, const std::string& name) {
  const Value& v = g.value(*g.find_value(name));
  REQUIRE(v.initializer);
  auto t = v.initializer->materialize();
  REQUIRE(t);
  return t->to_int64_vector();
}

bool has_node(const Graph& g, const std::string& name) { return g.find_node(name).has_value(); }

}  // namespace

TEST_CASE("shape folding: an exporter's Shape -> Gather -> Mul -> Unsqueeze -> Concat chain becomes the Reshape's shape",
          "[passes]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 6, 4});
  b.constant("idx", int64_tensor({}, {-2}));
  b.constant("two", int64_tensor({}, {2}));
  b.constant("axes", int64_tensor({1}, {0}));
  b.constant("tail", int64_tensor({1}, {-1}));
  b.node("shape", "Shape", {"x"}, {"s"}, DType::kInt64, {3});
  b.node("gather", "Gather", {"s", "idx"}, {"g"}, DType::kInt64, {});
  b.node("div", "Div", {"g", "two"}, {"half"}, DType::kInt64, {});
  b.node("unsqueeze", "Unsqueeze", {"half", "axes"}, {"u"}, DType::kInt64, {1});
  b.node("concat", "Concat", {"u", "tail"}, {"target"}, DType::kInt64, {2});
  b.graph.nodes.back().attributes = test::attrs({{"axis", int64_t{0}}});
  b.node("reshape", "Reshape", {"x", "target"}, {"y"}, DType::kFloat32, {3, 16});
  b.output("y");
  Graph& g = b.finish();
  const auto changes = run_pass(g);
  CHECK(changes.size() == 5);
  CHECK(changes.front() == "computed Shape 'shape' at load time: 's' = [2,6,4]");
  CHECK(changes.back() == "computed Concat 'concat' at load time: 'target' = [3,-1]");
  CHECK(folded(g, "target") == std::vector<int64_t>{3, -1});
  CHECK(folded(g, "half") == std::vector<int64_t>{3});
  CHECK(g.value(*g.find_value("half")).type.to_string() == "int64[]");
  REQUIRE(g.nodes.size() == 1);  // only the Reshape is left, reading a constant shape
  CHECK(g.nodes[0].name == "reshape");
  CHECK(g.value(g.nodes[0].inputs[1]).initializer);
}

TEST_CASE("shape folding: what is not known before running stays for the EPs", "[passes]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3});
  b.graph.value(b.id("x")).type.shape->at(0) = Dim{-1, "batch"};  // x: float[batch,3]
  b.input("n", DType::kInt64, {1});
  b.input("z", DType::kFloat32, {5, 7});
  b.constant("zero", int64_tensor({1}, {0}));
  b.constant("far", int64_tensor({}, {4}));
  b.constant("minus3", int64_tensor({}, {-3}));
  b.node("symbolic", "Shape", {"x"}, {"xs"}, DType::kInt64, {2});  // batch is unknown
  b.node("gather", "Gather", {"xs", "zero"}, {"b"}, DType::kInt64, {1});
  b.node("input_value", "Mul", {"n", "zero"}, {"nz"}, DType::kInt64, {1});  // n is a graph input
  b.node("shape_z", "Shape", {"z"}, {"zs"}, DType::kInt64, {2});
  b.node("out_of_range", "Gather", {"zs", "far"}, {"bad"}, DType::kInt64, {});  // the EP reports it
  b.node("below_range", "Gather", {"zs", "minus3"}, {"bad2"}, DType::kInt64, {});
  b.node("by_zero", "Div", {"zs", "zero"}, {"q"}, DType::kInt64, {2});
  b.node("shape_z_out", "Shape", {"z"}, {"zs_out"}, DType::kInt64, {2});  // a graph output stays
  b.output("zs_out");
  // The others are read through an Identity each: they would fold if their inputs were known.
  for (const char* v : {"b", "nz", "bad", "bad2", "q"}) {
    b.node(std::string("use_") + v, "Identity", {v}, {std::string(v) + "_out"}, DType::kInt64, {});
    b.output(std::string(v) + "_out");
  }
  Graph& g = b.finish();
  const auto changes = run_pass(g);
  CHECK(changes == std::vector<std::string>{"computed Shape 'shape_z' at load time: 'zs' = [5,7]"});
  for (const char* kept : {"symbolic", "gather", "input_value", "out_of_range", "below_range", "by_zero", "shape_z_out"}) {
    INFO(kept);
    CHECK(has_node(g, kept));
  }
  CHECK_FALSE(has_node(g, "shape_z"));
}

TEST_CASE("shape folding: Slice, Squeeze, Cast, Size and Shape's start/end", "[passes]") {
  test::GraphBuilder b;
  b.input("x", DType::kFloat32, {2, 3, 5, 7});
  b.constant("minus1", int64_tensor({1}, {-1}));
  b.constant("start0", int64_tensor({1}, {0}));
  b.constant("big", int64_tensor({1}, {-100}));
  b.constant("back", int64_tensor({1}, {-2}));
  b.node("shape", "Shape", {"x"}, {"s"}, DType::kInt64, {4});
  // s[-1:-100:-2] = [7, 3]
  b.node("slice", "Slice", {"s", "minus1", "big", "start0", "back"}, {"sl"}, DType::kInt64, {2});
  b.node("cast", "Cast", {"sl"}, {"sl32"}, DType::kInt32, {2});
  b.graph.nodes.back().attributes = test::attrs({{"to", int64_t{6}}});
  b.node("tail", "Shape", {"x"}, {"t"}, DType::kInt64, {2});
  b.graph.nodes.back().attributes = test::attrs({{"start", int64_t{-2}}});
  b.node("size", "Size", {"x"}, {"n"}, DType::kInt64, {});
  b.node("unsq", "Unsqueeze", {"n", "start0"}, {"n1"}, DType::kInt64, {1});
  b.node("squeeze", "Squeeze", {"n1"}, {"n0"}, DType::kInt64, {});
  b.node("sum", "Add", {"sl32", "sl32"}, {"y"}, DType::kInt32, {2});
  b.node("use_t", "Mul", {"t", "n0"}, {"w"}, DType::kInt64, {2});
  b.output("y");
  b.output("w");
  Graph& g = b.finish();
  run_pass(g);
  CHECK(folded(g, "sl") == std::vector<int64_t>{7, 3});
  CHECK(g.value(*g.find_value("sl32")).type.dtype == DType::kInt32);
  CHECK(folded(g, "sl32") == std::vector<int64_t>{7, 3});
  CHECK(folded(g, "t") == std::vector<int64_t>{5, 7});
  CHECK(folded(g, "n0") == std::vector<int64_t>{210});
  CHECK(g.value(*g.find_value("n0")).type.to_string() == "int64[]");
  CHECK(g.nodes.size() == 2);  // the graph outputs' producers stay
}
