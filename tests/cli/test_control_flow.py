"""CLI tests for ops that run part of a graph (If, Loop, Scan, Gradient), sequences and
optionals: behaviour the ONNX backend suite does not cover (declines, runtime errors,
outer-scope values, value files)."""
import json
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import TempDirTest, nxrt

FLOAT_SEQ = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))


def save_model(path, nodes, inputs, outputs, initializers=(), opset=16):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def save_tensor(path, array, name=""):
    path.write_bytes(onnx.numpy_helper.from_array(np.asarray(array), name).SerializeToString())
    return path


class ControlFlow(TempDirTest):
    def loop_model(self, with_trip_count=True, with_cond=True):
        """y = x + 1, repeated: the body reads `step` from the outer graph."""
        body = helper.make_graph(
            [helper.make_node("Add", ["x_in", "step"], ["x_out"]), helper.make_node("Identity", ["c_in"], ["c_out"])],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2])],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
             helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2])])
        inits = [onnx.numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "step"),
                 onnx.numpy_helper.from_array(np.array(3, np.int64), "M"),
                 onnx.numpy_helper.from_array(np.array(True), "cond")]
        loop = helper.make_node("Loop", ["M" if with_trip_count else "", "cond" if with_cond else "", "x"], ["y"],
                                body=body)
        return save_model(self.tmp / "loop.onnx", [loop], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], inits)

    def test_loop_reads_outer_scope_values(self):
        model = self.loop_model()
        x = save_tensor(self.tmp / "x.pb", np.array([10.0, 20.0], np.float32))
        rc, out, err = nxrt("run", model, "--input", f"x={x}", "--output-dir", self.tmp / "out", "-q")
        self.assertEqual(rc, 0, err)
        np.testing.assert_allclose(np.load(self.tmp / "out" / "y.npy"), [13.0, 26.0])

    def test_loop_that_never_ends_is_declined(self):
        model = self.loop_model(with_trip_count=False, with_cond=False)
        rc, out, err = nxrt("explain-claims", model)
        self.assertEqual(rc, 4, out + err)
        self.assertIn("Loop: neither the trip count M nor the condition is given, so the loop never ends", out)

    def test_branch_node_decline_names_the_branch_and_node(self):
        then_branch = helper.make_graph([helper.make_node("Frobnicate", ["a"], ["t"], domain="com.example")],
                                        "then", [], [helper.make_tensor_value_info("t", TensorProto.FLOAT, [1])])
        else_branch = helper.make_graph([helper.make_node("Identity", ["a"], ["e"])], "else", [],
                                        [helper.make_tensor_value_info("e", TensorProto.FLOAT, [1])])
        node = helper.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)
        graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                                                helper.make_tensor_value_info("a", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16),
                                                        helper.make_opsetid("com.example", 1)])
        model.ir_version = 8
        onnx.save(model, str(self.tmp / "if.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "if.onnx")
        self.assertEqual(rc, 4, out + err)
        self.assertIn("If: then_branch: its node 'Frobnicate_0' (com.example::Frobnicate", out)


class Sequences(TempDirTest):
    def sequence_at_model(self):
        nodes = [helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
                 helper.make_node("SequenceAt", ["s", "pos"], ["y"])]
        return save_model(self.tmp / "seq_at.onnx", nodes,
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, [2]),
                           helper.make_tensor_value_info("pos", TensorProto.INT64, [])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])

    def test_sequence_at_negative_and_out_of_range_positions(self):
        model = self.sequence_at_model()
        a = save_tensor(self.tmp / "a.pb", np.array([1, 2], np.float32))
        b = save_tensor(self.tmp / "b.pb", np.array([3, 4], np.float32))
        last = save_tensor(self.tmp / "last.pb", np.array(-1, np.int64))
        rc, out, err = nxrt("run", model, "--input", f"a={a}", "--input", f"b={b}", "--input", f"pos={last}",
                            "--json", "-q")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out)["outputs"]["y"]["first_values"], ["3", "4"])
        far = save_tensor(self.tmp / "far.pb", np.array(2, np.int64))
        rc, out, err = nxrt("run", model, "--input", f"a={a}", "--input", f"b={b}", "--input", f"pos={far}", "-q")
        self.assertEqual(rc, 1, out + err)  # a runtime error
        self.assertIn("SequenceAt: position 2 is out of range for a sequence of 2 tensors", err)
        self.assertIn("positions run from -2 to 1", err)

    def test_sequence_output_written_as_sequence_proto_and_read_back(self):
        nodes = [helper.make_node("SplitToSequence", ["x"], ["s"], axis=0)]
        model = save_model(self.tmp / "split.onnx", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 2])],
                           [helper.make_value_info("s", FLOAT_SEQ)])
        x = save_tensor(self.tmp / "x.pb", np.arange(6, dtype=np.float32).reshape(3, 2))
        rc, out, err = nxrt("run", model, "--input", f"x={x}", "--output-dir", self.tmp / "out", "-q")
        self.assertEqual(rc, 0, err)
        self.assertIn("sequence of 3 float", out)
        seq = onnx.SequenceProto()
        seq.ParseFromString((self.tmp / "out" / "s.pb").read_bytes())
        items = [onnx.numpy_helper.to_array(t) for t in seq.tensor_values]
        self.assertEqual(len(items), 3)
        np.testing.assert_array_equal(items[2], [[4, 5]])

    def test_optional_get_element_of_an_empty_optional_is_a_runtime_error(self):
        nodes = [helper.make_node("Optional", [], ["o"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [2])),
                 helper.make_node("OptionalGetElement", ["o"], ["y"])]
        model = save_model(self.tmp / "opt.onnx", nodes, [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
        rc, out, err = nxrt("run", model, "-q")
        self.assertEqual(rc, 1, out + err)  # a runtime error
        self.assertIn("read an empty optional", err)


class Gradient(TempDirTest):
    def gradient_model(self, op):
        nodes = [helper.make_node(op, ["a", "b"], ["c"]),
                 helper.make_node("Gradient", ["a", "b"], ["dc_da", "dc_db"], domain="ai.onnx.preview.training",
                                  xs=["a", "b"], y="c")]
        vi = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2]) for n in ("a", "b")]
        graph = helper.make_graph(nodes, "g", vi, [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 2])
                                                   for n in ("dc_da", "dc_db")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13),
                                                        helper.make_opsetid("ai.onnx.preview.training", 1)])
        model.ir_version = 8
        onnx.save(model, str(self.tmp / "grad.onnx"))
        return self.tmp / "grad.onnx"

    def test_gradient_of_a_product(self):
        model = self.gradient_model("Mul")
        a = save_tensor(self.tmp / "a.pb", np.array([[1, 2], [3, 4]], np.float32))
        b = save_tensor(self.tmp / "b.pb", np.array([[5, 6], [7, 8]], np.float32))
        rc, out, err = nxrt("run", model, "--input", f"a={a}", "--input", f"b={b}", "--output-dir", self.tmp / "out",
                            "-q")
        self.assertEqual(rc, 0, err)
        np.testing.assert_allclose(np.load(self.tmp / "out" / "dc_da.npy"), [[5, 6], [7, 8]])
        np.testing.assert_allclose(np.load(self.tmp / "out" / "dc_db.npy"), [[1, 2], [3, 4]])

    def test_an_op_without_a_known_derivative_is_declined(self):
        rc, out, err = nxrt("explain-claims", self.gradient_model("MatMul"))
        self.assertEqual(rc, 4, out + err)
        self.assertIn("Gradient: y depends on 'MatMul_0' (ai.onnx::MatMul, opset 13), whose derivative the cpu EP "
                      "does not know", out)


if __name__ == "__main__":
    unittest.main()
