"""CLI tests of run's comparisons (--compare-ep, --compare-to, error statistics, histograms,
--check-each-node) and of bench (warm-up, duration, percentiles, variation, --trace, EP
lists compared run by run, progress on terminals). Timings are checked for presence,
format and consistency only, never for their values."""
import json
import os
import pty
import subprocess
import unittest
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

from test_cli import DATA, NXRT, ROOT, TempDirTest, nxrt
from test_onednn import residual_cnn

CONFORMANCE_DATA = Path("/usr/share/libonnx-testdata/data")
X = np.arange(1, 9, dtype=np.float32).reshape(2, 4)  # 1..8


def chain_model(path):
    """y = relu(2 * (x + 1)) - 1 as add1, mul1, relu1, sub1: exact in float32 for X."""
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    nodes = [
        helper.make_node("Add", ["x", "one"], ["a"], name="add1"),
        helper.make_node("Mul", ["a", "two"], ["b"], name="mul1"),
        helper.make_node("Relu", ["b"], ["c"], name="relu1"),
        helper.make_node("Sub", ["c", "one"], ["y"], name="sub1"),
    ]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], initializer=[one, two])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def chain_expected(x):
    return 2 * (x + 1) - 1


def available_eps():
    rc, out, _ = nxrt("list-eps", "--json")
    return {e["name"] for e in json.loads(out)["eps"] if e["available"]} if rc == 0 else set()


class ChainTest(TempDirTest):
    def setUp(self):
        super().setUp()
        self.model = chain_model(self.tmp / "chain.onnx")
        self.x = self.tmp / "x.npy"
        np.save(self.x, X)

    def run_json(self, *args, code=0):
        rc, out, err = nxrt("run", self.model, "--input", f"x={self.x}", "--ep", "cpu", "--json", *args)
        self.assertEqual(rc, code, out + err)
        return json.loads(out)


class CompareTo(ChainTest):
    def expected_dir(self, y):
        ref = self.tmp / "ref"
        ref.mkdir(exist_ok=True)
        np.save(ref / "y.npy", y.astype(np.float32))
        return ref

    def test_statistics_of_a_known_difference(self):
        y = chain_expected(X)                  # 3, 5, 7, ... 17
        y.flat[0] += 0.5                       # error 0.5, relative 0.5 / 3.5
        y.flat[1] += 2.0 ** -10                # error 2^-10: within rtol 1e-3 of 5
        ref = self.expected_dir(y)
        rc, out, err = nxrt("run", self.model, "--input", f"x={self.x}", "--ep", "cpu", "--compare-to", ref)
        self.assertEqual(rc, 5, out + err)
        self.assertIn(f"comparison with folder '{ref}' (rtol 0.001, atol 1e-05):", out)
        self.assertIn("MIN ATOL (RTOL 0)", out)
        self.assertIn("MIN RTOL (ATOL 0)", out)
        row = next(line for line in out.splitlines() if line.startswith("y "))
        self.assertEqual(row.split()[:5], ["y", "MISMATCH", "0.5", "0.143", "0.5"])
        self.assertIn("1 of 8", row)
        self.assertIn("[0] got 3, expected 3.5", row)
        self.assertIn("|actual - expected| of 'y' (8 elements):", out)
        hist = [line.split() for line in out.split("|actual - expected| of 'y' (8 elements):\n")[1].splitlines()]
        self.assertEqual([h[:2] if h[0] == "exact" else h[:3] for h in hist],
                         [["exact", "6"], ["[1e-04,", "1e-03)", "1"], ["[1e-03,", "1e-02)", "0"],
                          ["[1e-02,", "1e-01)", "0"], ["[1e-01,", "1e+00)", "1"]])

        r = self.run_json("--compare-to", ref, code=5)
        c = r["comparisons"][0]
        self.assertEqual((c["output"], c["ok"], c["mismatches"], c["elements"]), ("y", False, 1, 8))
        self.assertEqual(c["max_abs"], 0.5)
        self.assertEqual(c["min_atol"], 0.5)
        self.assertAlmostEqual(c["min_rtol"], 0.5 / 3.5)
        self.assertEqual(c["histogram"]["exact"], 6)
        self.assertEqual(c["histogram"]["decades"], [{"from": 1e-4, "to": 1e-3, "count": 1},
                                                     {"from": 0.1, "to": 1.0, "count": 1}])
        # The reported minimum tolerances pass; anything smaller does not.
        self.run_json("--compare-to", ref, "--rtol", "0", "--atol", str(c["min_atol"]))
        self.run_json("--compare-to", ref, "--atol", "0", "--rtol", repr(c["min_rtol"] * 1.000001))
        self.run_json("--compare-to", ref, "--rtol", "0", "--atol", "0.49", code=5)

    def test_exact_match_and_missing_tolerance(self):
        ref = self.expected_dir(chain_expected(X))
        r = self.run_json("--compare-to", ref, "--rtol", "0", "--atol", "0")
        c = r["comparisons"][0]
        self.assertTrue(r["ok"])
        self.assertEqual((c["min_atol"], c["min_rtol"], c["histogram"]["exact"]), (0, 0, 8))
        z = chain_expected(X)
        z.flat[3] = 0.0                        # expected 0, got 7: no rtol passes
        r = self.run_json("--compare-to", self.expected_dir(z), code=5)
        self.assertIsNone(r["comparisons"][0]["min_rtol"])
        rc, out, _ = nxrt("run", self.model, "--input", f"x={self.x}", "--ep", "cpu", "--compare-to", self.tmp / "ref")
        self.assertIn("none", next(line for line in out.splitlines() if line.startswith("y ")))

    def test_backend_test_folder_feeds_inputs(self):
        rc, out, err = nxrt("run", DATA / "mlp/model.onnx", "--ep", "cpu", "--compare-to", DATA / "mlp/test_data_set_0")
        self.assertEqual(rc, 0, out + err)
        self.assertNotIn("random", err, "input_0.pb feeds x")
        self.assertIn("match", out)

    def test_errors(self):
        rc, out, err = nxrt("run", self.model, "--compare-to", self.tmp / "nowhere")
        self.assertEqual(rc, 3)
        self.assertIn("is not a folder", err)
        self.assertEqual(out, "", "refused before the model runs")
        empty = self.tmp / "empty"
        empty.mkdir()
        rc, _, err = nxrt("run", self.model, "--compare-to", empty)
        self.assertEqual(rc, 3)
        self.assertIn("holds no expected value for any output", err)
        rc, _, err = nxrt("run", self.model, "--compare-to", empty, "--compare-ep", "cpu")
        self.assertEqual(rc, 2)
        rc, _, err = nxrt("run", self.model, "--check-each-node")
        self.assertEqual(rc, 2)
        self.assertIn("--check-each-node needs --compare-ep, --compare-to or --output-dir", err)


class CheckEachNode(ChainTest):
    def reference(self):
        ref = self.tmp / "ref"
        rc, out, err = nxrt("run", self.model, "--input", f"x={self.x}", "--ep", "cpu", "--check-each-node",
                            "--output-dir", ref, "-q")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(sorted(p.name for p in ref.iterdir()), ["a.npy", "b.npy", "c.npy", "y.npy"])
        np.testing.assert_array_equal(np.load(ref / "b.npy"), 2 * (X + 1))
        return ref

    def test_finds_the_tampered_node(self):
        ref = self.reference()
        r = self.run_json("--compare-to", ref, "--check-each-node")
        self.assertEqual(r["check_each_node"], {"nodes": 4, "nodes_checked": 4, "nodes_diverging": 0,
                                                "first_diverging_node": None})
        b = np.load(ref / "b.npy")
        b.flat[5] += 0.25
        np.save(ref / "b.npy", b)
        r = self.run_json("--compare-to", ref, "--check-each-node", code=5)
        self.assertTrue(r["comparisons"][0]["ok"], "the declared output y still matches")
        check = r["check_each_node"]
        self.assertEqual((check["nodes_checked"], check["nodes_diverging"]), (4, 1))
        first = check["first_diverging_node"]
        self.assertEqual((first["node"], first["op"], first["domain"], first["ep"], first["partition"]),
                         ("mul1", "Mul", "ai.onnx", "cpu", "cpu_0"))
        self.assertEqual([(o["output"], o["max_abs"], o["mismatches"]) for o in first["outputs"]], [("b", 0.25, 1)])
        # A later tampered node does not hide the earlier one: topological order decides.
        c = np.load(ref / "c.npy")
        c.flat[0] += 1
        np.save(ref / "c.npy", c)
        rc, out, err = nxrt("run", self.model, "--input", f"x={self.x}", "--ep", "cpu", "--compare-to", ref,
                            "--check-each-node")
        self.assertEqual(rc, 5, out + err)
        self.assertIn(f"checked 4 of 4 nodes against folder '{ref}' (rtol 0.001, atol 1e-05): 2 diverge", out)
        self.assertIn("first diverging node: 'mul1' (ai.onnx::Mul, opset 13) on the cpu EP (partition cpu_0)", out)
        self.assertIn("|actual - expected| of 'b' (8 elements):", out)

    def test_against_another_ep(self):
        r = self.run_json("--compare-ep", "cpu", "--check-each-node")
        self.assertEqual(r["check_each_node"]["nodes_checked"], 4)
        self.assertTrue(r["ok"])

    @unittest.skipUnless("onednn" in available_eps(), "the onednn EP is not available")
    def test_onednn_against_cpu_with_no_tolerance(self):
        model = residual_cnn(self.tmp / "residual.onnx")
        rc, out, err = nxrt("run", model, "--ep", "onednn,cpu", "--compare-ep", "cpu", "--check-each-node",
                            "--rtol", "0", "--atol", "0", "--json", "-q")
        self.assertIn(rc, (0, 5), out + err)
        check = json.loads(out)["check_each_node"]
        self.assertEqual(check["nodes_checked"], check["nodes"])
        self.assertEqual(rc == 5, check["nodes_diverging"] > 0)
        if rc == 5:
            first = check["first_diverging_node"]
            self.assertEqual(first["ep"], "onednn", "cpu against cpu cannot differ")
            self.assertFalse(all(o["ok"] for o in first["outputs"]))


def bench_json(*args):
    rc, out, err = nxrt("bench", *args, "--json", "-q")
    return rc, (json.loads(out) if rc == 0 else None), err


class BenchFlags(TempDirTest):
    def check_latency(self, r):
        lat = r["latency_ms"]
        order = [lat[k] for k in ("min", "p50", "p90", "p95", "p99", "max")]
        self.assertEqual(order, sorted(order))
        self.assertEqual(lat["median"], lat["p50"])
        samples = sorted(r["samples_ms"])
        n = len(samples)
        for p in (50, 90, 95, 99):  # nearest rank: the ceil(p/100 * n)-th smallest
            self.assertEqual(lat[f"p{p}"], samples[max(1, -(-p * n // 100)) - 1], p)
        self.assertGreaterEqual(r["cv"], 0)
        self.assertGreater(r["throughput_per_s"], 0)
        self.assertEqual(r["runs"], n)

    def test_runs_and_warmup_count(self):
        rc, r, err = bench_json(DATA / "mlp/model.onnx", "--ep", "cpu", "--runs", "7", "--warmup", "2")
        self.assertEqual(rc, 0, err)
        self.assertEqual((r["runs"], r["warmup"]), (7, 2))
        self.check_latency(r)
        for key in ["session_create_ms", "first_inference_ms", "peak_rss_mib"]:
            self.assertGreater(r[key], 0, key)

    def test_duration_and_warmup_time(self):
        rc, r, err = bench_json(DATA / "mlp/model.onnx", "--ep", "cpu", "--duration", "0.2", "--warmup-time", "0.05")
        self.assertEqual(rc, 0, err)
        self.assertGreaterEqual(r["runs"], 1)
        self.assertGreaterEqual(r["warmup"], 1)
        self.assertGreaterEqual(sum(r["samples_ms"]), 0.2 * 1000 * 0.5, "the runs fill most of --duration")
        self.check_latency(r)
        rc, r, err = bench_json(DATA / "mlp/model.onnx", "--ep", "cpu", "--duration", "0.01", "--runs", "9")
        self.assertEqual(rc, 0, err)
        self.assertGreaterEqual(r["runs"], 9, "--runs is a minimum with --duration")

    def test_usage_errors(self):
        rc, _, err = nxrt("bench", DATA / "mlp/model.onnx", "--warmup", "3", "--warmup-time", "1")
        self.assertEqual(rc, 2)
        self.assertIn("excludes", err)
        self.assertEqual(nxrt("bench", DATA / "mlp/model.onnx", "--duration", "-1")[0], 2)
        rc, _, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "--ep", "cpu")
        self.assertEqual(rc, 2)
        self.assertIn("--ep cpu is given twice", err)

    def test_text_report(self):
        rc, out, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "-n", "3", "-q")
        self.assertEqual(rc, 0, err)
        for word in ["session creation", "first inference", "median", "p90", "p95", "p99", "variation (CV)",
                     "throughput", "peak RSS"]:
            self.assertIn(word, out)
        self.assertRegex(out, r"variation \(CV\)\s+\d+\.\d %")
        self.assertEqual(err, "", "-q: nothing on stderr")


class Trace(TempDirTest):
    def test_one_event_per_node_per_run(self):
        trace = self.tmp / "t.json"
        rc, out, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "-n", "3", "--warmup", "1", "--trace",
                            trace, "-q")
        self.assertEqual(rc, 0, err)
        self.assertIn(f"trace written to {trace}", out)
        events = json.loads(trace.read_text())["traceEvents"]
        complete = [e for e in events if e["ph"] == "X"]
        for e in complete:
            self.assertEqual(set(e) >= {"name", "cat", "ts", "dur", "pid", "tid", "args"}, True, e)
            self.assertGreaterEqual(e["dur"], 0)
        runs = [e for e in complete if e["cat"] == "run"]
        nodes = [e for e in complete if e["cat"] == "node"]
        self.assertEqual([e["name"] for e in runs], ["run 0", "run 1", "run 2"])
        ops = ["MatMul", "Add", "Relu", "MatMul", "Add", "Softmax"]
        self.assertEqual([e["args"]["op"] for e in nodes], ops * 3)
        for e in nodes:
            self.assertEqual((e["args"]["ep"], e["args"]["partition"]), ("cpu", "cpu_0"))
            self.assertTrue(e["args"]["variant"])
            run = runs[e["args"]["run"]]
            self.assertGreaterEqual(e["ts"], run["ts"] - 1)
            self.assertLessEqual(e["ts"] + e["dur"], run["ts"] + run["dur"] + 1)
        names = {(e["name"], e["tid"]): e["args"]["name"] for e in events if e["ph"] == "M"}
        self.assertEqual(names[("thread_name", 1)], "cpu")

    def test_unwritable_trace_fails(self):
        rc, _, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "-n", "1", "--trace",
                          self.tmp / "no/such/dir/t.json", "-q")
        self.assertEqual(rc, 1, err)
        self.assertIn("t.json", err)


@unittest.skipUnless("onednn" in available_eps(), "the onednn EP is not available")
class CompareEps(TempDirTest):
    def test_alternating_lists_and_ratio(self):
        model = residual_cnn(self.tmp / "residual.onnx")
        trace = self.tmp / "t.json"
        rc, out, err = nxrt("bench", model, "--ep", "cpu", "--ep", "onednn,cpu", "-n", "4", "--warmup", "1",
                            "--trace", trace, "--json", "-q")
        self.assertEqual(rc, 0, err)
        r = json.loads(out)
        self.assertEqual([x["eps"] for x in r["results"]], [["cpu"], ["onednn", "cpu"]])
        self.assertEqual([x["runs"] for x in r["results"]], [4, 4])
        p50 = [x["latency_ms"]["p50"] for x in r["results"]]
        self.assertEqual(r["ratios"][0], {"eps": "cpu", "vs": "cpu", "median_ratio": 1.0})
        self.assertAlmostEqual(r["ratios"][1]["median_ratio"], p50[1] / p50[0])
        # Alternating: the runs of the two lists interleave in time.
        runs = [e for e in json.loads(trace.read_text())["traceEvents"] if e.get("cat") == "run"]
        self.assertEqual([e["tid"] for e in sorted(runs, key=lambda e: e["ts"])], [1, 2] * 4)
        rc, out, err = nxrt("bench", model, "--ep", "cpu", "--ep", "onednn,cpu", "-n", "2", "-q")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"\[onednn,cpu\] / \[cpu\]: ratio of medians \d+\.\d{3} \(onednn,cpu is \d+\.\d\dx "
                              r"(faster|slower)\)")
        self.assertIn("median ratio", out)


def run_on_terminal(*args, env=None, program=NXRT):
    """Runs nxrt (or `program`) with stdout and stderr on a pseudo-terminal; returns (exit
    code, output)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(program, [program, *map(str, args)], {**os.environ, **(env or {})})
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


class Progress(TempDirTest):
    def test_progress_on_terminals_only(self):
        rc, out = run_on_terminal("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "--duration", "1.5",
                                  env={"NO_COLOR": "1"})
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\r\x1b\[Kbench .*model\.onnx: run \d+, \d+\.\d s \(\d+\.\d s\)")
        self.assertNotIn("\x1b[33m", out, "NO_COLOR: no colour")
        rc, out = run_on_terminal("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "--duration", "1.5", "-q")
        self.assertEqual(rc, 0, out)
        self.assertNotIn("\x1b[K", out, "--quiet: no progress")
        rc, out, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "--duration", "1.5")
        self.assertEqual(rc, 0, err)
        self.assertNotIn("\x1b[K", err, "stderr is no terminal: no progress")

    @unittest.skipUnless(CONFORMANCE_DATA.is_dir(), "Debian's libonnx-testdata is not installed")
    def test_conformance_progress_on_terminals_only(self):
        # A few small cases, with the progress line shown from the start (NXRT_PROGRESS_DELAY=0)
        # rather than after the first second, which a fast machine may not reach.
        args = ["--only", "node/test_(abs|add|sub|relu|neg)$", "-j", "1", "--out", self.tmp / "cases.tsv"]
        script = str(ROOT / "scripts/conformance.sh")
        at_once = {"NXRT_PROGRESS_DELAY": "0"}
        rc, out = run_on_terminal(*args, program=script, env=at_once)
        self.assertEqual(rc, 0, out)
        self.assertRegex(out, r"\r\x1b\[Kconformance: \d+ of 5 cases, \d+ passed")
        self.assertRegex(out, r"5 passed, 0 failed")
        rc, out = run_on_terminal(*args, "-q", program=script, env=at_once)
        self.assertEqual(rc, 0, out)
        self.assertNotIn("\x1b[K", out, "--quiet: no progress")
        p = subprocess.run([script, *map(str, args)], capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("\x1b[K", p.stderr, "stderr is no terminal: no progress")


FAKE_NXRT = """#!/usr/bin/python3
# Stands in for nxrt run: a case named crash kills the process, one named hang sleeps, one
# named tainted mismatches after another case in the same process and passes alone.
import json, os, signal, sys, time
args = sys.argv[1:]
with open(os.environ["FAKE_NXRT_LOG"], "a") as log:
    log.write(" ".join(os.path.basename(a) for a in args if "test_" in a) + "\\n")
dirs = [args[i + 1] for i, a in enumerate(args) if a == "--test-dir"]
for d in dirs:
    if d.endswith("crash"):
        os.kill(os.getpid(), signal.SIGSEGV)
    if d.endswith("hang"):
        time.sleep(60)
    status = "mismatch" if d.endswith("tainted") and len(dirs) > 1 else "pass"
    if "--json" in args:
        print(json.dumps({"test_dir": d, "status": status, "exit_code": 0 if status == "pass" else 5,
                          "ok": status == "pass", "seconds": 0.01, "outputs": []}), flush=True)
    else:
        print(d + ": pass")
"""


class ConformanceBatches(TempDirTest):
    @unittest.skipUnless(subprocess.run(["which", "jq"], capture_output=True).returncode == 0, "jq is not installed")
    def test_only_passes_count_in_a_batch(self):
        # Five cases, batches of two on one job: [a, a_tainted], [c, crash], [hang]. a_tainted
        # mismatches after a in its batch, which does not count: alone, it passes. The batch that
        # crashes keeps c's result and runs crash alone; the hanging one times out, then hang
        # runs alone and times out again.
        build = self.tmp / "build"
        (build / "cli").mkdir(parents=True)
        fake = build / "cli/nxrt"
        fake.write_text(FAKE_NXRT)
        fake.chmod(0o755)
        data = self.tmp / "data"
        for name in ["a", "a_tainted", "c", "crash", "hang"]:
            (data / "node" / f"test_{name}").mkdir(parents=True)
            (data / "node" / f"test_{name}" / "model.onnx").write_bytes(b"")
        log = self.tmp / "calls.txt"
        env = dict(os.environ, NXRT_BUILD_DIR=str(build), FAKE_NXRT_LOG=str(log))
        out = self.tmp / "cases.tsv"
        p = subprocess.run([str(ROOT / "scripts/conformance.sh"), "-j", "1", "--timeout", "2", "--out", str(out),
                            str(data)], capture_output=True, text=True, timeout=120, env=env)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("node/test_crash (crash: killed by signal 11", p.stderr)
        self.assertIn("node/test_hang (timeout: no result within 2s)", p.stderr)
        rows = [line.split("\t") for line in out.read_text().splitlines()[1:]]
        self.assertEqual([(r[0], r[1]) for r in rows],
                         [("node/test_a", "pass"), ("node/test_a_tainted", "pass"), ("node/test_c", "pass"),
                          ("node/test_crash", "crash"), ("node/test_hang", "timeout")])
        self.assertEqual(sorted(log.read_text().splitlines()),
                         ["test_a test_a_tainted", "test_a_tainted", "test_c test_crash", "test_crash", "test_hang",
                          "test_hang"])
        self.assertIn("3 passed, 2 failed", p.stdout)


class QuantizedChain(TempDirTest):
    """What quantize_dynamic writes (DynamicQuantizeLinear -> MatMulInteger -> Cast -> Mul by the
    product of the scales) runs as one fused cpu step, with ONNX Runtime's outputs; duplicate
    quantizations of one activation are merged before claiming."""

    CASE = ROOT / "testdata/opset18plus/dynamic_matmul_21_quantize_dynamic"

    def steps(self, *args):
        rc, out, err = nxrt("bench", self.CASE / "model.onnx", "-n", "2", "--warmup", "0", "--profile", "--json",
                            "--input", f"x={self.CASE / 'test_data_set_0/input_0.pb'}", *args)
        self.assertEqual(rc, 0, err)
        return {tuple(s["nodes"]): s for s in json.loads(out)["steps"]}

    def test_matmul_cast_mul_run_as_one_step(self):
        steps = self.steps("--ep", "cpu")
        fused = steps.get(("MatMulInteger_1", "Cast_2", "Mul_4"))
        self.assertIsNotNone(fused, list(steps))
        self.assertTrue(fused["variant"].endswith("+cast+mul"), fused["variant"])
        rc, out, err = nxrt("run", "--test-dir", self.CASE, "--ep", "cpu")
        self.assertEqual(rc, 0, out + err)

    @unittest.skipUnless("onednn" in available_eps(), "the onednn EP is not available")
    def test_the_default_placement_keeps_the_chain_on_cpu(self):
        # First claim gives the final Mul to onednn, which leaves nothing to fuse.
        self.assertIn(("MatMulInteger_1", "Cast_2", "Mul_4"), self.steps("--ep", "onednn,cpu"))
        split = self.steps("--ep", "onednn,cpu", "--placement", "first-claim")
        self.assertEqual(split[("Mul_4",)]["ep"], "onednn")
        self.assertIn(("MatMulInteger_1",), split)

    def test_repeated_quantizations_are_merged(self):
        model = onnx.load(str(self.CASE / "model.onnx"))
        graph = model.graph
        first = next(n for n in graph.node if n.op_type == "DynamicQuantizeLinear")
        twin = helper.make_node("DynamicQuantizeLinear", list(first.input), [f"{o}_twin" for o in first.output],
                                name="twin")
        graph.node.insert(1, twin)
        graph.output.append(helper.make_tensor_value_info("x_scale_twice", TensorProto.FLOAT, []))
        graph.node.append(helper.make_node("Mul", [first.output[1], twin.output[1]], ["x_scale_twice"], name="square"))
        path = self.tmp / "twice.onnx"
        onnx.save(model, str(path))
        rc, out, err = nxrt("explain-claims", path, "--ep", "cpu", "--json")
        self.assertEqual(rc, 0, err)
        report = json.loads(out)
        self.assertIn("merge-duplicate-nodes: merged DynamicQuantizeLinear 'twin' into "
                      "'DynamicQuantizeLinear_0': the same inputs and attributes", report["rewrites"])
        self.assertNotIn("twin", [n["name"] for n in report["nodes"]])


if __name__ == "__main__":
    unittest.main(verbosity=2)
