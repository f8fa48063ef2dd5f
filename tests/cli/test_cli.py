"""CLI tests: the real nxrt binary on the committed models; exit codes, output, files."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper

NXRT = os.environ.get("NXRT", "build/cli/nxrt")
ROOT = Path(os.environ.get("NXRT_SOURCE_DIR", Path(__file__).resolve().parents[2]))
DATA = ROOT / "testdata"


def nxrt(*args, cwd=None):
    """Runs nxrt; returns (exit code, stdout, stderr). Never raises on a non-zero exit."""
    p = subprocess.run([NXRT, *map(str, args)], capture_output=True, text=True, cwd=cwd, timeout=120)
    return p.returncode, p.stdout, p.stderr


class TempDirTest(unittest.TestCase):
    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix="nxrt-cli-"))

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def assertExit(self, result, code, msg=""):
        rc, out, err = result
        self.assertEqual(rc, code, f"{msg}\nexit {rc}\nstdout:\n{out}\nstderr:\n{err}")
        self.assertGreaterEqual(rc, 0, "nxrt died from a signal")


class ListEps(TempDirTest):
    def test_table_and_json(self):
        rc, out, _ = nxrt("list-eps")
        self.assertEqual(rc, 0)
        self.assertIn("cpu", out)
        self.assertIn("nxrt.cpu", out)
        rc, out, _ = nxrt("list-eps", "--json", "--ops")
        self.assertEqual(rc, 0)
        eps = json.loads(out)["eps"]
        cpu = next(e for e in eps if e["name"] == "cpu")
        self.assertTrue(cpu["available"])
        self.assertIn("nxrt.cpu", cpu["context_sources"])
        self.assertIn("ai.onnx::Conv@1", cpu["ops"])
        self.assertEqual(cpu["op_count"], len(cpu["ops"]))

    def test_version(self):
        rc, out, _ = nxrt("--version")
        self.assertEqual(rc, 0)
        self.assertRegex(out, r"nxrt \d+\.\d+\.\d+")
        self.assertIn("ONNX 1.12", out)

    def test_usage_errors_exit_2(self):
        self.assertExit(nxrt("no-such-command"), 2)
        self.assertExit(nxrt("explain-claims"), 2)
        rc, _, err = nxrt("explain-claims", DATA / "mlp/model.onnx", "--ep", "nope")
        self.assertEqual(rc, 2)
        self.assertIn("unknown EP 'nope'", err)
        self.assertIn("cpu", err)


class ExplainClaims(TempDirTest):
    def test_every_model_every_node_every_ep(self):
        for name in ["mlp", "cnn", "external_data", "unsupported_op"]:
            model = DATA / name / "model.onnx"
            rc, out, err = nxrt("explain-claims", model, "--json")
            self.assertIn(rc, (0, 4), err)
            report = json.loads(out)
            proto = onnx.load(str(model), load_external_data=False)
            # Constant nodes folded into initializers are listed under "rewrites" instead.
            self.assertEqual(len(report["nodes"]) + len(report["rewrites"]), len(proto.graph.node), name)
            for node in report["nodes"]:
                self.assertEqual([v["ep"] for v in node["verdicts"]], report["eps"])
                for v in node["verdicts"]:
                    if not v["claimed"]:
                        self.assertTrue(v["reason"].strip(), f"{name}: decline without a reason")

    def test_decline_reason_and_exit_4(self):
        rc, out, err = nxrt("explain-claims", DATA / "unsupported_op/model.onnx")
        self.assertEqual(rc, 4)
        self.assertIn("com.microsoft::Inverse", out)
        self.assertIn("not implemented by the cpu EP", out)
        self.assertIn("NONE", out)
        self.assertIn("cannot be placed", err)
        rc, out, _ = nxrt("explain-claims", DATA / "unsupported_op/model.onnx", "--declined-only", "--json")
        nodes = json.loads(out)["nodes"]
        self.assertEqual([n["op_type"] for n in nodes], ["Inverse"])
        self.assertIsNone(nodes[0]["placed_ep"])

    def test_table_shows_partitions(self):
        rc, out, _ = nxrt("explain-claims", DATA / "cnn/model.onnx", "--ep", "cpu")
        self.assertEqual(rc, 0)
        self.assertIn("cpu_0", out)
        self.assertIn("PARTITION", out)
        self.assertIn("0 unclaimed", out)

    def test_filters(self):
        rc, out, _ = nxrt("explain-claims", DATA / "cnn/model.onnx", "--op", "Conv", "--json")
        self.assertEqual(rc, 0)
        nodes = json.loads(out)["nodes"]
        self.assertTrue(nodes)
        self.assertTrue(all(n["op_type"] == "Conv" for n in nodes))

    def test_bad_files_exit_3(self):
        rc, _, err = nxrt("explain-claims", self.tmp / "missing.onnx")
        self.assertEqual(rc, 3)
        self.assertIn("missing.onnx", err)
        garbage = self.tmp / "garbage.onnx"
        garbage.write_bytes(b"\x08\x07this is not a protobuf\xff\xff\xff")
        rc, _, err = nxrt("explain-claims", garbage)
        self.assertEqual(rc, 3)
        self.assertIn("garbage.onnx", err)
        truncated = self.tmp / "truncated.onnx"
        truncated.write_bytes((DATA / "cnn/model.onnx").read_bytes()[:100])
        rc, _, err = nxrt("explain-claims", truncated)
        self.assertEqual(rc, 3)
        self.assertIn("truncated.onnx", err)


class Run(TempDirTest):
    def test_mlp_outputs_match_expected(self):
        rc, out, err = nxrt("run", DATA / "mlp/model.onnx", "--input", f"x={DATA}/mlp/inputs/x.npy",
                            "--output-dir", self.tmp)
        self.assertEqual(rc, 0, err)
        got = np.load(self.tmp / "y.npy")
        np.testing.assert_allclose(got, np.load(DATA / "mlp/expected/y.npy"), rtol=1e-3, atol=1e-5)

    def test_test_dir_pass_and_mismatch(self):
        for name in ["mlp", "cnn", "external_data"]:
            self.assertExit(nxrt("run", "--test-dir", DATA / name), 0, name)
        case = self.tmp / "case"
        shutil.copytree(DATA / "mlp", case)
        expected = onnx.TensorProto()
        path = case / "test_data_set_0/output_0.pb"
        expected.ParseFromString(path.read_bytes())
        arr = onnx.numpy_helper.to_array(expected).copy()
        arr.flat[0] += 1.0
        path.write_bytes(onnx.numpy_helper.from_array(arr, expected.name).SerializeToString())
        rc, out, _ = nxrt("run", "--test-dir", case)
        self.assertEqual(rc, 5)
        self.assertIn("MISMATCH", out)
        self.assertIn("MAX ABS ERR", out)

    def test_several_test_dirs_in_one_process(self):
        # A passing folder, a mismatching copy, an unclaimed op and a folder with no model:
        # each gets its line (its JSON object), and the first failure gives the exit status.
        bad = self.tmp / "bad"
        shutil.copytree(DATA / "mlp", bad)
        path = bad / "test_data_set_0/output_0.pb"
        expected = onnx.TensorProto()
        expected.ParseFromString(path.read_bytes())
        arr = onnx.numpy_helper.to_array(expected).copy()
        arr.flat[3] += 1.0
        path.write_bytes(onnx.numpy_helper.from_array(arr, expected.name).SerializeToString())
        unclaimed = self.tmp / "unclaimed"
        unclaimed.mkdir()
        shutil.copy(DATA / "unsupported_op/model.onnx", unclaimed / "model.onnx")
        folders = [DATA / "mlp", bad, unclaimed, self.tmp / "empty"]
        (self.tmp / "empty").mkdir()
        rc, out, err = nxrt("run", "--ep", "cpu", "--test-dir", *folders)
        self.assertEqual(rc, 5, err)
        lines = out.splitlines()
        self.assertIn(f"{DATA / 'mlp'}: pass", lines)
        self.assertIn(f"{bad}: MISMATCH", lines)
        self.assertIn(f"{unclaimed}: DECLINED (status 4)", lines)
        self.assertIn(f"{self.tmp / 'empty'}: ERROR (status 3)", lines)
        self.assertEqual(lines[-1], "4 cases: 1 pass, 1 mismatch, 1 declined, 1 error")
        self.assertIn(f"while checking the test folder '{unclaimed}'", err)

        rc, out, err = nxrt("run", "--ep", "cpu", "--json", "--test-dir", folders[2], folders[0], folders[1])
        self.assertEqual(rc, 4, err)
        cases = [json.loads(line) for line in out.splitlines()]
        self.assertEqual([(c["test_dir"], c["status"], c["exit_code"], c["ok"]) for c in cases],
                         [(str(unclaimed), "declined", 4, False), (str(DATA / "mlp"), "pass", 0, True),
                          (str(bad), "mismatch", 5, False)])
        self.assertIn("Inverse", cases[0]["error"]["why"])
        self.assertNotIn("error", cases[1])
        first = cases[2]["outputs"][0]["first_mismatch"]
        self.assertEqual(first["index"], 3)
        self.assertAlmostEqual(first["expected"] - first["actual"], 1.0, places=4)
        self.assertTrue(all(c["seconds"] >= 0 for c in cases))

    def test_declined_model_exits_4_with_reason(self):
        rc, _, err = nxrt("run", DATA / "unsupported_op/model.onnx", "-q")
        self.assertEqual(rc, 4)
        self.assertIn("Inverse", err)
        self.assertIn("cpu", err)

    def test_json_and_random_inputs(self):
        rc, out, err = nxrt("run", DATA / "cnn/model.onnx", "--json", "-q")
        self.assertEqual(rc, 0, err)
        result = json.loads(out)
        self.assertEqual(result["outputs"]["logits"]["shape"], [1, 10])

    def test_compare_ep(self):
        rc, out, err = nxrt("run", DATA / "cnn/model.onnx", "--compare-ep", "cpu", "-q")
        self.assertEqual(rc, 0, err)
        self.assertIn("match", out)

    def test_bad_inputs(self):
        rc, _, err = nxrt("run", DATA / "mlp/model.onnx", "--input", f"x={self.tmp}/none.npy")
        self.assertEqual(rc, 3)
        self.assertIn("none.npy", err)
        np.save(self.tmp / "int.npy", np.zeros((2, 16), dtype=np.int32))
        rc, _, err = nxrt("run", DATA / "mlp/model.onnx", "--input", f"x={self.tmp}/int.npy")
        self.assertEqual(rc, 3)
        self.assertIn("expects float", err)
        np.save(self.tmp / "wrong.npy", np.zeros((2, 15), dtype=np.float32))
        rc, _, err = nxrt("run", DATA / "mlp/model.onnx", "--input", f"x={self.tmp}/wrong.npy")
        self.assertEqual(rc, 3)
        self.assertIn("shape", err)
        rc, _, err = nxrt("run", DATA / "mlp/model.onnx", "--input", "nosuch=random")
        self.assertEqual(rc, 2)
        self.assertIn("not an input", err)


class CompileEpContext(TempDirTest):
    def compile(self, *args, model=DATA / "cnn/model.onnx"):
        """Compiles for the cpu EP; test_onednn.py covers the onednn EP's blobs."""
        return nxrt("compile-epcontext", model, "--ep", "cpu", *args)

    def outputs(self, model):
        out_dir = self.tmp / f"out-{model.stem}-{len(list(self.tmp.iterdir()))}"
        rc, _, err = nxrt("run", model, "--input", f"image={DATA}/cnn/inputs/image.npy", "--output-dir", out_dir)
        self.assertEqual(rc, 0, err)
        return np.load(out_dir / "logits.npy")

    def test_external_round_trip(self):
        out = self.tmp / "cnn_ctx.onnx"
        self.assertExit(self.compile("-o", out), 0)
        blob = self.tmp / "cnn_ctx_cpu.bin"
        self.assertTrue(blob.exists())
        proto = onnx.load(str(out), load_external_data=False)
        ctx_nodes = [n for n in proto.graph.node if n.op_type == "EPContext"]
        self.assertEqual(len(ctx_nodes), 1)
        node = ctx_nodes[0]
        self.assertEqual(node.domain, "com.microsoft")
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        self.assertEqual(attrs["embed_mode"], 0)
        self.assertEqual(attrs["ep_cache_context"], b"cnn_ctx_cpu.bin")
        self.assertEqual(attrs["source"], b"nxrt.cpu")
        self.assertEqual(attrs["main_context"], 1)
        self.assertIn(("com.microsoft", 1), [(o.domain, o.version) for o in proto.opset_import])
        meta = {p.key: p.value for p in proto.metadata_props}
        self.assertIn("ep_compatibility_info.cpu", meta)
        self.assertEqual(len(proto.graph.initializer), 0, "weights live in the blob")
        np.testing.assert_allclose(self.outputs(out), self.outputs(DATA / "cnn/model.onnx"), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(self.outputs(out), np.load(DATA / "cnn/expected/logits.npy"), rtol=1e-3, atol=1e-5)

    def test_embed_round_trip_and_ort_alias(self):
        for args in (["--embed"], ["--config", "ep.context_embed_mode=1"]):
            out = self.tmp / f"embed{len(args)}.onnx"
            self.assertExit(self.compile("-o", out, *args), 0)
            self.assertEqual(sorted(p.name for p in self.tmp.iterdir() if p.suffix == ".bin"), [])
            np.testing.assert_allclose(self.outputs(out), np.load(DATA / "cnn/expected/logits.npy"),
                                       rtol=1e-3, atol=1e-5)

    def test_deterministic_bytes(self):
        a, b = self.tmp / "a", self.tmp / "b"
        a.mkdir()
        b.mkdir()
        self.assertExit(self.compile("-o", a / "m.onnx"), 0)
        self.assertExit(self.compile("-o", b / "m.onnx"), 0)
        for name in ["m.onnx", "m_cpu.bin"]:
            self.assertEqual((a / name).read_bytes(), (b / name).read_bytes(), name)

    def test_no_overwrite_without_force(self):
        out = self.tmp / "m.onnx"
        self.assertExit(self.compile("-o", out), 0)
        before = out.read_bytes()
        rc, _, err = self.compile("-o", out)
        self.assertEqual(rc, 2)
        self.assertIn("--force", err)
        self.assertEqual(out.read_bytes(), before)
        self.assertExit(self.compile("-o", out, "--force"), 0)

    def test_never_writes_over_input(self):
        model = self.tmp / "model.onnx"
        shutil.copy(DATA / "cnn/model.onnx", model)
        before = model.read_bytes()
        rc, _, err = self.compile("-o", model, "--force", model=model)
        self.assertEqual(rc, 2)
        self.assertIn("input model", err)
        self.assertEqual(model.read_bytes(), before)

    def test_tampered_and_truncated_blob_refused(self):
        out = self.tmp / "m.onnx"
        self.assertExit(self.compile("-o", out), 0)
        blob = self.tmp / "m_cpu.bin"
        data = bytearray(blob.read_bytes())
        data[len(data) // 2] ^= 0xFF
        blob.write_bytes(bytes(data))
        rc, _, err = nxrt("run", out, "-q")
        self.assertEqual(rc, 3)
        self.assertIn("recompile", err)
        blob.write_bytes(bytes(data[: len(data) // 3]))
        rc, _, err = nxrt("run", out, "-q")
        self.assertEqual(rc, 3)
        blob.unlink()
        rc, _, err = nxrt("run", out, "-q")
        self.assertEqual(rc, 3)
        self.assertIn("m_cpu.bin", err)

    def test_context_model_not_recompiled(self):
        out = self.tmp / "m.onnx"
        self.assertExit(self.compile("-o", out), 0)
        rc, _, err = self.compile("-o", self.tmp / "again.onnx", model=out)
        self.assertEqual(rc, 2)
        self.assertIn("EPContext", err)
        self.assertFalse((self.tmp / "again.onnx").exists())

    def test_several_models_in_parallel(self):
        models = []
        for name in ["cnn", "mlp"]:
            shutil.copy(DATA / name / "model.onnx", self.tmp / f"{name}.onnx")
            models.append(self.tmp / f"{name}.onnx")
        out_dir = self.tmp / "compiled"
        rc, out, err = nxrt("compile-epcontext", *models, "--ep", "cpu", "--output-dir", out_dir, "-j", "2", "--json")
        self.assertEqual(rc, 0, err)
        results = json.loads(out)["results"]
        self.assertEqual([r["ok"] for r in results], [True, True])
        self.assertEqual(sorted(p.name for p in out_dir.iterdir()),
                         ["cnn_ctx.onnx", "cnn_ctx_cpu.bin", "mlp_ctx.onnx", "mlp_ctx_cpu.bin"])

    def test_several_models_with_one_output_name_refused(self):
        rc, _, err = nxrt("compile-epcontext", DATA / "cnn/model.onnx", DATA / "mlp/model.onnx",
                          "--output-dir", self.tmp / "out")
        self.assertEqual(rc, 2)
        self.assertIn("would both be written", err)
        self.assertFalse((self.tmp / "out").exists())

    def test_external_data_model(self):
        out = self.tmp / "ext_ctx.onnx"
        self.assertExit(self.compile("-o", out, model=DATA / "external_data/model.onnx"), 0)
        case = self.tmp / "case"
        case.mkdir()
        shutil.copy(out, case / "model.onnx")
        shutil.copy(self.tmp / "ext_ctx_cpu.bin", case / "ext_ctx_cpu.bin")
        shutil.copytree(DATA / "external_data/test_data_set_0", case / "test_data_set_0")
        self.assertExit(nxrt("run", "--test-dir", case), 0)

    def test_attributes_nxrt_does_not_model_are_written_back(self):
        # Optional's `type` is a TypeProto attribute: nxrt keeps it as read and writes it into
        # the cpu EP's payload, so the compiled model still says what the Optional holds.
        from onnx import TensorProto, helper
        elem = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
        nodes = [helper.make_node("Optional", [], ["empty"], name="none", type=elem),
                 helper.make_node("OptionalHasElement", ["empty"], ["has"], name="has")]
        graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        path = self.tmp / "optional.onnx"
        onnx.save(model, str(path))
        out = self.tmp / "optional_ctx.onnx"
        self.assertExit(self.compile("-o", out, model=path), 0)
        payload = (self.tmp / "optional_ctx_cpu.bin").read_bytes()
        self.assertIn(elem.SerializeToString(), payload, "the TypeProto is in the payload as read")
        for m in (path, out):
            rc, stdout, err = nxrt("run", m, "--ep", "cpu")
            self.assertEqual(rc, 0, err)
            self.assertIn("has: bool[] min 0 max 0 mean 0: [false]", stdout)

    def test_unsupported_model_cannot_compile(self):
        rc, _, err = self.compile("-o", self.tmp / "x.onnx", model=DATA / "unsupported_op/model.onnx")
        self.assertEqual(rc, 4)
        self.assertFalse((self.tmp / "x.onnx").exists())


class ForeignEpContext(TempDirTest):
    def test_unknown_source_is_reported(self):
        model = DATA / "foreign_epcontext/model.onnx"
        rc, out, err = nxrt("explain-claims", model)
        self.assertEqual(rc, 4)
        self.assertIn("QNNExecutionProvider", out)
        self.assertIn("none loaded", out)
        rc, _, err = nxrt("run", model, "-q")
        self.assertEqual(rc, 4)
        self.assertIn("QNNExecutionProvider", err)
        self.assertIn("nxrt.cpu", err)


class Bench(TempDirTest):
    def test_json_report(self):
        rc, out, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "-n", "5", "--warmup", "1", "--json",
                            "--profile")
        self.assertEqual(rc, 0, err)
        r = json.loads(out)
        for key in ["session_create_ms", "first_inference_ms", "throughput_per_s", "peak_rss_mib"]:
            self.assertGreater(r[key], 0, key)
        lat = r["latency_ms"]
        self.assertLessEqual(lat["min"], lat["median"])
        self.assertLessEqual(lat["median"], lat["p90"])
        self.assertLessEqual(lat["p90"], lat["p99"])
        self.assertLessEqual(lat["p99"], lat["max"])
        self.assertEqual(len(r["profile"]), 1)
        self.assertEqual(len(r["samples_ms"]), 5)
        self.assertEqual(sorted(r["samples_ms"])[2], lat["median"])
        self.assertGreaterEqual(r["page_faults_per_run"], 0)
        self.assertEqual([s["op"] for s in r["steps"]], ["MatMul", "Add", "Relu", "MatMul", "Add", "Softmax"])
        self.assertTrue(all(s["ep"] == "cpu" and s["mean_ms"] >= 0 for s in r["steps"]))

    def test_table(self):
        rc, out, err = nxrt("bench", DATA / "cnn/model.onnx", "-n", "3", "-q")
        self.assertEqual(rc, 0, err)
        for word in ["session creation", "first inference", "median", "p90", "p99", "throughput", "peak RSS",
                     "page faults"]:
            self.assertIn(word, out)
        self.assertRegex(out, r"page faults +[0-9]+\.[0-9] per run")


class ManPages(TempDirTest):
    SUBCOMMANDS = ["list-eps", "explain-claims", "compile-epcontext", "run", "bench"]

    def test_every_flag_is_documented_with_examples(self):
        for sub in self.SUBCOMMANDS:
            page = (ROOT / f"man/nxrt-{sub}.1").read_text()
            self.assertIn(".EX", page, f"nxrt-{sub}.1 has no example")
            rc, help_text, err = nxrt(sub, "--help")
            self.assertEqual(rc, 0, err)
            flags = re.findall(r"^\s+(?:-\w,)?(--[a-z0-9-]+)", help_text, re.M)
            self.assertGreater(len(flags), 1, help_text)
            for flag in flags:
                if flag != "--help":
                    self.assertIn(flag.replace("-", "\\-"), page, f"nxrt-{sub}.1 does not document {flag}")


if __name__ == "__main__":
    unittest.main(verbosity=2)
