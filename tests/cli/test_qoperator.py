"""CLI tests for quantized models in ONNX Runtime's QOperator form: its com.microsoft QLinear* ops
(testdata/com_microsoft, expected outputs from ONNX Runtime 1.30, scripts/gen-opset-tests.py)
give its outputs bit for bit (the folder's other ORT ops, MatMulNBits, GroupQueryAttention, the
BERT ops and the fused transformer ops, within run's default tolerance); their types and shapes
are inferred at load; a QOperator network runs channels-last on the cpu EP, gives the bits of the same network in QDQ form, and goes
through an EPContext model to the same bits."""
import json
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt

CASES = DATA / "com_microsoft"
STEP = 0.1  # the output's scale


def init(inits, name, array):
    inits.append(onnx.numpy_helper.from_array(np.asarray(array), name))
    return name


def block_model(path, form, channels=8, size=10, classes=5):
    """X float [1, channels, size, size] quantized, a 3x3 convolution with Relu, a 3x3 one without,
    the sum of both (a residual connection), GlobalAveragePool, Flatten and a classifier Gemm, Y
    dequantized: in QOperator form ("qop": QLinearConv, QLinearAdd, QLinearGlobalAveragePool,
    QGemm) or QDQ form ("qdq": the float ops between DequantizeLinear and QuantizeLinear), with
    the same weights."""
    rng = np.random.default_rng(11)
    inits, nodes = [], []
    quant = {}  # value -> (scale, zero point) initializer names

    def params(name, scale, zero):
        quant[name] = (init(inits, f"{name}_s", np.float32(scale)), init(inits, f"{name}_z", np.uint8(zero)))
        return list(quant[name])

    def dq(q):  # QDQ form: the float value a float op reads (one DequantizeLinear per value)
        if not any(f"{q}_dq" in n.output for n in nodes):
            nodes.append(helper.make_node("DequantizeLinear", [q, *quant[q]], [f"{q}_dq"]))
        return f"{q}_dq"

    def q(x, name, scale, zero):  # QDQ form: a float op's output quantized
        nodes.append(helper.make_node("QuantizeLinear", [x, *params(name, scale, zero)], [name]))
        return name

    nodes.append(helper.make_node("QuantizeLinear", ["x", *params("xq", 0.05, 128)], ["xq"]))
    x_scale = 0.05

    def conv(x, name, relu, x_scale):
        w_scale = rng.uniform(0.004, 0.008, channels).astype(np.float32)
        w = init(inits, f"{name}_w", rng.integers(-127, 128, (channels, channels, 3, 3)).astype(np.int8))
        ws = init(inits, f"{name}_ws", w_scale)
        wz = init(inits, f"{name}_wz", np.zeros(channels, np.int8))
        b = init(inits, f"{name}_b", rng.integers(-300, 300, channels).astype(np.int32))
        scale, zero = (0.04, 0) if relu else (0.08, 128)
        if form == "qop":
            nodes.append(helper.make_node("QLinearConv", [x, *quant[x], w, ws, wz, *params(name, scale, zero), b],
                                          [name], name=name, pads=[1, 1, 1, 1]))
            return name
        bs = init(inits, f"{name}_bs", (np.float32(x_scale) * w_scale).astype(np.float32))
        nodes.append(helper.make_node("DequantizeLinear", [w, ws, wz], [f"{name}_wf"], axis=0))
        nodes.append(helper.make_node("DequantizeLinear", [b, bs], [f"{name}_bf"], axis=0))
        nodes.append(helper.make_node("Conv", [dq(x), f"{name}_wf", f"{name}_bf"], [f"{name}_c"], pads=[1, 1, 1, 1]))
        y = f"{name}_c"
        if relu:
            nodes.append(helper.make_node("Relu", [y], [f"{name}_r"]))
            y = f"{name}_r"
        return q(y, name, scale, zero)

    r = conv("xq", "conv1", True, x_scale)
    h = conv(r, "conv2", False, 0.04)
    fc_w = rng.integers(-127, 128, (classes, channels)).astype(np.int8)
    fc_ws = rng.uniform(0.01, 0.02, classes).astype(np.float32)
    fc_b = rng.integers(-300, 300, classes).astype(np.int32)
    if form == "qop":
        nodes.append(helper.make_node("QLinearAdd", [h, *quant[h], r, *quant[r], *params("sum", 0.08, 128)],
                                      ["sum"], name="add", domain="com.microsoft"))
        nodes.append(helper.make_node("QLinearGlobalAveragePool", ["sum", *quant["sum"], *params("pool", 0.02, 128)],
                                      ["pool"], name="pool", domain="com.microsoft"))
        nodes.append(helper.make_node("Flatten", ["pool"], ["flat"]))
        w = [init(inits, "fc_w", fc_w), init(inits, "fc_ws", fc_ws), init(inits, "fc_wz", np.zeros(classes, np.int8))]
        nodes.append(helper.make_node("QGemm", ["flat", *quant["pool"], *w, init(inits, "fc_b", fc_b),
                                                *params("logits", STEP, 128)], ["logits"], name="fc",
                                      domain="com.microsoft", transB=1))
    else:
        nodes.append(helper.make_node("Add", [dq(h), dq(r)], ["sum_f"]))
        q("sum_f", "sum", 0.08, 128)
        nodes.append(helper.make_node("GlobalAveragePool", [dq("sum")], ["pool_f"]))
        q("pool_f", "pool", 0.02, 128)
        nodes.append(helper.make_node("Flatten", [dq("pool")], ["flat_f"]))
        q("flat_f", "flat", 0.02, 128)
        nodes.append(helper.make_node("DequantizeLinear", ["fc_w_q", init(inits, "fc_ws", fc_ws),
                                                          init(inits, "fc_wz", np.zeros(classes, np.int8))],
                                      ["fc_wf"], axis=0))
        init(inits, "fc_w_q", fc_w)
        fc_bs = init(inits, "fc_bs", (np.float32(0.02) * fc_ws).astype(np.float32))
        nodes.append(helper.make_node("DequantizeLinear", [init(inits, "fc_b", fc_b), fc_bs], ["fc_bf"], axis=0))
        nodes.append(helper.make_node("Gemm", [dq("flat"), "fc_wf", "fc_bf"], ["logits_f"], transB=1))
        q("logits_f", "logits", STEP, 128)
    nodes.append(helper.make_node("DequantizeLinear", ["logits", *quant["logits"]], ["y"]))
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                               [1, channels, size, size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])], inits)
    imports = [helper.make_opsetid("", 13)] + ([helper.make_opsetid("com.microsoft", 1)] if form == "qop" else [])
    model = helper.make_model(graph, opset_imports=imports)
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def qdq_elementwise_model(path):
    """X float [1, 8, 10, 10] quantized, then in QDQ form: LeakyRelu, Sigmoid, their product (a
    squeeze-and-excite's Mul), AveragePool 3x3 with padding and Add of it to the product, each
    output quantized; Y dequantized."""
    inits, nodes = [], []
    count = [0]

    def q(x, scale, zero):  # x (float) -> QuantizeLinear -> DequantizeLinear
        count[0] += 1
        name = f"q{count[0]}"
        init(inits, f"{name}_s", np.float32(scale))
        init(inits, f"{name}_z", np.uint8(zero))
        nodes.append(helper.make_node("QuantizeLinear", [x, f"{name}_s", f"{name}_z"], [name]))
        nodes.append(helper.make_node("DequantizeLinear", [name, f"{name}_s", f"{name}_z"], [f"{name}_f"]))
        return f"{name}_f"

    x = q("x", 0.03, 128)
    nodes.append(helper.make_node("LeakyRelu", [x], ["leaky"], alpha=0.2))
    leaky = q("leaky", 0.02, 64)
    nodes.append(helper.make_node("Sigmoid", [x], ["gate"]))
    gate = q("gate", 1 / 255, 0)
    nodes.append(helper.make_node("Mul", [leaky, gate], ["excited"]))
    excited = q("excited", 0.02, 64)
    nodes.append(helper.make_node("AveragePool", [excited], ["pooled"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    pooled = q("pooled", 0.02, 64)
    nodes.append(helper.make_node("Add", [pooled, excited], ["sum"]))
    nodes.append(helper.make_node("Identity", [q("sum", 0.04, 64)], ["y"]))
    graph = helper.make_graph(nodes, "elementwise", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                     [1, 8, 10, 10])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 10, 10])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


class OnnxRuntimeCases(TempDirTest):
    def test_every_case_matches_onnx_runtime(self):
        cases = sorted(p for p in CASES.iterdir() if (p / "model.onnx").exists())
        self.assertGreaterEqual(len(cases), 30)
        for ep in ("cpu", "onednn,cpu"):
            rc, out, err = nxrt("run", "--ep", ep, "-q", "--json", "--test-dir", *cases)
            results = {r["test_dir"].split("/")[-1]: r for r in map(json.loads, out.splitlines())}
            self.assertEqual(sorted(results), [c.name for c in cases], err)
            for case in cases:
                with self.subTest(case=case.name, ep=ep):
                    self.assertEqual(results[case.name]["status"], "pass", json.dumps(results[case.name], indent=1))
            self.assertEqual(rc, 0, err)

    def test_types_and_shapes_are_inferred_through_the_microsoft_ops(self):
        for case, shape in (("qlinearconcat_uint8_axis1", "uint8[2,9,4]"),
                            ("qlinearglobalaveragepool_int8_channels_last", "int8[2,1,1,19]"),
                            ("qlinearaveragepool_uint8_ceil_mode", "uint8[2,5,4,5]"),
                            ("qlinearadd_int8_broadcast_channel", "int8[2,4,5,5]")):
            with self.subTest(case=case):
                rc, out, err = nxrt("explain-claims", CASES / case / "model.onnx", "--ep", "cpu")
                self.assertExit((rc, out, err), 0)
                self.assertRegex(out, r"_0 +com\.microsoft::QLinear\w+-1 +cpu +cpu_0 +" + shape.replace("[", r"\[")
                                 .replace("]", r"\]") + " ")


class QOperatorNetwork(TempDirTest):
    def run_model(self, model, *extra, name="out"):
        rc, _, err = nxrt("run", model, "--input", f"x={self.tmp / 'x.npy'}", "--output-dir", self.tmp / name, "-q",
                          *extra)
        self.assertEqual(rc, 0, err)
        return np.load(self.tmp / name / "y.npy")

    def setUp(self):
        super().setUp()
        x = np.random.default_rng(12).uniform(-3, 3, (1, 8, 10, 10)).astype(np.float32)
        np.save(self.tmp / "x.npy", x)

    def test_a_qoperator_block_gives_the_bits_of_its_qdq_form(self):
        """fuse-qdq makes the QDQ form's groups the QOperator form's ops (as ONNX Runtime's QDQ
        transformer does), so both compute the same; with --skip-pass fuse-qdq the float ops stay
        within a step."""
        qop = self.run_model(block_model(self.tmp / "qop.onnx", "qop"), "--ep", "cpu", name="qop")
        qdq_model = block_model(self.tmp / "qdq.onnx", "qdq")
        qdq = self.run_model(qdq_model, "--ep", "cpu", name="qdq")
        self.assertEqual(qop.shape, (1, 5))
        self.assertGreater(len(np.unique(qop)), 2, qop)
        np.testing.assert_array_equal(qop, qdq)
        rc, out, err = nxrt("explain-claims", qdq_model, "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        for op in ("QLinearAdd", "QLinearGlobalAveragePool", "QGemm"):
            self.assertIn(f"into com.microsoft::{op}", out)
        floats = self.run_model(qdq_model, "--ep", "cpu", "--skip-pass", "fuse-qdq", name="float")
        np.testing.assert_allclose(qop, floats, atol=STEP * 2.01, rtol=0)

    def test_qdq_groups_around_elementwise_ops_and_pools_become_qlinear_ops_within_a_step(self):
        model = qdq_elementwise_model(self.tmp / "elementwise.onnx")
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        for op in ("QLinearLeakyRelu", "QLinearSigmoid", "QLinearMul", "QLinearAveragePool", "QLinearAdd"):
            self.assertIn(f"into com.microsoft::{op}", out)
        fused = self.run_model(model, "--ep", "cpu", name="fused")
        floats = self.run_model(model, "--ep", "cpu", "--skip-pass", "fuse-qdq", name="float")
        self.assertGreater(len(np.unique(fused)), 20)
        # Each integer op rounds once where the float ops round their own way: a step or two of
        # the output's 0.04 apart after five of them.
        np.testing.assert_allclose(fused, floats, atol=0.04 * 2.01, rtol=0)

    def test_the_network_stays_channels_last_and_restores_from_an_epcontext_model(self):
        model = block_model(self.tmp / "qop.onnx", "qop")
        rc, out, err = nxrt("bench", model, "--ep", "cpu", "-n", "2", "--profile", "--json", "-q")
        self.assertEqual(rc, 0, err)
        variants = {step["nodes"][0]: step["variant"] for step in json.loads(out)["steps"]}
        self.assertTrue(variants["conv1"].endswith(" nchw>nhwc"), variants)
        self.assertTrue(variants["conv2"].endswith(" nhwc>nhwc"), variants)
        self.assertEqual(variants["add"], "qlinear-add", variants)  # element by element, in either layout
        self.assertEqual(variants["pool"], "qlinear-global-avgpool nhwc", variants)
        rc, _, err = nxrt("compile-epcontext", model, "--ep", "cpu", "-o", self.tmp / "ctx.onnx")
        self.assertEqual(rc, 0, err)
        direct = self.run_model(model, "--ep", "cpu", name="direct")
        restored = self.run_model(self.tmp / "ctx.onnx", "--ep", "cpu", name="restored")
        np.testing.assert_array_equal(direct, restored)


if __name__ == "__main__":
    unittest.main()
