"""CLI tests for --placement: the values every subcommand that claims or runs takes, the
usage error, and what explain-claims says about the nodes the fewer-partitions policy moves."""
import json
import unittest

import numpy as np
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt
from test_control_flow import save_model
from test_explain_formats import HAVE_ONEDNN, table_with

POLICIES = ["first-claim", "fewer-partitions"]


def float_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


class Placement(TempDirTest):
    def interleaved_model(self):
        """Sin -> Mul -> Sin: onednn declines Sin and claims the Mul, a memory-bound op
        between two cpu nodes, which fewer-partitions moves to cpu."""
        return save_model(self.tmp / "interleaved.onnx",
                          [helper.make_node("Sin", ["x"], ["a"], name="sin_a"),
                           helper.make_node("Mul", ["a", "x"], ["m"], name="scale"),
                           helper.make_node("Sin", ["m"], ["y"], name="sin_b")],
                          [float_info("x", [4, 8])], [float_info("y", [4, 8])], opset=17)

    def matmul_model(self):
        """Sin -> MatMul -> Sin: the MatMul does more FLOPs than it moves bytes, so it stays."""
        w = onnx.numpy_helper.from_array(np.full((16, 16), 0.5, np.float32), "w")
        return save_model(self.tmp / "matmul.onnx",
                          [helper.make_node("Sin", ["x"], ["a"], name="sin_a"),
                           helper.make_node("MatMul", ["a", "w"], ["m"], name="mm"),
                           helper.make_node("Sin", ["m"], ["y"], name="sin_b")],
                          [float_info("x", [8, 16])], [float_info("y", [8, 16])], [w], opset=17)

    def explain_json(self, model, *args):
        rc, out, err = nxrt("explain-claims", model, "--json", *args)
        self.assertEqual(rc, 0, err)
        return json.loads(out)

    def test_every_subcommand_that_claims_or_runs_takes_both_values(self):
        model = DATA / "mlp/model.onnx"
        for policy in POLICIES:
            self.assertEqual(self.explain_json(model, "--placement", policy)["placement"], policy)
            self.assertExit(nxrt("run", model, "--placement", policy, "-q"), 0, policy)
            self.assertExit(nxrt("bench", model, "--placement", policy, "-n", "2", "--warmup", "0", "-q"), 0, policy)
            self.assertExit(nxrt("compile-epcontext", model, "-o", self.tmp / f"{policy}.onnx", "--placement", policy),
                            0, policy)
        self.assertEqual(self.explain_json(model)["placement"], "fewer-partitions")

    def test_an_unknown_policy_is_a_usage_error_naming_the_policies(self):
        for sub in (["explain-claims"], ["run"], ["bench"], ["compile-epcontext", "-o", self.tmp / "out.onnx"]):
            rc, out, err = nxrt(*sub, DATA / "mlp/model.onnx", "--placement", "fastest")
            self.assertEqual((rc, out), (2, ""), f"{sub}: {err}")
            self.assertIn("fastest", err, sub)
            for policy in POLICIES:
                self.assertIn(policy, err, sub)
        self.assertFalse((self.tmp / "out.onnx").exists())

    def test_nodes_keep_a_null_note_when_nothing_moves(self):
        report = self.explain_json(DATA / "cnn/model.onnx", "--placement", "first-claim")
        self.assertEqual(report["placement"], "first-claim")
        self.assertTrue(report["nodes"])
        self.assertTrue(all(n["placement_note"] is None for n in report["nodes"]))

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_a_memory_bound_node_between_cpu_nodes_moves_to_cpu_and_says_why(self):
        model = self.interleaved_model()
        first = self.explain_json(model, "--placement", "first-claim")
        self.assertEqual([(p["ep"], p["nodes"]) for p in first["partitions"]],
                         [("cpu", ["sin_a"]), ("onednn", ["scale"]), ("cpu", ["sin_b"])])
        self.assertTrue(all(n["placement_note"] is None for n in first["nodes"]))

        report = self.explain_json(model)
        self.assertEqual(report["placement"], "fewer-partitions")
        self.assertEqual([(p["ep"], p["nodes"]) for p in report["partitions"]], [("cpu", ["sin_a", "scale", "sin_b"])])
        notes = {n["name"]: n["placement_note"] for n in report["nodes"]}
        self.assertEqual(notes["sin_a"], None)
        self.assertEqual(notes["sin_b"], None)
        self.assertEqual(notes["scale"],
                         "moved from onednn to cpu: its onednn partition (scale) only does memory-bound work "
                         "(under 1 FLOP per byte) between cpu nodes, and cpu claims all of it; "
                         "--placement first-claim keeps it on onednn")
        scale = next(n for n in report["nodes"] if n["name"] == "scale")
        self.assertEqual(scale["placed_ep"], "cpu")
        self.assertTrue(next(v for v in scale["verdicts"] if v["ep"] == "onednn")["claimed"])

        rc, out, _ = nxrt("explain-claims", model)
        self.assertEqual(rc, 0)
        self.assertIn("\nplacement: fewer-partitions\n", out)
        self.assertEqual({r["NODE"]: r["PLACED"] for r in table_with(out, "NODE")},
                         {"sin_a": "cpu", "scale": "cpu*", "sin_b": "cpu"})
        self.assertIn(f"\n* moved by --placement fewer-partitions:\n  {notes['scale']}\n", out)
        rc, out, _ = nxrt("explain-claims", model, "--placement", "first-claim")
        self.assertNotIn("* moved by", out)
        self.assertEqual(table_with(out, "NODE")[1]["PLACED"], "onednn")

        rc, md, _ = nxrt("explain-claims", model, "--format", "md")
        self.assertEqual(rc, 0)
        self.assertIn("placement: fewer-partitions", md)
        self.assertIn(f"### Moved by --placement fewer-partitions\n\nNodes marked `*` in the node table:\n\n"
                      f"- {notes['scale']}\n", md)
        rc, dot, _ = nxrt("explain-claims", model, "--format", "dot")
        self.assertEqual(rc, 0)
        self.assertRegex(dot, r'\[label="scale\\nMul\\ncpu\*", fillcolor="#[0-9a-f]{6}", tooltip="moved from onednn')
        self.assertIn('"legend_moved" [label="EP*: moved there by --placement fewer-partitions"', dot)

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_a_compute_bound_node_stays(self):
        report = self.explain_json(self.matmul_model())
        self.assertEqual([(p["ep"], p["nodes"]) for p in report["partitions"]],
                         [("cpu", ["sin_a"]), ("onednn", ["mm"]), ("cpu", ["sin_b"])])
        cost = next(v for v in report["nodes"][1]["verdicts"] if v["ep"] == "onednn")["cost"]
        self.assertGreater(cost["flops"], cost["bytes"])
        self.assertTrue(all(n["placement_note"] is None for n in report["nodes"]))

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_both_policies_compute_the_same_outputs(self):
        model = self.interleaved_model()
        x = self.tmp / "x.npy"
        np.save(x, np.linspace(-2, 2, 32, dtype=np.float32).reshape(4, 8))
        outputs = {}
        for policy in POLICIES:
            self.assertExit(nxrt("run", model, "--placement", policy, "--input", f"x={x}", "--output-dir",
                                 self.tmp / policy, "-q"), 0, policy)
            outputs[policy] = np.load(self.tmp / policy / "y.npy")
        np.testing.assert_allclose(outputs["first-claim"], outputs["fewer-partitions"], rtol=1e-6, atol=1e-6)
        expected = np.sin(np.sin(np.load(x)) * np.load(x))
        np.testing.assert_allclose(outputs["fewer-partitions"], expected, rtol=1e-5, atol=1e-6)

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_bench_runs_the_partitions_of_the_policy(self):
        model = self.interleaved_model()
        parts = {}
        for policy in POLICIES:
            rc, out, err = nxrt("bench", model, "--placement", policy, "-n", "2", "--warmup", "0", "--profile")
            self.assertEqual(rc, 0, err)
            parts[policy] = [(r["PARTITION"], r["NODES"]) for r in table_with(out, "PARTITION")]
        self.assertEqual(parts, {"first-claim": [("cpu_0", "1"), ("onednn_0", "1"), ("cpu_1", "1")],
                                 "fewer-partitions": [("cpu_0", "3")]})


if __name__ == "__main__":
    unittest.main()
