"""CLI tests for quantized models in QDQ form: the fuse-qdq pass runs DequantizeLinear -> Conv
(-> Relu) -> QuantizeLinear as QLinearConv, and ops that move values on the quantized values;
explain-claims says so, the outputs stay within a quantization step of the float ops' (exactly
the same for moved values; --skip-pass fuse-qdq), and --skip-pass names its passes."""
import json
import unittest

import numpy as np
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt
from test_control_flow import save_model
from test_cuda import BUILT

PASSES = ["constant-to-initializer", "eliminate-identity", "expand-ort-fusions", "fold-shape-computations",
          "merge-duplicate-nodes", "fuse-qdq", "dequantize-constants"]
Y_SCALE = 0.1


def qdq_conv_model(path, layers=2, channels=8, size=10):
    """X quantized, then `layers` of DequantizeLinear -> Conv 3x3 (int8 weights per channel, an
    int32 bias) -> Relu -> QuantizeLinear (zero point 0), then Y dequantized: what a static
    quantizer writes."""
    rng = np.random.default_rng(3)
    inits, nodes = [], []

    def init(name, array):
        inits.append(onnx.numpy_helper.from_array(array, name))

    init("xs", np.array(0.05, np.float32))
    init("xz", np.array(128, np.uint8))
    nodes.append(helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q_in"], name="quantize_x"))
    previous, x_scale = ("q_in", "xs", "xz"), 0.05
    for i in range(layers):
        w_scale = (rng.random(channels) * 0.02 + 0.005).astype(np.float32)
        init(f"w{i}", rng.integers(-127, 128, (channels, channels, 3, 3)).astype(np.int8))
        init(f"ws{i}", w_scale)
        init(f"wz{i}", np.zeros(channels, np.int8))
        init(f"b{i}", rng.integers(-500, 500, channels).astype(np.int32))
        init(f"bs{i}", (np.float32(x_scale) * w_scale).astype(np.float32))
        init(f"ys{i}", np.array(Y_SCALE, np.float32))
        init(f"yz{i}", np.array(0, np.uint8))
        nodes += [
            helper.make_node("DequantizeLinear", list(previous), [f"x{i}"], name=f"dq_x{i}"),
            helper.make_node("DequantizeLinear", [f"w{i}", f"ws{i}", f"wz{i}"], [f"wf{i}"], name=f"dq_w{i}", axis=0),
            helper.make_node("DequantizeLinear", [f"b{i}", f"bs{i}"], [f"bf{i}"], name=f"dq_b{i}", axis=0),
            helper.make_node("Conv", [f"x{i}", f"wf{i}", f"bf{i}"], [f"c{i}"], name=f"conv{i}", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"),
            helper.make_node("QuantizeLinear", [f"r{i}", f"ys{i}", f"yz{i}"], [f"q{i}"], name=f"quantize{i}"),
        ]
        previous, x_scale = (f"q{i}", f"ys{i}", f"yz{i}"), Y_SCALE
    nodes.append(helper.make_node("DequantizeLinear", list(previous), ["y"], name="dequantize_y"))
    shape = [1, channels, size, size]
    return save_model(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits, opset=13)


def qdq_gemm_model(path, k=64, n=40):
    """X [2, k] quantized, then DequantizeLinear -> Gemm (transB, int8 weights per output column,
    an int32 bias) -> QuantizeLinear, then Y dequantized: a classifier as a static quantizer
    writes it."""
    rng = np.random.default_rng(4)
    w_scale = (rng.random(n) * 0.02 + 0.005).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(array, name) for name, array in (
        ("xs", np.array(0.05, np.float32)), ("xz", np.array(128, np.uint8)),
        ("w", rng.integers(-127, 128, (n, k)).astype(np.int8)), ("ws", w_scale), ("wz", np.zeros(n, np.int8)),
        ("b", rng.integers(-500, 500, n).astype(np.int32)), ("bs", (np.float32(0.05) * w_scale).astype(np.float32)),
        ("ys", np.array(Y_SCALE, np.float32)), ("yz", np.array(128, np.uint8)))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "bs"], ["bf"], axis=0),
             helper.make_node("Gemm", ["xf", "wf", "bf"], ["g"], name="fc", transB=1),
             helper.make_node("QuantizeLinear", ["g", "ys", "yz"], ["gq"]),
             helper.make_node("DequantizeLinear", ["gq", "ys", "yz"], ["y"])]
    return save_model(path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, k])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, n])], inits, opset=13)


class FuseQdq(TempDirTest):
    def run_with_and_without_pass(self, model, x):
        """Output y of `model` on input x, "fused" as nxrt runs it and "float" with --skip-pass fuse-qdq."""
        np.save(self.tmp / "x.npy", x.astype(np.float32))
        outputs = {}
        for name, extra in (("fused", []), ("float", ["--skip-pass", "fuse-qdq"])):
            rc, _, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}", "--output-dir",
                              self.tmp / name, "-q", *extra)
            self.assertEqual(rc, 0, err)
            outputs[name] = np.load(self.tmp / name / "y.npy")
        return outputs

    def test_explain_claims_shows_the_fusion_and_the_qlinearconv_nodes(self):
        model = qdq_conv_model(self.tmp / "qdq.onnx")
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertIn("fuse-qdq: fused Conv 'conv0' with DequantizeLinear 'dq_x0', 'dq_w0', 'dq_b0', Relu 'relu0' "
                      "(the zero point clamps as it does) and QuantizeLinear 'quantize0' into QLinearConv", out)
        self.assertIn("QLinearConv", out)
        for gone in ("relu0", "quantize1", "dq_w1"):
            self.assertNotIn(f"\n{gone} ", out)
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu", "--skip-pass", "fuse-qdq")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("fuse-qdq", out)
        self.assertNotIn("QLinearConv", out)

    @unittest.skipUnless(BUILT, "the cuda EP is not built here")
    def test_the_float_ops_stay_when_the_cuda_ep_is_listed(self):
        model = qdq_conv_model(self.tmp / "qdq.onnx")
        rc, out, err = nxrt("explain-claims", model, "--ep", "cuda,cpu")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("fuse-qdq", out)
        self.assertNotIn("QLinearConv", out)
        self.assertIn("conv0", out)

    def test_outputs_stay_within_a_quantization_step_of_the_float_ops(self):
        model = qdq_conv_model(self.tmp / "qdq.onnx")
        outputs = self.run_with_and_without_pass(model, np.random.default_rng(5).standard_normal((1, 8, 10, 10)) * 3)
        steps = np.abs(outputs["fused"] - outputs["float"]) / Y_SCALE
        self.assertGreater(outputs["float"].max(), 1.0, "the model should not saturate to zeros")
        self.assertLessEqual(steps.max(), 2.0 + 1e-4)
        self.assertLess(np.count_nonzero(steps > 1e-4), steps.size // 50)

    def test_activations_between_quantized_convolutions_stay_channels_last(self):
        """The cpu EP keeps the activations between three QLinearConvs channels-last (profiles name
        each convolution's layouts); its EPContext model, restored, computes the same bits."""
        model = qdq_conv_model(self.tmp / "three.onnx", layers=3)
        rc, out, err = nxrt("bench", model, "--ep", "cpu", "-n", "2", "--profile", "--json", "-q")
        self.assertEqual(rc, 0, err)
        variants = {step["nodes"][0]: step["variant"] for step in json.loads(out)["steps"]}
        self.assertTrue(variants["conv0"].endswith(" nchw>nhwc"), variants)
        self.assertTrue(variants["conv1"].endswith(" nhwc>nhwc"), variants)
        self.assertTrue(variants["conv2"].endswith(" nhwc>nchw"), variants)
        rc, _, err = nxrt("compile-epcontext", model, "--ep", "cpu", "-o", self.tmp / "three_ctx.onnx")
        self.assertEqual(rc, 0, err)
        np.save(self.tmp / "x.npy", np.random.default_rng(9).standard_normal((1, 8, 10, 10)).astype(np.float32) * 3)
        outputs = []
        for path, name in ((model, "model"), (self.tmp / "three_ctx.onnx", "restored")):
            rc, _, err = nxrt("run", path, "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}", "--output-dir",
                              self.tmp / name, "-q")
            self.assertEqual(rc, 0, err)
            outputs.append(np.load(self.tmp / name / "y.npy"))
        self.assertGreater(len(np.unique(outputs[0])), 10)
        np.testing.assert_array_equal(outputs[0], outputs[1])

    def test_a_quantized_gemm_runs_as_qgemm_within_a_step_and_through_an_epcontext_model(self):
        model = qdq_gemm_model(self.tmp / "gemm.onnx")
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertIn("fuse-qdq: fused Gemm 'fc' with DequantizeLinear", out)
        self.assertIn("into com.microsoft::QGemm", out)
        x = np.random.default_rng(6).standard_normal((2, 64)) * 3
        outputs = self.run_with_and_without_pass(model, x)
        steps = np.abs(outputs["fused"] - outputs["float"]) / Y_SCALE
        self.assertGreater(len(np.unique(outputs["float"])), 20)
        self.assertLessEqual(steps.max(), 1.0 + 1e-4)
        rc, _, err = nxrt("compile-epcontext", model, "--ep", "cpu", "-o", self.tmp / "gemm_ctx.onnx")
        self.assertEqual(rc, 0, err)
        rc, _, err = nxrt("run", self.tmp / "gemm_ctx.onnx", "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}",
                          "--output-dir", self.tmp / "restored", "-q")
        self.assertEqual(rc, 0, err)
        np.testing.assert_array_equal(np.load(self.tmp / "restored" / "y.npy"), outputs["fused"])

    def test_ops_that_move_values_give_exactly_the_float_ops_outputs(self):
        """X quantized, then MaxPool, Transpose, Gather, Slice and Concat, each between DequantizeLinear
        and QuantizeLinear with one scale and zero point, then Y dequantized."""
        inits = [onnx.numpy_helper.from_array(np.array(0.1, np.float32), "s"),
                 onnx.numpy_helper.from_array(np.array(3, np.int8), "z"),
                 onnx.numpy_helper.from_array(np.array([3, 0, 2], np.int64), "picked"),
                 onnx.numpy_helper.from_array(np.array([1], np.int64), "start"),
                 onnx.numpy_helper.from_array(np.array([4], np.int64), "end"),
                 onnx.numpy_helper.from_array(np.array([2], np.int64), "axis")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                 helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xf"]),
                 helper.make_node("MaxPool", ["xf"], ["p"], name="pool", kernel_shape=[3, 3], strides=[2, 2]),
                 helper.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"]),
                 helper.make_node("DequantizeLinear", ["pq", "s", "z"], ["pf"]),
                 helper.make_node("Transpose", ["pf"], ["t"], name="turn", perm=[0, 2, 3, 1]),
                 helper.make_node("QuantizeLinear", ["t", "s", "z"], ["tq"]),
                 helper.make_node("DequantizeLinear", ["tq", "s", "z"], ["tf"]),
                 helper.make_node("Gather", ["tf", "picked"], ["g"], name="pick", axis=3),
                 helper.make_node("QuantizeLinear", ["g", "s", "z"], ["gq"]),
                 helper.make_node("DequantizeLinear", ["gq", "s", "z"], ["gf"]),
                 helper.make_node("Slice", ["gf", "start", "end", "axis"], ["c"], name="cut"),
                 helper.make_node("QuantizeLinear", ["c", "s", "z"], ["cq"]),
                 helper.make_node("DequantizeLinear", ["cq", "s", "z"], ["cf"]),
                 helper.make_node("Concat", ["cf", "gf", "cf"], ["j"], name="join", axis=2),
                 helper.make_node("QuantizeLinear", ["j", "s", "z"], ["jq"]),
                 helper.make_node("DequantizeLinear", ["jq", "s", "z"], ["y"])]
        model = save_model(self.tmp / "moves.onnx", nodes,
                           [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 9, 9])],
                           [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 10, 3])], inits, opset=13)
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertEqual(rc, 0, err)
        self.assertIn("fuse-qdq: MaxPool 'pool' runs on the quantized values of DequantizeLinear", out)
        for op, name in (("Transpose", "turn"), ("Gather", "pick"), ("Slice", "cut"), ("Concat", "join")):
            self.assertIn(f"fuse-qdq: {op} '{name}' runs on the quantized values of DequantizeLinear", out)
        outputs = self.run_with_and_without_pass(model, np.random.default_rng(7).standard_normal((1, 4, 9, 9)) * 5)
        np.testing.assert_array_equal(outputs["fused"], outputs["float"])

    def test_an_unknown_pass_is_a_usage_error_naming_the_passes(self):
        for sub in (["explain-claims"], ["run"], ["bench"]):
            rc, out, err = nxrt(*sub, DATA / "mlp/model.onnx", "--skip-pass", "fuse-everything")
            self.assertEqual((rc, out), (2, ""), f"{sub}: {err}")
            self.assertIn("fuse-everything", err, sub)
            for name in PASSES:
                self.assertIn(name, err, sub)


if __name__ == "__main__":
    unittest.main()
