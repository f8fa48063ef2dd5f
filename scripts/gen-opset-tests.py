#!/usr/bin/python3
"""Writes testdata/opset18plus: one ONNX backend-test folder per op version of opsets 18 to 23
(model.onnx, test_data_set_0/input_K.pb and output_K.pb), with expected outputs computed by
ONNX Runtime 1.30 (the npm package onnxruntime-node, installed into .cache/ort-node as
scripts/bench-vs-ort.sh does). Run it with /usr/bin/python3 (Debian's python3-onnx writes any
opset number; its checker is not used). The outputs are committed: tests never need ORT.

  scripts/gen-opset-tests.py [--only REGEX]
"""
import argparse
import base64
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import helper

REPO = Path(__file__).resolve().parent.parent
OUT = REPO / "testdata" / "opset18plus"
ORT_DIR = REPO / ".cache" / "ort-node"
ORT_VERSION = "1.30.0"
RUNNER = REPO / "scripts" / "gen-opset-tests-ort.cjs"

F = np.float32
I64 = np.int64
rng = np.random.default_rng(18)


def rand(*shape, lo=-2.0, hi=2.0):
    return rng.uniform(lo, hi, shape).astype(F)


def ints(*values):
    return np.array(values, I64)


def strs(shape, *values):
    return np.array(values, dtype=object).reshape(shape)


class Case:
    """One node (or a few) over graph inputs; `consts` become initializers."""

    def __init__(self, name, opset, nodes, inputs, outputs, consts=None):
        self.name, self.opset, self.inputs, self.outputs = name, opset, inputs, outputs
        self.nodes = nodes if isinstance(nodes, list) else [nodes]
        self.consts = consts or {}

    def model(self):
        ins = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
               for n, a in self.inputs.items()]
        outs = [helper.make_empty_tensor_value_info(n) for n in self.outputs]
        inits = [onnx.numpy_helper.from_array(a, n) for n, a in self.consts.items()]
        graph = helper.make_graph(self.nodes, self.name, ins, outs, initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", self.opset)],
                                  producer_name="gen-opset-tests")
        model.ir_version = 9 if self.opset < 21 else 10 if self.opset < 23 else 11
        return model


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


def one(name, opset, op, inputs, consts=None, outputs=("y",), **attrs):
    """A single-node case: inputs then consts, in the order given, feed the node."""
    names = list(inputs) + list(consts or {})
    return Case(name, opset, node(op, names, outputs, **attrs), inputs, list(outputs), consts)


def cases():
    x4 = rand(1, 2, 4, 4)
    yield one("reducemean_18_axes_input", 18, "ReduceMean", {"x": rand(2, 3, 4)}, {"axes": ints(1)}, keepdims=0)
    yield one("reducemax_18_noop_empty_axes", 18, "ReduceMax", {"x": rand(2, 3)}, {"axes": ints()},
              noop_with_empty_axes=1)
    yield one("reducel2_18_all_axes", 18, "ReduceL2", {"x": rand(2, 3, 2)})
    yield one("reducelogsumexp_18_negative_axis", 18, "ReduceLogSumExp", {"x": rand(2, 3, 4)}, {"axes": ints(-1)})
    yield one("reduceprod_18_two_axes", 18, "ReduceProd", {"x": rand(2, 3, 2, lo=0.5)}, {"axes": ints(0, 2)})
    yield one("split_18_num_outputs_uneven", 18, "Split", {"x": rand(2, 7)}, outputs=("a", "b", "c"), axis=1,
              num_outputs=3)
    yield one("pad_18_axes", 18, "Pad", {"x": rand(2, 3)}, {"pads": ints(1, 2), "value": np.array(1.5, F),
                                                            "axes": ints(1)}, mode="constant")
    yield one("pad_19_wrap", 19, "Pad", {"x": rand(2, 3)}, {"pads": ints(1, 2, 1, 2)}, mode="wrap")
    yield one("pad_21_edge_axes", 21, "Pad", {"x": rand(2, 3)}, {"pads": ints(2, 1), "value": np.array(0, F),
                                                                 "axes": ints(-2)}, mode="edge")
    yield one("resize_18_antialias", 18, "Resize", {"x": rand(1, 1, 8, 8)},
              {"roi": np.array([], F), "scales": np.array([1, 1, 0.5, 0.5], F)}, mode="linear", antialias=1)
    yield one("resize_18_axes", 18, "Resize", {"x": rand(1, 1, 3, 4)},
              {"roi": np.array([], F), "scales": np.array([2, 1.5], F)}, mode="nearest", axes=[2, 3])
    yield one("resize_18_not_larger", 18, "Resize", {"x": rand(1, 1, 4, 6)},
              {"roi": np.array([], F), "scales": np.array([], F), "sizes": ints(3, 3)}, mode="linear",
              axes=[2, 3], keep_aspect_ratio_policy="not_larger")
    yield one("resize_19_half_pixel_symmetric", 19, "Resize", {"x": rand(1, 1, 3, 3)},
              {"roi": np.array([], F), "scales": np.array([1, 1, 1.6, 2.0], F)}, mode="linear",
              coordinate_transformation_mode="half_pixel_symmetric")
    yield one("scatterelements_18_max", 18, "ScatterElements", {"data": rand(3, 3)},
              {"indices": ints(1, 0, 2, 0, 2, 1).reshape(2, 3), "updates": rand(2, 3)}, axis=0, reduction="max")
    yield one("scatternd_18_min", 18, "ScatterND", {"data": rand(4, 3)},
              {"indices": ints(1, 3, 1).reshape(3, 1), "updates": rand(3, 3)}, reduction="min")
    yield one("lppool_18_ceil_mode", 18, "LpPool", {"x": rand(1, 2, 5, 5)}, kernel_shape=[2, 2], strides=[2, 2],
              ceil_mode=1, p=2)
    yield one("mish_18", 18, "Mish", {"x": rand(2, 5, lo=-6, hi=6)})
    a8 = rng.integers(-100, 100, (2, 3)).astype(np.int32)
    b8 = rng.integers(-100, 100, (3,)).astype(np.int32)
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        yield one(f"{op.lower()}_18_broadcast", 18, op, {"a": a8, "b": b8})
    yield one("bitwisenot_18_uint8", 18, "BitwiseNot", {"x": rng.integers(0, 255, (2, 3)).astype(np.uint8)})
    yield one("averagepool_19_dilations", 19, "AveragePool", {"x": rand(1, 1, 5, 5)}, kernel_shape=[2, 2],
              dilations=[2, 2])
    yield one("cast_19_float_to_int32", 19, "Cast", {"x": rand(2, 3, lo=-50, hi=50)}, to=onnx.TensorProto.INT32)
    yield one("castlike_21_float_to_double", 21, "CastLike", {"x": rand(3)}, {"like": np.array([0], np.float64)})
    yield one("cast_21_int64_to_float", 21, "Cast", {"x": ints(-3, 0, 7)}, to=onnx.TensorProto.FLOAT)
    yield one("dequantizelinear_19_per_axis", 19, "DequantizeLinear",
              {"x": rng.integers(0, 255, (2, 3)).astype(np.uint8)},
              {"scale": np.array([0.5, 0.25, 2], F), "zero_point": np.array([1, 128, 3], np.uint8)}, axis=1)
    yield one("quantizelinear_19_int8", 19, "QuantizeLinear", {"x": rand(2, 3, lo=-20, hi=20)},
              {"scale": np.array(0.25, F), "zero_point": np.array(-3, np.int8)})
    yield one("quantizelinear_21_output_dtype", 21, "QuantizeLinear", {"x": rand(2, 3, lo=-20, hi=20)},
              {"scale": np.array(0.5, F)}, output_dtype=onnx.TensorProto.INT8)
    yield one("dequantizelinear_21_int8", 21, "DequantizeLinear", {"x": rng.integers(-128, 127, (4,)).astype(np.int8)},
              {"scale": np.array(0.1, F)})
    yield one("equal_19", 19, "Equal", {"a": ints(1, 2, 3)}, {"b": ints(1, 5, 3)})
    yield one("identity_21", 21, "Identity", {"x": rand(2, 2)})
    yield one("reshape_19_allowzero", 19, "Reshape", {"x": rand(2, 3, 4)}, {"shape": ints(0, -1)})
    yield one("reshape_21", 21, "Reshape", {"x": rand(2, 3, 4)}, {"shape": ints(4, 6)})
    yield one("shape_19_start_end", 19, "Shape", {"x": rand(2, 3, 4, 5)}, start=1, end=-1)
    yield one("shape_21", 21, "Shape", {"x": rand(2, 3)})
    yield one("size_21", 21, "Size", {"x": rand(2, 3, 4)})
    yield one("flatten_21", 21, "Flatten", {"x": rand(2, 3, 4)}, axis=2)
    yield one("transpose_21", 21, "Transpose", {"x": rand(2, 3, 4)}, perm=[2, 0, 1])
    yield one("squeeze_21", 21, "Squeeze", {"x": rand(2, 1, 3, 1)}, {"axes": ints(1, -1)})
    yield one("unsqueeze_21", 21, "Unsqueeze", {"x": rand(2, 3)}, {"axes": ints(0, 3)})
    yield one("constantofshape_20", 20, "ConstantOfShape", {"shape": ints(2, 3)},
              value=onnx.numpy_helper.from_array(np.array([7], np.int32)))
    yield one("constantofshape_21_default", 21, "ConstantOfShape", {"shape": ints(3)})
    isinf_x = np.array([1, np.inf, -np.inf, np.nan, 0], F)
    yield one("isinf_20_negative_only", 20, "IsInf", {"x": isinf_x}, detect_positive=0)
    yield one("isnan_20", 20, "IsNaN", {"x": isinf_x})
    bools = np.array([[True, False, True], [True, True, True]])
    yield one("reducemax_20_bool", 20, "ReduceMax", {"x": bools}, {"axes": ints(1)}, keepdims=0)
    yield one("reducemin_20_bool", 20, "ReduceMin", {"x": bools}, {"axes": ints(1)}, keepdims=0)
    yield one("gridsample_20_bilinear", 20, "GridSample", {"x": x4, "grid": rand(1, 3, 2, 2, lo=-1, hi=1)},
              mode="linear", align_corners=0)
    yield one("gelu_20", 20, "Gelu", {"x": rand(2, 5, lo=-4, hi=4)})
    yield one("gelu_20_tanh", 20, "Gelu", {"x": rand(2, 5, lo=-4, hi=4)}, approximate="tanh")
    yield one("groupnormalization_18", 18, "GroupNormalization", {"x": rand(2, 4, 3, 2)},
              {"scale": rand(2), "bias": rand(2)}, num_groups=2, epsilon=1e-3)
    yield one("groupnormalization_21_per_channel", 21, "GroupNormalization", {"x": rand(2, 6, 3)},
              {"scale": rand(6), "bias": rand(6)}, num_groups=3)
    yield one("col2im_18", 18, "Col2Im", {"x": rand(1, 4, 9)},
              {"image_shape": ints(4, 4), "block_shape": ints(2, 2)})
    yield one("col2im_18_strides_pads_dilations", 18, "Col2Im", {"x": rand(1, 8, 6)},
              {"image_shape": ints(5, 5), "block_shape": ints(2, 2)}, strides=[2, 2], pads=[1, 0, 1, 0],
              dilations=[2, 1])
    yield one("centercroppad_18_crop_and_pad", 18, "CenterCropPad", {"x": rand(5, 4, 3)}, {"shape": ints(3, 7, 3)})
    yield one("centercroppad_18_axes", 18, "CenterCropPad", {"x": rand(2, 5, 4)}, {"shape": ints(6, 2)}, axes=[-2, 2])
    yield one("dft_20_default_axis", 20, "DFT", {"x": rand(2, 6, 1)})
    yield one("dft_20_axis_input_onesided", 20, "DFT", {"x": rand(5, 3, 1)}, {"dft_length": np.array(6, I64),
                                                                               "axis": np.array(0, I64)}, onesided=1)
    yield one("dft_20_inverse", 20, "DFT", {"x": rand(1, 4, 2)}, {"dft_length": np.array(4, I64)}, inverse=1)
    theta2 = np.array([[[1.0, 0.2, 0.1], [-0.3, 0.9, 0.0]]], F)
    yield one("affinegrid_20_2d", 20, "AffineGrid", {"theta": theta2}, {"size": ints(1, 1, 3, 4)})
    yield one("affinegrid_20_3d_align_corners", 20, "AffineGrid", {"theta": rand(2, 3, 4)},
              {"size": ints(2, 1, 2, 3, 2)}, align_corners=1)
    yield one("stringconcat_20_broadcast", 20, "StringConcat",
              {"a": strs((2, 2), "a", "", "café", "x y")}, {"b": strs((2,), "-1", "é")})
    words = strs((2, 3), "a,b,c", "", ",a,", "no delimiter", "é,,ü", ",")
    yield one("stringsplit_20_delimiter", 20, "StringSplit", {"x": words}, outputs=("y", "n"), delimiter=",")
    yield one("stringsplit_20_long_delimiter_maxsplit", 20, "StringSplit",
              {"x": strs((4,), "a::b::c", "::", "x::::y", "")}, outputs=("y", "n"), delimiter="::", maxsplit=1)
    spaced = strs((5,), "  two  words ", "", "   ", "one", " a b  c d ")
    yield one("stringsplit_20_whitespace", 20, "StringSplit", {"x": spaced}, outputs=("y", "n"))
    yield one("stringsplit_20_whitespace_maxsplit", 20, "StringSplit", {"x": spaced}, outputs=("y", "n"), maxsplit=2)
    emails = strs((2, 3), "info@example.com", "a.b+c@sub.example.org", "no-at-sign", "x@y.z", "UPPER@EXAMPLE.COM",
                  "first.last@host.io")
    yield one("regexfullmatch_20_email", 20, "RegexFullMatch", {"x": emails},
              pattern=r"[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}")
    # One code point per `.` and per negated class, as RE2 reads UTF-8.
    yield one("regexfullmatch_20_utf8_dot", 20, "RegexFullMatch", {"x": strs((5,), "café", "cafe", "cafés", "caf",
                                                                                "caf\n")}, pattern="caf.")
    yield one("regexfullmatch_20_classes", 20, "RegexFullMatch",
              {"x": strs((6,), "word 12", "word_2 345", "w 1", "wörd 12", "word\t99", "word\x0b99")},
              pattern=r"\w+\s\d{2,3}")
    yield one("regexfullmatch_20_negated_named_group", 20, "RegexFullMatch",
              {"x": strs((5,), "2024-é,x", "2024-ab", "1999-,", "2024-a\nb", "24-ab")},
              pattern=r"(?P<year>\d{4})-[^,]+(?:,x)?")
    yield Case("chain_20_concat_then_match", 20,
               [node("StringConcat", ["a", "b"], ["ab"]), node("RegexFullMatch", ["ab"], ["y"], pattern="é+x?")],
               {"a": strs((3,), "é", "e", "éé")}, ["y"], {"b": strs((1,), "x")})
    # A chain: the Reduce-18 and Split-18 outputs feed ops older schemas know.
    yield Case("chain_21_reduce_split_relu", 21,
               [node("ReduceSum", ["x", "axes"], ["s"], keepdims=1), node("Split", ["s"], ["a", "b"], axis=2,
                                                                          num_outputs=2),
                node("Relu", ["a"], ["y"]), node("Mul", ["b", "b"], ["z"])],
               {"x": rand(2, 3, 4)}, ["y", "z"], {"axes": ints(1)})

    # Drawn last, so that the cases above keep their random inputs.
    # Opset 22 added bfloat16 to these ops; float models run as before.
    yield one("conv_22", 22, "Conv", {"x": rand(1, 2, 5, 5)}, {"w": rand(3, 2, 3, 3), "b": rand(3)}, pads=[1, 1, 1, 1])
    yield one("convtranspose_22", 22, "ConvTranspose", {"x": rand(1, 2, 3, 3)}, {"w": rand(2, 3, 2, 2)},
              strides=[2, 2])
    yield one("averagepool_22", 22, "AveragePool", {"x": rand(1, 1, 5, 5)}, kernel_shape=[3, 3], strides=[2, 2],
              pads=[1, 1, 1, 1], count_include_pad=1)
    yield one("maxpool_22", 22, "MaxPool", {"x": rand(1, 2, 4, 4)}, kernel_shape=[2, 2], strides=[2, 2])
    yield one("globalaveragepool_22", 22, "GlobalAveragePool", {"x": rand(1, 3, 2, 2)})
    yield one("instancenormalization_22", 22, "InstanceNormalization", {"x": rand(2, 3, 4)},
              {"scale": rand(3), "bias": rand(3)})
    yield one("sin_22", 22, "Sin", {"x": rand(2, 3, lo=-3, hi=3)})
    yield one("atanh_22", 22, "Atanh", {"x": rand(5, lo=-0.9, hi=0.9)})
    yield one("round_22", 22, "Round", {"x": np.array([-2.5, -1.5, -0.4, 0.5, 1.5, 2.6], F)})
    yield one("elu_22", 22, "Elu", {"x": rand(2, 4, lo=-3, hi=3)}, alpha=0.7)
    yield one("hardswish_22", 22, "HardSwish", {"x": rand(2, 4, lo=-5, hi=5)})
    yield one("softplus_22", 22, "Softplus", {"x": rand(2, 4, lo=-5, hi=5)})
    yield one("dropout_22_inference", 22, "Dropout", {"x": rand(2, 3)})
    yield one("eyelike_22", 22, "EyeLike", {"x": rand(3, 4)}, k=1)
    yield one("lpnormalization_22", 22, "LpNormalization", {"x": rand(2, 3)}, axis=1, p=1)
    yield one("gridsample_22_nearest", 22, "GridSample", {"x": rand(1, 1, 3, 3), "grid": rand(1, 2, 2, 2, lo=-1, hi=1)},
              mode="nearest")
    yield one("lstm_22", 22, "LSTM", {"x": rand(2, 1, 3)}, {"w": rand(1, 16, 3, lo=-0.5, hi=0.5),
                                                          "r": rand(1, 16, 4, lo=-0.5, hi=0.5)},
              outputs=("y",), hidden_size=4)
    # Opset 23 added float4e2m1 to these ops (and precision / output_dtype to Q/DQ).
    yield one("cast_23", 23, "Cast", {"x": rand(2, 3, lo=-50, hi=50)}, to=onnx.TensorProto.INT64)
    yield one("castlike_23", 23, "CastLike", {"x": ints(1, -2, 3)}, {"like": np.array([0], F)})
    yield one("reshape_23", 23, "Reshape", {"x": rand(2, 3, 4)}, {"shape": ints(-1, 4)})
    yield one("transpose_23", 23, "Transpose", {"x": rand(2, 3, 4)}, perm=[1, 2, 0])
    yield one("flatten_23", 23, "Flatten", {"x": rand(2, 3, 4)}, axis=1)
    yield one("squeeze_23", 23, "Squeeze", {"x": rand(1, 3, 1)}, {"axes": ints(0)})
    yield one("unsqueeze_23", 23, "Unsqueeze", {"x": rand(3)}, {"axes": ints(-1)})
    yield one("shape_23", 23, "Shape", {"x": rand(2, 3, 4)}, start=-2)
    yield one("size_23", 23, "Size", {"x": rand(2, 5)})
    yield one("identity_23", 23, "Identity", {"x": ints(4, 5)})
    yield one("pad_23_reflect", 23, "Pad", {"x": rand(2, 4)}, {"pads": ints(0, 2, 0, 1)}, mode="reflect")
    yield one("constantofshape_23", 23, "ConstantOfShape", {"shape": ints(2, 2)},
              value=onnx.numpy_helper.from_array(np.array([1.5], F)))
    yield one("quantizelinear_23_precision", 23, "QuantizeLinear", {"x": rand(2, 3, lo=-20, hi=20)},
              {"scale": np.array(0.5, F), "zero_point": np.array(3, np.int8)}, precision=onnx.TensorProto.FLOAT)
    yield one("dequantizelinear_23_output_dtype", 23, "DequantizeLinear",
              {"x": rng.integers(0, 255, (2, 3)).astype(np.uint8)},
              {"scale": np.array([0.5, 0.25, 2], F), "zero_point": np.array([1, 128, 3], np.uint8)}, axis=1,
              output_dtype=onnx.TensorProto.FLOAT)
    yield Case("chain_23_conv_relu_reshape", 23,
               [node("Conv", ["x", "w"], ["c"]), node("Relu", ["c"], ["r"]), node("Reshape", ["r", "shape"], ["y"])],
               {"x": rand(1, 1, 4, 4)}, ["y"], {"w": rand(2, 1, 2, 2), "shape": ints(2, -1)})
    # GridSample-20 on volumetric (5-D) inputs; the grid reaches past [-1, 1] so that every padding
    # mode has samples to pad.
    x5 = rand(2, 2, 3, 4, 5)
    for mode in ("linear", "nearest"):
        for padding in ("zeros", "border", "reflection"):
            for align in (0, 1):
                yield one(f"gridsample_20_3d_{mode}_{padding}_align{align}", 20, "GridSample",
                          {"x": x5, "grid": rand(2, 2, 3, 4, 3, lo=-1.6, hi=1.6)}, mode=mode, padding_mode=padding,
                          align_corners=align)
    yield one("gridsample_20_2d_nearest_reflection", 20, "GridSample",
              {"x": rand(1, 2, 3, 5), "grid": rand(1, 4, 3, 2, lo=-1.6, hi=1.6)}, mode="nearest",
              padding_mode="reflection")
    yield one("gridsample_22_3d_linear_border", 22, "GridSample",
              {"x": rand(1, 1, 2, 3, 2), "grid": rand(1, 3, 2, 2, 3, lo=-1.4, hi=1.4)}, padding_mode="border",
              align_corners=1)

def ensure_ort():
    pkg = ORT_DIR / "node_modules" / "onnxruntime-node" / "package.json"
    if pkg.exists() and json.loads(pkg.read_text())["version"] == ORT_VERSION:
        return
    ORT_DIR.mkdir(parents=True, exist_ok=True)
    print(f"gen-opset-tests: installing onnxruntime-node@{ORT_VERSION} into {ORT_DIR}", file=sys.stderr)
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--loglevel=error", f"onnxruntime-node@{ORT_VERSION}"],
                   cwd=ORT_DIR, check=True, env={**__import__("os").environ, "ONNXRUNTIME_NODE_INSTALL": "skip"})


def to_json(a):
    """An array as ORT's type name, dims and its little-endian bytes in base64 (strings: a list)."""
    if a.dtype == object:
        return {"type": "string", "dims": list(a.shape), "data": [str(s) for s in a.flat]}
    kind = "bool" if a.dtype == np.bool_ else str(a.dtype)
    return {"type": kind, "dims": list(a.shape), "data": base64.b64encode(np.ascontiguousarray(a).tobytes()).decode()}


def from_json(t):
    if t["type"] == "string":
        return np.array(t["data"], dtype=object).reshape(t["dims"])
    dtype = np.dtype(np.bool_ if t["type"] == "bool" else t["type"])
    return np.frombuffer(base64.b64decode(t["data"]), dtype).reshape(t["dims"])


def write(case, tmp):
    folder = OUT / case.name
    shutil.rmtree(folder, ignore_errors=True)
    data = folder / "test_data_set_0"
    data.mkdir(parents=True)
    model = case.model()
    onnx.save(model, str(folder / "model.onnx"))
    for i, (n, a) in enumerate(case.inputs.items()):
        (data / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(a, n).SerializeToString())
    ins, outs = Path(tmp) / "in.json", Path(tmp) / "out.json"
    ins.write_text(json.dumps({n: to_json(a) for n, a in case.inputs.items()}))
    subprocess.run(["node", str(RUNNER), str(ORT_DIR), str(folder / "model.onnx"), str(ins), str(outs)], check=True)
    results = json.loads(outs.read_text())
    for i, n in enumerate(case.outputs):
        (data / f"output_{i}.pb").write_bytes(onnx.numpy_helper.from_array(from_json(results[n]), n).SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="regenerate only the cases whose name matches")
    args = parser.parse_args()
    ensure_ort()
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases():
            if args.only and not re.search(args.only, case.name):
                continue
            write(case, tmp)
            print(f"{case.name}: opset {case.opset}", file=sys.stderr)


if __name__ == "__main__":
    main()
