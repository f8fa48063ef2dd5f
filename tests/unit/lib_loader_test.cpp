// The loader: topological order, structural validation, initializers, external data,
// subgraphs and input shape overrides, on ModelProtos built in memory.
#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "lib_test_util.h"
#include "nxrt/model/model.h"

using namespace nxrt;
using namespace nxrt::test;
namespace ob = nxrt::test::onnx_build;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

Expected<Model> load(const onnx::ModelProto& m, const std::filesystem::path& path, LoadOptions options = {}) {
  return load_model_proto(std::make_shared<onnx::ModelProto>(m), path, options);
}

// x[N,4] -> Relu 'first' -> a -> Neg 'second' -> y, with the nodes listed in reverse.
onnx::ModelProto two_nodes_reversed() {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x", {-1, 4});
  ob::node(g, "second", "Neg", {"a"}, {"y"});
  ob::node(g, "first", "Relu", {"x"}, {"a"});
  ob::output(g, "y");
  return m;
}

// Adds a float initializer stored in `location` at `offset` (external data).
void external_initializer(onnx::GraphProto& g, const std::string& name, const std::string& location, int64_t offset,
                          int64_t length) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto add = [&](const std::string& k, const std::string& v) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  };
  add("location", location);
  add("offset", std::to_string(offset));
  add("length", std::to_string(length));
}

// y = Add(x, W): the model external-data tests use.
onnx::ModelProto add_weight_model() {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x", {4});
  ob::node(g, "add", "Add", {"x", "W"}, {"y"});
  ob::output(g, "y");
  return m;
}

}  // namespace

TEST_CASE("the loader sorts nodes topologically and links values", "[lib][loader]") {
  TempDir dir;
  ob::save(two_nodes_reversed(), dir / "model.onnx");
  auto model = load_model(dir / "model.onnx");
  REQUIRE(model);
  const Graph& g = *model->graph;
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].name == "first");
  CHECK(g.nodes[1].name == "second");
  CHECK(g.nodes[0].id == 0);
  CHECK(g.nodes[1].id == 1);
  CHECK(g.nodes[0].opset == 17);
  const Value& a = g.value(*g.find_value("a"));
  CHECK(a.producer == 0);
  CHECK(a.consumers == std::vector<NodeId>{1});
  REQUIRE(g.inputs.size() == 1);
  CHECK(g.value(g.inputs[0]).is_graph_input);
  CHECK(g.value(g.inputs[0]).type.to_string() == "float[N,4]");
  REQUIRE(g.outputs.size() == 1);
  const Value& y = g.value(g.outputs[0]);
  CHECK(y.is_graph_output);
  CHECK(y.producer == 1);
  // ONNX shape inference filled in the types the file left out.
  CHECK(y.type.to_string() == "float[N,4]");
  CHECK(model->ir_version == 8);
}

TEST_CASE("the loader refuses a cycle naming a node", "[lib][loader]") {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x");
  ob::node(g, "A", "Add", {"x", "b"}, {"a"});
  ob::node(g, "B", "Relu", {"a"}, {"b"});
  ob::output(g, "b");
  auto r = load(m, "/models/cycle.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, StartsWith("/models/cycle.onnx: the graph has a cycle through node '"));
  CHECK_THAT(r.error().what, Contains("(ai.onnx::"));
}

TEST_CASE("the loader refuses a node reading an undefined value", "[lib][loader]") {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x");
  ob::node(g, "ok", "Relu", {"x"}, {"a"});
  ob::node(g, "reader", "Add", {"a", "ghost"}, {"y"});
  ob::output(g, "y");
  auto r = load(m, "m.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK(r.error().what == "m.onnx: node 'reader' (ai.onnx::Add, opset 17) reads 'ghost', which nothing defines");
}

TEST_CASE("the loader refuses a value produced twice", "[lib][loader]") {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x");
  ob::node(g, "one", "Relu", {"x"}, {"y"});
  ob::node(g, "two", "Neg", {"x"}, {"y"});
  ob::output(g, "y");
  auto r = load(m, "m.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, Contains("value 'y' is produced twice (by node 'two'"));

  // Overwriting a graph input counts as well.
  onnx::ModelProto m2 = ob::model();
  ob::input(*m2.mutable_graph(), "x");
  ob::node(*m2.mutable_graph(), "clobber", "Relu", {"x"}, {"x"});
  ob::output(*m2.mutable_graph(), "x");
  auto r2 = load(m2, "m.onnx");
  REQUIRE_FALSE(r2);
  CHECK_THAT(r2.error().what, Contains("value 'x' is produced twice"));
}

TEST_CASE("the loader refuses a node in a domain the model does not import", "[lib][loader]") {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "x");
  ob::node(g, "custom", "Frob", {"x"}, {"y"}, "com.example");
  ob::output(g, "y");
  auto r = load(m, "m.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(r.error().what, Contains("node 'custom' (com.example::Frob"));
  CHECK_THAT(r.error().what, Contains("uses domain 'com.example', which the model does not import"));
  CHECK_THAT(r.error().how, Contains("opset_import for 'com.example'"));

  // Importing it makes the node's opset that import's version.
  auto* op = m.add_opset_import();
  op->set_domain("com.example");
  op->set_version(3);
  auto ok = load(m, "m.onnx");
  REQUIRE(ok);
  CHECK(ok->graph->nodes[0].domain == "com.example");
  CHECK(ok->graph->nodes[0].opset == 3);
}

TEST_CASE("the loader refuses truncated and garbage files", "[lib][loader]") {
  TempDir dir;
  onnx::ModelProto m = two_nodes_reversed();
  std::string bytes;
  REQUIRE(m.SerializeToString(&bytes));
  write_bytes(dir / "truncated.onnx", bytes.substr(0, bytes.size() - 5));
  write_bytes(dir / "garbage.onnx", "this is not an onnx model, just text\n");
  for (const char* name : {"truncated.onnx", "garbage.onnx"}) {
    INFO(name);
    auto r = load_model(dir / name);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK(r.error().what == fmt::format("'{}' is not a valid ONNX model", (dir / name).string()));
  }
  auto missing = load_model(dir / "missing.onnx");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().code == ErrorCode::kInvalidInput);
  CHECK_THAT(missing.error().what, Contains("missing.onnx"));
  auto folder = load_model(dir.path());
  REQUIRE_FALSE(folder);
  CHECK(folder.error().code == ErrorCode::kInvalidInput);
}

TEST_CASE("the loader refuses an initializer whose raw_data disagrees with its shape", "[lib][loader]") {
  onnx::ModelProto m = add_weight_model();
  ob::initializer(*m.mutable_graph(), "W", {2, 2}, {1, 2, 3});
  auto r = load(m, "m.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK(r.error().what == "initializer 'W': raw_data has 12 bytes; shape [2,2] of float needs 16");
  CHECK(r.error().context == std::vector<std::string>{"loading m.onnx"});
}

TEST_CASE("the loader refuses an initializer whose byte size overflows 64 bits", "[lib][loader]") {
  onnx::ModelProto m = add_weight_model();
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name("W");
  t->set_data_type(onnx::TensorProto::DOUBLE);
  t->add_dims(int64_t{1} << 62);  // 2^62 elements fit int64; 2^65 bytes do not
  t->set_raw_data("");
  auto r = load(m, "m.onnx");
  REQUIRE_FALSE(r);
  CHECK(r.error().code == ErrorCode::kInvalidInput);
  CHECK(r.error().what == "initializer 'W': shape [4611686018427387904] of double needs more than 2^63 bytes");
}

TEST_CASE("the loader checks nodes against their ONNX operator definition", "[lib][loader]") {
  SECTION("a missing required input") {
    onnx::ModelProto m = ob::model();
    auto& g = *m.mutable_graph();
    ob::input(g, "x", {4});
    ob::node(g, "add", "Add", {"x"}, {"y"});
    ob::output(g, "y");
    auto r = load(m, "m.onnx");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK(r.error().what == "m.onnx: node 'add' does not match the definition of ai.onnx::Add-14");
    CHECK(r.error().why == "Node (add) has input size 1 not in range [min=2, max=2].");
  }
  SECTION("an attribute of the wrong type") {
    onnx::ModelProto m = ob::model();
    auto& g = *m.mutable_graph();
    ob::input(g, "x", {2, 2});
    auto& n = ob::node(g, "t", "Transpose", {"x"}, {"y"});
    auto* a = n.add_attribute();
    a->set_name("perm");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("1,0");
    ob::output(g, "y");
    auto r = load(m, "m.onnx");
    REQUIRE_FALSE(r);
    CHECK(r.error().why == "Mismatched attribute type in 't : perm'");
  }
}

TEST_CASE("the loader maps external data and refuses paths with '..' or regions past the end", "[lib][loader]") {
  TempDir dir;
  const float w[4] = {1, 2, 3, 4};
  std::string file(8, '\0');
  file.append(reinterpret_cast<const char*>(w), sizeof(w));
  write_bytes(dir / "w.bin", file);

  SECTION("a region inside the file is mapped") {
    onnx::ModelProto m = add_weight_model();
    external_initializer(*m.mutable_graph(), "W", "w.bin", 8, 16);
    auto r = load(m, dir / "m.onnx");
    REQUIRE(r);
    const Value& v = r->graph->value(*r->graph->find_value("W"));
    REQUIRE(v.initializer);
    CHECK_FALSE(v.initializer->is_resident());
    CHECK(v.initializer->describe_location() == "external: w.bin @ 8 (+16 bytes)");
    auto t = v.initializer->materialize();
    REQUIRE(t);
    CHECK(t->data_as<float>()[3] == 4);
  }
  SECTION("'..' is refused") {
    std::filesystem::create_directory(dir / "models");
    onnx::ModelProto m = add_weight_model();
    external_initializer(*m.mutable_graph(), "W", "../w.bin", 8, 16);
    auto r = load(m, dir / "models" / "m.onnx");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK(r.error().what == "external data path '../w.bin' contains '..'");
  }
  SECTION("an offset past the end of the file is refused") {
    onnx::ModelProto m = add_weight_model();
    external_initializer(*m.mutable_graph(), "W", "w.bin", 16, 16);
    auto r = load(m, dir / "m.onnx");
    REQUIRE_FALSE(r);
    CHECK(r.error().code == ErrorCode::kInvalidInput);
    CHECK(r.error().what == "initializer 'W': external data 'w.bin' has 24 bytes; the tensor asks for 16 bytes from offset 16");
    onnx::ModelProto far = add_weight_model();
    external_initializer(*far.mutable_graph(), "W", "w.bin", 1000, 16);
    CHECK_FALSE(load(far, dir / "m.onnx"));
  }
  SECTION("an offset that is not wholly a number is refused") {
    onnx::ModelProto m = add_weight_model();
    external_initializer(*m.mutable_graph(), "W", "w.bin", 0, 16);
    m.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("8abc");
    auto r = load(m, dir / "m.onnx");
    REQUIRE_FALSE(r);
    CHECK(r.error().what == "initializer 'W': external_data 'offset' is not a number of bytes: '8abc'");
  }
  SECTION("a length that disagrees with the shape is refused") {
    onnx::ModelProto m = add_weight_model();
    external_initializer(*m.mutable_graph(), "W", "w.bin", 0, 12);
    auto r = load(m, dir / "m.onnx");
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().what, Contains("does not fit shape [4]"));
  }
}

namespace {

// A branch graph computing `out` from the outer value "x" with `op`.
onnx::GraphProto branch(const std::string& name, const std::string& op, const std::string& out) {
  onnx::GraphProto g;
  g.set_name(name);
  ob::node(g, name + "_node", op, {"x"}, {out});
  auto* o = g.add_output();
  o->set_name(out);
  ob::set_type(*o, onnx::TensorProto::FLOAT, {4});
  return g;
}

void add_if(onnx::GraphProto& g, const std::string& name, onnx::GraphProto then_g, onnx::GraphProto else_g,
            const std::string& out) {
  auto& n = ob::node(g, name, "If", {"cond"}, {out});
  auto* t = n.add_attribute();
  t->set_name("then_branch");
  t->set_type(onnx::AttributeProto::GRAPH);
  *t->mutable_g() = std::move(then_g);
  auto* e = n.add_attribute();
  e->set_name("else_branch");
  e->set_type(onnx::AttributeProto::GRAPH);
  *e->mutable_g() = std::move(else_g);
}

}  // namespace

TEST_CASE("the loader links subgraph references to outer values", "[lib][loader]") {
  onnx::ModelProto m = ob::model();
  auto& g = *m.mutable_graph();
  ob::input(g, "cond", {}, onnx::TensorProto::BOOL);
  ob::input(g, "x", {4});
  // then: an inner If whose branches read "x" two levels up; else: Neg(x).
  onnx::GraphProto then_g;
  then_g.set_name("then");
  add_if(then_g, "inner_if", branch("inner_then", "Relu", "it"), branch("inner_else", "Abs", "ie"), "t");
  auto* t_out = then_g.add_output();
  t_out->set_name("t");
  ob::set_type(*t_out, onnx::TensorProto::FLOAT, {4});
  add_if(g, "outer_if", std::move(then_g), branch("else", "Neg", "e"), "y");
  ob::output(g, "y");

  auto r = load(m, "m.onnx");
  REQUIRE(r);
  const Graph& main = *r->graph;
  REQUIRE(main.nodes.size() == 1);
  const Node& outer_if = main.nodes[0];
  auto then_sub = outer_if.attributes.get_graph("then_branch");
  auto else_sub = outer_if.attributes.get_graph("else_branch");
  REQUIRE(then_sub);
  REQUIRE(else_sub);
  CHECK(then_sub->parent == &main);
  CHECK(else_sub->parent == &main);

  const Value& ex = else_sub->value(*else_sub->find_value("x"));
  CHECK(ex.is_outer_scope);
  CHECK_FALSE(ex.is_graph_input);
  CHECK(ex.producer == -1);
  CHECK(ex.type.to_string() == "float[4]");  // the outer value's type
  CHECK(ex.consumers == std::vector<NodeId>{0});

  REQUIRE(then_sub->nodes.size() == 1);
  auto inner_then = then_sub->nodes[0].attributes.get_graph("then_branch");
  REQUIRE(inner_then);
  CHECK(inner_then->parent == then_sub.get());
  CHECK(inner_then->parent->parent == &main);
  CHECK(inner_then->value(*inner_then->find_value("x")).is_outer_scope);
  // The condition is an outer value of the then-branch, as the inner If reads it.
  CHECK(then_sub->value(*then_sub->find_value("cond")).is_outer_scope);
  // The main graph's own values are never outer-scope.
  CHECK_FALSE(main.value(*main.find_value("x")).is_outer_scope);
}

TEST_CASE("LoadOptions.input_shapes fixes input dims and refuses unknown inputs", "[lib][loader]") {
  onnx::ModelProto m = two_nodes_reversed();
  LoadOptions opts;
  opts.input_shapes["x"] = {2, 4};
  auto r = load(m, "m.onnx", opts);
  REQUIRE(r);
  const Graph& g = *r->graph;
  CHECK(g.value(*g.find_value("x")).type.static_shape() == Shape{2, 4});
  // Inference carries the concrete shape through the graph.
  CHECK(g.value(*g.find_value("y")).type.static_shape() == Shape{2, 4});

  LoadOptions unknown;
  unknown.input_shapes["z"] = {1};
  auto bad = load(m, "m.onnx", unknown);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == ErrorCode::kUsage);
  CHECK(bad.error().what == "--shape names 'z', which is not an input of m.onnx");
  CHECK(bad.error().how == "the inputs are: x");

  LoadOptions wrong_rank;
  wrong_rank.input_shapes["x"] = {8};
  auto rank = load(m, "m.onnx", wrong_rank);
  REQUIRE_FALSE(rank);
  CHECK(rank.error().code == ErrorCode::kUsage);
  CHECK_THAT(rank.error().what, Contains("rank 1, the model declares rank 2"));
}
