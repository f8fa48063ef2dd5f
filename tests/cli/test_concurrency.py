"""CLI tests of bench --concurrency: requests from several threads to one session, each result
checked bit for bit against a serial run; run counts, the report and flag errors."""
import json
import unittest

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt
from test_onednn import residual_cnn
from test_run_bench import available_eps, bench_json


def attention_block(path):
    """A transformer-like block: layer norm, single-head self-attention, residual, feed-forward."""
    rng = np.random.default_rng(1)
    d, t = 16, 8

    def init(name, *shape):
        return onnx.numpy_helper.from_array(rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)

    inits = [init(n, d, d) for n in ("wq", "wk", "wv", "w1", "w2")] + [init("gamma", d), init("beta", d)]
    inits.append(onnx.numpy_helper.from_array(np.array(d ** 0.5, dtype=np.float32), "scale"))
    nodes = [
        helper.make_node("LayerNormalization", ["x", "gamma", "beta"], ["n"], name="ln", axis=-1),
        helper.make_node("MatMul", ["n", "wq"], ["q"], name="q"),
        helper.make_node("MatMul", ["n", "wk"], ["k"], name="k"),
        helper.make_node("MatMul", ["n", "wv"], ["v"], name="v"),
        helper.make_node("Transpose", ["k"], ["kt"], name="kt", perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
        helper.make_node("Div", ["s", "scale"], ["ss"], name="scaled"),
        helper.make_node("Softmax", ["ss"], ["p"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["p", "v"], ["a"], name="attend"),
        helper.make_node("Add", ["a", "x"], ["r"], name="residual"),
        helper.make_node("MatMul", ["r", "w1"], ["h"], name="ff1"),
        helper.make_node("Relu", ["h"], ["hr"], name="relu"),
        helper.make_node("MatMul", ["hr", "w2"], ["y"], name="ff2"),
    ]
    graph = helper.make_graph(nodes, "attention", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, t, d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, t, d])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def branching(path):
    """If (sum(x) > 0) then relu(x) else -x: the branches are compiled on their first run."""
    then_graph = helper.make_graph([helper.make_node("Relu", ["x"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", TensorProto.FLOAT, [4])])
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", TensorProto.FLOAT, [4])])
    zero = helper.make_tensor("zero", TensorProto.FLOAT, [], [0.0])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], name="sum", keepdims=0),
        helper.make_node("Greater", ["s", "zero"], ["c"], name="positive"),
        helper.make_node("If", ["c"], ["y"], name="branch", then_branch=then_graph, else_branch=else_graph),
    ]
    graph = helper.make_graph(nodes, "branching", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], initializer=[zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def random_draws(path):
    """RandomUniform: every run draws new numbers, so no run equals another."""
    nodes = [helper.make_node("RandomUniform", [], ["r"], name="draw", shape=[4]),
             helper.make_node("Add", ["x", "r"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "draws", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


class ConcurrentBench(TempDirTest):
    def bench(self, model, eps, threads=4, runs=24, warmup=3):
        rc, r, err = bench_json(model, "--ep", eps, "--concurrency", threads, "-n", runs, "--warmup", warmup,
                                "--threads", 2)
        self.assertEqual(rc, 0, err)
        self.assertEqual((r["concurrency"], r["runs"], r["warmup"], len(r["samples_ms"])), (threads, runs, warmup, runs))
        self.assertTrue(r["identical_to_serial"])
        lat = r["latency_ms"]
        order = [lat[k] for k in ("min", "p50", "p90", "p95", "p99", "max")]
        self.assertEqual(order, sorted(order))
        self.assertGreater(r["wall_s"], 0)
        self.assertAlmostEqual(r["throughput_per_s"], runs / r["wall_s"], delta=1e-6 * runs / r["wall_s"])
        return r

    def test_cpu_models(self):
        for model in [DATA / "mlp/model.onnx", DATA / "cnn/model.onnx", residual_cnn(self.tmp / "residual.onnx"),
                      attention_block(self.tmp / "attention.onnx"), branching(self.tmp / "branching.onnx")]:
            with self.subTest(model=model.name):
                self.bench(model, "cpu")

    @unittest.skipUnless("onednn" in available_eps(), "this build has no onednn EP")
    def test_onednn_models(self):
        for model in [DATA / "mlp/model.onnx", DATA / "cnn/model.onnx", residual_cnn(self.tmp / "residual.onnx"),
                      attention_block(self.tmp / "attention.onnx")]:
            with self.subTest(model=model.name):
                self.bench(model, "onednn,cpu")

    def test_one_thread_per_request(self):
        self.bench(DATA / "mlp/model.onnx", "cpu", threads=8, runs=8, warmup=0)

    def test_text_report(self):
        rc, out, err = nxrt("bench", DATA / "mlp/model.onnx", "--ep", "cpu", "--concurrency", "3", "-n", "9", "-q")
        self.assertEqual(rc, 0, err)
        self.assertRegex(out, r"concurrency\s+3 threads, one session")
        self.assertRegex(out, r"throughput\s+\d+\.\d inferences/s")
        self.assertIn("identical to the serial run, bit for bit, in all 9 runs", out)
        self.assertIn(", 9 runs after 5 warm-up", out)

    def test_a_differing_result_fails(self):
        x = self.tmp / "x.npy"
        np.save(x, np.zeros(4, dtype=np.float32))
        rc, out, err = nxrt("bench", random_draws(self.tmp / "draws.onnx"), "--input", f"x={x}", "--concurrency", "2",
                            "-n", "4", "--warmup", "0", "-q")
        self.assertEqual(rc, 1, out + err)
        self.assertRegex(err, r"request \d+ on thread \d gave a result that differs from the serial run")
        self.assertRegex(err, r"output 'y' element 0 is [-\d.e]+, the serial run gave [-\d.e]+")

    def test_flag_errors(self):
        mlp = DATA / "mlp/model.onnx"
        for bad in ["0", "-2", "x"]:
            with self.subTest(concurrency=bad):
                rc, _, err = nxrt("bench", mlp, "--concurrency", bad)
                self.assertEqual(rc, 2, err)
                self.assertIn("--concurrency", err)
        rc, _, err = nxrt("bench", mlp, "--concurrency", "2", "--profile")
        self.assertEqual(rc, 2, err)
        self.assertIn("--profile needs --concurrency 1", err)
        rc, _, err = nxrt("bench", mlp, "--concurrency", "2", "--trace", self.tmp / "t.json")
        self.assertEqual(rc, 2, err)
        self.assertIn("--trace needs --concurrency 1", err)
        self.assertFalse((self.tmp / "t.json").exists())
        rc, _, err = nxrt("bench", mlp, "--concurrency", "2", "--ep", "cpu", "--ep", "cpu,onednn")
        self.assertEqual(rc, 2, err)
        self.assertIn("--concurrency takes one EP list, got 2", err)


if __name__ == "__main__":
    unittest.main()
