"""CLI tests of ONNX Runtime plugin EP libraries: the test plugin (tests/plugins/test_ep.c)
loaded with --plugin and NXRT_PLUGIN_PATH, its claims (fused groups, declines, rejected
groups), runs that match the cpu EP, EPContext round trips, and one error message per broken
variant; and, where the ONNX Runtime 1.30 peer is in .cache, the same plugin run by ORT
itself through tests/plugins/ort_host_check.c, EPContext models passed between the two."""
import json
import os
import subprocess
import unittest
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from test_cli import NXRT, ROOT, TempDirTest, nxrt

PLUGINS = Path(os.environ["NXRT_TEST_PLUGIN_DIR"])
GOOD = PLUGINS / "libnxrt_test_ep_good.so"
ORT_HOST_CHECK = PLUGINS / "ort_host_check"
# The peer scripts/plugin-vs-ort.sh (and bench-vs-ort.sh) install with npm; NXRT_ORT_LIBRARY overrides.
ORT_LIBRARY = Path(os.environ.get("NXRT_ORT_LIBRARY", ROOT / ".cache/ort-node/node_modules/onnxruntime-node/bin/"
                                  "napi-v6/linux/x64/libonnxruntime.so.1"))


def variant(name):
    return PLUGINS / f"libnxrt_test_ep_{name}.so"


def save(path, nodes, inputs, inits=()):
    graph = helper.make_graph(nodes, path.stem, [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 3]) for n in inputs],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [2, 3])], initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return path


def chain(path):
    """Add(+0.5) -> Relu -> Mul(y) fused by the plugin, Neg alone, Sigmoid left to cpu."""
    return save(path, [
        helper.make_node("Add", ["x", "half"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "y"], ["m"], name="mul"),
        helper.make_node("Neg", ["m"], ["n"], name="neg"),
        helper.make_node("Sigmoid", ["n"], ["out"], name="sig"),
    ], ["x", "y"], [numpy_helper.from_array(np.array([0.5], np.float32), "half")])


def all_plugin(path):
    """The chain without Sigmoid: every node is the plugin's."""
    return save(path, [
        helper.make_node("Add", ["x", "half"], ["a"], name="add"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Mul", ["r", "y"], ["m"], name="mul"),
        helper.make_node("Neg", ["m"], ["out"], name="neg"),
    ], ["x", "y"], [numpy_helper.from_array(np.array([0.5], np.float32), "half")])


def attribute(node, name):
    return next(a for a in node.attribute if a.name == name)


def not_convex(path):
    """The plugin's group [relu, add] has the path relu -> sig -> add outside it."""
    return save(path, [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("Sigmoid", ["r"], ["s"], name="sig"),
        helper.make_node("Add", ["r", "s"], ["out"], name="add"),
    ], ["x"])


def verdict(report, node, ep):
    n = next(n for n in report["nodes"] if n["name"] == node)
    return n["placed_ep"], next(v for v in n["verdicts"] if v["ep"] == ep)


class PluginTest(TempDirTest):
    def setUp(self):
        super().setUp()
        rng = np.random.default_rng(1)
        self.x = self.tmp / "x.npy"
        self.y = self.tmp / "y.npy"
        np.save(self.x, rng.uniform(-2, 2, (2, 3)).astype(np.float32))
        np.save(self.y, rng.uniform(-2, 2, (2, 3)).astype(np.float32))

    def run_model(self, model, out_dir, *args):
        result = nxrt("run", model, "--input", f"x={self.x}", "--input", f"y={self.y}", "--output-dir", out_dir, "-q", *args)
        self.assertExit(result, 0)
        return np.load(Path(out_dir) / "out.npy")

    def explain(self, model, *args):
        result = nxrt("explain-claims", model, "--format", "json", *args)
        self.assertExit(result, 0)
        return json.loads(result[1])


class Loading(PluginTest):
    def test_list_eps_names_the_plugin(self):
        rc, out, err = nxrt("list-eps", "--plugin", GOOD)
        self.assertExit((rc, out, err), 0)
        self.assertIn("test_plugin", out)
        self.assertRegex(out, rf"ONNX Runtime plugin EPs:\n  test_plugin: nxrt tests from {GOOD}, ORT API 24, "
                              r"devices: cpu \(.+\)\n")
        rc, out, err = nxrt("list-eps", "--json", "--plugin", f"{GOOD}:my_registration")
        entry = next(e for e in json.loads(out)["eps"] if e["name"] == "test_plugin")
        self.assertEqual((entry["library"], entry["ort_api_version"], entry["version"], entry["vendor"]),
                         (str(GOOD), 24, "0.3.1", "nxrt tests"))
        self.assertEqual(entry["context_sources"], ["test_plugin"])

    def test_plugin_path_variable(self):
        env = dict(os.environ, NXRT_PLUGIN_PATH=f"{GOOD}:")
        p = subprocess.run([NXRT, "list-eps"], capture_output=True, text=True, env=env, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("test_plugin: nxrt tests", p.stdout)

    def test_not_loadable(self):
        rc, out, err = nxrt("list-eps", "--plugin", self.tmp / "absent.so")
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: cannot load plugin library '{self.tmp / 'absent.so'}'\n", err)
        self.assertIn("cannot open shared object file: No such file or directory", err)

    def test_missing_symbol(self):
        rc, out, err = nxrt("list-eps", "--plugin", variant("missing_symbol"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: '{variant('missing_symbol')}' is not an ONNX Runtime plugin EP library: it does not export "
                      "'ReleaseEpFactory'\n", err)
        self.assertIn("  how to fix: a plugin EP library exports CreateEpFactories and ReleaseEpFactory", err)

    def test_too_new_api_version(self):
        rc, out, err = nxrt("list-eps", "--plugin", variant("too_new"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: plugin '{variant('too_new')}' needs ORT API 25, this host provides up to 24\n", err)
        self.assertIn("  how to fix: rebuild the plugin against ORT 1.24 headers (ORT_API_VERSION 24)", err)

    def test_no_devices(self):
        rc, out, err = nxrt("explain-claims", chain(self.tmp / "m.onnx"), "--plugin", variant("no_devices"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: the test_plugin EP ('{variant('no_devices')}') supports none of this host's devices\n", err)
        self.assertRegex(err, r"  why: GetSupportedDevices returned 0 of the 1 device offered: cpu \(.+\)\n")

    def test_no_factories(self):
        rc, out, err = nxrt("list-eps", "--plugin", variant("no_factories"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: plugin '{variant('no_factories')}' created no EP factories\n"
                      "  why: CreateEpFactories succeeded but returned 0 factories\n", err)

    def test_create_ep_error(self):
        rc, out, err = nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", variant("fail_create_ep"), "-q")
        self.assertExit((rc, out, err), 1)
        self.assertIn(f"error: CreateEp of the test_plugin EP ('{variant('fail_create_ep')}') failed\n"
                      "  why: test_plugin: CreateEp failed on purpose (built with NXRT_TEST_EP_FAIL_CREATE_EP)\n", err)
        rc, out, err = nxrt("list-eps", "--plugin", variant("fail_create_ep"))
        self.assertExit((rc, out, err), 0)
        self.assertIn("test_plugin  unavailable: CreateEp of the test_plugin EP", out)

    def test_null_function_pointer(self):
        """Since API 24 an EP with a kernel registry may leave Compile NULL, and then fuses nothing."""
        rc, out, err = nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", variant("null_compile"), "-q")
        self.assertExit((rc, out, err), 3)
        self.assertIn("error: the test_plugin EP's GetCapability returned a group of nodes to fuse on graph 'm', and the "
                      "EP leaves OrtEp::Compile NULL\n  why: fused groups run through Compile; this EP only has kernels "
                      "(OrtEp::GetKernelRegistry)\n", err)
        self.assertIn(f"  while using the test_plugin EP of plugin library '{variant('null_compile')}'", err)

    def test_null_create_data_transfer(self):
        """ONNX Runtime calls CreateDataTransfer of every factory of API 23 or newer; nxrt refuses a NULL as well."""
        rc, out, err = nxrt("list-eps", "--plugin", variant("null_data_transfer"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: EP factory 0 of plugin '{variant('null_data_transfer')}' leaves "
                      "OrtEpFactory::CreateDataTransfer NULL\n  why: it declares ORT API 24, and ONNX Runtime calls "
                      "CreateDataTransfer of every factory of API 23 or newer when it registers the library (a NULL "
                      "crashes it)\n", err)

    def test_plugin_flag_names_a_library(self):
        rc, out, err = nxrt("list-eps", "--plugin", ":name")
        self.assertExit((rc, out, err), 2)
        self.assertIn("error: --plugin ':name' names no library\n", err)


class Claims(PluginTest):
    def test_fused_group_single_node_and_declines(self):
        model = chain(self.tmp / "m.onnx")
        self.assertEqual(self.explain(model, "--plugin", GOOD)["eps"][0], "test_plugin", "plugin EPs go first by default")
        report = self.explain(model, "--plugin", GOOD, "--ep", "test_plugin,cpu")
        parts = {p["name"]: p["nodes"] for p in report["partitions"]}
        self.assertEqual(parts["test_plugin_0"], ["add", "relu", "mul"])
        self.assertEqual(parts["test_plugin_1"], ["neg"])
        placed, v = verdict(report, "sig", "test_plugin")
        self.assertEqual(placed, "cpu")
        self.assertEqual(v["reason"], "not returned by test_plugin's GetCapability (the plugin logged: test_plugin: "
                                      "'sig' (Sigmoid) is not one of Add, Mul, Relu, Neg on float tensors)")

    def test_non_convex_group_rejected(self):
        report = self.explain(not_convex(self.tmp / "m.onnx"), "--plugin", GOOD, "--ep", "test_plugin,cpu")
        placed, v = verdict(report, "relu", "test_plugin")
        self.assertEqual(placed, "cpu")
        self.assertEqual(v["reason"], "test_plugin's group ['relu', 'add'] was rejected: it is not convex (the path "
                                      "'relu' -> 'sig' -> 'add' leaves the group and comes back), so it cannot run as "
                                      "one fused node")

    def test_group_with_node_of_higher_priority_ep_rejected(self):
        report = self.explain(chain(self.tmp / "m.onnx"), "--plugin", GOOD, "--ep", "cpu,test_plugin")
        placed, v = verdict(report, "relu", "test_plugin")
        self.assertEqual(placed, "cpu")
        self.assertEqual(v["reason"], "test_plugin's group ['add', 'relu', 'mul'] was rejected: 'add' is owned by the "
                                      "higher-priority cpu EP; put test_plugin first in --ep to give it the whole group")


class Running(PluginTest):
    def test_outputs_match_cpu(self):
        model = chain(self.tmp / "m.onnx")
        plugin = self.run_model(model, self.tmp / "plugin", "--plugin", GOOD)
        cpu = self.run_model(model, self.tmp / "cpu", "--ep", "cpu")
        np.testing.assert_allclose(plugin, cpu, rtol=1e-6)
        self.assertExit(nxrt("run", model, "--plugin", GOOD, "--compare-ep", "cpu", "-q"), 0)

    def test_bench(self):
        self.assertExit(nxrt("bench", chain(self.tmp / "m.onnx"), "--plugin", GOOD, "-n", "3", "--warmup", "1"), 0)

    def test_epcontext_round_trip(self):
        model = chain(self.tmp / "m.onnx")
        ctx = self.tmp / "m_ctx.onnx"
        self.assertExit(nxrt("compile-epcontext", model, "-o", ctx, "--plugin", GOOD, "--ep", "test_plugin,cpu"), 0)
        nodes = onnx.load(str(ctx)).graph.node
        sources = [attribute(n, "source").s if n.op_type == "EPContext" else n.op_type for n in nodes]
        self.assertEqual(sources, [b"test_plugin", "Neg", b"nxrt.cpu"], "a kernel-registry node stays a node, as in ORT")
        meta = {p.key: p.value for p in onnx.load(str(ctx)).metadata_props}
        self.assertEqual(meta["ep_compatibility_info.test_plugin"], "test_plugin 0.3.1 graph=m",
                         "GetCompiledModelCompatibilityInfo is handed the model's graph")
        side_file = next(a.s for a in nodes[0].attribute if a.name == "ep_cache_context").decode()
        self.assertEqual(side_file, "m_ctx_test_plugin.bin", "one partition of the EP becomes a context: no index")
        payload = (self.tmp / side_file).read_bytes()
        self.assertTrue(payload.startswith(b"nxrt-test-ep 1\nconst half 1 1 1 0.5\nstep Add a 2 x half\n"), payload)
        restored = self.run_model(ctx, self.tmp / "ctx", "--plugin", GOOD, "--ep", "test_plugin,cpu")
        original = self.run_model(model, self.tmp / "orig", "--ep", "cpu")
        np.testing.assert_allclose(restored, original, rtol=1e-6)
        rc, out, err = nxrt("run", ctx, "--ep", "cpu", "-q")
        self.assertNotEqual(rc, 0)
        self.assertIn("test_plugin", err)

    def test_embedded_payloads(self):
        model = chain(self.tmp / "m.onnx")
        ctx = self.tmp / "m_ctx.onnx"
        self.assertExit(nxrt("compile-epcontext", model, "-o", ctx, "--plugin", GOOD, "--ep", "test_plugin,cpu", "--embed"), 0)
        fused, neg = onnx.load(str(ctx)).graph.node[:2]
        self.assertTrue(attribute(fused, "ep_cache_context").s.startswith(b"nxrt-test-ep 1\nconst half 1 1 1 0.5\n"))
        self.assertEqual((neg.op_type, neg.name), ("Neg", "neg"))
        restored = self.run_model(ctx, self.tmp / "ctx", "--plugin", GOOD, "--ep", "test_plugin,cpu")
        original = self.run_model(model, self.tmp / "orig", "--ep", "cpu")
        np.testing.assert_allclose(restored, original, rtol=1e-6)

    def test_single_node_claim_runs_with_the_plugins_kernel(self):
        """AddSingleNode: the host finds the EP's registered Neg kernel, creates it and runs its Compute."""
        model = all_plugin(self.tmp / "p.onnx")
        report = self.explain(model, "--plugin", GOOD, "--ep", "test_plugin")
        self.assertEqual({p["name"]: p["nodes"] for p in report["partitions"]},
                         {"test_plugin_0": ["add", "relu", "mul"], "test_plugin_1": ["neg"]})
        self.assertEqual(verdict(report, "neg", "test_plugin")[0], "test_plugin")
        plugin = self.run_model(model, self.tmp / "plugin", "--plugin", GOOD, "--ep", "test_plugin")
        np.testing.assert_allclose(plugin, self.run_model(model, self.tmp / "cpu", "--ep", "cpu"), rtol=1e-6)
        self.assertExit(nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", GOOD, "--compare-ep", "cpu", "-q"), 0)

    def test_kernel_of_another_version_declined(self):
        report = self.explain(chain(self.tmp / "m.onnx"), "--plugin", variant("kernel_wrong_version"), "--ep", "test_plugin,cpu")
        placed, v = verdict(report, "neg", "test_plugin")
        self.assertEqual(placed, "cpu")
        self.assertEqual(v["reason"], "test_plugin claimed it with EpGraphSupportInfo_AddSingleNode, which runs the node "
                                      "with a kernel from the EP's kernel registry, but no kernel in its kernel registry "
                                      "runs ai.onnx::Neg version 13: ai.onnx::Neg 6-12 on test_plugin [T: float] (version "
                                      "13 is outside 6-12); ONNX Runtime fails such a session with 'Failed to find kernel'")
        model = chain(self.tmp / "m.onnx")
        declined = self.run_model(model, self.tmp / "declined", "--plugin", variant("kernel_wrong_version"))
        np.testing.assert_allclose(declined, self.run_model(model, self.tmp / "cpu", "--ep", "cpu"), rtol=1e-6)

    def test_single_node_claim_without_kernel_registry_declined(self):
        report = self.explain(chain(self.tmp / "m.onnx"), "--plugin", variant("no_kernel_registry"), "--ep", "test_plugin,cpu")
        placed, v = verdict(report, "neg", "test_plugin")
        self.assertEqual(placed, "cpu")
        self.assertIn("but this EP has no kernel registry (OrtEp::GetKernelRegistry is NULL), so no kernel runs it; ONNX "
                      "Runtime fails such a session with 'Failed to find kernel'", v["reason"])

    def test_failing_kernel_compute(self):
        rc, out, err = nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", variant("kernel_fail_compute"), "-q")
        self.assertExit((rc, out, err), 1)
        self.assertIn("error: the test_plugin EP's kernel Compute (OrtKernelImpl) failed for 'neg'\n"
                      "  why: test_plugin: the Neg kernel of 'neg' failed on purpose (built with "
                      "NXRT_TEST_EP_KERNEL_FAIL_COMPUTE)\n", err)
        self.assertIn(f"  while using the test_plugin EP of plugin library '{variant('kernel_fail_compute')}'", err)

    def test_failing_get_capability(self):
        model = chain(self.tmp / "m.onnx")
        for command in ("explain-claims", "run"):
            rc, out, err = nxrt(command, model, "--plugin", variant("fail_capability"))
            self.assertExit((rc, out, err), 1, command)
            self.assertIn("error: the test_plugin EP's GetCapability failed on graph 'm'\n"
                          "  why: test_plugin: GetCapability failed on purpose (built with NXRT_TEST_EP_FAIL_CAPABILITY)\n",
                          err)
            self.assertIn(f"  while claiming the nodes of '{model}'\n", err)

    def test_node_in_two_groups(self):
        model = chain(self.tmp / "m.onnx")
        for command in ("explain-claims", "run"):
            rc, out, err = nxrt(command, model, "--plugin", variant("duplicate_claim"))
            self.assertExit((rc, out, err), 1, command)
            self.assertIn("error: the test_plugin EP's GetCapability returned node 'mul' in two groups (2 and 3) on "
                          "graph 'm'\n  why: each node is compiled into exactly one fused node, so it may be in one "
                          "group only\n", err)

    def test_failing_compile(self):
        rc, out, err = nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", variant("fail_compile"), "-q")
        self.assertExit((rc, out, err), 1)
        self.assertIn("error: the test_plugin EP's Compile failed for partition 'test_plugin_0'\n"
                      "  why: test_plugin: Compile refused the graph (built with NXRT_TEST_EP_FAIL_COMPILE)\n", err)

    def test_failing_compute(self):
        rc, out, err = nxrt("run", chain(self.tmp / "m.onnx"), "--plugin", variant("fail_compute"), "-q")
        self.assertExit((rc, out, err), 1)
        self.assertIn("error: the test_plugin EP's Compute failed for 'test_plugin_0'\n"
                      "  why: test_plugin: Compute failed on purpose (built with NXRT_TEST_EP_FAIL_COMPUTE)\n", err)


@unittest.skipUnless(ORT_LIBRARY.is_file(), f"the ONNX Runtime 1.30 peer is not at {ORT_LIBRARY}: run "
                     "scripts/plugin-vs-ort.sh, which installs it with npm (CI has no peer)")
class ThroughOnnxRuntime(PluginTest):
    """The test plugin inside the real ONNX Runtime, a second host for the ABI nxrt declares."""

    def ort(self, plugin, model, *args, ok=True):
        p = subprocess.run([ORT_HOST_CHECK, ORT_LIBRARY, plugin, model, "--input", f"x={self.x}", "--input",
                            f"y={self.y}", *map(str, args)], capture_output=True, text=True, timeout=120)
        if os.environ.get("NXRT_SHOW_ORT_STEPS"):  # scripts/plugin-vs-ort.sh shows what ORT did, step by step
            print(f"\n$ {' '.join(map(str, p.args))}\n{p.stdout}", end="")
        self.assertGreaterEqual(p.returncode, 0, f"ort_host_check died from a signal\n{p.stdout}\n{p.stderr}")
        if ok:
            self.assertEqual(p.returncode, 0, f"{p.stdout}\n{p.stderr}")
            self.assertIn("PASS: ONNX Runtime loaded, ran and released the plugin", p.stdout)
        return p.stdout

    def test_ort_runs_the_plugin_like_nxrt(self):
        model = chain(self.tmp / "m.onnx")
        out = self.ort(GOOD, model, "--output-dir", self.tmp / "ort")
        self.assertIn("ok: ONNX Runtime 1.30.0 serves OrtApi version 24\n", out)
        self.assertRegex(out, r"device \d+: EP 'test_plugin' from 'nxrt tests' on a cpu device")
        self.assertIn("ok: UnregisterExecutionProviderLibrary (ReleaseEpFactory)\n", out)
        expected = self.run_model(model, self.tmp / "cpu", "--ep", "cpu")
        np.testing.assert_allclose(np.load(self.tmp / "ort/out.npy"), expected, rtol=1e-6)
        np.testing.assert_allclose(self.run_model(model, self.tmp / "nxrt", "--plugin", GOOD), expected, rtol=1e-6)

    def test_ort_runs_only_on_the_plugin_when_it_claims_everything(self):
        self.ort(GOOD, all_plugin(self.tmp / "p.onnx"), "--config", "session.disable_cpu_ep_fallback=1")
        out = self.ort(GOOD, chain(self.tmp / "m.onnx"), "--config", "session.disable_cpu_ep_fallback=1", ok=False)
        self.assertIn("assigned to the default CPU EP, but fallback to CPU EP has been explicitly disabled", out,
                      "Sigmoid needs the cpu EP ORT was denied")

    def test_nxrt_runs_the_epcontext_model_ort_writes(self):
        model, ctx = chain(self.tmp / "m.onnx"), self.tmp / "m_ort_ctx.onnx"
        self.ort(GOOD, model, "--config", "ep.context_enable=1", "--config", f"ep.context_file_path={ctx}")
        nodes = onnx.load(str(ctx)).graph.node
        self.assertEqual([(n.op_type, attribute(n, "source").s if n.op_type == "EPContext" else b"") for n in nodes],
                         [("EPContext", b"test_plugin"), ("Neg", b""), ("Sigmoid", b"")],
                         "ORT keeps the node its kernel registry runs as a node")
        restored = self.run_model(ctx, self.tmp / "ctx", "--plugin", GOOD, "--ep", "test_plugin,cpu")
        np.testing.assert_allclose(restored, self.run_model(model, self.tmp / "cpu", "--ep", "cpu"), rtol=1e-6)

    def test_ort_runs_the_epcontext_models_nxrt_writes(self):
        """Inline payloads, and side files that ORT leaves to the plugin to read (embed_mode=0)."""
        model = all_plugin(self.tmp / "p.onnx")
        expected = self.run_model(model, self.tmp / "cpu", "--ep", "cpu")
        for placement in ("--embed", "--external"):
            ctx = self.tmp / f"p_ctx{placement}.onnx"
            self.assertExit(nxrt("compile-epcontext", model, "-o", ctx, "--plugin", GOOD, "--ep", "test_plugin", placement), 0)
            embed_mode = attribute(onnx.load(str(ctx)).graph.node[0], "embed_mode").i
            self.assertEqual(embed_mode, 1 if placement == "--embed" else 0)
            self.ort(GOOD, ctx, "--config", "session.disable_cpu_ep_fallback=1", "--output-dir", self.tmp / placement)
            np.testing.assert_allclose(np.load(self.tmp / placement / "out.npy"), expected, rtol=1e-6, err_msg=placement)

    def test_ort_runs_the_plugins_kernel_only_for_a_matching_version(self):
        """ORT finds the Neg-13 kernel nxrt finds (the fallback-free run proves Neg ran on the plugin), and fails the
        session where nxrt declines the node: the kernel of versions 6-12."""
        self.ort(GOOD, all_plugin(self.tmp / "p.onnx"), "--config", "session.disable_cpu_ep_fallback=1")
        out = self.ort(variant("kernel_wrong_version"), chain(self.tmp / "m.onnx"), ok=False)
        self.assertIn("FAIL: CreateSession (CreateEp, GetCapability, Compile): ORT says (code 9) Failed to find kernel "
                      "for Neg(13) (node:'neg' ep:'test_plugin')", out)

    def test_ort_reports_the_kernels_compute_error(self):
        out = self.ort(variant("kernel_fail_compute"), chain(self.tmp / "m.onnx"), ok=False)
        self.assertRegex(out, r"FAIL: Run: ORT says \(code \d+\) .*test_plugin: the Neg kernel of 'neg' failed on purpose")


if __name__ == "__main__":
    unittest.main()
