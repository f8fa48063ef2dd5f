"""CLI tests for ONNX Runtime's com.microsoft ops of optimized and quantized transformer models.
MatMulNBits (weights quantized to 2, 4 or 8 bits in blocks, as its MatMulNBitsQuantizer writes
int4 language models): a block of two quantized projections between float ops equals the same
block with the weights dequantized into MatMuls; its shapes are inferred; the path taken shows in
profiles; it goes through an EPContext model to the same bits; a computed B of the wrong size is
named with what the attributes need. SkipLayerNormalization and FastGelu (its transformer
optimizer's fusions) in a BERT-style block equal the standard ops they fuse, between onednn
partitions. A whole BERT encoder as that optimizer writes it (EmbedLayerNormalization, Attention,
SkipLayerNormalization, BiasGelu; scripts/make-encoder-bench-model.py) equals the encoder in
standard ops, with padded rows, and goes through an EPContext model to the same bits; its int8
form (QAttention, DynamicQuantizeMatMul) stays near it; a token id outside the embedding table is
named. FusedConv, FusedGemm and FusedMatMul (what ORT's optimizer saves) become standard ops that
onednn fuses again; --skip-pass expand-ort-fusions or an activation the pass does not know leaves
the node, which no EP claims. (ONNX Runtime's own outputs for single nodes are in
testdata/com_microsoft, run by test_qoperator.py.)"""
import json
import subprocess
import sys
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import ROOT, TempDirTest, nxrt

HIDDEN, FFN, BLOCK = 96, 160, 32


def quantize_4bit(w, rng):
    """W [N, K] as MatMulNBits stores it, 4 bits in blocks of BLOCK along K with uint8 zero
    points (random, as after quantization), and W dequantized back, which the float model uses."""
    n, k = w.shape
    blocks = -(-k // BLOCK)
    q = rng.integers(0, 16, (n, blocks * BLOCK))
    zeros = rng.integers(0, 16, (n, blocks))
    scales = rng.uniform(0.002, 0.02, (n, blocks)).astype(np.float32)
    dequantized = ((q - np.repeat(zeros, BLOCK, 1)) * np.repeat(scales, BLOCK, 1))[:, :k].astype(np.float32)

    def pack(v):
        v = np.concatenate([v, np.zeros((n, v.shape[1] % 2), v.dtype)], 1)
        return (v[:, 0::2] | (v[:, 1::2] << 4)).astype(np.uint8)

    return pack(q).reshape(n, blocks, BLOCK // 2), scales, pack(zeros), dequantized


def mlp_model(path, form, rows):
    """X [1, rows, HIDDEN] -> projection up (with a bias) -> Relu -> projection down -> + X:
    with MatMulNBits ("nbits") or with MatMul of the same weights dequantized ("float")."""
    rng = np.random.default_rng(5)
    inits, nodes = [], []

    def projection(x, name, k, n, with_bias):
        b, scales, zeros, w = quantize_4bit(np.zeros((n, k)), rng)
        bias = rng.uniform(-0.5, 0.5, n).astype(np.float32) if with_bias else None
        if form == "nbits":
            for suffix, value in (("b", b), ("s", scales), ("z", zeros)):
                inits.append(onnx.numpy_helper.from_array(value, f"{name}_{suffix}"))
            inputs = [x, f"{name}_b", f"{name}_s", f"{name}_z"]
            if bias is not None:
                inits.append(onnx.numpy_helper.from_array(bias, f"{name}_bias"))
                inputs += ["", f"{name}_bias"]
            nodes.append(helper.make_node("MatMulNBits", inputs, [name], name=name, domain="com.microsoft", K=k, N=n,
                                          bits=4, block_size=BLOCK))
            return name
        inits.append(onnx.numpy_helper.from_array(np.ascontiguousarray(w.T), f"{name}_w"))
        nodes.append(helper.make_node("MatMul", [x, f"{name}_w"], [f"{name}_mm" if bias is not None else name]))
        if bias is not None:
            inits.append(onnx.numpy_helper.from_array(bias, f"{name}_bias"))
            nodes.append(helper.make_node("Add", [f"{name}_mm", f"{name}_bias"], [name]))
        return name

    up = projection("x", "up", HIDDEN, FFN, True)
    nodes.append(helper.make_node("Relu", [up], ["act"]))
    down = projection("act", "down", FFN, HIDDEN, False)
    nodes.append(helper.make_node("Add", [down, "x"], ["y"]))
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, rows, HIDDEN])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


class MatMulNBitsModels(TempDirTest):
    def run_model(self, model, rows, *extra, name="out"):
        x = np.random.default_rng(rows).uniform(-1, 1, (1, rows, HIDDEN)).astype(np.float32)
        np.save(self.tmp / f"x{rows}.npy", x)
        rc, _, err = nxrt("run", model, "--input", f"x={self.tmp / f'x{rows}.npy'}", "--output-dir", self.tmp / name,
                          "-q", *extra)
        self.assertEqual(rc, 0, err)
        return np.load(self.tmp / name / "y.npy")

    def test_quantized_projections_equal_matmuls_of_the_dequantized_weights(self):
        for rows in (1, 3, 40):  # a decode step, a few rows (multiplied as unpacked), a prefill (GEMM panels)
            with self.subTest(rows=rows):
                nbits = mlp_model(self.tmp / f"nbits{rows}.onnx", "nbits", rows)
                floats = mlp_model(self.tmp / f"float{rows}.onnx", "float", rows)
                got = self.run_model(nbits, rows, name=f"nbits{rows}")
                want = self.run_model(floats, rows, "--ep", "cpu", name=f"float{rows}")
                self.assertEqual(got.shape, (1, rows, HIDDEN))
                x = np.load(self.tmp / f"x{rows}.npy")
                self.assertGreater(np.abs(got - x).max(), 0.1)  # the projections add more than rounding
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)

    def test_shapes_are_inferred_and_profiles_name_the_path(self):
        model = mlp_model(self.tmp / "nbits.onnx", "nbits", 40)
        rc, out, err = nxrt("explain-claims", model)
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"up +com\.microsoft::MatMulNBits-1 +cpu +cpu_\d +float\[1,40,160\] ")
        self.assertRegex(out, r"onednn +com\.microsoft::MatMulNBits +MatMulNBits: com\.microsoft::MatMulNBits "
                              r"\(opset 1\) is not implemented by the onednn EP")
        for rows, variant in ((1, "nbits:direct"), (40, "nbits:gemm:")):
            model = mlp_model(self.tmp / f"p{rows}.onnx", "nbits", rows)
            rc, out, err = nxrt("bench", model, "--ep", "cpu", "-n", "2", "--profile", "--json", "-q")
            self.assertEqual(rc, 0, err)
            variants = {step["nodes"][0]: step["variant"] for step in json.loads(out)["steps"]}
            self.assertTrue(variants["up"].startswith(variant), variants)

    def test_an_epcontext_model_gives_the_same_bits(self):
        model = mlp_model(self.tmp / "nbits.onnx", "nbits", 7)
        rc, _, err = nxrt("compile-epcontext", model, "-o", self.tmp / "ctx.onnx")
        self.assertEqual(rc, 0, err)
        np.testing.assert_array_equal(self.run_model(model, 7, name="direct"),
                                      self.run_model(self.tmp / "ctx.onnx", 7, name="restored"))

    def test_a_computed_b_of_the_wrong_size_is_named_with_what_the_attributes_need(self):
        node = helper.make_node("MatMulNBits", ["a", "b", "s"], ["y"], domain="com.microsoft", K=64, N=8, bits=4,
                                block_size=32)
        graph = helper.make_graph(
            [node], "nbits", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 64]),
                              helper.make_tensor_value_info("b", TensorProto.UINT8, ["n", "blocks", "bytes"])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            [onnx.numpy_helper.from_array(np.full((8, 2), 0.1, np.float32), "s")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                        helper.make_opsetid("com.microsoft", 1)])
        model.ir_version = 8
        onnx.save(model, str(self.tmp / "computed_b.onnx"))
        np.save(self.tmp / "a.npy", np.ones((2, 64), np.float32))
        np.save(self.tmp / "b.npy", np.zeros((8, 2, 10), np.uint8))
        rc, out, err = nxrt("run", self.tmp / "computed_b.onnx", "--input", f"a={self.tmp / 'a.npy'}", "--input",
                            f"b={self.tmp / 'b.npy'}", "--output-dir", self.tmp / "out")
        self.assertExit((rc, out, err), 1)
        self.assertIn("MatMulNBits: B (input 1) holds 160 bytes", err)
        self.assertIn("K 64, N 8, bits 4 and block_size 32 need 256 bytes", err)
        self.assertFalse((self.tmp / "out" / "y.npy").exists())


def encoder_block(path, form, rows=6, hidden=32, ffn=64):
    """X [1, rows, hidden] -> + residual R, LayerNormalization -> MatMul -> + bias, Gelu (tanh
    form) -> MatMul -> + that normalized sum, LayerNormalization: fused as ONNX Runtime's optimizer
    writes it ("fused": SkipLayerNormalization, FastGelu) or in standard opset 20 ops ("onnx")."""
    rng = np.random.default_rng(9)
    inits = [onnx.numpy_helper.from_array(a.astype(np.float32), n) for n, a in (
        ("r", rng.uniform(-1, 1, (1, rows, hidden))), ("g1", rng.uniform(0.5, 1.5, hidden)),
        ("b1", rng.uniform(-0.5, 0.5, hidden)), ("w1", rng.uniform(-0.3, 0.3, (hidden, ffn))),
        ("c1", rng.uniform(-0.5, 0.5, ffn)), ("w2", rng.uniform(-0.3, 0.3, (ffn, hidden))),
        ("g2", rng.uniform(0.5, 1.5, hidden)), ("b2", rng.uniform(-0.5, 0.5, hidden)))]
    ms = {"domain": "com.microsoft"}
    if form == "fused":
        nodes = [helper.make_node("SkipLayerNormalization", ["x", "r", "g1", "b1"], ["n1", "", "", "s1"],
                                  name="skip1", epsilon=1e-5, **ms),
                 helper.make_node("MatMul", ["n1", "w1"], ["h"]),
                 helper.make_node("FastGelu", ["h", "c1"], ["a"], name="gelu", **ms),
                 helper.make_node("MatMul", ["a", "w2"], ["o"]),
                 helper.make_node("SkipLayerNormalization", ["o", "n1", "g2", "b2"], ["y"], name="skip2",
                                  epsilon=1e-5, **ms)]
    else:
        nodes = [helper.make_node("Add", ["x", "r"], ["s1"]),
                 helper.make_node("LayerNormalization", ["s1", "g1", "b1"], ["n1"], epsilon=1e-5),
                 helper.make_node("MatMul", ["n1", "w1"], ["h"]),
                 helper.make_node("Add", ["h", "c1"], ["hb"]),
                 helper.make_node("Gelu", ["hb"], ["a"], approximate="tanh"),
                 helper.make_node("MatMul", ["a", "w2"], ["o"]),
                 helper.make_node("Add", ["o", "n1"], ["s2"]),
                 helper.make_node("LayerNormalization", ["s2", "g2", "b2"], ["y"], epsilon=1e-5)]
    graph = helper.make_graph(nodes, "encoder", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                              [1, rows, hidden])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("s1", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 9
    onnx.save(model, str(path))
    return path


class FusedTransformerOps(TempDirTest):
    def test_a_fused_encoder_block_equals_the_standard_ops_it_fuses(self):
        np.save(self.tmp / "x.npy", np.random.default_rng(3).uniform(-1, 1, (1, 6, 32)).astype(np.float32))
        outputs = {}
        for form in ("fused", "onnx"):
            model = encoder_block(self.tmp / f"{form}.onnx", form)
            rc, _, err = nxrt("run", model, "--input", f"x={self.tmp / 'x.npy'}", "--output-dir", self.tmp / form, "-q")
            self.assertEqual(rc, 0, err)
            outputs[form] = [np.load(self.tmp / form / f"{name}.npy") for name in ("y", "s1")]
        for fused, standard in zip(outputs["fused"], outputs["onnx"]):
            self.assertEqual(fused.shape, (1, 6, 32))
            np.testing.assert_allclose(fused, standard, rtol=1e-5, atol=1e-5)
        rc, out, err = nxrt("explain-claims", self.tmp / "fused.onnx")
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"skip1 +com\.microsoft::SkipLayerNormalization-1 +cpu +cpu_\d +float\[1,6,32\], "
                              r"float\[1,6,32\] ")
        self.assertRegex(out, r"gelu +com\.microsoft::FastGelu-1 +cpu +cpu_\d +float\[1,6,64\] ")


class BertEncoder(TempDirTest):
    SIZE = ("--layers", "2", "--hidden", "64", "--heads", "4", "--ffn", "128", "--seq", "12", "--batch", "2",
            "--vocab", "100")

    def make(self, form):
        path = self.tmp / f"{form}.onnx"
        subprocess.run([sys.executable, ROOT / "scripts" / "make-encoder-bench-model.py", "--form", form, *self.SIZE,
                        "--out", path], check=True, capture_output=True)
        return path

    def run_model(self, model, name, ids=None, *extra):
        rng = np.random.default_rng(4)
        inputs = {"input_ids": rng.integers(0, 100, (2, 12)) if ids is None else ids,
                  "segment_ids": rng.integers(0, 2, (2, 12)),
                  "attention_mask": np.array([[1] * 12, [1] * 9 + [0] * 3])}  # row 1 padded after 9 tokens
        args = []
        for key, value in inputs.items():
            np.save(self.tmp / f"{key}.npy", value.astype(np.int32))
            args += ["--input", f"{key}={self.tmp / f'{key}.npy'}"]
        result = nxrt("run", model, *args, "--output-dir", self.tmp / name, "-q", *extra)
        return result, self.tmp / name / "output.npy"

    def test_the_fused_encoder_equals_the_standard_ops_and_restores_from_an_epcontext_model(self):
        fused, standard = self.make("fused"), self.make("standard")
        (rc, _, err), fused_out = self.run_model(fused, "fused")
        self.assertEqual(rc, 0, err)
        (rc, _, err), standard_out = self.run_model(standard, "standard", None, "--ep", "cpu")
        self.assertEqual(rc, 0, err)
        got, want = np.load(fused_out), np.load(standard_out)
        self.assertEqual(got.shape, (2, 12, 64))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        rc, out, err = nxrt("explain-claims", fused, "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"embed +com\.microsoft::EmbedLayerNormalization-1 +cpu +cpu_\d +float\[2,12,64\], "
                              r"int32\[2\] ")
        self.assertRegex(out, r"l0_attention +com\.microsoft::Attention-1 +cpu +cpu_\d +float\[2,12,64\] ")
        rc, _, err = nxrt("compile-epcontext", fused, "-o", self.tmp / "ctx.onnx")
        self.assertEqual(rc, 0, err)
        (rc, _, err), restored = self.run_model(self.tmp / "ctx.onnx", "restored")
        self.assertEqual(rc, 0, err)
        np.testing.assert_array_equal(np.load(restored), got)

    def test_the_int8_encoder_stays_near_the_float_one(self):
        """QAttention and DynamicQuantizeMatMul (the int8 form) quantize activations and weights:
        within 0.05 of the float encoder, whose outputs are about 1 in size."""
        (rc, _, err), float_out = self.run_model(self.make("fused"), "float")
        self.assertEqual(rc, 0, err)
        (rc, _, err), int8_out = self.run_model(self.make("int8"), "int8")
        self.assertEqual(rc, 0, err)
        got, want = np.load(int8_out), np.load(float_out)
        self.assertGreater(np.abs(got - want).max(), 0)  # the integer products ran
        np.testing.assert_allclose(got, want, rtol=0, atol=0.05)
        rc, out, err = nxrt("explain-claims", self.tmp / "int8.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"l0_attention +com\.microsoft::QAttention-1 +cpu ")

    def test_a_token_id_outside_the_table_is_named(self):
        ids = np.ones((2, 12), np.int32)
        ids[1, 4] = 100
        (rc, out, err), output = self.run_model(self.make("fused"), "bad", ids)
        self.assertExit((rc, out, err), 1)
        self.assertIn("EmbedLayerNormalization: input_ids[1][4] is 100, outside the 100 rows of word_embedding", err)
        self.assertIn("give input_ids in [0, 100)", err)
        self.assertFalse(output.exists())


def ort_saved_model(path, activation="Relu"):
    """X [1, 3, 8, 8] -> FusedConv (3x3, the activation) -> Flatten -> FusedGemm (LeakyRelu) ->
    FusedMatMul (transB, alpha 0.5) -> Y [1, 5], as ONNX Runtime saves an optimized CNN."""
    rng = np.random.default_rng(12)
    inits = [onnx.numpy_helper.from_array(a.astype(np.float32), n) for n, a in (
        ("w", rng.uniform(-0.5, 0.5, (4, 3, 3, 3))), ("b", rng.uniform(-0.5, 0.5, 4)),
        ("g", rng.uniform(-0.2, 0.2, (144, 16))), ("c", rng.uniform(-0.5, 0.5, 16)),
        ("m", rng.uniform(-1, 1, (5, 16))))]
    ms = {"domain": "com.microsoft"}
    nodes = [helper.make_node("FusedConv", ["x", "w", "b"], ["conv"], name="conv", kernel_shape=[3, 3],
                              activation=activation, **ms),
             helper.make_node("Flatten", ["conv"], ["flat"]),
             helper.make_node("FusedGemm", ["flat", "g", "c"], ["fc"], name="fc", activation="LeakyRelu",
                              activation_alpha=0.1, **ms),
             helper.make_node("FusedMatMul", ["fc", "m"], ["y"], name="head", transB=1, alpha=0.5, **ms)]
    graph = helper.make_graph(nodes, "saved", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path, {n.name: onnx.numpy_helper.to_array(n) for n in inits}


class OrtSavedFusions(TempDirTest):
    def test_fused_ops_become_standard_ops_that_give_the_definition(self):
        model, w = ort_saved_model(self.tmp / "saved.onnx")
        x = np.random.default_rng(2).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)
        np.save(self.tmp / "x.npy", x)
        rc, _, err = nxrt("run", model, "--input", f"x={self.tmp / 'x.npy'}", "--output-dir", self.tmp / "out", "-q")
        self.assertEqual(rc, 0, err)
        # The definition, in NumPy: a 3x3 valid convolution, Relu, Gemm, LeakyRelu, 0.5 * (fc @ m^T).
        conv = np.zeros((4, 6, 6))
        for o in range(4):
            for i in range(6):
                for j in range(6):
                    conv[o, i, j] = (x[0, :, i:i + 3, j:j + 3] * w["w"][o]).sum() + w["b"][o]
        fc = np.maximum(conv, 0).reshape(1, 144) @ w["g"] + w["c"]
        fc = np.where(fc > 0, fc, 0.1 * fc)
        np.testing.assert_allclose(np.load(self.tmp / "out" / "y.npy"), 0.5 * fc @ w["m"].T, rtol=1e-4, atol=1e-5)
        rc, out, err = nxrt("explain-claims", model)
        self.assertExit((rc, out, err), 0)
        self.assertIn("expand-ort-fusions: expanded 'conv' (com.microsoft::FusedConv, opset 1) into Conv + Relu", out)
        self.assertIn("expand-ort-fusions: expanded 'fc' (com.microsoft::FusedGemm, opset 1) into Gemm + LeakyRelu", out)
        self.assertIn("expand-ort-fusions: expanded 'head' (com.microsoft::FusedMatMul, opset 1) into Transpose + "
                      "MatMul + Mul", out)
        self.assertRegex(out, r"conv/Relu +Relu-17 +onednn +onednn_0 ")

    def test_a_fused_op_left_as_it_is_is_declined_by_every_ep(self):
        for model, extra in ((ort_saved_model(self.tmp / "softplus.onnx", "Softplus")[0], ()),
                             (ort_saved_model(self.tmp / "skipped.onnx")[0], ("--skip-pass", "expand-ort-fusions"))):
            with self.subTest(model=model.name):
                rc, out, err = nxrt("run", model, *extra)
                self.assertExit((rc, out, err), 4)  # nodes no EP claims
                self.assertIn("'conv' (com.microsoft::FusedConv, opset 1):\n      onednn: FusedConv: "
                              "com.microsoft::FusedConv (opset 1) is not implemented by the onednn EP", err)
        # explain-claims says why the pass kept the node (and exits 4: it cannot be placed).
        rc, out, err = nxrt("explain-claims", self.tmp / "softplus.onnx")
        self.assertExit((rc, out, err), 4)
        self.assertIn("expand-ort-fusions: kept 'conv' (com.microsoft::FusedConv, opset 1) as it is: its activation "
                      "'Softplus' is not one expand-ort-fusions writes as a standard op (Relu, Tanh, Sigmoid, "
                      "LeakyRelu, HardSigmoid, Clip with its two bounds); no EP runs it", out)

    def test_fused_gemm_reads_its_activation_parameters_by_name(self):
        # HardSigmoid's alpha and beta from activation_alpha and activation_beta; a beta without an
        # alpha (ONNX Runtime refuses the node) keeps the node, saying so.
        x = np.linspace(-4, 4, 12, dtype=np.float32).reshape(3, 4)
        for attrs, expected in (({"activation_alpha": 0.3, "activation_beta": 0.4}, np.clip(0.3 * x + 0.4, 0, 1)),
                                ({"activation_beta": 0.4}, None)):
            node = helper.make_node("FusedGemm", ["x", "i"], ["y"], name="fc", domain="com.microsoft",
                                    activation="HardSigmoid", **attrs)
            graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])],
                                      [onnx.numpy_helper.from_array(np.eye(4, dtype=np.float32), "i")])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                            helper.make_opsetid("com.microsoft", 1)])
            path = self.tmp / "gemm.onnx"
            onnx.save(model, str(path))
            np.save(self.tmp / "x.npy", x)
            rc, out, err = nxrt("run", path, "--input", f"x={self.tmp / 'x.npy'}", "--output-dir", self.tmp / "out",
                                "--ep", "cpu", "-q")
            if expected is None:
                self.assertExit((rc, out, err), 4)
                rc, out, _ = nxrt("explain-claims", path, "--ep", "cpu")
                self.assertIn("kept 'fc' (com.microsoft::FusedGemm, opset 1) as it is: activation_beta is given "
                              "without activation_alpha (ONNX Runtime refuses it too)", out)
            else:
                self.assertExit((rc, out, err), 0)
                np.testing.assert_allclose(np.load(self.tmp / "out" / "y.npy"), expected, rtol=1e-6, atol=1e-7)


if __name__ == "__main__":
    unittest.main()
