// A partition stored as an ONNX model inside an EP blob (partition_to_onnx) and read back
// (partition_from_onnx): the EP re-claims every node, weights it keeps prepared come back as
// constants without values, and what it would not build is refused with its reason.
#include <catch2/catch.hpp>
#include <onnx/onnx_pb.h>

#include "cpu_partition_fixture.h"
#include "nxrt/model/partition_model.h"

using namespace nxrt;
using namespace nxrt::test;
using Catch::Matchers::Contains;

namespace {

struct Fixture : CpuAddReluPartition {
  // The stored partition, changed by `edit`.
  std::vector<std::byte> stored(const std::function<void(onnx::ModelProto&)>& edit = {}, std::set<ValueId> as_inputs = {}) {
    auto text = partition_to_onnx(partition, as_inputs);
    REQUIRE(text.has_value());
    onnx::ModelProto proto;
    REQUIRE(proto.ParseFromString(*text));
    if (edit) edit(proto);
    const std::string bytes = proto.SerializeAsString();
    const auto* p = reinterpret_cast<const std::byte*>(bytes.data());
    return {p, p + bytes.size()};
  }
};

}  // namespace

TEST_CASE("a stored partition reads back with its nodes, boundary and constants", "[lib][epcontext]") {
  Fixture f;
  auto model = partition_from_onnx(f.stored(), "the test blob", *f.ep);
  REQUIRE(model.has_value());
  const Graph& g = *model->graph;
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].op_type == "Add");
  CHECK(g.nodes[1].op_type == "Relu");
  CHECK(g.inputs.size() == 1);
  const Value& w = g.value(g.nodes[0].inputs[1]);
  REQUIRE(w.initializer.has_value());
  CHECK(w.initializer->materialize().has_value());
}

TEST_CASE("weights an EP keeps prepared come back as constants without values", "[lib][epcontext]") {
  Fixture f;
  auto model = partition_from_onnx(f.stored({}, {f.w}), "the test blob", *f.ep, 1);
  REQUIRE(model.has_value());
  const Graph& g = *model->graph;
  CHECK(g.inputs.size() == 1);  // the weight is no graph input any more
  const Value& w = g.value(g.nodes[0].inputs[1]);
  REQUIRE(w.initializer.has_value());
  CHECK_FALSE(w.is_graph_input);
  CHECK(w.initializer->shape() == Shape{4});
  CHECK(w.initializer->describe_location() == "prepared by its EP in an EPContext blob");
  auto values = w.initializer->materialize();
  REQUIRE_FALSE(values.has_value());
  CHECK_THAT(values.error().render(), Contains("only in its EP's prepared form"));
}

TEST_CASE("a stored partition with a node its EP declines is refused with the EP's reason", "[lib][epcontext]") {
  Fixture f;
  auto model = partition_from_onnx(f.stored([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(1)->set_op_type("NoSuchOp"); }),
                                   "the test blob", *f.ep);
  REQUIRE_FALSE(model.has_value());
  const std::string text = model.error().render();
  CHECK_THAT(text, Contains("the test blob holds") && Contains("which the cpu EP does not claim"));
  CHECK_THAT(text, Contains("NoSuchOp (opset 17) is not implemented by the cpu EP"));
  CHECK_THAT(text, Contains("recompile the model with nxrt compile-epcontext"));
}

TEST_CASE("a stored partition whose node lacks an input or its output is refused", "[lib][epcontext]") {
  Fixture f;
  auto no_output = partition_from_onnx(
      f.stored([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->clear_output(); }), "the test blob", *f.ep);
  REQUIRE_FALSE(no_output.has_value());
  CHECK_THAT(no_output.error().render(), Contains("has no first output"));
  auto one_input = partition_from_onnx(
      f.stored([](onnx::ModelProto& m) { m.mutable_graph()->mutable_node(0)->mutable_input()->RemoveLast(); }),
      "the test blob", *f.ep);
  REQUIRE_FALSE(one_input.has_value());
  CHECK_THAT(one_input.error().render(), Contains("which the cpu EP does not claim"));
}
