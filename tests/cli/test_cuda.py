"""CLI tests of the cuda EP. Without the CUDA Toolkit at configure time: list-eps says why it
is not built. Built without a GPU: the driver's own reason in list-eps and in every decline;
claims, NVRTC code generation and EPContext blobs for a target architecture (--target-arch),
with validation of tampered or truncated blobs. On a machine with a GPU: outputs against the
cpu EP (the GPU classes skip, saying why, elsewhere)."""
import json
import os
import re
import subprocess
import unittest
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, ROOT, TempDirTest, nxrt
from test_onednn import checksum


def cuda_entry():
    """The cuda EP's list-eps --json entry."""
    rc, out, _ = nxrt("list-eps", "--json")
    assert rc == 0
    return next(e for e in json.loads(out)["eps"] if e["name"] == "cuda")


CUDA = cuda_entry()
BUILT = not CUDA["reason"].startswith("not built")
GPU = CUDA["available"]
STUB = Path(os.environ.get("CUDA_STUBS", "/usr/local/cuda/lib64/stubs")) / "libcuda.so"


def save(model, path):
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def const(name, array):
    return onnx.numpy_helper.from_array(np.asarray(array), name)


def every_family(path, dtype=TensorProto.FLOAT):
    """One model touching every op family of the cuda EP (float or float16 activations)."""
    np_dtype = np.float16 if dtype == TensorProto.FLOAT16 else np.float32
    rng = np.random.default_rng(0)

    def w(name, *shape, positive=False):
        a = rng.uniform(0.5 if positive else -1, 1.5 if positive else 1, shape).astype(np_dtype)
        return const(name, a)

    c = 4
    inits = [w("w1", c, 3, 3, 3), w("b1", c), w("s", c, positive=True), w("bb", c), w("m", c), w("v", c, positive=True),
             w("ln_s", 8), w("ln_b", 8), w("fc", 8, 8), w("gb", 8), const("shape", np.array([2, 8], np.int64)),
             const("starts", np.array([1], np.int64)), const("ends", np.array([7], np.int64)),
             const("axes", np.array([3], np.int64)), const("steps", np.array([2], np.int64)),
             const("idx", np.array([0, 2, 1], np.int64))]
    n = helper.make_node
    nodes = [
        n("Conv", ["x", "w1", "b1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        n("BatchNormalization", ["c", "s", "bb", "m", "v"], ["bn"], name="bn"),
        n("Relu", ["bn"], ["r"], name="relu"),
        n("Sigmoid", ["r"], ["sg"], name="sigmoid"),
        n("Mul", ["r", "sg"], ["silu"], name="silu"),
        n("MaxPool", ["silu"], ["mp"], name="maxpool", kernel_shape=[2, 2], strides=[2, 2]),
        n("AveragePool", ["silu"], ["ap"], name="avgpool", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        n("Add", ["mp", "ap"], ["pooled"], name="add"),
        n("Transpose", ["pooled"], ["t"], name="transpose", perm=[0, 1, 3, 2]),
        n("Concat", ["pooled", "t"], ["cat"], name="concat", axis=1),
        n("Slice", ["cat", "starts", "ends", "axes", "steps"], ["sl"], name="slice"),
        n("Gather", ["cat", "idx"], ["g"], name="gather", axis=1),
        n("ReduceMean", ["g"], ["rm"], name="reduce", axes=[1], keepdims=0),
        n("Reshape", ["rm", "shape"], ["rs"], name="reshape"),
        n("LayerNormalization", ["rs", "ln_s", "ln_b"], ["ln"], name="layernorm", axis=-1),
        n("MatMul", ["ln", "fc"], ["mm"], name="matmul"),
        n("Softmax", ["mm"], ["sm"], name="softmax", axis=-1),
        n("ReduceMax", ["sl"], ["mx"], name="reducemax", keepdims=1),
        n("GlobalAveragePool", ["silu"], ["gap"], name="gap"),
        n("Flatten", ["gap"], ["flat"], name="flatten"),
        n("Gemm", ["flat", "fcg", "gb"], ["gemm"], name="gemm", transB=1),
        n("Tanh", ["gemm"], ["y2"], name="tanh"),
    ]
    inits.append(w("fcg", 8, c))
    graph = helper.make_graph(nodes, "every_family", [helper.make_tensor_value_info("x", dtype, [1, 3, 8, 8])],
                              [helper.make_tensor_value_info("sm", dtype, None),
                               helper.make_tensor_value_info("mx", dtype, None),
                               helper.make_tensor_value_info("y2", dtype, None)], initializer=inits)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def philox4x32_10(key, run, index):
    """Philox4x32-10 words for counters (index, run) under a 64-bit key, vectorized over index:
    the cuda EP's generator (kernel_library.cpp), here to predict its draws exactly."""
    mask = np.uint64(0xFFFFFFFF)
    index = np.asarray(index, np.uint64)
    c = [index & mask, index >> np.uint64(32), np.full_like(index, run & 0xFFFFFFFF),
         np.full_like(index, run >> 32)]
    k0, k1 = np.uint64(key & 0xFFFFFFFF), np.uint64(key >> 32)
    for r in range(10):
        if r:
            k0, k1 = (k0 + np.uint64(0x9E3779B9)) & mask, (k1 + np.uint64(0xBB67AE85)) & mask
        p0, p1 = np.uint64(0xD2511F53) * c[0], np.uint64(0xCD9E8D57) * c[2]
        c = [(p1 >> np.uint64(32)) ^ c[1] ^ k0, p1 & mask, (p0 >> np.uint64(32)) ^ c[3] ^ k1, p0 & mask]
    return c


def uniform_draws(key, run, n, low, high):
    """RandomUniform's float output on the cuda EP: low + (high - low) * u in double, u from the
    top 53 bits of the first two words."""
    w = philox4x32_10(key, run, np.arange(n, dtype=np.uint64))
    u = (((w[0] << np.uint64(32)) | w[1]) >> np.uint64(11)).astype(np.float64) / 2.0**53
    return (low + (high - low) * u).astype(np.float32)


def random_model(path):
    """RandomUniform (seed 2.5) and RandomNormal (seed 1) of 100000 floats, and Dropout in training."""
    n = helper.make_node
    nodes = [n("RandomUniform", [], ["u"], shape=[100000], low=-1.0, high=3.0, seed=2.5),
             n("RandomNormal", [], ["g"], shape=[100000], mean=0.5, scale=2.0, seed=1.0),
             n("Dropout", ["u", "ratio", "train"], ["d", "mask"], seed=3.0)]
    graph = helper.make_graph(nodes, "random", [], [helper.make_tensor_value_info(v, t, None) for v, t in
                                                    (("u", TensorProto.FLOAT), ("g", TensorProto.FLOAT),
                                                     ("d", TensorProto.FLOAT), ("mask", TensorProto.BOOL))],
                              initializer=[const("ratio", np.float32(0.25)), const("train", np.bool_(True))])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def cast_to_string(path):
    """A Cast to strings: the cuda EP (numbers and bool only) declines it, the cpu EP takes it."""
    node = helper.make_node("Cast", ["x"], ["y"], name="cast", to=TensorProto.STRING)
    graph = helper.make_graph([node], "strings", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, None)])
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def explain_json(*args):
    rc, out, err = nxrt("explain-claims", *args, "--format", "json")
    assert rc == 0, err
    return json.loads(out)


def cuda_verdicts(report):
    return {n["name"]: next(v for v in n["verdicts"] if v["ep"] == "cuda") for n in report["nodes"]}


def read_blob(path):
    """The header and the raw bytes of a cuda EPContext blob (format 2)."""
    data = Path(path).read_bytes()
    assert data[:8] == b"NXRTCUDA"
    (size,) = np.frombuffer(data[12:20], "<u8")
    return json.loads(data[20:20 + int(size)]), data


@unittest.skipIf(BUILT, "the cuda EP is built")
class CudaNotBuilt(TempDirTest):
    def test_list_eps_says_why(self):
        self.assertFalse(CUDA["available"])
        self.assertTrue(CUDA["reason"].startswith("not built: "), CUDA["reason"])
        self.assertTrue(CUDA["reason"].endswith(" when nxrt was configured"), CUDA["reason"])
        rc, out, _ = nxrt("list-eps")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"\ncuda +unavailable: " + re.escape(CUDA["reason"]) + " ")

    def test_asking_for_it_is_a_usage_error(self):
        result = nxrt("run", DATA / "mlp" / "model.onnx", "--ep", "cuda,cpu")
        self.assertExit(result, 2)
        self.assertIn(f"error: {CUDA['reason']}", result[2])


@unittest.skipUnless(BUILT and not GPU, "needs the cuda EP built on a machine without a usable GPU")
class CudaWithoutGpu(TempDirTest):
    def test_list_eps_gives_the_drivers_reason(self):
        reason = CUDA["reason"]
        self.assertRegex(reason, r"^(no CUDA driver: .+|no usable CUDA device: cuInit returned \d+ .+)$")
        rc, out, _ = nxrt("list-eps")
        self.assertEqual(rc, 0)
        self.assertIn(f"unavailable: {reason}", out)

    def test_stub_driver_reason_is_the_drivers_own(self):
        if not STUB.exists():
            self.skipTest(f"no CUDA stub driver at {STUB}")
        (self.tmp / "libcuda.so.1").symlink_to(STUB)
        env = dict(os.environ, LD_LIBRARY_PATH=str(self.tmp))
        p = subprocess.run([os.environ.get("NXRT", "build/cli/nxrt"), "list-eps", "--json"], capture_output=True,
                           text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        cuda = next(e for e in json.loads(p.stdout)["eps"] if e["name"] == "cuda")
        # 34 is CUDA_ERROR_STUB_LIBRARY; the stub cannot name its own errors.
        self.assertEqual(cuda["reason"],
                         "no usable CUDA device: cuInit returned 34 (the driver does not describe this error)")

    def test_every_claim_declines_with_that_reason(self):
        report = explain_json(DATA / "cnn" / "model.onnx", "--ep", "cuda,cpu")
        verdicts = cuda_verdicts(report)
        self.assertEqual(len(verdicts), 11)
        for name, v in verdicts.items():
            self.assertEqual(v["reason"], f"the cuda EP is unavailable: {CUDA['reason']}", name)

    def test_cuda_alone_leaves_nodes_unclaimed(self):
        result = nxrt("run", DATA / "mlp" / "model.onnx", "--ep", "cuda", "-q")
        self.assertExit(result, 4)
        self.assertIn(f"the cuda EP is unavailable: {CUDA['reason']}", result[2])

    def test_device_must_be_a_number(self):
        result = nxrt("explain-claims", DATA / "mlp" / "model.onnx", "--ep", "cuda,cpu", "--device", "first")
        self.assertExit(result, 2)
        self.assertIn("error: --device 'first' is not a device number", result[2])


@unittest.skipUnless(BUILT, "the cuda EP is not built")
class CudaTargetArch(TempDirTest):
    def test_claims_are_decided_for_the_target(self):
        model = every_family(self.tmp / "every.onnx")
        report = explain_json(model, "--ep", "cuda,cpu", "--target-arch", "sm_90")
        self.assertEqual({n["placed_ep"] for n in report["nodes"]}, {"cuda"})

    def test_declines_say_what_is_missing(self):
        report = explain_json(cast_to_string(self.tmp / "strings.onnx"), "--ep", "cuda,cpu", "--target-arch", "sm_90")
        self.assertEqual(cuda_verdicts(report)["cast"]["reason"],
                         "Cast: from float to string; the cuda EP casts among float, float16, bfloat16, double, 8- to "
                         "64-bit integers, bool, from opset 19 the float8 types, from 21 int4 and uint4, from 23 "
                         "float4e2m1, from 24 float8e8m0, from 25 int2 and uint2")
        self.assertEqual(report["nodes"][0]["placed_ep"], "cpu")

    def test_unknown_or_unsupported_architectures_are_usage_errors(self):
        result = nxrt("explain-claims", DATA / "mlp" / "model.onnx", "--ep", "cuda", "--target-arch", "hopper")
        self.assertExit(result, 2)
        self.assertIn("error: 'hopper' is not a GPU architecture", result[2])
        result = nxrt("compile-epcontext", DATA / "mlp" / "model.onnx", "-o", self.tmp / "o.onnx", "--ep", "cuda",
                      "--target-arch", "sm_20")
        self.assertExit(result, 2)
        self.assertRegex(result[2], r"error: NVRTC [\d.]+ cannot compile for sm_20\n  why: it supports sm_\d+")
        self.assertFalse((self.tmp / "o.onnx").exists())

    def compile(self, model, *args):
        out = self.tmp / f"{model.stem}_ctx.onnx"
        result = nxrt("compile-epcontext", model, "-o", out, "--ep", "cuda,cpu", "--target-arch", "sm_90", *args)
        self.assertExit(result, 0)
        return out

    def test_the_philox_reference_gives_random123s_known_answers(self):
        # The numpy Philox the GPU test predicts draws with: Random123's known-answer vectors
        # (the unit test [cuda] checks the kernel library's own against the same three).
        for counter, key, words in (((0, 0, 0, 0), (0, 0), (0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8)),
                                    ((0xffffffff,) * 4, (0xffffffff,) * 2, (0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd)),
                                    ((0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344), (0xa4093822, 0x299f31d0),
                                     (0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1))):
            got = philox4x32_10(key[1] << 32 | key[0], counter[3] << 32 | counter[2], [counter[1] << 32 | counter[0]])
            self.assertEqual([int(w[0]) for w in got], list(words))

    def test_compile_epcontext_without_a_gpu(self):
        for dtype in (TensorProto.FLOAT, TensorProto.FLOAT16):
            out = self.compile(every_family(self.tmp / f"every{dtype}.onnx", dtype))
            model = onnx.load(str(out))
            nodes = [n for n in model.graph.node if n.op_type == "EPContext"]
            self.assertEqual(len(nodes), 1)
            attrs = {a.name: helper.get_attribute_value(a) for a in nodes[0].attribute}
            self.assertEqual(attrs["source"], b"nxrt.cuda")
            self.assertEqual(attrs["hardware_architecture"], b"sm_90")
            self.assertRegex(attrs["ep_sdk_version"].decode(), r"^nxrt [\d.]+; CUDA [\d.]+; NVRTC [\d.]+$")
            meta = {p.key: p.value for p in model.metadata_props}
            self.assertIn("arch=sm_90", meta["ep_compatibility_info.cuda"])
            header, data = read_blob(out.parent / attrs["ep_cache_context"].decode())
            self.assertEqual(header["arch"], "sm_90")
            self.assertEqual(header["partition"], "cuda_0")
            self.assertIn("cudnn", header["steps"])
            self.assertIn("cublasLt", header["steps"])
            self.assertIn("view", header["steps"])
            self.assertTrue(any(s.startswith("nvrtc:chain_") for s in header["steps"]), header["steps"])
            self.assertIn(b"\x7fELF", data)
            self.assertIn(b".target sm_90", data)

    def test_onnx_runtime_transformer_models_compile_whole_for_the_target(self):
        # A BERT encoder as ORT's transformer optimizer writes it (EmbedLayerNormalization,
        # Attention, SkipLayerNormalization, BiasGelu), the same quantized as quantize_dynamic and
        # ORT's load-time fusions leave it (QAttention, DynamicQuantizeMatMul), and two decoder
        # layers as ORT GenAI's model
        # builder writes int4 models (SimplifiedLayerNormalization, SkipSimplifiedLayerNormalization,
        # MatMulNBits, GroupQueryAttention with its rotary embedding and KV cache): one cuda
        # partition each, its steps the contrib ops' kernels.
        bert = ("make-encoder-bench-model.py", "--layers", "2", "--hidden", "64", "--heads", "4", "--ffn", "128",
                "--seq", "12", "--vocab", "100", "--form")
        models = {"bert": (*bert, "fused"), "bert_int8": (*bert, "int8"),
                  "genai": ("make-decoder-bench-model.py", "--genai", "--seq", "4", "--past", "3")}
        expected_steps = {
            "bert": ("nvrtc:embed_layer_norm", "nvrtc:skip_layer_norm", "cublasLt+nvrtc:bert_attention"),
            "bert_int8": ("nvrtc:matmul_integer_to_float", "nvrtc:dynamic_quantize"),
            "genai": ("nvrtc:rms_norm", "nvrtc:skip_layer_norm", "nvrtc:nbits_gemv", "nvrtc:gqa_attention")}
        for name, (script, *args) in models.items():
            path = self.tmp / f"{name}.onnx"
            subprocess.run(["/usr/bin/python3", ROOT / "scripts" / script, *args, "--out", path], check=True,
                           capture_output=True)
            report = explain_json(path, "--ep", "cuda,cpu", "--target-arch", "sm_90")
            self.assertEqual({n["placed_ep"] for n in report["nodes"]}, {"cuda"}, name)
            model = onnx.load(str(self.compile(path)))
            self.assertEqual([n.op_type for n in model.graph.node], ["EPContext"], name)
            attrs = {a.name: helper.get_attribute_value(a) for a in model.graph.node[0].attribute}
            header, _ = read_blob(self.tmp / attrs["ep_cache_context"].decode())
            for step in expected_steps[name]:
                self.assertTrue(any(s.startswith(step) for s in header["steps"]), (name, step, header["steps"]))

    def test_tampered_and_truncated_blobs_are_refused(self):
        out = self.compile(DATA / "mlp" / "model.onnx", "--embed")
        model = onnx.load(str(out))
        node = next(n for n in model.graph.node if n.op_type == "EPContext")
        blob = next(a for a in node.attribute if a.name == "ep_cache_context")
        original = blob.s
        for label, payload in (("tampered", original[:100] + bytes([original[100] ^ 1]) + original[101:]),
                               ("truncated", original[: len(original) - 16])):
            blob.s = payload
            bad = self.tmp / f"{label}.onnx"
            onnx.save(model, str(bad))
            result = nxrt("run", bad, "--ep", "cuda,cpu", "-q")
            self.assertExit(result, 3, label)
            self.assertIn("error: the cuda EPContext payload of EPContext node 'cuda_0' is corrupted", result[2])
            self.assertIn("recompile the model with nxrt compile-epcontext --ep cuda", result[2])
        self.assertEqual(checksum(original[:-8]), int.from_bytes(original[-8:], "little"))
        # A blob of format 1 (kernels with other signatures), checksum made consistent.
        body = original[:8] + (1).to_bytes(4, "little") + original[12:-8]
        blob.s = body + checksum(body).to_bytes(8, "little")
        onnx.save(model, str(self.tmp / "format1.onnx"))
        result = nxrt("run", self.tmp / "format1.onnx", "--ep", "cuda,cpu", "-q")
        self.assertExit(result, 3)
        self.assertIn("has format 1", result[2])
        self.assertIn("recompile the model with nxrt compile-epcontext --ep cuda", result[2])

    @unittest.skipIf(GPU, "a GPU is visible")
    def test_running_the_compiled_model_needs_a_gpu(self):
        out = self.compile(DATA / "cnn" / "model.onnx")
        result = nxrt("run", out, "--ep", "cuda,cpu", "-q")
        self.assertExit(result, 1)
        self.assertIn("error: EPContext node 'cuda_0' needs a CUDA device (its kernels are for sm_90)", result[2])
        self.assertIn(f"why: {CUDA['reason']}", result[2])


@unittest.skipUnless(GPU, f"the cuda EP is unavailable: {CUDA['reason']}")
class CudaOnGpu(TempDirTest):
    def run_y(self, model, inputs, *args):
        out_dir = self.tmp / f"out{len(list(self.tmp.iterdir()))}"
        specs = [a for name, path in inputs.items() for a in ("--input", f"{name}={path}")]
        result = nxrt("run", model, *specs, "--output-dir", out_dir, "-q", *args)
        self.assertExit(result, 0)
        return {p.stem: np.load(p) for p in out_dir.glob("*.npy")}

    def test_models_agree_with_the_cpu_ep(self):
        for name in ("mlp", "cnn"):
            result = nxrt("run", DATA / name / "model.onnx", "--ep", "cuda,cpu", "--compare-ep", "cpu", "-q")
            self.assertExit(result, 0, name)

    def test_opset18plus_cases_match_onnx_runtime_on_the_gpu(self):
        # The op versions of opsets 18 to 25 (the transformer ops among them) against ONNX Runtime's
        # outputs; the cases the cuda EP does not take whole run partly on the cpu EP.
        cases = sorted(p for p in (DATA / "opset18plus").iterdir() if (p / "model.onnx").exists())
        rc, out, err = nxrt("run", "--ep", "cuda,cpu", "-q", "--json", "--test-dir", *cases)
        results = [json.loads(line) for line in out.splitlines()]
        failed = [r["test_dir"] for r in results if r["status"] != "pass"]
        self.assertEqual((len(results), failed), (len(cases), []), err)
        self.assertEqual(rc, 0, err)

    def test_every_family_in_float_and_float16(self):
        x = np.random.default_rng(1).uniform(-1, 1, (1, 3, 8, 8))
        np.save(self.tmp / "x32.npy", x.astype(np.float32))
        np.save(self.tmp / "x16.npy", x.astype(np.float16))
        f32 = every_family(self.tmp / "f32.onnx")
        reference = self.run_y(f32, {"x": self.tmp / "x32.npy"}, "--ep", "cpu")
        on_gpu = self.run_y(f32, {"x": self.tmp / "x32.npy"}, "--ep", "cuda,cpu")
        half = self.run_y(every_family(self.tmp / "f16.onnx", TensorProto.FLOAT16), {"x": self.tmp / "x16.npy"},
                          "--ep", "cuda")
        for name, ref in reference.items():
            np.testing.assert_allclose(on_gpu[name], ref, rtol=1e-4, atol=1e-5, err_msg=name)
            np.testing.assert_allclose(half[name].astype(np.float32), ref, rtol=3e-2, atol=3e-2, err_msg=name)

    def test_epcontext_round_trip(self):
        model = every_family(self.tmp / "every.onnx")
        out = self.tmp / "every_ctx.onnx"
        self.assertExit(nxrt("compile-epcontext", model, "-o", out, "--ep", "cuda,cpu"), 0)
        np.save(self.tmp / "x.npy", np.random.default_rng(2).uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32))
        direct = self.run_y(model, {"x": self.tmp / "x.npy"}, "--ep", "cuda,cpu")
        restored = self.run_y(out, {"x": self.tmp / "x.npy"}, "--ep", "cuda,cpu")
        for name, y in direct.items():
            np.testing.assert_allclose(restored[name], y, rtol=1e-6, atol=1e-7, err_msg=name)

    def test_a_blob_for_a_newer_gpu_is_refused_naming_both(self):
        device_arch = int(CUDA["device_name"].rsplit("(sm_", 1)[1].rstrip(")"))
        rc, out, err = nxrt("compile-epcontext", DATA / "mlp" / "model.onnx", "-o", self.tmp / "probe.onnx", "--ep", "cuda",
                            "--target-arch", "sm_20")
        newer = [int(a[3:]) for a in err.split("it supports ")[1].split("\n")[0].split(", ") if int(a[3:]) // 10 > device_arch // 10]
        if not newer:
            self.skipTest(f"NVRTC knows no architecture newer than sm_{device_arch}")
        out = self.tmp / "newer.onnx"
        self.assertExit(nxrt("compile-epcontext", DATA / "mlp" / "model.onnx", "-o", out, "--ep", "cuda,cpu",
                             "--target-arch", f"sm_{newer[0]}"), 0)
        result = nxrt("run", out, "--ep", "cuda,cpu", "-q")
        self.assertExit(result, 3)
        self.assertIn(f"compiled for sm_{newer[0]}, this GPU is sm_{device_arch}", result[2])

    def test_profile_names_generated_kernels(self):
        rc, out, err = nxrt("bench", DATA / "cnn" / "model.onnx", "--ep", "cuda,cpu", "-n", "3", "--profile")
        self.assertEqual(rc, 0, err)
        self.assertIn("nvrtc:chain_", out)
        self.assertIn("cudnn", out)

    def test_random_draws_on_the_device(self):
        model = random_model(self.tmp / "random.onnx")
        first = self.run_y(model, {}, "--ep", "cuda")
        again = self.run_y(model, {}, "--ep", "cuda")
        for name, y in first.items():  # seeded: a new session repeats its first run's numbers
            np.testing.assert_array_equal(again[name], y, err_msg=name)
        # The seed's bits are the Philox key; run 0. The device draws what the reference predicts.
        key = int(np.float32(2.5).view(np.uint32))
        np.testing.assert_array_equal(first["u"], uniform_draws(key, 0, 100000, -1.0, 3.0))
        self.assertAlmostEqual(float(first["g"].mean()), 0.5, delta=0.04)
        self.assertAlmostEqual(float(first["g"].std()), 2.0, delta=0.04)
        kept = first["mask"]
        self.assertAlmostEqual(float(kept.mean()), 0.75, delta=0.01)
        np.testing.assert_array_equal(first["d"], np.where(kept, first["u"] * np.float32(1 / 0.75), 0).astype(np.float32))

    def test_a_device_that_is_not_there(self):
        result = nxrt("run", DATA / "mlp" / "model.onnx", "--ep", "cuda", "--device", "99", "-q")
        self.assertExit(result, 4)
        self.assertRegex(result[2], r"no CUDA device 99: \d+ devices? (is|are) visible")


if __name__ == "__main__":
    unittest.main()
