"""CLI tests of the oneDNN EP on whole models: fusion (BatchNormalization folded, Add and
activations as post-ops), agreement with the cpu EP, the per-step profile, EPContext blobs
(round trip, stamps, tampering) and the default EP list."""
import json
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt


def residual_cnn(path):
    """conv-bn-relu, conv-bn + residual add, relu, maxpool, global pool, flatten, gemm."""
    rng = np.random.default_rng(0)
    c = 8

    def init(name, *shape, positive=False):
        a = rng.uniform(0.5 if positive else -1, 1.5 if positive else 1, shape).astype(np.float32)
        return onnx.numpy_helper.from_array(a, name)

    inits = [init("w1", c, 3, 3, 3), init("b1", c), init("w2", c, c, 3, 3), init("fc_w", 10, c), init("fc_b", 10)]
    for bn in ("bn1", "bn2"):
        inits += [init(f"{bn}_s", c, positive=True), init(f"{bn}_b", c), init(f"{bn}_m", c),
                  init(f"{bn}_v", c, positive=True)]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1_s", "bn1_b", "bn1_m", "bn1_v"], ["n1"], name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn2_s", "bn2_b", "bn2_m", "bn2_v"], ["n2"], name="bn2"),
        helper.make_node("Add", ["n2", "r1"], ["sum"], name="residual"),
        helper.make_node("Relu", ["sum"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["g"], name="gap"),
        helper.make_node("Flatten", ["g"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], name="fc", transB=1),
    ]
    graph = helper.make_graph(nodes, "residual", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def save_conv_model(path, name, x_shape, y_shape, nodes, weights):
    """A float model of `nodes` from input x to output y; `weights`: name -> shape, uniform(-0.5, 0.5)."""
    rng = np.random.default_rng(3)
    inits = [onnx.numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), w)
             for w, shape in weights.items()]
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def small_map_cnn(path):
    """ResNet's last stage in miniature (7x7 maps): a 3x3 conv + Relu, a 1x1 conv + residual
    Add + Relu, a strided 1x1 conv. On AVX2 nxrt's blocked convolution runs all three."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv3x3", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="conv1x1"),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
        helper.make_node("Conv", ["r2", "w3"], ["y"], name="strided", strides=[2, 2]),
    ]
    return save_conv_model(path, "small_maps", [1, 16, 7, 7], [1, 24, 4, 4], nodes,
                           {"w1": (16, 16, 3, 3), "b1": (16,), "w2": (16, 16, 1, 1), "w3": (24, 16, 1, 1)})


def wide_3x3_cnn(path):
    """Two 3x3 stride-1 convolutions of 128 channels (+ Relu; + residual Add + Relu), on 9x9
    maps: on AVX2 nxrt's Winograd convolution runs both."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="wide1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], name="wide2", pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c2", "r1"], ["s"], name="residual"),
        helper.make_node("Relu", ["s"], ["y"], name="relu2"),
    ]
    return save_conv_model(path, "wide_3x3", [1, 128, 9, 9], [1, 128, 9, 9], nodes,
                           {"w1": (128, 128, 3, 3), "b1": (128,), "w2": (128, 128, 3, 3)})


def checksum(body):
    """nxrt's blob checksum: FNV-1a over little-endian 64-bit words, then the tail bytes."""
    h, prime, mask = 1469598103934665603, 1099511628211, 0xFFFFFFFFFFFFFFFF
    words = len(body) // 8
    for w in np.frombuffer(body[: words * 8], dtype="<u8").tolist():
        h = ((h ^ w) * prime) & mask
    for byte in body[words * 8:]:
        h = ((h ^ byte) * prime) & mask
    return h


class OnednnEp(TempDirTest):
    def setUp(self):
        super().setUp()
        self.model = residual_cnn(self.tmp / "residual.onnx")
        self.x = self.tmp / "x.npy"
        np.save(self.x, np.random.default_rng(1).uniform(-1, 1, (1, 3, 16, 16)).astype(np.float32))

    def run_outputs(self, model, *args):
        out_dir = self.tmp / f"out{len(list(self.tmp.iterdir()))}"
        rc, _, err = nxrt("run", model, "--input", f"x={self.x}", "--output-dir", out_dir, "-q", *args)
        self.assertEqual(rc, 0, err)
        return np.load(out_dir / "y.npy")

    def test_default_eps_are_onednn_then_cpu(self):
        rc, out, err = nxrt("explain-claims", self.model)
        self.assertEqual(rc, 0, err)
        self.assertIn("EPs in priority order: onednn, cpu", out)
        rc, out, _ = nxrt("run", "--help")
        self.assertIn("default: onednn,cpu", out)

    def test_agrees_with_cpu_ep(self):
        rc, out, err = nxrt("run", self.model, "--input", f"x={self.x}", "--compare-ep", "cpu", "--rtol", "1e-3",
                            "--atol", "1e-4")
        self.assertEqual(rc, 0, out + err)
        np.testing.assert_allclose(self.run_outputs(self.model), self.run_outputs(self.model, "--ep", "cpu"),
                                   rtol=1e-4, atol=1e-5)

    def test_results_do_not_depend_on_threads(self):
        one = self.run_outputs(self.model, "--threads", "1")
        two = self.run_outputs(self.model, "--threads", "2")
        np.testing.assert_allclose(one, two, rtol=1e-4, atol=1e-5)

    def test_profile_shows_fused_steps_and_implementations(self):
        rc, out, err = nxrt("bench", self.model, "--input", f"x={self.x}", "-n", "3", "--warmup", "1", "--profile",
                            "--json")
        self.assertEqual(rc, 0, err)
        report = json.loads(out)
        steps = report["steps"]
        conv1 = next(s for s in steps if s["nodes"][0] == "conv1")
        self.assertEqual(conv1["nodes"], ["conv1", "bn1", "relu1"], "BatchNormalization folded, Relu fused")
        conv2 = next(s for s in steps if s["nodes"][0] == "conv2")
        self.assertEqual(conv2["nodes"], ["conv2", "bn2", "residual", "relu2"], "residual Add and Relu as post-ops")
        self.assertEqual(conv1["ep"], "onednn")
        self.assertRegex(conv1["variant"], r"(jit|brg|gemm|ref|nxrt).*")
        self.assertEqual(len(report["samples_ms"]), 3)
        self.assertTrue(any(t["op"] == "Conv" for t in report["op_types"]))
        rc, out, err = nxrt("bench", self.model, "--input", f"x={self.x}", "-n", "2", "--profile")
        self.assertEqual(rc, 0, err)
        self.assertIn("IMPLEMENTATION", out)
        self.assertIn("conv2 (+3)", out)

    def compile(self, *args):
        out = self.tmp / "ctx" / "residual_ctx.onnx"
        out.parent.mkdir(exist_ok=True)
        rc, o, err = nxrt("compile-epcontext", self.model, "-o", out, "--ep", "onednn,cpu", *args)
        self.assertEqual(rc, 0, o + err)
        return out

    def test_epcontext_round_trip(self):
        out = self.compile()
        proto = onnx.load(str(out), load_external_data=False)
        ctx = [n for n in proto.graph.node if n.op_type == "EPContext"]
        sources = sorted({onnx.helper.get_attribute_value(a) for n in ctx for a in n.attribute if a.name == "source"})
        self.assertIn(b"nxrt.onednn", sources)
        meta = {p.key: p.value for p in proto.metadata_props}
        self.assertRegex(meta["ep_compatibility_info.onednn"], r"onednn=\d+\.\d+\.\d+;isa=\w+")
        onednn_node = next(n for n in ctx if any(a.name == "source" and a.s == b"nxrt.onednn" for a in n.attribute))
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in onednn_node.attribute}
        self.assertIn(b"oneDNN", attrs["ep_sdk_version"])
        self.assertNotIn("w2", [i.name for i in proto.graph.initializer], "conv weights live in the blob")
        # Compile-time tuning may pick another implementation in each process: float rounding only.
        np.testing.assert_allclose(self.run_outputs(out), self.run_outputs(self.model), rtol=1e-4, atol=1e-5)
        # The whole model is one onednn partition: one side file named after the EP.
        blob = out.parent / "residual_ctx_onednn.bin"
        self.assertTrue(blob.exists(), sorted(p.name for p in out.parent.iterdir()))
        rc, o, err = nxrt("explain-claims", out)
        self.assertEqual(rc, 0, err)
        self.assertIn("nxrt.onednn", o)

    def embedded_onednn_blob(self):
        """The compiled model (blob inline), its proto and the onednn node's payload attribute."""
        out = self.compile("--embed")
        proto = onnx.load(str(out))
        node = next(n for n in proto.graph.node
                    if any(a.name == "source" and a.s == b"nxrt.onednn" for a in n.attribute))
        return out, proto, next(a for a in node.attribute if a.name == "ep_cache_context")

    def run_with_payload(self, out, proto, payload, data):
        """Saves the model with `data` as the onednn payload and runs it: (exit code, stderr)."""
        payload.s = data
        onnx.save(proto, str(out))
        rc, _, err = nxrt("run", out, "--input", f"x={self.x}", "-q")
        return rc, err

    def test_tampered_blob_and_foreign_isa_refused(self):
        out, proto, payload = self.embedded_onednn_blob()
        original = payload.s
        # A blob stamped for another ISA (checksum made consistent): refused with both names.
        data = bytearray(original)
        marker = b'"isa":"'
        at = data.index(marker) + len(marker)
        end = data.index(b'"', at)
        data[at:end] = b"x" * (end - at)
        body = bytes(data[:-8])
        rc, err = self.run_with_payload(out, proto, payload, body + checksum(body).to_bytes(8, "little"))
        self.assertEqual(rc, 3, err)
        self.assertIn("compiled for another host", err)
        self.assertIn("recompile", err)
        # A blob of an earlier format (format 2 held no Winograd weights): refused, recompile.
        data = bytearray(original)
        data[8:12] = (2).to_bytes(4, "little")
        body = bytes(data[:-8])
        rc, err = self.run_with_payload(out, proto, payload, body + checksum(body).to_bytes(8, "little"))
        self.assertEqual(rc, 3, err)
        self.assertIn("has format 2", err)
        self.assertIn("recompile", err)
        # A flipped byte: the checksum catches it.
        data = bytearray(original)
        data[len(data) // 2] ^= 0x40
        rc, err = self.run_with_payload(out, proto, payload, bytes(data))
        self.assertEqual(rc, 3, err)
        self.assertIn("checksum", err)

    def test_blob_node_the_ep_declines_is_refused(self):
        """A blob whose stored partition (valid checksum) holds a node the onednn EP does not
        claim is refused with the EP's reason: the EP re-claims what a blob holds."""
        out, proto, payload = self.embedded_onednn_blob()
        data = bytes(payload.s)
        pos = 12  # magic and format
        header_len = int.from_bytes(data[pos:pos + 8], "little")
        pos += 8 + header_len
        model_len = int.from_bytes(data[pos:pos + 8], "little")
        stored = onnx.ModelProto()
        stored.ParseFromString(data[pos + 8:pos + 8 + model_len])
        stored.graph.node[-1].op_type = "NoSuchOp"
        model = stored.SerializeToString()
        body = data[:pos] + len(model).to_bytes(8, "little") + model + data[pos + 8 + model_len:-8]
        rc, err = self.run_with_payload(out, proto, payload, body + checksum(body).to_bytes(8, "little"))
        self.assertEqual(rc, 3, err)
        self.assertIn("which the onednn EP does not claim", err)
        self.assertIn("NoSuchOp", err)
        self.assertIn("recompile", err)

    def test_matmul_of_computed_operands_runs_on_the_native_gemm(self):
        """Attention-style products (both operands computed) skip oneDNN's GEMM, whose kernel
        generation would cost every process ~16 ms at its first run."""
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 8])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 4])
        nodes = [helper.make_node("Transpose", ["x"], ["xt"], name="t", perm=[0, 2, 1]),
                 helper.make_node("MatMul", ["x", "xt"], ["s"], name="scores"),
                 helper.make_node("Relu", ["s"], ["y"], name="relu")]
        path = self.tmp / "attention.onnx"
        model = helper.make_model(helper.make_graph(nodes, "attention", [x], [y]),
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, str(path))
        xin = self.tmp / "xa.npy"
        np.save(xin, np.random.default_rng(2).uniform(-1, 1, (2, 4, 8)).astype(np.float32))
        rc, out, err = nxrt("bench", path, "--input", f"x={xin}", "-n", "2", "--warmup", "0", "--profile", "--json")
        self.assertEqual(rc, 0, err)
        scores = next(s for s in json.loads(out)["steps"] if s["nodes"][0] == "scores")
        self.assertRegex(scores["variant"], r"^nxrt:cpu_gemm:")
        rc, out, err = nxrt("run", path, "--input", f"x={xin}", "--compare-ep", "cpu")
        self.assertEqual(rc, 0, out + err)

    def test_layer_normalization_before_opset_17_runs_on_onednn(self):
        """ONNX Runtime's optimizer writes LayerNormalization into opset 11 to 16 models (ORT
        registers it in the ONNX domain from version 1): oneDNN takes it there too."""
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5, 16])
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 16])
        rng = np.random.default_rng(7)
        inits = [onnx.numpy_helper.from_array(rng.uniform(0.5, 1.5, 16).astype(np.float32), "gamma"),
                 onnx.numpy_helper.from_array(rng.uniform(-0.5, 0.5, 16).astype(np.float32), "beta")]
        node = helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["y"], name="ln", axis=-1,
                                epsilon=1e-5)
        path = self.tmp / "ln13.onnx"
        model = helper.make_model(helper.make_graph([node], "ln", [x], [y], inits),
                                  opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        onnx.save(model, str(path))
        rc, out, err = nxrt("explain-claims", path)
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"ln +LayerNormalization-13 +onednn +onednn_0 ")
        xin = self.tmp / "xl.npy"
        np.save(xin, rng.uniform(-2, 2, (2, 5, 16)).astype(np.float32))
        rc, out, err = nxrt("run", path, "--input", f"x={xin}", "--compare-ep", "cpu", "--rtol", "1e-4",
                            "--atol", "1e-5")
        self.assertEqual(rc, 0, out + err)

    def check_native_convolutions(self, path, x_shape, variants):
        """`path` agrees with the cpu EP, its steps ran on `variants` (node -> profile name) where
        oneDNN blocks channels by 8 (AVX2), and its EPContext model gives the same output (up to
        rounding)."""
        xin = self.tmp / "xn.npy"
        np.save(xin, np.random.default_rng(4).uniform(-1, 1, x_shape).astype(np.float32))
        rc, out, err = nxrt("run", path, "--input", f"x={xin}", "--compare-ep", "cpu", "--rtol", "1e-3", "--atol", "1e-4")
        self.assertEqual(rc, 0, out + err)
        rc, out, err = nxrt("bench", path, "--input", f"x={xin}", "-n", "2", "--warmup", "0", "--profile", "--json")
        self.assertEqual(rc, 0, err)
        steps = {s["nodes"][0]: s for s in json.loads(out)["steps"]}
        rc, eps, _ = nxrt("list-eps")
        if "(avx2)" in eps or "(avx2_vnni)" in eps:
            for name, variant in variants.items():
                self.assertEqual(steps[name]["variant"], variant, name)
        ctx = self.tmp / "ctx" / f"{path.stem}_ctx.onnx"
        ctx.parent.mkdir(exist_ok=True)
        rc, o, err = nxrt("compile-epcontext", path, "-o", ctx, "--ep", "onednn,cpu")
        self.assertEqual(rc, 0, o + err)
        outputs = []
        for model in (path, ctx):
            out_dir = self.tmp / f"{path.stem}_out{len(outputs)}"
            rc, _, err = nxrt("run", model, "--input", f"x={xin}", "--output-dir", out_dir, "-q")
            self.assertEqual(rc, 0, err)
            outputs.append(np.load(out_dir / "y.npy"))
        # Where oneDNN's kernels run instead (not AVX2), each process may time another one fastest:
        # sums in another order, whose rounding scales with the outputs (up to ~70 here), so an
        # output near 0 after a residual Add may differ by more than a fixed 1e-5.
        scale = float(np.abs(outputs[0]).max())
        np.testing.assert_allclose(outputs[0], outputs[1], rtol=1e-4, atol=1e-5 * max(scale, 1.0))
        return steps

    def test_small_maps_run_on_the_blocked_convolution(self):
        """Convolutions of at most 64 output pixels run on nxrt's blocked kernel on AVX2."""
        steps = self.check_native_convolutions(small_map_cnn(self.tmp / "small_maps.onnx"), (1, 16, 7, 7),
                                               dict.fromkeys(("conv3x3", "conv1x1", "strided"), "nxrt:nChw8c"))
        self.assertEqual(steps["conv1x1"]["nodes"], ["conv1x1", "residual", "relu2"], "sum and Relu fused")

    def test_wide_3x3_convolutions_run_on_winograd(self):
        """3x3 stride-1 convolutions of 128 channels or more run on nxrt's Winograd kernel on AVX2."""
        steps = self.check_native_convolutions(wide_3x3_cnn(self.tmp / "wide_3x3.onnx"), (1, 128, 9, 9),
                                               dict.fromkeys(("wide1", "wide2"), "nxrt:winograd_2x2_3x3:nChw8c"))
        self.assertEqual(steps["wide2"]["nodes"], ["wide2", "residual", "relu2"], "sum and Relu fused")

    def test_declines_name_the_op_and_what_onednn_takes(self):
        rc, out, err = nxrt("explain-claims", DATA / "cnn/model.onnx", "--ep", "onednn,cpu", "--node", "flatten")
        self.assertEqual(rc, 0, err)
        self.assertIn("Flatten", out)
        self.assertIn("onednn", out)


if __name__ == "__main__":
    unittest.main()
