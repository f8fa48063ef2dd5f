"""CLI tests for IR 9-13 models and opsets 18-25: the op-version cases of testdata/opset18plus
(expected outputs from ONNX Runtime 1.30, scripts/gen-opset-tests.py) run with
`nxrt run --test-dir`, and the declines for versions nxrt does not implement or know."""
import json
import shutil
import unittest
from pathlib import Path

import onnx
from onnx import TensorProto, helper

from test_cli import DATA, TempDirTest, nxrt

CASES = DATA / "opset18plus"


def save_model(path, nodes, opset, ir_version=10, outputs=("y",)):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 2])
    graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info(o) for o in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    onnx.save(model, str(path))
    return path


class OpVersionCases(TempDirTest):
    def test_every_case_matches_onnx_runtime(self):
        cases = sorted(p for p in CASES.iterdir() if (p / "model.onnx").exists())
        self.assertGreaterEqual(len(cases), 50)
        for ep in ("cpu", "onednn,cpu"):
            # All cases in one process (a line of JSON each), as scripts/conformance.sh runs them.
            rc, out, err = nxrt("run", "--ep", ep, "-q", "--json", "--test-dir", *cases)
            results = {Path(r["test_dir"]).name: r for r in map(json.loads, out.splitlines())}
            self.assertEqual(sorted(results), [c.name for c in cases], err)
            for case in cases:
                with self.subTest(case=case.name, ep=ep):
                    result = results[case.name]
                    self.assertEqual(result["status"], "pass", json.dumps(result, indent=1))
            self.assertEqual(rc, 0, err)


class Loading(TempDirTest):
    def test_shapes_past_libonnx_show_unknown_until_run(self):
        rc, out, err = nxrt("explain-claims", CASES / "chain_21_reduce_split_relu" / "model.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        self.assertIn("(IR 10, ai.onnx 21; 4 nodes)", out)
        # ReduceSum-13's rule still applies at opset 21; Split-18 with num_outputs has none.
        self.assertRegex(out, r"ReduceSum_0 +ReduceSum-21 +cpu +cpu_0 +float\[2,1,4\] ")
        self.assertRegex(out, r"Split_1 +Split-21 .*float\[\.\.\.\] \(unknown until run\), float\[\.\.\.\] "
                              r"\(unknown until run\)")

    def test_dims_shape_inference_could_not_size_print_as_question_marks(self):
        split = CASES / "stringsplit_20_delimiter" / "model.onnx"
        for fmt in ("table", "md", "json"):
            with self.subTest(format=fmt):
                rc, out, err = nxrt("explain-claims", split, "--ep", "cpu", "--format", fmt)
                self.assertExit((rc, out, err), 0)
                self.assertIn("string[2,3,?] (unknown until run), int64[2,3]", out)
                self.assertNotIn("unk__", out)
        # A model saved after ONNX shape inference carries its "unk__N" names in value_info.
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 4])
        t = helper.make_tensor_value_info("t", TensorProto.INT64, [2, "unk__3"])
        graph = helper.make_graph([helper.make_node("NonZero", ["x"], ["t"]), helper.make_node("Neg", ["t"], ["y"])],
                                  "g", [x], [helper.make_empty_tensor_value_info("y")], value_info=[t])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        model.ir_version = 8
        onnx.save(model, str(self.tmp / "unk.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "unk.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"NonZero_0 +NonZero-17 +cpu +cpu_0 +int64\[2,\?\] \(unknown until run\)")
        self.assertNotIn("unk__", out)

    def test_future_opset_and_ir_load_and_are_declined_with_the_known_version(self):
        model = save_model(self.tmp / "relu26.onnx", [helper.make_node("Relu", ["x"], ["y"])], 26, ir_version=14)
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("(IR 14, ai.onnx 26; 1 node)", out)
        self.assertIn("declined: Relu: the model imports ai.onnx opset 26, newer than the opsets nxrt knows (up to "
                      "25); the cpu EP implements Relu-14 (opsets 1-25); export with opset 25 or lower", out)
        self.assertIn("? (unknown until run)", out)
        self.assertExit(nxrt("run", model, "--ep", "cpu"), 4)

    def test_inputs_and_weights_of_the_complex_types_are_refused_naming_the_type(self):
        for name, code, made in (("complex64", 14, "14 (COMPLEX64)"), ("complex128", 15, "15 (COMPLEX128)")):
            with self.subTest(type=name):
                weight = onnx.TensorProto(name="w", data_type=code, dims=[1], raw_data=bytes(8 if code == 14 else 16))
                as_input = name == "complex64"
                x = helper.make_tensor_value_info("x", code if as_input else TensorProto.FLOAT, [1])
                nodes = [helper.make_node("Identity", ["x" if as_input else "w"], ["y"])]
                graph = helper.make_graph(nodes, "g", [x], [helper.make_empty_tensor_value_info("y")],
                                          [] if as_input else [weight])
                model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
                model.ir_version = 13
                onnx.save(model, str(self.tmp / f"{name}.onnx"))
                rc, out, err = nxrt("explain-claims", self.tmp / f"{name}.onnx")
                self.assertExit((rc, out, err), 3)
                self.assertIn(f"element type {made}", err)
                self.assertIn("not supported", err)

    def test_int2_inputs_read_from_npy_int8_within_their_range(self):
        # An int2 graph input comes from an int8 .npy file; Cast-25 widens it to int32.
        import numpy as np
        x = helper.make_tensor_value_info("x", 26, [4])
        graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)], "g", [x],
                                  [helper.make_tensor_value_info("y", TensorProto.INT32, [4])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
        model.ir_version = 13
        onnx.save(model, str(self.tmp / "int2.onnx"))
        np.save(self.tmp / "x.npy", np.array([-2, -1, 0, 1], np.int8))
        rc, out, err = nxrt("run", self.tmp / "int2.onnx", "--input", f"x={self.tmp / 'x.npy'}",
                            "--output-dir", self.tmp / "out")
        self.assertExit((rc, out, err), 0)
        self.assertEqual(np.load(self.tmp / "out" / "y.npy").tolist(), [-2, -1, 0, 1])
        np.save(self.tmp / "x.npy", np.array([-2, 2, 0, 1], np.int8))
        rc, out, err = nxrt("run", self.tmp / "int2.onnx", "--input", f"x={self.tmp / 'x.npy'}")
        self.assertExit((rc, out, err), 3)
        self.assertIn("element 1 is 2, outside the range of int2 [-2, 1]", err)
        self.assertIn("the model declares a 2-bit input; nxrt reads it from 8-bit elements", err)

    def test_a_deformconv_offset_that_does_not_fit_is_declined_while_the_mask_shape_is_unknown(self):
        f = TensorProto.FLOAT
        inputs = [helper.make_tensor_value_info("x", f, [1, 1, 4, 4]), helper.make_tensor_value_info("w", f, [2, 1, 2, 2]),
                  helper.make_tensor_value_info("offset", f, [1, 8, 4, 4]),
                  helper.make_tensor_value_info("mask", f, ["n", "taps", "h", "w"])]
        node = helper.make_node("DeformConv", ["x", "w", "offset", "", "mask"], ["y"])
        graph = helper.make_graph([node], "g", inputs, [helper.make_empty_tensor_value_info("y")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
        model.ir_version = 9
        onnx.save(model, str(self.tmp / "deform.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "deform.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("declined: DeformConv: offset has shape [1,8,4,4]; it must be [1,8,3,3]", out)

    def test_an_attribute_that_became_an_input_is_declined(self):
        model = save_model(self.tmp / "dft20.onnx", [helper.make_node("DFT", ["x"], ["y"], axis=1)], 20)
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("declined: DFT: opset 20 takes the axis as input 2, but the node has an axis attribute; "
                      "re-export the model for this opset", out)

    def test_an_op_new_in_opset_20_that_no_ep_implements_is_declined(self):
        model = save_model(self.tmp / "decoder20.onnx", [helper.make_node("ImageDecoder", ["x"], ["y"])], 20)
        rc, out, err = nxrt("explain-claims", model, "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("declined: ImageDecoder: ai.onnx::ImageDecoder (opset 20) is not implemented by the cpu EP", out)

    def test_a_regex_std_regex_cannot_run_as_re2_is_declined_naming_the_construct(self):
        node = helper.make_node("RegexFullMatch", ["s"], ["y"], pattern="(?i)caf\\pL")
        s = helper.make_tensor_value_info("s", TensorProto.STRING, [2])
        graph = helper.make_graph([node], "g", [s], [helper.make_empty_tensor_value_info("y")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 9
        onnx.save(model, str(self.tmp / "regex.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "regex.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("declined: RegexFullMatch: the cpu EP runs RE2 patterns with std::regex and cannot run "
                      "'(?i)caf\\pL': '(?i)' at offset 0: inline flags (i, m, s, U), which std::regex cannot scope "
                      "to part of a pattern; rewrite the pattern without that construct", out)

    def test_the_transformer_ops_of_opset_23_are_claimed_with_inferred_shapes(self):
        np = __import__("numpy")
        nodes = [helper.make_node("RMSNormalization", ["x", "scale"], ["n"]),
                 helper.make_node("RotaryEmbedding", ["n", "cos", "sin", "ids"], ["r"], num_heads=2),
                 helper.make_node("Attention", ["r", "r", "n"], ["y", "present_k", "", "qk"], q_num_heads=2,
                                  kv_num_heads=2, qk_matmul_output_mode=3)]
        inits = [onnx.numpy_helper.from_array(np.ones((8,), "float32"), "scale"),
                 onnx.numpy_helper.from_array(np.ones((16, 2), "float32"), "cos"),
                 onnx.numpy_helper.from_array(np.zeros((16, 2), "float32"), "sin")]
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 5, 8])
        ids = helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", 5])
        outputs = [helper.make_empty_tensor_value_info(o) for o in ("y", "present_k", "qk")]
        model = helper.make_model(helper.make_graph(nodes, "g", [x, ids], outputs, inits),
                                  opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 11
        onnx.save(model, str(self.tmp / "llm23.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "llm23.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 0)
        self.assertRegex(out, r"RMSNormalization_0 +RMSNormalization-23 +cpu +cpu_0 +float\[batch,5,8\] ")
        self.assertRegex(out, r"RotaryEmbedding_1 +RotaryEmbedding-23 +cpu +cpu_0 +float\[batch,5,8\] ")
        # Y [batch, seq, heads * v_head_size], present_key [batch, kv_heads, total_seq, head_size] and the
        # [batch, heads, seq, total_seq] scores.
        self.assertRegex(out, r"Attention_2 +Attention-23 +cpu +cpu_0 +float\[batch,5,8\] \(unknown until run\), "
                              r"float\[batch,2,5,4\] \(unknown until run\), float\[batch,2,5,5\] ")
        self.assertIn("no EP declined any of these nodes", out)
    def test_quantize_23_attributes_the_cpu_ep_does_not_run_are_declined(self):
        scale = onnx.numpy_helper.from_array(__import__("numpy").array(0.5, "float32"), "scale")
        node = helper.make_node("DequantizeLinear", ["q", "scale"], ["y"], output_dtype=TensorProto.FLOAT16)
        q = helper.make_tensor_value_info("q", TensorProto.INT8, [4])
        graph = helper.make_graph([node], "g", [q], [helper.make_empty_tensor_value_info("y")], [scale])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 11
        onnx.save(model, str(self.tmp / "dq23.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "dq23.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("DequantizeLinear-23: output_dtype 10 (float16) is not supported by the cpu EP; it outputs "
                      "float, the type of its scales (omit output_dtype or set it to 1)", out)

    def test_cubic_grid_sample_on_a_volume_is_declined_naming_the_opset(self):
        node = helper.make_node("GridSample", ["x", "grid"], ["y"], mode="cubic")
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3, 4, 5])
        grid = helper.make_tensor_value_info("grid", TensorProto.FLOAT, [1, 2, 2, 2, 3])
        graph = helper.make_graph([node], "g", [x, grid], [helper.make_empty_tensor_value_info("y")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
        model.ir_version = 9
        onnx.save(model, str(self.tmp / "gridsample20.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "gridsample20.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("declined: GridSample-20: mode 'cubic' is defined for 2-D spatial inputs (X of rank "
                      "4) only, X has rank 5; use linear or nearest", out)

    def test_blocked_quantization_with_a_scale_of_another_rank_is_declined(self):
        scale = onnx.numpy_helper.from_array(__import__("numpy").ones((4,), "float32"), "scale")
        node = helper.make_node("DequantizeLinear", ["q", "scale"], ["y"], block_size=2, axis=1)
        q = helper.make_tensor_value_info("q", TensorProto.INT8, [2, 8, 2])
        graph = helper.make_graph([node], "g", [q], [helper.make_empty_tensor_value_info("y")], [scale])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        model.ir_version = 10
        onnx.save(model, str(self.tmp / "dq21.onnx"))
        rc, out, err = nxrt("explain-claims", self.tmp / "dq21.onnx", "--ep", "cpu")
        self.assertExit((rc, out, err), 4)
        self.assertIn("DequantizeLinear: blocked quantization (block_size 2) needs a scale of x's rank 3, got rank 1", out)


class LowBitTypes(TempDirTest):
    """float8, int4 and uint4 values at the command's edges: printing, writing, reading."""

    def test_int4_and_float8_initializers_survive_an_epcontext_round_trip(self):
        for name in ("dequantizelinear_21_int4_raw_data", "constant_19_float8e4m3fn", "movement_21_int4"):
            with self.subTest(case=name):
                folder = self.tmp / name
                shutil.copytree(CASES / name / "test_data_set_0", folder / "test_data_set_0")
                self.assertExit(nxrt("compile-epcontext", CASES / name / "model.onnx", "-o", folder / "model.onnx",
                                     "--ep", "cpu", "--embed"), 0)
                self.assertExit(nxrt("run", "--test-dir", folder, "--ep", "cpu", "-q"), 0)

    def save(self, name, nodes, inputs, outputs, opset=21):
        graph = helper.make_graph(nodes, "g", inputs, [helper.make_empty_tensor_value_info(o) for o in outputs])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        onnx.save(model, str(self.tmp / name))
        return self.tmp / name

    def test_outputs_print_their_values_and_are_written_as_packed_tensor_protos(self):
        np = __import__("numpy")
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
        model = self.save("casts.onnx", [helper.make_node("Cast", ["x"], ["f8"], to=17),
                                         helper.make_node("Cast", ["x"], ["i4"], to=22)], [x], ["f8", "i4"])
        np.save(self.tmp / "x.npy", np.array([1000, -2.6, 0.3], np.float32))
        rc, out, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}", "--output-dir",
                            self.tmp / "out")
        self.assertExit((rc, out, err), 0)
        self.assertIn("f8: float8e4m3fn[3] min -2.5 max 448 mean 148.604: [448, -2.5, 0.3125]", out)
        self.assertIn("i4: int4[3] min -8 max 0 mean -3.66667: [-8, -3, 0]", out)
        f8 = onnx.load_tensor(str(self.tmp / "out" / "f8.pb"))
        self.assertEqual((f8.data_type, f8.raw_data), (17, bytes([0x7e, 0xc2, 0x2a])))
        i4 = onnx.load_tensor(str(self.tmp / "out" / "i4.pb"))
        self.assertEqual((i4.data_type, list(i4.dims), i4.raw_data), (22, [3], bytes([0xd8, 0x00])))

    def test_a_float8_input_cannot_come_from_npy(self):
        np = __import__("numpy")
        x = helper.make_tensor_value_info("x", 17, [2])
        model = self.save("f8in.onnx", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT)], [x], ["y"], 19)
        np.save(self.tmp / "x.npy", np.zeros(2, np.uint8))
        rc, out, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}")
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"file '{self.tmp / 'x.npy'}' cannot hold the float8e4m3fn the model expects", err)
        self.assertIn("NumPy has no float8e4m3fn type", err)
        pb = onnx.TensorProto(name="x", data_type=17, dims=[2], raw_data=bytes([0x38, 0xb8]))
        (self.tmp / "x.pb").write_bytes(pb.SerializeToString())
        rc, out, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'x.pb'}")
        self.assertExit((rc, out, err), 0)
        self.assertIn("y: float[2] min -1 max 1 mean 0: [1, -1]", out)

    def test_an_int4_input_reads_from_int8_npy_in_range(self):
        np = __import__("numpy")
        x = helper.make_tensor_value_info("x", 22, [3])  # INT4; Debian's ONNX 1.12 has no name for it
        model = self.save("i4in.onnx", [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.INT32)], [x], ["y"])
        np.save(self.tmp / "x.npy", np.array([-8, 7, 1], np.int8))
        rc, out, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'x.npy'}")
        self.assertExit((rc, out, err), 0)
        self.assertIn("y: int32[3] min -8 max 7 mean 0: [-8, 7, 1]", out)
        np.save(self.tmp / "big.npy", np.array([-8, 9, 1], np.int8))
        rc, out, err = nxrt("run", model, "--ep", "cpu", "--input", f"x={self.tmp / 'big.npy'}")
        self.assertExit((rc, out, err), 3)
        self.assertIn(f"file '{self.tmp / 'big.npy'}': element 1 is 9, outside the range of int4 [-8, 7]", err)


if __name__ == "__main__":
    unittest.main()
