"""CLI tests of plugin faults the host contains (issue 6): a plugin EP that returns NULL where a
value belongs, claims nodes inconsistently, returns objects the host did not give it, calls host
functions with NULL or wrong-kind arguments, or computes outputs the graph does not describe.
Each broken variant of tests/plugins/test_ep.c gets an error that names the library, the EP,
the function and what was wrong, the documented exit code, and no signal."""
import unittest

from test_cli import nxrt
from test_plugins import PluginTest, chain, variant


class PluginFaults(PluginTest):
    def fails(self, command, name, code, *args):
        """Runs `command` on the chain model with variant `name`; returns stderr after checking the
        exit code (assertExit also fails on a signal) and that the library is named."""
        model = chain(self.tmp / "m.onnx")
        extra = ("--input", f"x={self.x}", "--input", f"y={self.y}", "-q") if command == "run" else ()
        rc, out, err = nxrt(command, model, "--plugin", variant(name), *extra, *args)
        self.assertExit((rc, out, err), code, name)
        self.assertIn(str(variant(name)), err)
        return err

    def test_factory_name_null(self):
        rc, out, err = nxrt("list-eps", "--plugin", variant("null_name"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: OrtEpFactory::GetName of EP factory 0 of plugin '{variant('null_name')}' returned NULL\n", err)

    def test_device_not_made_by_create_ep_device(self):
        rc, out, err = nxrt("list-eps", "--plugin", variant("foreign_device"))
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"error: GetSupportedDevices of the test_plugin EP ('{variant('foreign_device')}') returned "
                      "ep_devices[0] that is not a device CreateEpDevice made\n", err)

    def test_create_ep_null(self):
        err = self.fails("run", "null_ep", 1)
        self.assertIn(f"error: CreateEp of the test_plugin EP ('{variant('null_ep')}') returned no EP\n"
                      "  why: it reported success but left the OrtEp pointer NULL\n", err)

    def test_claim_of_something_not_a_node(self):
        for command in ("explain-claims", "run", "compile-epcontext"):
            args = ("-o", self.tmp / "ctx.onnx") if command == "compile-epcontext" else ()
            err = self.fails(command, "not_a_node", 1, *args)
            self.assertIn("error: the test_plugin EP's GetCapability failed on graph 'm'\n"
                          "  why: OrtEpApi::EpGraphSupportInfo_AddNodesToFuse: nodes[0] is not a node of graph 'm'\n", err)
            self.assertIn(f"  while using the test_plugin EP of plugin library '{variant('not_a_node')}'\n", err)

    def test_empty_group(self):
        err = self.fails("explain-claims", "empty_group", 1)
        self.assertIn("  why: OrtEpApi::EpGraphSupportInfo_AddNodesToFuse: num_nodes is 0 (an empty group)\n", err)

    def test_host_functions_refuse_null_and_wrong_kind_arguments(self):
        err = self.fails("explain-claims", "api_misuse", 1)
        self.assertIn("  why: test_plugin: the host answered: "
                      "OrtApi::Graph_GetNumNodes: argument 'graph' is NULL; "
                      "OrtApi::Graph_GetNumNodes: argument 'n' is NULL; "
                      "OrtApi::Node_GetName: argument 'node' is an OrtGraph, not an OrtNode; "
                      "OrtApi::Graph_GetNodes: the array is NULL; "
                      "OrtApi::KernelContext_GetInputCount: argument 'context' is an OrtGraph, not an OrtKernelContext; "
                      "OrtApi::Graph_GetParentNode: argument 'graph' is not an OrtGraph the host gave out\n", err)

    def test_compile_without_compute_info(self):
        err = self.fails("run", "null_compute_info", 1)
        self.assertIn("error: the test_plugin EP's Compile returned no OrtNodeComputeInfo for partition 'test_plugin_0'\n",
                      err)

    def test_graph_node_returned_as_epcontext_node(self):
        err = self.fails("compile-epcontext", "graph_node_as_context", 1, "-o", self.tmp / "ctx.onnx",
                         "--ep", "test_plugin,cpu")
        self.assertIn("error: the test_plugin EP's Compile returned an EPContext node for partition 'test_plugin_0' that "
                      "it did not make with OrtModelEditorApi::CreateNode\n", err)
        self.assertFalse((self.tmp / "ctx.onnx").exists())

    def test_epcontext_node_without_payload(self):
        err = self.fails("compile-epcontext", "context_no_payload", 1, "-o", self.tmp / "ctx.onnx",
                         "--ep", "test_plugin,cpu")
        self.assertIn("error: the test_plugin EP's EPContext node 'test_plugin_0' for partition 'test_plugin_0' has no "
                      "ep_cache_context attribute\n", err)
        self.assertFalse((self.tmp / "ctx.onnx").exists())

    def test_compute_leaves_an_output_unallocated(self):
        err = self.fails("run", "no_output", 1)
        self.assertIn("error: the test_plugin EP's Compute for 'test_plugin_0' produced no value for output 'm'\n"
                      "  why: Compute returned success without a successful KernelContext_GetOutput for it\n", err)

    def test_compute_output_of_the_wrong_shape(self):
        for command in ("run", "bench"):
            err = self.fails(command, "wrong_shape", 1)
            self.assertIn("  why: Compute returned success without a successful KernelContext_GetOutput for it; the host "
                          "refused: OrtApi::KernelContext_GetOutput: shape [3,2] for output 'm' disagrees with the "
                          "graph's [2,3]\n", err)


if __name__ == "__main__":
    unittest.main()
