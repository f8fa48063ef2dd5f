#!/usr/bin/python3
"""Writes testdata/opset18plus: one ONNX backend-test folder per op version of opsets 18 to 25
(model.onnx, test_data_set_0/input_K.pb and output_K.pb), and testdata/com_microsoft: ONNX
Runtime's quantized com.microsoft ops of its QOperator models, with expected outputs computed by
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

    def __init__(self, name, opset, nodes, inputs, outputs, consts=None, expected=None, domains=None,
                 folder="opset18plus"):
        self.name, self.opset, self.inputs, self.outputs = name, opset, inputs, outputs
        self.domains = domains or {}  # other opset imports: {"com.microsoft": 1}
        self.folder = folder
        self.nodes = nodes if isinstance(nodes, list) else [nodes]
        self.consts = consts or {}
        self.expected = expected  # outputs known exactly without ONNX Runtime (it cannot run the case)

    def with_expected(self, expected):
        self.expected = expected
        return self

    def model(self):
        ins = [helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype], a.shape)
               for n, a in self.inputs.items()]
        outs = [helper.make_empty_tensor_value_info(n) for n in self.outputs]
        inits = [a if isinstance(a, onnx.TensorProto) else onnx.numpy_helper.from_array(a, n)
                 for n, a in self.consts.items()]
        graph = helper.make_graph(self.nodes, self.name, ins, outs, initializer=inits)
        imports = [helper.make_opsetid("", self.opset)] + [helper.make_opsetid(d, v) for d, v in self.domains.items()]
        model = helper.make_model(graph, opset_imports=imports,
                                  producer_name="gen-opset-tests")
        # The IR version each opset came with: 18-20 IR 9, 21-22 IR 10, 23 IR 11, 24 IR 12, 25 IR 13.
        model.ir_version = {21: 10, 22: 10, 23: 11, 24: 12, 25: 13}.get(self.opset, 9)
        return model


def node(op, inputs, outputs=("y",), **attrs):
    return helper.make_node(op, list(inputs), list(outputs), **attrs)


def one(name, opset, op, inputs, consts=None, outputs=("y",), **attrs):
    """A single-node case: inputs then consts, in the order given, feed the node."""
    names = list(inputs) + list(consts or {})
    return Case(name, opset, node(op, names, outputs, **attrs), inputs, list(outputs), consts)


# TensorProto codes of the types numpy (and Debian's ONNX 1.12) lack.
FLOAT8 = {"float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19, "float8e5m2fnuz": 20}
UINT4, INT4, FLOAT4E2M1, FLOAT8E8M0, UINT2, INT2 = 21, 22, 23, 24, 25, 26


def narrow_tensor(name, code, values, shape, int32_data=False):
    """An initializer of float8 (or float8e8m0) bit patterns, one byte each, or of sub-byte
    values packed low bits first: int4, uint4 and float4e2m1 bit patterns two per byte, int2 and
    uint2 four per byte; in raw_data (or, with int32_data, one packed byte per int32)."""
    values = list(values)
    bits = {UINT4: 4, INT4: 4, FLOAT4E2M1: 4, UINT2: 2, INT2: 2}.get(code)
    if bits:
        per_byte = 8 // bits
        fields = [v & ((1 << bits) - 1) for v in values] + [0] * (-len(values) % per_byte)
        data = [sum(fields[i + k] << (k * bits) for k in range(per_byte)) for i in range(0, len(fields), per_byte)]
    else:
        data = values
    t = onnx.TensorProto(name=name, data_type=code, dims=list(shape))
    if int32_data:
        t.int32_data.extend(data)
    else:
        t.raw_data = bytes(data)
    return t


def wrapped(name, opset, inner, x, out_type=None, consts=None, into=None):
    """Nodes `inner` between Casts, so that the graph's input x and output y keep types ONNX Runtime's
    node binding takes: x is cast to `into` (when given) as "xq"; with out_type, the inner output
    "yq" is cast to it as y (without, the inner nodes write y)."""
    nodes = ([node("Cast", ["x"], ["xq"], to=into)] if into else []) + inner
    if out_type is not None:
        nodes.append(node("Cast", ["yq"], ["y"], to=out_type))
    return Case(name, opset, nodes, {"x": x}, ["y"], consts)


def lowbit_cases():
    """float8, int4 and uint4 through Cast, Q/DQ and the data movement ops, and LayerNormalization's
    double stash. Values where ONNX Runtime 1.30 departs from the ONNX spec are left out (E4M3FN
    values that round to 480 without saturate give 448, not NaN; E5M2 61440 without saturate gives
    NaN, not infinity); the unit tests check those against the spec."""
    T = onnx.TensorProto
    special = np.array([0, -0.0, 1, 0.3, -3.3, 464, 1000, -1000, np.inf, -np.inf, np.nan, 2**-9 * 1.5, 248, 1e-9,
                        -1e-9, 57344, 70000], F)
    for name, code in FLOAT8.items():
        for saturate in (1, 0):
            yield wrapped(f"cast_19_{name}_saturate{saturate}", 19,
                          [node("Cast", ["x"], ["yq"], to=code, saturate=saturate)], special, T.FLOAT)
    yield wrapped("cast_19_float8e4m3fn_to_double", 19, [node("Cast", ["xq"], ["yq"], to=T.DOUBLE)],
                  np.array([0.5, -7, 300, 0.01], F), T.DOUBLE, into=17)
    yield wrapped("cast_19_float8e5m2_to_float16", 19, [node("Cast", ["xq"], ["yq"], to=T.FLOAT16)],
                  np.array([0.5, -7, 300, 0.01], F), T.FLOAT, into=19)
    yield wrapped("cast_19_float8e4m3fnuz_to_float8e5m2", 19, [node("Cast", ["xq"], ["yq"], to=19)],
                  np.array([0.5, -7, 240, 0.3, 0.0], F), T.FLOAT, into=18)
    yield wrapped("castlike_19_float8e5m2fnuz", 19, [node("CastLike", ["x", "like"], ["yq"], saturate=0)],
                  np.array([1.1, -100000, 3], F), T.FLOAT, consts={"like": narrow_tensor("like", 20, [0], [1])})
    ints32 = np.array([-9, -8, -1, 0, 7, 8, 15, 16, 17, -100, 3], np.int32)
    for name, code in (("int4", INT4), ("uint4", UINT4)):
        yield wrapped(f"cast_21_{name}_from_int32", 21, [node("Cast", ["x"], ["yq"], to=code)], ints32, T.INT32)
        yield wrapped(f"cast_21_{name}_from_float", 21, [node("Cast", ["x"], ["yq"], to=code)],
                      np.array([-2.5, -0.5, 0.5, 1.5, 2.5, 3.7, 6.4, -1.2, 12.6], F), T.FLOAT)
    # ONNX Runtime 1.30 casts int4 [-8, -1, 0, 7] to uint8 [248, 255, 255, 255]; ONNX's rule
    # (keep the low 8 bits) gives numpy's astype.
    i4 = np.array([-8, -1, 0, 7], np.int32)
    case = wrapped("cast_21_int4_to_uint8", 21, [node("Cast", ["xq"], ["yq"], to=T.UINT8)], i4, T.INT32, into=INT4)
    case.expected = {"y": i4.astype(np.uint8).astype(np.int32)}
    yield case
    yield wrapped("castlike_21_uint4", 21, [node("CastLike", ["x", "like"], ["yq"])], ints32, T.INT32,
                  consts={"like": narrow_tensor("like", UINT4, [0], [1])})
    # Data movement of packed types, on an odd element count (int4's packing ends in a half byte).
    # ONNX Runtime 1.30 moves int4, uint4 and float8 only through Transpose (it has no such Reshape,
    # Flatten, Squeeze, Unsqueeze or Identity at opset 21); the chain through those is exact data
    # movement of values each type holds exactly, so its expected output is numpy's.
    x5 = np.arange(-7, 8, dtype=np.int32).reshape(3, 5)
    chain = [node("Transpose", ["xq"], ["t"], perm=[1, 0]), node("Reshape", ["t", "shape"], ["r"]),
             node("Flatten", ["r"], ["f"], axis=1), node("Unsqueeze", ["f", "axes"], ["u"]),
             node("Squeeze", ["u", "axes"], ["s"]), node("Identity", ["s"], ["yq"]),
             node("Shape", ["xq"], ["shape_out"]), node("Size", ["xq"], ["size_out"])]
    sizes = {"shape_out": ints(3, 5), "size_out": np.array(15, I64)}
    for name, code, x in (("int4", INT4, x5), ("uint4", UINT4, x5 + 7)):
        yield Case(f"transpose_21_{name}", 21, [node("Cast", ["x"], ["xq"], to=code),
                                                node("Transpose", ["xq"], ["t"], perm=[1, 0]),
                                                node("Cast", ["t"], ["y"], to=onnx.TensorProto.INT32)],
                   {"x": x}, ["y"])
        yield Case(f"movement_21_{name}", 21, [node("Cast", ["x"], ["xq"], to=code)] + chain +
                   [node("Cast", ["yq"], ["y"], to=onnx.TensorProto.INT32)], {"x": x},
                   ["y", "shape_out", "size_out"], {"shape": ints(5, 1, 3), "axes": ints(0)},
                   expected={"y": x.T.reshape(5, 3).copy(), **sizes})
    for name, code in (("float8e4m3fn", 17), ("float8e5m2fnuz", 20)):
        x = (x5 * 0.5).astype(F)
        yield Case(f"movement_21_{name}", 21, [node("Cast", ["x"], ["xq"], to=code)] + chain +
                   [node("Cast", ["yq"], ["y"], to=onnx.TensorProto.FLOAT)], {"x": x},
                   ["y", "shape_out", "size_out"], {"shape": ints(5, 1, 3), "axes": ints(0)},
                   expected={"y": x.T.reshape(5, 3).copy(), **sizes})
    # Pad-21 and ConstantOfShape-21 with 4-bit and float8 values: ONNX Runtime 1.30 has no such
    # kernels, and the outputs are exact, so numpy gives them.
    x23 = np.array([[1, 2, 3], [4, 5, -6]], np.int32)
    yield Case("pad_21_int4_constant", 21,
               [node("Cast", ["x"], ["xq"], to=INT4), node("Pad", ["xq", "pads", "value"], ["p"]),
                node("Cast", ["p"], ["y"], to=onnx.TensorProto.INT32)], {"x": x23}, ["y"],
               {"pads": ints(0, 1, 1, 0), "value": narrow_tensor("value", INT4, [-3], [])},
               expected={"y": np.pad(x23, ((0, 1), (1, 0)), constant_values=-3)})
    yield Case("constantofshape_21_int4", 21,
               [node("ConstantOfShape", ["shape"], ["c"], value=narrow_tensor("v", INT4, [-7], [1])),
                node("Cast", ["c"], ["cq"], to=onnx.TensorProto.INT32), node("Add", ["cq", "x"], ["y"])],
               {"x": x23}, ["y"], {"shape": ints(2, 3)}, expected={"y": x23 - 7})
    yield Case("constantofshape_21_float8e4m3fn", 21,
               [node("ConstantOfShape", ["x"], ["c"], value=narrow_tensor("v", 17, [0xB4], [1])),
                node("Cast", ["c"], ["y"], to=onnx.TensorProto.FLOAT)],
               {"x": ints(2, 2)}, ["y"], expected={"y": np.full((2, 2), -0.75, F)})
    yield Case("constant_21_int4", 21, [node("Constant", [], ["c"], value=narrow_tensor("v", INT4, [-8, 7, 3], [3])),
                                        node("Cast", ["c"], ["cq"], to=T.INT32), node("Add", ["cq", "x"], ["y"])],
               {"x": np.array([1, 1, 1], np.int32)}, ["y"])
    yield Case("constant_19_float8e4m3fn", 19,
               [node("Constant", [], ["c"], value=narrow_tensor("v", 17, [0x38, 0xB8, 0x7E], [3])),
                node("Cast", ["c"], ["cq"], to=T.FLOAT), node("Add", ["cq", "x"], ["y"])], {"x": rand(3)}, ["y"])
    # IsNaN-20 and IsInf-20 on float8 (E5M2 keeps infinities when Cast does not saturate).
    specials8 = np.array([1, np.nan, np.inf, -np.inf, -2, 0], F)
    yield Case("isnan_20_float8e4m3fn", 20, [node("Cast", ["x"], ["xq"], to=17), node("IsNaN", ["xq"], ["y"])],
               {"x": specials8}, ["y"])
    yield Case("isinf_20_float8e5m2_negative", 20,
               [node("Cast", ["x"], ["xq"], to=19, saturate=0), node("IsInf", ["xq"], ["y"], detect_positive=0)],
               {"x": specials8}, ["y"])
    # Quantization to and from float8, 16-bit and 4-bit types.
    xq = rand(2, 6, lo=-30, hi=30)
    for name, code in FLOAT8.items():
        yield wrapped(f"quantizelinear_19_{name}", 19, [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"])], xq,
                      T.FLOAT, consts={"scale": np.array(0.125, F), "zp": narrow_tensor("zp", code, [0], [])})
    yield wrapped("quantizelinear_19_float8e4m3fn_no_saturate", 19,
                  [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"], saturate=0)], xq, T.FLOAT,
                  consts={"scale": np.array(0.04, F), "zp": narrow_tensor("zp", 17, [0], [])})
    yield wrapped("dequantizelinear_19_float8e5m2_per_axis", 19,
                  [node("DequantizeLinear", ["xq", "scale", "zp"], ["y"], axis=1)], xq,
                  consts={"scale": np.array([0.5, 2, 1, 0.25, 3, 1], F), "zp": narrow_tensor("zp", 19, [0] * 6, [6])},
                  into=19)
    for name, code in (("int4", INT4), ("uint4", UINT4)):
        zp = [-2] if code == INT4 else [3]
        yield wrapped(f"quantizelinear_21_{name}", 21, [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"])],
                      rand(3, 5, lo=-4, hi=4), T.INT32,
                      consts={"scale": np.array(0.5, F), "zp": narrow_tensor("zp", code, zp, [])})
    yield wrapped("quantizelinear_21_output_dtype_uint4", 21,
                  [node("QuantizeLinear", ["x", "scale"], ["yq"], output_dtype=UINT4)], rand(7, lo=-1, hi=9),
                  T.INT32, consts={"scale": np.array(0.5, F)})
    yield wrapped("quantizelinear_21_int16", 21, [node("QuantizeLinear", ["x", "scale", "zp"], ["y"])],
                  rand(2, 3, lo=-5000, hi=5000), consts={"scale": np.array(0.1, F), "zp": np.array(-7, np.int16)})
    yield wrapped("quantizelinear_21_blocked_int8", 21,
                  [node("QuantizeLinear", ["x", "scale", "zp"], ["y"], axis=1, block_size=3)], rand(2, 7, lo=-9, hi=9),
                  consts={"scale": rand(2, 3, lo=0.05, hi=0.2), "zp": np.array([[1, -2, 3], [0, 5, -5]], np.int8)})
    yield wrapped("quantizelinear_21_blocked_int4_axis0", 21,
                  [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"], axis=0, block_size=2)], rand(5, 3, lo=-4, hi=4),
                  T.INT32, consts={"scale": rand(3, 3, lo=0.4, hi=1.0),
                                   "zp": narrow_tensor("zp", INT4, [0, 1, -1, 2, -2, 0, 1, 1, 1], [3, 3])})
    q4 = [-8, -3, 0, 5, 7, -1, 2]
    yield one("dequantizelinear_21_int4_raw_data", 21, "DequantizeLinear", {},
              {"x": narrow_tensor("x", INT4, q4, [7]), "scale": np.array(0.5, F), "zp": narrow_tensor("zp", INT4, [1], [])})
    yield one("dequantizelinear_21_uint4_int32_data_per_axis", 21, "DequantizeLinear", {},
              {"x": narrow_tensor("x", UINT4, [0, 15, 3, 8, 1, 9], [2, 3], int32_data=True),
               "scale": np.array([0.5, 1, 2], F), "zp": narrow_tensor("zp", UINT4, [8, 0, 1], [3], int32_data=True)},
              axis=1)
    yield one("dequantizelinear_21_blocked_uint16", 21, "DequantizeLinear",
              {"x": rng.integers(0, 65535, (3, 4)).astype(np.uint16)},
              {"scale": rand(3, 2, lo=0.01, hi=0.1), "zp": np.array([[0, 30000], [65535, 7], [1, 2]], np.uint16)},
              axis=1, block_size=2)
    # LayerNormalization with its statistics in double (stash_type 11). ONNX Runtime 1.30 has no
    # kernel for float X with double statistics; the expected outputs follow the op's ONNX function
    # body in numpy: statistics and normalized values in double, scale and bias in float.
    x, scale, bias = rand(2, 3, 4), rand(4), rand(4)
    wide = x.astype(np.float64)
    mean = wide.mean(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(((wide - mean) ** 2).mean(axis=-1, keepdims=True) + 1e-5)
    y = ((wide - mean) * inv).astype(F) * scale + bias
    yield Case("layernormalization_17_stash_double", 17,
               node("LayerNormalization", ["x", "scale", "bias"], ["y", "mean", "inv_std_dev"], axis=-1, stash_type=11),
               {"x": x}, ["y", "mean", "inv_std_dev"], {"scale": scale, "bias": bias},
               expected={"y": y, "mean": mean, "inv_std_dev": inv})


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

    yield from lowbit_cases()
    yield from llm_cases()
    yield from opset24_cases()
    yield from int8_cases()
    yield from mx_and_2bit_cases()
    yield from deform_conv_cases()
    yield from max_roi_pool_cases()
    yield from com_microsoft_cases()
    yield from matmul_nbits_cases()
    yield from microsoft_fused_cases()
    yield from group_query_attention_cases()
    yield from gather_block_quantized_cases()
    yield from bert_cases()
    yield from ort_fusion_cases()
    yield qoperator_network_case()
    yield from integer_to_float_cases()


def rotary_caches(rows, half, base=10000.0):
    """cos and sin of position * base^(-i / half) for `rows` positions and `half` pairs."""
    angles = np.arange(rows, dtype=np.float64)[:, None] * base ** (-np.arange(half) / half)
    return np.cos(angles).astype(F), np.sin(angles).astype(F)


def llm_cases():
    """The opset 23 ops of transformer models: RMSNormalization, RotaryEmbedding and Attention
    (multi-head, grouped-query, packed heads, masks, is_causal with a KV cache, softcap and every
    qk_matmul_output_mode). Masks leave each query at least one key: with none, ONNX gives NaN
    and ONNX Runtime a uniform average."""
    H16 = np.float16
    yield one("rmsnormalization_23", 23, "RMSNormalization", {"x": rand(2, 3, 8)}, {"scale": rand(8)})
    yield one("rmsnormalization_23_axis1_epsilon", 23, "RMSNormalization", {"x": rand(2, 3, 4, lo=-0.05, hi=0.05)},
              {"scale": rand(3, 4)}, axis=1, epsilon=1e-3)
    yield Case("rmsnormalization_23_float16", 23, node("RMSNormalization", ["x", "scale"], ["y"]),
               {"x": rand(3, 16).astype(H16), "scale": rand(16).astype(H16)}, ["y"])

    cos, sin = rotary_caches(4, 4)
    per_token = lambda a: np.stack([a, a[::-1]])  # [batch 2, seq 4, 4]: the second batch counts down
    yield one("rotaryembedding_23", 23, "RotaryEmbedding", {"x": rand(2, 3, 4, 8)},
              {"cos": per_token(cos), "sin": per_token(sin)})
    cos, sin = rotary_caches(10, 4)
    ids = np.array([[0, 1, 2, 3], [6, 7, 8, 9]], I64)
    yield one("rotaryembedding_23_3d_interleaved_position_ids", 23, "RotaryEmbedding",
              {"x": rand(2, 4, 24), "cos": cos, "sin": sin, "ids": ids}, num_heads=3, interleaved=1)
    cos, sin = rotary_caches(6, 2)
    yield one("rotaryembedding_23_partial", 23, "RotaryEmbedding",
              {"x": rand(1, 2, 3, 8)}, {"cos": cos, "sin": sin, "ids": np.array([[5, 0, 3]], I64)},
              rotary_embedding_dim=4)

    def attention(name, inputs, outputs=("y",), **attrs):
        """An Attention node over graph inputs; an empty output name skips that output."""
        return Case(name, 23, node("Attention", list(inputs), outputs, **attrs), inputs, [o for o in outputs if o])

    yield attention("attention_23", {"q": rand(2, 3, 4, 8), "k": rand(2, 3, 6, 8), "v": rand(2, 3, 6, 8)})
    yield attention("attention_23_3d_gqa", {"q": rand(2, 4, 32), "k": rand(2, 5, 16), "v": rand(2, 5, 12)},
                    q_num_heads=4, kv_num_heads=2)
    yield attention("attention_23_scale_bool_mask",
                    {"q": rand(1, 2, 4, 8), "k": rand(1, 2, 6, 8), "v": rand(1, 2, 6, 4),
                     "mask": np.array([[1, 1, 0, 1, 0, 1], [0, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0],
                                       [1, 1, 1, 1, 1, 0]], np.bool_)}, scale=0.3)
    past = {"q": rand(2, 2, 3, 4), "k": rand(2, 2, 3, 4), "v": rand(2, 2, 3, 5), "mask": rand(2, 1, 3, 8, lo=-1, hi=1),
            "past_key": rand(2, 2, 5, 4), "past_value": rand(2, 2, 5, 5)}
    yield attention("attention_23_causal_past_float_mask", past, ("y", "present_key", "present_value"), is_causal=1)
    capped = {"q": rand(1, 2, 3, 4, lo=-4, hi=4), "k": rand(1, 2, 5, 4, lo=-4, hi=4), "v": rand(1, 2, 5, 4),
              "mask": rand(3, 5, lo=-2, hi=0)}
    for mode in range(4):
        yield attention(f"attention_23_softcap_qk_output_mode{mode}", capped, ("y", "", "", "qk"), softcap=3.0,
                        qk_matmul_output_mode=mode)
    yield attention("attention_23_causal_gqa_4d", {"q": rand(1, 4, 5, 8), "k": rand(1, 1, 5, 8), "v": rand(1, 1, 5, 8)},
                    is_causal=1)
    yield attention("attention_23_float16", {"q": rand(1, 2, 3, 8).astype(H16), "k": rand(1, 2, 4, 8).astype(H16),
                                             "v": rand(1, 2, 4, 8).astype(H16)})


def opset24_cases():
    """Opsets 24 and 25 (ONNX 1.19 and 1.20): Swish, TensorScatter, Attention-24's
    nonpad_kv_seqlen, and ops whose new versions only add types (float8e8m0, int2), which keep
    their kernels."""
    yield one("swish_24", 24, "Swish", {"x": rand(2, 5, lo=-6, hi=6)})
    yield one("swish_24_alpha", 24, "Swish", {"x": rand(3, 4, lo=-6, hi=6)}, alpha=0.4)
    cache = rand(2, 2, 6, 3)
    yield one("tensorscatter_24", 24, "TensorScatter",
              {"cache": cache, "update": rand(2, 2, 2, 3), "write": np.array([1, 4], I64)})
    yield one("tensorscatter_24_circular_axis1", 24, "TensorScatter",
              {"cache": rand(2, 5, 4), "update": rand(2, 3, 4), "write": np.array([3, 1], I64)}, axis=1,
              mode="circular")
    yield one("tensorscatter_24_no_indices", 24, "TensorScatter", {"cache": cache, "update": rand(2, 2, 1, 3)})
    q, k, v = rand(2, 2, 3, 4), rand(2, 2, 6, 4), rand(2, 2, 6, 4)
    nonpad = np.array([4, 6], I64)
    yield Case("attention_24_nonpad_kv_seqlen", 24, node("Attention", ["q", "k", "v", "", "", "", "nonpad"], ["y"]),
               {"q": q, "k": k, "v": v, "nonpad": nonpad}, ["y"])
    # is_causal with nonpad_kv_seqlen: each query sees the keys up to its own position counted back
    # from the entry's last valid key.
    yield Case("attention_24_nonpad_kv_seqlen_causal", 24,
               node("Attention", ["q", "k", "v", "", "", "", "nonpad"], ["y"], is_causal=1),
               {"q": q, "k": k, "v": v, "nonpad": nonpad}, ["y"])
    yield Case("chain_25_reshape_transpose_cast", 25,
               [node("Reshape", ["x", "shape"], ["r"]), node("Transpose", ["r"], ["t"], perm=[1, 0]),
                node("Cast", ["t"], ["y"], to=onnx.TensorProto.INT32)],
               {"x": rand(2, 3, lo=-9, hi=9)}, ["y"], {"shape": ints(3, 2)})
    yield Case("chain_24_topk_squeeze", 24,
               [node("TopK", ["x", "k"], ["v", "i"]), node("Squeeze", ["v", "axes"], ["y"])],
               {"x": rand(1, 6)}, ["y", "i"], {"k": ints(3), "axes": ints(0)})


def int8_cases():
    """The integer products at sizes past the int8 GEMM's register tiles, strips and AMX steps
    (16 rows or more), every sign of A and B, per-column zero points and scales, and the
    dynamically quantized MatMul that ONNX Runtime's quantize_dynamic writes."""
    u8 = lambda *shape: rng.integers(0, 256, shape).astype(np.uint8)  # noqa: E731
    i8 = lambda *shape: rng.integers(-128, 128, shape).astype(np.int8)  # noqa: E731
    yield one("matmulinteger_21_u8s8_batched", 21, "MatMulInteger", {"a": u8(2, 40, 70)},
              {"b": i8(70, 45), "a_zero": np.array(131, np.uint8), "b_zero": i8(45)})
    yield one("matmulinteger_21_s8u8", 21, "MatMulInteger", {"a": i8(33, 64), "b": u8(64, 20)},
              {"a_zero": np.array(-5, np.int8), "b_zero": np.array(200, np.uint8)})
    yield one("qlinearmatmul_21_per_column", 21, "QLinearMatMul", {"a": u8(20, 37)},
              {"a_scale": np.array(0.02, F), "a_zero": np.array(120, np.uint8), "b": i8(37, 50),
               "b_scale": rng.uniform(0.001, 0.01, 50).astype(F), "b_zero": np.zeros(50, np.int8),
               "y_scale": np.array(0.3, F), "y_zero": np.array(128, np.uint8)})
    conv_consts = lambda w, oc: {"w": w, "w_scale": rng.uniform(0.002, 0.02, oc).astype(F),  # noqa: E731
                                 "w_zero": np.zeros(oc, np.int8), "y_scale": np.array(0.4, F),
                                 "y_zero": np.array(100, np.uint8), "bias": rng.integers(-500, 500, oc).astype(np.int32)}
    yield Case("qlinearconv_21_3x3", 21,
               node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "bias"],
                    ["y"], pads=[1, 1, 1, 1]),
               {"x": u8(1, 8, 12, 12)}, ["y"],
               {"x_scale": np.array(0.05, F), "x_zero": np.array(128, np.uint8), **conv_consts(i8(40, 8, 3, 3), 40)})
    yield Case("qlinearconv_21_depthwise_strided", 21,
               node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero", "bias"],
                    ["y"], pads=[1, 1, 1, 1], strides=[2, 2], group=6),
               {"x": u8(1, 6, 11, 11)}, ["y"],
               {"x_scale": np.array(0.05, F), "x_zero": np.array(90, np.uint8), **conv_consts(i8(6, 1, 3, 3), 6)})
    yield one("convinteger_21_grouped", 21, "ConvInteger", {"x": u8(2, 4, 7, 7)},
              {"w": u8(8, 2, 3, 3), "x_zero": np.array(17, np.uint8)}, group=2, pads=[1, 0, 1, 0])
    yield one("dynamicquantizelinear_21_large", 21, "DynamicQuantizeLinear", {"x": rand(70, 300, lo=-3, hi=5)},
              outputs=("y", "y_scale", "y_zero"))
    scale = np.array(0.004, F)
    yield Case("dynamic_matmul_21_quantize_dynamic", 21,
               [node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
                node("MatMulInteger", ["xq", "w", "xz", "wz"], ["acc"]),
                node("Cast", ["acc"], ["f"], to=onnx.TensorProto.FLOAT), node("Mul", ["xs", "ws"], ["s"]),
                node("Mul", ["f", "s"], ["y"])],
               {"x": rand(40, 64)}, ["y"], {"w": i8(64, 48), "wz": np.array(0, np.int8), "ws": scale})


FLOAT4_VALUES = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], F)


def to_float4e2m1(x):
    """ONNX's float4e2m1 conversion (its reference's thresholds): round to nearest even, saturate
    at +-6, NaN to +6; -0 keeps its sign. Returns the 4-bit patterns."""
    x = np.asarray(x, np.float64)
    magnitude = np.abs(x)
    bounds = [(0.25, False), (0.75, True), (1.25, False), (1.75, True), (2.5, False), (3.5, True), (5.0, False)]
    code = np.zeros(x.shape, np.uint8)
    for k, (bound, inclusive) in enumerate(bounds):
        code[(magnitude >= bound) if inclusive else (magnitude > bound)] = k + 1
    code |= np.where(np.signbit(x), 0x8, 0).astype(np.uint8)
    code[np.isnan(x)] = 0x7
    return code


def float4e2m1_value(code):
    code = np.asarray(code)
    return np.where(code & 0x8, -1, 1).astype(F) * FLOAT4_VALUES[code & 0x7]


def mx_and_2bit_cases():
    """float8e8m0 (opset 24), int2 and uint2 (25) through Cast, CastLike, Q/DQ and Transpose,
    checked against ONNX Runtime 1.30; float4e2m1 (23), which ONNX Runtime 1.30 has no kernel
    for, and the data movement ONNX Runtime lacks for int2, against numpy."""
    T = onnx.TensorProto
    local = np.random.default_rng(25)
    # float8e8m0: ONNX leaves negative inputs unspecified; ONNX Runtime and nxrt treat them as
    # below the smallest value (2^-127 with saturate, NaN without).
    e8 = np.array([0.5, 1.5, 2.5, 3, 0.3, 100, 1e-40, 2.0**-127 * 1.5, 2.0**-127, 2.0**-126 * 1.25, 2.0**127 * 1.5,
                   3e38, np.inf, -np.inf, np.nan, 0, -0.0, -2.6], F)
    for mode in ("up", "down", "nearest"):
        for saturate in (1, 0):
            yield wrapped(f"cast_24_float8e8m0_{mode}_saturate{saturate}", 24,
                          [node("Cast", ["x"], ["yq"], to=FLOAT8E8M0, round_mode=mode, saturate=saturate)], e8, T.FLOAT)
    # Integers round from their exact value (ONNX Runtime 1.30 goes through float first, so it
    # gives 2^30 for 2^30 + 1 rounded up; the unit tests check that case).
    yield wrapped("cast_24_float8e8m0_from_int32", 24, [node("Cast", ["x"], ["yq"], to=FLOAT8E8M0)],
                  np.array([1, 2, 3, 1000, 0, -5, 2**30], np.int32), T.FLOAT)
    # ONNX Runtime 1.30's CastLike ignores round_mode (it rounds up), so numpy gives this one:
    # 0.7, 6, 1e6 and 2^-120 rounded down to powers of two.
    case = wrapped("castlike_24_float8e8m0_down", 24, [node("CastLike", ["x", "like"], ["yq"], round_mode="down")],
                   np.array([0.7, 6, 1e6, 2.0**-120], F), T.DOUBLE,
                   consts={"like": narrow_tensor("like", FLOAT8E8M0, [127], [1])})
    yield case.with_expected({"y": np.array([0.5, 4, 2.0**19, 2.0**-120], np.float64)})
    # int2 and uint2: integers keep their low 2 bits, floats round half away from zero first.
    ints32 = np.array([-3, -2, -1, 0, 1, 2, 3, 4, 5, -100, 7], np.int32)
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.7, -1.2, 12.6, np.nan, np.inf], F)
    for name, code in (("int2", INT2), ("uint2", UINT2)):
        yield wrapped(f"cast_25_{name}_from_int32", 25, [node("Cast", ["x"], ["yq"], to=code)], ints32, T.INT32)
        yield wrapped(f"cast_25_{name}_from_float", 25, [node("Cast", ["x"], ["yq"], to=code)], halves, T.FLOAT)
    yield wrapped("castlike_25_uint2", 25, [node("CastLike", ["x", "like"], ["yq"])], ints32, T.INT32,
                  consts={"like": narrow_tensor("like", UINT2, [0], [1])})
    x5 = np.arange(-7, 8, dtype=np.int32).reshape(3, 5)
    for name, code in (("int2", INT2), ("uint2", UINT2)):
        yield Case(f"transpose_25_{name}", 25, [node("Cast", ["x"], ["xq"], to=code),
                                                node("Transpose", ["xq"], ["t"], perm=[1, 0]),
                                                node("Cast", ["t"], ["y"], to=T.INT32)], {"x": x5}, ["y"])
    # ONNX Runtime 1.30 moves int2 only through Transpose; the chain is exact data movement.
    chain = [node("Reshape", ["xq", "shape"], ["r"]), node("Flatten", ["r"], ["f"], axis=1),
             node("Unsqueeze", ["f", "axes"], ["u"]), node("Squeeze", ["u", "axes"], ["yq"])]
    held = (x5 + 2) % 4 - 2  # the values int2 holds, as Cast from int32 leaves them
    yield Case("movement_25_int2", 25, [node("Cast", ["x"], ["xq"], to=INT2)] + chain +
               [node("Cast", ["yq"], ["y"], to=T.INT32)], {"x": x5}, ["y"], {"shape": ints(5, 1, 3), "axes": ints(0)},
               expected={"y": held.reshape(5, 3).copy()})
    xq = local.uniform(-4, 4, (3, 5)).astype(F)
    yield wrapped("quantizelinear_25_int2", 25, [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"])], xq, T.INT32,
                  consts={"scale": np.array(1.5, F), "zp": narrow_tensor("zp", INT2, [-1], [])})
    yield wrapped("quantizelinear_25_output_dtype_uint2", 25,
                  [node("QuantizeLinear", ["x", "scale"], ["yq"], output_dtype=UINT2)], xq, T.INT32,
                  consts={"scale": np.array(0.75, F)})
    yield wrapped("quantizelinear_25_blocked_int2_axis1", 25,
                  [node("QuantizeLinear", ["x", "scale", "zp"], ["yq"], axis=1, block_size=2)], xq, T.INT32,
                  consts={"scale": local.uniform(0.5, 2, (3, 3)).astype(F),
                          "zp": narrow_tensor("zp", INT2, [0, 1, -1, -2, 0, 1, 1, 0, -1], [3, 3])})
    yield one("dequantizelinear_25_int2_raw_data", 25, "DequantizeLinear", {},
              {"x": narrow_tensor("x", INT2, [-2, -1, 0, 1, 1, -2, 0], [7]), "scale": np.array(0.5, F),
               "zp": narrow_tensor("zp", INT2, [1], [])})
    yield one("dequantizelinear_25_uint2_int32_data_per_axis", 25, "DequantizeLinear", {},
              {"x": narrow_tensor("x", UINT2, [0, 3, 1, 2, 3, 0], [2, 3], int32_data=True),
               "scale": np.array([0.5, 1, 2], F), "zp": narrow_tensor("zp", UINT2, [2, 0, 1], [3], int32_data=True)},
              axis=1)
    # float4e2m1, against the conversion above.
    f4 = np.array([0, -0.0, 0.25, 0.26, 0.75, 1.25, 1.75, 2.5, 3.5, 5, 5.1, -2.6, 100, -np.inf, np.nan, 0.1], F)
    yield wrapped("cast_23_float4e2m1", 23, [node("Cast", ["x"], ["yq"], to=FLOAT4E2M1)], f4, T.FLOAT) \
        .with_expected({"y": float4e2m1_value(to_float4e2m1(f4))})
    scale = np.array(0.5, F)
    yield Case("quantizelinear_23_float4e2m1", 23,
               [node("QuantizeLinear", ["x", "scale"], ["q"], output_dtype=FLOAT4E2M1),
                node("DequantizeLinear", ["q", "scale"], ["y"])], {"x": xq}, ["y"], {"scale": scale},
               expected={"y": float4e2m1_value(to_float4e2m1(xq / scale)) * scale})
    q4 = [0x1, 0x9, 0x7, 0xf, 0x4, 0x3, 0xa]
    yield Case("dequantizelinear_23_float4e2m1_raw_data", 23, node("DequantizeLinear", ["q", "scale"], ["y"]), {},
               ["y"], {"q": narrow_tensor("q", FLOAT4E2M1, q4, [7]), "scale": np.array(0.25, F)},
               expected={"y": float4e2m1_value(q4) * F(0.25)})
    x4 = local.uniform(-6, 6, (3, 5)).astype(F)
    yield Case("movement_23_float4e2m1", 23, [node("Cast", ["x"], ["xq"], to=FLOAT4E2M1),
                                              node("Transpose", ["xq"], ["t"], perm=[1, 0]),
                                              node("Reshape", ["t", "shape"], ["r"]), node("Identity", ["r"], ["i"]),
                                              node("Cast", ["i"], ["y"], to=T.FLOAT)],
               {"x": x4}, ["y"], {"shape": ints(3, 5)},
               expected={"y": float4e2m1_value(to_float4e2m1(x4)).T.reshape(3, 5).copy()})
    yield Case("constant_23_float4e2m1", 23,
               [node("Constant", [], ["c"], value=narrow_tensor("v", FLOAT4E2M1, [0x2, 0xb, 0x7], [3])),
                node("Cast", ["c"], ["cq"], to=T.FLOAT), node("Add", ["cq", "x"], ["y"])],
               {"x": np.array([1, 1, 1], F)}, ["y"], expected={"y": np.array([2, -0.5, 7], F)})


def deform_conv_cases():
    """DeformConv-19 and -22 (2-D): offsets that move taps between pixels and off the image,
    groups, offset groups, pads, strides, dilations, a bias and a mask."""
    local = np.random.default_rng(19)

    def uniform(lo, hi, *shape):
        return local.uniform(lo, hi, shape).astype(F)

    yield Case("deformconv_19", 19, node("DeformConv", ["x", "w", "offset"], ["y"], kernel_shape=[3, 3]),
               {"x": uniform(-2, 2, 1, 2, 5, 5), "w": uniform(-1, 1, 3, 2, 3, 3), "offset": uniform(-1.5, 1.5, 1, 18, 3, 3)},
               ["y"])
    yield Case("deformconv_19_groups_bias_mask", 19,
               node("DeformConv", ["x", "w", "offset", "b", "mask"], ["y"], group=2, offset_group=2, pads=[1, 0, 1, 1],
                    strides=[2, 1], dilations=[1, 2]),
               {"x": uniform(-2, 2, 2, 4, 6, 7), "w": uniform(-1, 1, 4, 2, 3, 2), "offset": uniform(-2, 2, 2, 24, 3, 6),
                "b": uniform(-1, 1, 4), "mask": uniform(0, 1, 2, 12, 3, 6)}, ["y"])
    # Offsets past the image: samples with every neighbour outside read 0, those straddling the
    # edge blend with zeros.
    yield Case("deformconv_22_offsets_off_the_image", 22,
               node("DeformConv", ["x", "w", "offset"], ["y"], pads=[1, 1, 1, 1]),
               {"x": uniform(-2, 2, 1, 3, 4, 4), "w": uniform(-1, 1, 2, 3, 2, 2), "offset": uniform(-4, 4, 1, 8, 5, 5)},
               ["y"])


def max_roi_pool_cases():
    """MaxRoiPool (the one op of ONNX 1.12 without a backend test case): regions inside, past
    the edges, inverted (one pixel), of the second image, and spatial_scale."""
    local = np.random.default_rng(22)
    x = local.uniform(-3, 3, (2, 3, 8, 10)).astype(F)
    rois = np.array([[0, 1, 1, 6, 5], [1, 0, 0, 9, 7], [0, 7, 4, 14, 12], [1, 5, 6, 2, 3], [0, 2.4, 3.6, 8.5, 6.5]], F)
    yield one("maxroipool_17", 17, "MaxRoiPool", {"x": x, "rois": rois}, pooled_shape=[3, 2])
    # ONNX Runtime 1.30 has no MaxRoiPool-22 (which only adds bfloat16), so this one is at 21.
    scaled = rois * np.array([1, 2, 2, 2, 2], F)
    yield one("maxroipool_21_spatial_scale", 21, "MaxRoiPool", {"x": x, "rois": scaled}, pooled_shape=[2, 4],
              spatial_scale=0.5)


def quantized(shape, dtype, local):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    return local.integers(lo, hi, shape).astype(dtype)


def ms(name, op, inputs, consts, input_names, **attrs):
    """One com.microsoft node (opset 1) over graph inputs and initializers, named in `input_names`
    order ("" for an omitted optional input)."""
    return Case(name, 17, helper.make_node(op, input_names, ["y"], domain="com.microsoft", **attrs), inputs, ["y"],
                consts, domains={"com.microsoft": 1}, folder="com_microsoft")


def com_microsoft_cases():
    """ONNX Runtime's quantized element-wise ops and pools of its QOperator models, uint8 and int8:
    same shapes and broadcasts (a channel, one value), inputs of Y's
    quantization and of others, padding counted or not, ceil_mode, channels_last."""
    local = np.random.default_rng(30)
    U8, S8 = np.uint8, np.int8

    def q(dtype, scale, zero):
        return np.array(scale, F), np.array(zero, dtype)

    for dtype, tag in ((U8, "uint8"), (S8, "int8")):
        za, zb, zc = (120, 131, 128) if dtype == U8 else (-8, 5, 0)
        (sa, za), (sb, zb), (sc, zc) = q(dtype, 0.021, za), q(dtype, 0.037, zb), q(dtype, 0.05, zc)
        scales = {"sa": sa, "za": za, "sb": sb, "zb": zb, "sc": sc, "zc": zc}
        names = ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"]
        for op in ("QLinearAdd", "QLinearMul"):
            low = op.lower()
            yield ms(f"{low}_{tag}", op, {"a": quantized((2, 3, 8, 8), dtype, local),
                                          "b": quantized((2, 3, 8, 8), dtype, local)}, scales, names)
            yield ms(f"{low}_{tag}_broadcast_channel", op, {"a": quantized((2, 4, 5, 5), dtype, local),
                                                            "b": quantized((1, 4, 1, 1), dtype, local)}, scales, names)
            yield ms(f"{low}_{tag}_scalar_a", op, {"a": quantized((), dtype, local),
                                                   "b": quantized((3, 37), dtype, local)}, scales, names)
        (sx, zx), (sy, zy) = q(dtype, 0.043, za), q(dtype, 0.02, zc)
        pool = {"sx": sx, "zx": zx, "sy": sy, "zy": zy}
        unary = ["x", "sx", "zx", "sy", "zy"]
        yield ms(f"qlinearsigmoid_{tag}", "QLinearSigmoid", {"x": quantized((2, 3, 50), dtype, local)},
                 {"sx": sx, "zx": zx, "sy": np.array(1 / 256, F), "zy": np.array(0 if dtype == U8 else -128, dtype)},
                 unary)
        yield ms(f"qlinearleakyrelu_{tag}", "QLinearLeakyRelu", {"x": quantized((4, 64), dtype, local)}, pool, unary,
                 alpha=0.2)
        yield ms(f"qlinearleakyrelu_{tag}_default_alpha", "QLinearLeakyRelu",
                 {"x": quantized((300,), dtype, local)}, pool, unary)
        x = quantized((2, 5, 7, 9), dtype, local)
        yield ms(f"qlinearglobalaveragepool_{tag}", "QLinearGlobalAveragePool", {"x": x}, pool, unary)
        yield ms(f"qlinearglobalaveragepool_{tag}_channels_last", "QLinearGlobalAveragePool",
                 {"x": quantized((2, 6, 4, 19), dtype, local)}, pool, unary, channels_last=1)
        yield ms(f"qlinearglobalaveragepool_{tag}_3d", "QLinearGlobalAveragePool",
                 {"x": quantized((1, 3, 4, 5, 6), dtype, local)}, pool, unary)
        yield ms(f"qlinearaveragepool_{tag}_3x3_stride2_pads", "QLinearAveragePool", {"x": x}, pool, unary,
                 kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
        yield ms(f"qlinearaveragepool_{tag}_count_include_pad", "QLinearAveragePool", {"x": x}, pool, unary,
                 kernel_shape=[3, 2], pads=[1, 0, 1, 1], count_include_pad=1)
        yield ms(f"qlinearaveragepool_{tag}_ceil_mode", "QLinearAveragePool", {"x": x}, pool, unary,
                 kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)
        yield ms(f"qlinearaveragepool_{tag}_channels_last", "QLinearAveragePool",
                 {"x": quantized((2, 7, 9, 5), dtype, local)}, pool, unary, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                 channels_last=1)
        yield ms(f"qlinearaveragepool_{tag}_1d", "QLinearAveragePool", {"x": quantized((2, 3, 17), dtype, local)},
                 pool, unary, kernel_shape=[4], strides=[3])
        (s1, z1), (s2, z2) = q(dtype, 0.03, za), q(dtype, 0.011, zb)
        yield ms(f"qlinearconcat_{tag}_axis1", "QLinearConcat",
                 {"x0": quantized((2, 3, 4), dtype, local), "x1": quantized((2, 5, 4), dtype, local),
                  "x2": quantized((2, 1, 4), dtype, local)},
                 {"sy": sy, "zy": zy, "s1": s1, "z1": z1, "s2": s2, "z2": z2},
                 ["sy", "zy", "x0", "sy", "zy", "x1", "s1", "z1", "x2", "s2", "z2"], axis=1)
        yield ms(f"qlinearconcat_{tag}_last_axis", "QLinearConcat",
                 {"x0": quantized((3, 2, 6), dtype, local), "x1": quantized((3, 2, 2), dtype, local)},
                 {"sy": sy, "zy": zy, "s1": s1, "z1": z1},
                 ["sy", "zy", "x0", "s1", "z1", "x1", "sy", "zy"], axis=-1)


def integer_to_float_cases():
    """ONNX Runtime's MatMulIntegerToFloat and DynamicQuantizeMatMul (what its optimizer makes of
    quantize_dynamic's MatMulInteger -> Cast -> Mul -> Add): uint8 and int8 A, B per column or per
    tensor, with and without zero points and a bias, batched A."""
    local = np.random.default_rng(33)
    k, n = 40, 24
    b_s8 = local.integers(-127, 128, (k, n)).astype(np.int8)
    b_u8 = local.integers(0, 256, (k, n)).astype(np.uint8)
    per_column = local.uniform(0.001, 0.01, n).astype(F)
    bias = local.uniform(-1, 1, n).astype(F)

    def case(name, op, inputs, consts, names):
        return Case(name, 17, helper.make_node(op, names, ["y"], domain="com.microsoft"), inputs, ["y"], consts,
                    domains={"com.microsoft": 1}, folder="com_microsoft")

    yield case("matmulintegertofloat_uint8_int8_per_column_bias", "MatMulIntegerToFloat",
               {"a": local.integers(0, 256, (3, 5, k)).astype(np.uint8)},
               {"b": b_s8, "as": np.array(0.02, F), "bs": per_column, "az": np.array(120, np.uint8),
                "bz": np.zeros(n, np.int8), "bias": bias}, ["a", "b", "as", "bs", "az", "bz", "bias"])
    # (ONNX Runtime 1.30 has no kernel for int8 A by uint8 B.)
    yield case("matmulintegertofloat_int8_per_tensor", "MatMulIntegerToFloat",
               {"a": local.integers(-128, 128, (7, k)).astype(np.int8)},
               {"b": b_s8, "as": np.array(0.03, F), "bs": np.array(0.005, F), "az": np.array(-3, np.int8),
                "bz": np.array(-2, np.int8)}, ["a", "b", "as", "bs", "az", "bz"])
    yield case("dynamicquantizematmul_int8_per_column_bias", "DynamicQuantizeMatMul",
               {"a": local.uniform(-2, 3, (2, 6, k)).astype(F)},
               {"b": b_s8, "bs": per_column, "bz": np.zeros(n, np.int8), "bias": bias}, ["a", "b", "bs", "bz", "bias"])
    yield case("dynamicquantizematmul_uint8_per_tensor", "DynamicQuantizeMatMul",
               {"a": local.uniform(-1, 1, (9, k)).astype(F)},
               {"b": b_u8, "bs": np.array(0.004, F), "bz": np.array(128, np.uint8)}, ["a", "b", "bs", "bz"])


def pack_fields(values, bits):
    """Unsigned values of `bits` bits packed along the last axis, low bits first, as MatMulNBits
    stores B and its zero points (the last byte padded with zeros)."""
    per_byte = 8 // bits
    pad = -values.shape[-1] % per_byte
    v = np.concatenate([values, np.zeros(values.shape[:-1] + (pad,), values.dtype)], axis=-1).astype(np.uint16)
    v = v.reshape(values.shape[:-1] + (-1, per_byte))
    return sum(v[..., f] << (f * bits) for f in range(per_byte)).astype(np.uint8)


def matmul_nbits_cases():
    """ONNX Runtime's MatMulNBits (weights quantized in blocks along K, as its MatMulNBitsQuantizer
    writes int4 language models): 4, 8 and 2 bits, packed, float and default zero points, K not a
    multiple of the block, a bias, float16, one row (a decode step) and many (a prefill)."""
    local = np.random.default_rng(34)

    def case(name, rows, k, n, bits=4, block=32, zeros="packed", bias=False, dtype=F, accuracy_level=None):
        blocks = -(-k // block)
        q = local.integers(0, 1 << bits, (n, blocks, block))
        consts = {"b": pack_fields(q, bits),
                  "scales": local.uniform(0.005, 0.05, (n, blocks)).astype(dtype)}
        names = ["a", "b", "scales"]
        if zeros == "packed":
            consts["zp"] = pack_fields(local.integers(0, 1 << bits, (n, blocks)), bits)
        elif zeros == "float":
            consts["zp"] = local.uniform(0, (1 << bits) - 1, (n, blocks)).astype(dtype)
        if zeros:
            names.append("zp")
        if bias:
            names += [""] * (5 - len(names)) + ["bias"]
            consts["bias"] = local.uniform(-1, 1, n).astype(dtype)
        attrs = {"K": k, "N": n, "bits": bits, "block_size": block}
        if accuracy_level is not None:
            attrs["accuracy_level"] = accuracy_level
        return Case(name, 17, helper.make_node("MatMulNBits", names, ["y"], domain="com.microsoft", **attrs),
                    {"a": local.uniform(-1, 1, rows + (k,)).astype(dtype)}, ["y"], consts,
                    domains={"com.microsoft": 1}, folder="com_microsoft")

    yield case("matmulnbits_4bit_block32_bias", (1, 3), 64, 24, bias=True)
    yield case("matmulnbits_4bit_one_row", (1,), 256, 40, block=64, zeros="float")
    yield case("matmulnbits_4bit_default_zero_k_remainder", (5,), 40, 10, block=16, zeros=None)
    yield case("matmulnbits_4bit_many_rows_odd_blocks", (2, 33), 160, 100, bias=True)
    yield case("matmulnbits_4bit_block128_accuracy_level_1", (7,), 256, 32, block=128, accuracy_level=1)
    yield case("matmulnbits_8bit_block32", (2, 2), 96, 16, bits=8)
    yield case("matmulnbits_2bit_block16", (3,), 48, 12, bits=2, block=16)
    yield case("matmulnbits_4bit_float16", (3,), 64, 20, dtype=np.float16, bias=True)
    yield case("matmulnbits_4bit_float16_many_rows", (9,), 96, 70, dtype=np.float16, zeros="float")
    # accuracy_level 4: A quantized to int8 per block, as ONNX Runtime does for 4-bit weights.
    yield case("matmulnbits_4bit_accuracy_level_4_one_row", (1,), 256, 40, accuracy_level=4)
    yield case("matmulnbits_4bit_accuracy_level_4_rows_bias", (5,), 160, 33, zeros="float", bias=True,
               accuracy_level=4)
    yield case("matmulnbits_4bit_accuracy_level_4_many_rows", (2, 10), 128, 70, block=64, accuracy_level=4)
    yield case("matmulnbits_4bit_accuracy_level_4_float16", (3,), 128, 24, dtype=np.float16, accuracy_level=4)
    yield case("matmulnbits_8bit_accuracy_level_4", (3,), 128, 32, bits=8, accuracy_level=4)
    yield case("matmulnbits_2bit_accuracy_level_4", (2,), 64, 16, bits=2, zeros=None, accuracy_level=4)
    # (ONNX Runtime has no int8 kernel for 2 bits in blocks of 16: it computes in float.)
    yield case("matmulnbits_2bit_block16_accuracy_level_4", (2,), 64, 16, bits=2, block=16, zeros=None,
               accuracy_level=4)


def microsoft_fused_cases():
    """ONNX Runtime's fused ops of optimized transformer models (com.microsoft): SkipLayerNormalization
    and SkipSimplifiedLayerNormalization (with every optional input and output, a skip broadcast
    over the batch, 2-D input, float16), Gelu, FastGelu (with and without a bias), BiasGelu and
    QuickGelu; ORT's ONNX-domain SimplifiedLayerNormalization, and LayerNormalization at opset 13."""
    local = np.random.default_rng(35)
    H = np.float16

    def case(name, op, inputs, consts, names, outputs=("y",), **attrs):
        return Case(name, 17, helper.make_node(op, names, list(outputs), domain="com.microsoft", **attrs), inputs,
                    [o for o in outputs if o], consts, domains={"com.microsoft": 1}, folder="com_microsoft")

    def vec(n, dtype=F, lo=-1.0, hi=1.0):
        return local.uniform(lo, hi, n).astype(dtype)

    x, skip = local.uniform(-2, 2, (2, 5, 32)).astype(F), local.uniform(-2, 2, (2, 5, 32)).astype(F)
    yield case("skiplayernormalization_every_input_and_output", "SkipLayerNormalization", {"x": x, "skip": skip},
               {"gamma": vec(32, lo=0.5, hi=1.5), "beta": vec(32), "bias": vec(32)},
               ["x", "skip", "gamma", "beta", "bias"], ("y", "mean", "inv_std_var", "sum"), epsilon=1e-5)
    yield case("skiplayernormalization_skip_broadcast", "SkipLayerNormalization",
               {"x": local.uniform(-2, 2, (3, 4, 24)).astype(F), "skip": local.uniform(-2, 2, (4, 24)).astype(F)},
               {"gamma": vec(24, lo=0.5, hi=1.5)}, ["x", "skip", "gamma"])
    yield case("skiplayernormalization_float16", "SkipLayerNormalization",
               {"x": x.astype(H), "skip": skip.astype(H)},
               {"gamma": vec(32, H, 0.5, 1.5), "beta": vec(32, H), "bias": vec(32, H)},
               ["x", "skip", "gamma", "beta", "bias"], ("y", "", "", "sum"))
    yield case("skipsimplifiedlayernormalization_every_input_and_output", "SkipSimplifiedLayerNormalization",
               {"x": x, "skip": skip}, {"gamma": vec(32, lo=0.5, hi=1.5), "bias": vec(32)},
               ["x", "skip", "gamma", "bias"], ("y", "mean", "inv_std_var", "sum"), epsilon=1e-6)
    yield case("skipsimplifiedlayernormalization_2d", "SkipSimplifiedLayerNormalization",
               {"x": local.uniform(-2, 2, (7, 48)).astype(F), "skip": local.uniform(-2, 2, (7, 48)).astype(F)},
               {"gamma": vec(48, lo=0.5, hi=1.5)}, ["x", "skip", "gamma"])
    yield case("skipsimplifiedlayernormalization_float16", "SkipSimplifiedLayerNormalization",
               {"x": x.astype(H), "skip": skip.astype(H)}, {"gamma": vec(32, H, 0.5, 1.5)}, ["x", "skip", "gamma"],
               ("y", "", "", "sum"))
    a = local.uniform(-4, 4, (3, 7, 40)).astype(F)
    yield case("gelu_microsoft", "Gelu", {"x": a}, {}, ["x"])
    yield case("gelu_microsoft_float16", "Gelu", {"x": a.astype(H)}, {}, ["x"])
    yield case("fastgelu_bias", "FastGelu", {"x": a}, {"bias": vec(40)}, ["x", "bias"])
    yield case("fastgelu", "FastGelu", {"x": a}, {}, ["x"])
    yield case("fastgelu_float16_bias", "FastGelu", {"x": a.astype(H)}, {"bias": vec(40, H)}, ["x", "bias"])
    yield case("biasgelu", "BiasGelu", {"x": a}, {"bias": vec(40)}, ["x", "bias"])
    yield case("quickgelu", "QuickGelu", {"x": a}, {}, ["x"])
    yield case("quickgelu_alpha", "QuickGelu", {"x": a}, {}, ["x"], alpha=1.3)
    # SimplifiedLayerNormalization: ONNX Runtime registers it in the ONNX domain.
    for tag, dtype in (("", F), ("_float16", H)):
        yield Case(f"simplifiedlayernormalization{tag}", 17,
                   helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["y"], axis=-1, epsilon=1e-6),
                   {"x": x.astype(dtype)}, ["y"], {"scale": vec(32, dtype, 0.5, 1.5)}, folder="com_microsoft")
    # LayerNormalization in an opset 13 model: ONNX Runtime registers it in the ONNX domain before 17.
    yield Case("layernormalization_opset13_onnx_runtime", 13,
               helper.make_node("LayerNormalization", ["x", "scale", "bias"], ["y", "mean", "inv_std_dev"], axis=-1,
                                epsilon=1e-5),
               {"x": x}, ["y", "mean", "inv_std_dev"], {"scale": vec(32, lo=0.5, hi=1.5), "bias": vec(32)},
               folder="com_microsoft")


def group_query_attention_cases():
    """ONNX Runtime's GroupQueryAttention (the attention of its GenAI language models): a first
    prompt with packed QKV and rotary embedding, one with a cache buffer longer than the prompt,
    decoding steps of a batch whose entries have cached different lengths (interleaved rotary),
    a local window with softcap and scale, smooth softmax, a later prompt after a cache, float16."""
    local = np.random.default_rng(36)
    I32 = np.int32

    def caches(positions, half, dtype=F):
        angles = np.arange(positions)[:, None] * 10000.0 ** (-np.arange(half) / half)
        return {"cos": np.cos(angles).astype(dtype), "sin": np.sin(angles).astype(dtype)}

    def case(name, b, s, heads, kv, hs, lengths, total, past_rows=0, packed=False, rotary=False, dtype=F, **attrs):
        inputs, consts, names = {}, {}, []
        if packed:
            inputs["qkv"] = local.uniform(-1, 1, (b, s, (heads + 2 * kv) * hs)).astype(dtype)
            names += ["qkv", "", ""]
        else:
            inputs["q"] = local.uniform(-1, 1, (b, s, heads * hs)).astype(dtype)
            inputs["k"] = local.uniform(-1, 1, (b, s, kv * hs)).astype(dtype)
            inputs["v"] = local.uniform(-1, 1, (b, s, kv * hs)).astype(dtype)
            names += ["q", "k", "v"]
        if past_rows:
            inputs["past_key"] = local.uniform(-1, 1, (b, kv, past_rows, hs)).astype(dtype)
            inputs["past_value"] = local.uniform(-1, 1, (b, kv, past_rows, hs)).astype(dtype)
            names += ["past_key", "past_value"]
        else:
            names += ["", ""]
        consts["seqlens_k"] = np.array([n - 1 for n in lengths], I32)
        consts["total"] = np.array(total, I32)
        names += ["seqlens_k", "total"]
        if rotary:
            consts.update(caches(64, hs // 2, dtype))
            names += ["cos", "sin"]
            attrs["do_rotary"] = 1
        node = helper.make_node("GroupQueryAttention", names, ["y", "present_key", "present_value"],
                                domain="com.microsoft", num_heads=heads, kv_num_heads=kv, **attrs)
        return Case(name, 17, node, inputs, ["y", "present_key", "present_value"], consts,
                    domains={"com.microsoft": 1}, folder="com_microsoft")

    yield case("groupqueryattention_prompt_packed_rotary", 1, 6, 4, 2, 16, [6], 6, packed=True, rotary=True)
    yield case("groupqueryattention_prompt_cache_buffer", 2, 5, 4, 1, 32, [5, 5], 5, past_rows=8)
    yield case("groupqueryattention_decode_batch_interleaved_rotary", 2, 1, 4, 2, 16, [5, 7], 7, past_rows=7,
               rotary=True, rotary_interleaved=1)
    yield case("groupqueryattention_decode_local_window_softcap", 1, 1, 4, 2, 16, [10], 10, past_rows=9,
               local_window_size=4, softcap=5.0, scale=0.3)
    yield case("groupqueryattention_prompt_smooth_softmax", 1, 4, 2, 2, 16, [4], 4, smooth_softmax=1)
    yield case("groupqueryattention_later_prompt", 1, 3, 4, 2, 16, [8], 8, past_rows=6, rotary=True)
    yield case("groupqueryattention_decode_float16", 2, 1, 4, 2, 16, [3, 6], 6, past_rows=6, rotary=True,
               dtype=np.float16)
    # 16 new tokens or more: the scores of a head's queries multiply on the GEMM.
    yield case("groupqueryattention_long_prompt_window_softcap", 2, 20, 4, 2, 16, [20, 20], 20, packed=True,
               rotary=True, local_window_size=7, softcap=8.0)
    yield case("groupqueryattention_long_later_prompt_smooth_softmax", 1, 17, 2, 1, 32, [30], 30, past_rows=16,
               rotary=True, smooth_softmax=1)
    yield case("groupqueryattention_long_prompt_float16", 1, 18, 4, 2, 16, [18], 18, rotary=True,
               rotary_interleaved=1, dtype=np.float16)


def gather_block_quantized_cases():
    """ONNX Runtime's GatherBlockQuantized (an int4 embedding table): uint8 data of 4, 8 and 2 bits
    packed along rows, packed and default zero points, float and float16 scales, int32 and int64
    indices (a negative one), and int4 data."""
    local = np.random.default_rng(37)

    def case(name, rows, width, indices, bits=4, block=32, zeros=True, dtype=F, int4=False):
        blocks = -(-width // block)
        q = local.integers(0, 1 << bits, (rows, width))
        consts = {"scales": local.uniform(0.01, 0.1, (rows, blocks)).astype(dtype)}
        names = ["data", "indices", "scales"]
        z = local.integers(0, 1 << bits, (rows, blocks))
        if int4:
            consts["data"] = narrow_tensor("data", INT4, (q - 8).ravel().tolist(), (rows, width))
            if zeros:
                consts["zp"] = narrow_tensor("zp", INT4, (z - 8).ravel().tolist(), (rows, blocks))
        else:
            consts["data"] = pack_fields(q, bits)
            if zeros:
                consts["zp"] = pack_fields(z, bits)
        if zeros:
            names.append("zp")
        attrs = {"block_size": block} if int4 else {"bits": bits, "block_size": block}
        return Case(name, 17, helper.make_node("GatherBlockQuantized", names, ["y"], domain="com.microsoft",
                                               gather_axis=0, quantize_axis=1, **attrs),
                    {"indices": indices}, ["y"], consts, domains={"com.microsoft": 1}, folder="com_microsoft")

    yield case("gatherblockquantized_4bit", 40, 64, np.array([[3, 0, 39], [-1, 17, 3]], np.int64))
    yield case("gatherblockquantized_4bit_float16_default_zero", 30, 96, np.array([5, 29, 0], np.int32),
               zeros=False, dtype=np.float16)
    yield case("gatherblockquantized_8bit", 12, 48, np.array([[11], [2]], np.int64), bits=8, block=16)
    yield case("gatherblockquantized_2bit", 20, 64, np.array([7, 19], np.int64), bits=2, block=16)
    yield case("gatherblockquantized_int4", 16, 64, np.array([1, 15, -16], np.int64), int4=True)


def bert_cases():
    """The ops ONNX Runtime's transformer optimizer writes for BERT-like encoders (com.microsoft):
    EmbedLayerNormalization with every optional input and output (a mask with other values than
    0 and 1, position_ids of one row and of each batch entry, a segment table without segment
    ids); Attention with each mask form (key lengths, ends and starts, raw 2-D with values other
    than 0 and 1, 3-D), GPT-2's past and present with unidirectional, a decoding step,
    qkv_hidden_sizes with scale, mask_filter_value and attention_bias, a query that sees no key;
    QAttention (quantize_dynamic's Attention) with int8 and uint8 weights, per-column scales, a past;
    MultiHeadAttention's self- and cross-attention, key and value already in heads, past and
    present with unidirectional, a decoding step with attention_bias; com.microsoft RotaryEmbedding
    with positions per token and as one offset, rank 4 interleaved, a partial rotary dim, float16;
    causal prompts longer than a block of queries."""
    local = np.random.default_rng(38)
    I32 = np.int32

    def embed(name, b, s, hidden, vocab=30, positions=16, segments=2, segment_ids=True, mask=None,
              position_ids=None, outputs=("y", "mask_index", "sum")):
        inputs = {"ids": local.integers(0, vocab, (b, s)).astype(I32)}
        consts = {"words": local.uniform(-1, 1, (vocab, hidden)).astype(F),
                  "positions": local.uniform(-1, 1, (positions, hidden)).astype(F)}
        names = ["ids", "", "words", "positions", "", "gamma", "beta", "", ""]
        if segments:
            consts["segments"] = local.uniform(-1, 1, (segments, hidden)).astype(F)
            names[4] = "segments"
            if segment_ids:
                inputs["segment_ids"] = local.integers(0, segments, (b, s)).astype(I32)
                names[1] = "segment_ids"
        consts["gamma"] = local.uniform(0.5, 1.5, hidden).astype(F)
        consts["beta"] = local.uniform(-0.5, 0.5, hidden).astype(F)
        if mask is not None:
            inputs["mask"] = mask.astype(I32)
            names[7] = "mask"
        if position_ids is not None:
            inputs["position_ids"] = position_ids.astype(I32)
            names[8] = "position_ids"
        while names[-1] == "":
            names.pop()
        node = helper.make_node("EmbedLayerNormalization", names, list(outputs), domain="com.microsoft",
                                epsilon=1e-5)
        return Case(name, 17, node, inputs, [o for o in outputs if o], consts, domains={"com.microsoft": 1},
                    folder="com_microsoft")

    yield embed("embedlayernormalization_every_input", 2, 5, 32,
                mask=np.array([[1, 1, 1, 0, 0], [1, 2, 1, 1, 0]]), position_ids=np.array([[4, 3, 2, 1, 0]]))
    yield embed("embedlayernormalization_position_ids_per_batch", 2, 4, 24, segments=0,
                position_ids=np.array([[0, 1, 2, 3], [9, 10, 11, 12]]))
    yield embed("embedlayernormalization_segment_table_without_ids", 3, 6, 16, segment_ids=False,
                outputs=("y", "mask_index"))

    def mask_and_past(inputs, names, mask, mask_at, past_shape):
        """Attention's and QAttention's mask (input mask_at) and past (appended), where given."""
        if mask is not None:
            inputs["mask"] = np.asarray(mask, I32)
            names[mask_at] = "mask"
        if past_shape:
            inputs["past"] = local.uniform(-1, 1, past_shape).astype(F)
            names.append("past")

    def attention(name, b, s, din, heads, mask=None, past=0, hidden_sizes=None, attention_bias=None, outputs=("y",),
                  **attrs):
        d, dv = hidden_sizes[0] if hidden_sizes else din, hidden_sizes[2] if hidden_sizes else din
        inputs = {"x": local.uniform(-1, 1, (b, s, din)).astype(F)}
        # (ONNX Runtime 1.30's CPU kernel crashes without a bias.)
        consts = {"weights": local.uniform(-0.3, 0.3, (din, 2 * d + dv)).astype(F),
                  "bias": local.uniform(-0.2, 0.2, 2 * d + dv).astype(F)}
        names = ["x", "weights", "bias", ""]
        mask_and_past(inputs, names, mask, 3, past and (2, b, heads, past, d // heads))
        if attention_bias is not None:
            names += [""] * (5 - len(names)) + ["attention_bias"]
            inputs["attention_bias"] = local.uniform(-1, 1, attention_bias).astype(F)
        if hidden_sizes:
            attrs["qkv_hidden_sizes"] = hidden_sizes
        node = helper.make_node("Attention", names, list(outputs), domain="com.microsoft", num_heads=heads, **attrs)
        return Case(name, 17, node, inputs, list(outputs), consts, domains={"com.microsoft": 1},
                    folder="com_microsoft")

    yield attention("attention_key_lengths", 2, 5, 32, 4, mask=[5, 3])
    yield attention("attention_raw_mask", 2, 5, 32, 4, mask=[[1, 1, 0, 1, 1], [1, 2, -1, 0, 1]])
    yield attention("attention_end_start", 2, 6, 16, 2, mask=[6, 4, 0, 2])
    yield attention("attention_mask_3d", 1, 4, 16, 2, mask=(local.uniform(0, 1, (1, 4, 4)) > 0.3).astype(I32))
    yield attention("attention_gpt2_past_unidirectional", 2, 3, 32, 4, past=4, outputs=("y", "present"),
                    mask=[[0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], unidirectional=1)
    yield attention("attention_decode_step", 2, 1, 32, 4, past=6, outputs=("y", "present"), unidirectional=1)
    yield attention("attention_hidden_sizes_scale_bias", 2, 4, 24, 2, hidden_sizes=[16, 16, 8],
                    attention_bias=(1, 2, 4, 4), scale=0.3, mask_filter_value=-3.0, mask=[4, 2])
    yield attention("attention_unidirectional_key_gone", 2, 5, 16, 2, mask=[5, 0],
                    unidirectional=1)
    yield attention("attention_no_mask", 1, 20, 64, 4)

    def qattention(name, b, s, din, heads, weight_type=np.int8, per_column=False, mask=None, past=0,
                   outputs=("y",), **attrs):
        lo, hi = (-127, 128) if weight_type == np.int8 else (0, 256)
        inputs = {"x": local.integers(0, 256, (b, s, din)).astype(np.uint8)}
        consts = {"w": local.integers(lo, hi, (din, 3 * din)).astype(weight_type),
                  "bias": local.uniform(-0.2, 0.2, 3 * din).astype(F),
                  "x_scale": np.array(0.01, F),
                  "w_scale": (local.uniform(0.002, 0.004, 3 * din) if per_column else np.array(0.003)).astype(F),
                  "x_zero": np.array(128, np.uint8),
                  "w_zero": (np.full(3 * din, 0 if weight_type == np.int8 else 128, weight_type) if per_column
                             else np.array(0 if weight_type == np.int8 else 130, weight_type))}
        names = ["x", "w", "bias", "x_scale", "w_scale", "", "x_zero", "w_zero"]
        mask_and_past(inputs, names, mask, 5, past and (2, b, heads, past, din // heads))
        node = helper.make_node("QAttention", names, list(outputs), domain="com.microsoft", num_heads=heads, **attrs)
        return Case(name, 17, node, inputs, list(outputs), consts, domains={"com.microsoft": 1},
                    folder="com_microsoft")

    yield qattention("qattention_key_lengths", 2, 5, 32, 4, mask=[5, 3])
    yield qattention("qattention_uint8_weights_per_column", 1, 6, 16, 2, weight_type=np.uint8, per_column=True)
    yield qattention("qattention_past_unidirectional", 2, 3, 32, 4, past=4, outputs=("y", "present"),
                     mask=[[1, 1, 1, 1, 1, 1, 1], [0, 1, 1, 1, 1, 1, 1]], unidirectional=1)

    def mha(name, b, s, heads, hidden, kv_seq=None, v_hidden=None, bias=True, mask=None, past=0, in_heads=False,
            attention_bias=None, outputs=("y",), **attrs):
        kv_seq, v_hidden = kv_seq or s, v_hidden or hidden
        hs, vhs = hidden // heads, v_hidden // heads
        inputs = {"q": local.uniform(-1, 1, (b, s, hidden)).astype(F)}
        if in_heads:
            inputs["k"] = local.uniform(-1, 1, (b, heads, kv_seq, hs)).astype(F)
            inputs["v"] = local.uniform(-1, 1, (b, heads, kv_seq, vhs)).astype(F)
        else:
            inputs["k"] = local.uniform(-1, 1, (b, kv_seq, hidden)).astype(F)
            inputs["v"] = local.uniform(-1, 1, (b, kv_seq, v_hidden)).astype(F)
        consts, names = {}, ["q", "k", "v", "", "", "", "", ""]
        if bias:
            consts["bias"] = local.uniform(-0.5, 0.5, 2 * hidden + v_hidden).astype(F)
            names[3] = "bias"
        if mask is not None:
            inputs["mask"] = np.asarray(mask, I32)
            names[4] = "mask"
        if attention_bias is not None:
            inputs["attention_bias"] = local.uniform(-1, 1, attention_bias).astype(F)
            names[5] = "attention_bias"
        if past:
            inputs["past_key"] = local.uniform(-1, 1, (b, heads, past, hs)).astype(F)
            inputs["past_value"] = local.uniform(-1, 1, (b, heads, past, vhs)).astype(F)
            names[6:8] = ["past_key", "past_value"]
        while names[-1] == "":
            names.pop()
        node = helper.make_node("MultiHeadAttention", names, list(outputs), domain="com.microsoft", num_heads=heads,
                                **attrs)
        return Case(name, 17, node, inputs, list(outputs), consts, domains={"com.microsoft": 1},
                    folder="com_microsoft")

    yield mha("multiheadattention_self_key_lengths", 2, 5, 4, 32, mask=[5, 2])
    yield mha("multiheadattention_cross_raw_mask", 2, 3, 2, 16, kv_seq=7, v_hidden=8, bias=False,
              mask=[[1, 1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1]])
    yield mha("multiheadattention_kv_in_heads", 2, 4, 2, 16, kv_seq=6, mask=(local.uniform(0, 1, (2, 4, 6)) > 0.3))
    yield mha("multiheadattention_past_unidirectional", 2, 3, 4, 32, past=4, outputs=("y", "present_key",
              "present_value"), mask=[[1, 1, 1, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 1]], unidirectional=1)
    yield mha("multiheadattention_decode_attention_bias", 2, 1, 4, 32, past=6,
              outputs=("y", "present_key", "present_value"), attention_bias=(2, 1, 1, 7), scale=0.2,
              mask_filter_value=-5.0, mask=[7, 5])

    def rotary(name, x, positions, rows, half, dtype=F, **attrs):
        angles = np.arange(rows)[:, None] * 10000.0 ** (-np.arange(half) / half)
        consts = {"cos": np.cos(angles).astype(dtype), "sin": np.sin(angles).astype(dtype)}
        node = helper.make_node("RotaryEmbedding", ["x", "positions", "cos", "sin"], ["y"], domain="com.microsoft",
                                **attrs)
        return Case(name, 17, node, {"x": x.astype(dtype), "positions": np.asarray(positions, np.int64)}, ["y"],
                    consts, domains={"com.microsoft": 1}, folder="com_microsoft")

    yield rotary("rotaryembedding_microsoft", local.uniform(-1, 1, (2, 4, 32)), [[0, 1, 2, 3], [5, 6, 7, 8]], 16, 8)
    yield rotary("rotaryembedding_microsoft_4d_interleaved_offset", local.uniform(-1, 1, (2, 2, 3, 16)), [3], 8, 8,
                 interleaved=1)
    yield rotary("rotaryembedding_microsoft_partial", local.uniform(-1, 1, (1, 3, 48)), [[2, 0, 9]], 10, 4,
                 num_heads=3, rotary_embedding_dim=8)
    yield rotary("rotaryembedding_microsoft_float16", local.uniform(-1, 1, (1, 5, 32)), [0], 8, 8, dtype=np.float16,
                 num_heads=2)
    # More queries than one causal block (32): blocks over the keys their last query sees.
    yield attention("attention_long_prompt_unidirectional", 2, 45, 32, 4, past=3, outputs=("y", "present"),
                    mask=[48, 40], unidirectional=1)
    yield mha("multiheadattention_long_prompt_unidirectional", 1, 70, 2, 16, unidirectional=1)


def ort_fusion_cases():
    """What ONNX Runtime's optimizer writes into the float models it saves (com.microsoft):
    FusedConv with each activation (Relu, LeakyRelu with a Z input summed first, Clip,
    HardSigmoid, Sigmoid, Tanh) and none, FusedGemm with an activation's alpha, FusedMatMul with
    transA, transB, alpha and broadcast batch dims."""
    local = np.random.default_rng(39)

    def case(name, op, inputs, consts, names, **attrs):
        return Case(name, 17, helper.make_node(op, names, ["y"], domain="com.microsoft", **attrs), inputs, ["y"],
                    consts, domains={"com.microsoft": 1}, folder="com_microsoft")

    x = local.uniform(-1, 1, (1, 3, 7, 7)).astype(F)
    w, b = local.uniform(-0.5, 0.5, (4, 3, 3, 3)).astype(F), local.uniform(-0.5, 0.5, 4).astype(F)
    conv = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    for act, params in (("Relu", None), ("Clip", [-0.3, 0.4]), ("HardSigmoid", [0.3, 0.4]), ("Sigmoid", None),
                        ("Tanh", None)):
        extra = {"activation_params": params} if params else {}
        yield case(f"fusedconv_{act.lower()}", "FusedConv", {"x": x}, {"w": w, "b": b}, ["x", "w", "b"],
                   activation=act, **conv, **extra)
    z = local.uniform(-1, 1, (1, 4, 4, 4)).astype(F)
    yield case("fusedconv_leakyrelu_sum", "FusedConv", {"x": x, "z": z}, {"w": w, "b": b}, ["x", "w", "b", "z"],
               activation="LeakyRelu", activation_params=[0.2], strides=[2, 2], **conv)
    yield case("fusedconv_no_activation", "FusedConv", {"x": x}, {"w": w}, ["x", "w"], kernel_shape=[3, 3])
    yield case("fusedgemm_leakyrelu", "FusedGemm", {"a": local.uniform(-1, 1, (5, 6)).astype(F)},
               {"b": local.uniform(-1, 1, (4, 6)).astype(F), "c": local.uniform(-1, 1, 4).astype(F)},
               ["a", "b", "c"], transB=1, alpha=0.7, beta=0.5, activation="LeakyRelu", activation_alpha=0.1)
    yield case("fusedmatmul_trans_alpha", "FusedMatMul",
               {"a": local.uniform(-1, 1, (2, 3, 6, 5)).astype(F), "b": local.uniform(-1, 1, (3, 4, 6)).astype(F)},
               {}, ["a", "b"], transA=1, transB=1, alpha=0.125)
    yield case("fusedmatmul_alpha", "FusedMatMul", {"a": local.uniform(-1, 1, (4, 5)).astype(F)},
               {"b": local.uniform(-1, 1, (5, 3)).astype(F)}, ["a", "b"], alpha=2.0)


def qoperator_network_case():
    """A small network in ONNX Runtime's QOperator form, float X to float Y: QLinearConv (3x3,
    depthwise, pointwise), MaxPool of uint8, QLinearAdd, QLinearLeakyRelu, QLinearGlobalAveragePool,
    Flatten and QGemm, where a value rounded another way in any of them changes the outputs."""
    local = np.random.default_rng(31)
    consts, nodes = {}, []

    def quant(name, scale, zero):
        consts[f"{name}_s"], consts[f"{name}_z"] = np.array(scale, F), np.array(zero, np.uint8)
        return [f"{name}_s", f"{name}_z"]

    def weights(name, shape):
        consts[f"{name}_w"] = local.integers(-127, 128, shape).astype(np.int8)
        consts[f"{name}_ws"] = local.uniform(0.002, 0.01, shape[0]).astype(F)
        consts[f"{name}_wz"] = np.zeros(shape[0], np.int8)
        consts[f"{name}_b"] = local.integers(-300, 300, shape[0]).astype(np.int32)
        return [f"{name}_w", f"{name}_ws", f"{name}_wz"]

    def conv(x, name, shape, scale, zero, **attrs):
        w = weights(name, shape)
        nodes.append(node("QLinearConv", [x, *quant_of[x], *w, *quant(name, scale, zero), f"{name}_b"], [name],
                          **attrs))
        quant_of[name] = [f"{name}_s", f"{name}_z"]

    def ms_node(op, inputs, name, scale, zero, **attrs):
        nodes.append(helper.make_node(op, inputs + quant(name, scale, zero), [name], domain="com.microsoft", **attrs))
        quant_of[name] = [f"{name}_s", f"{name}_z"]

    quant_of = {"xq": quant("xq", 0.02, 128)}
    nodes.append(node("QuantizeLinear", ["x", *quant_of["xq"]], ["xq"]))
    conv("xq", "c1", (8, 4, 3, 3), 0.04, 0, pads=[1, 1, 1, 1])
    nodes.append(node("MaxPool", ["c1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]))
    quant_of["p1"] = quant_of["c1"]
    conv("p1", "c2", (8, 1, 3, 3), 0.04, 0, pads=[1, 1, 1, 1], group=8)
    conv("c2", "c3", (8, 8, 1, 1), 0.08, 128)
    ms_node("QLinearAdd", ["c3", *quant_of["c3"], "p1", *quant_of["p1"]], "sum", 0.08, 128)
    ms_node("QLinearLeakyRelu", ["sum", *quant_of["sum"]], "act", 0.05, 100, alpha=0.1)
    ms_node("QLinearGlobalAveragePool", ["act", *quant_of["act"]], "pool", 0.02, 128)
    nodes.append(node("Flatten", ["pool"], ["flat"]))
    w = weights("fc", (5, 8))
    ms_node("QGemm", ["flat", *quant_of["pool"], *w, "fc_b"], "logits", 0.1, 128, transB=1)
    nodes.append(node("DequantizeLinear", ["logits", *quant_of["logits"]], ["y"]))
    return Case("qoperator_network", 17, nodes, {"x": local.uniform(-2, 2, (2, 4, 8, 8)).astype(F)}, ["y"], consts,
                domains={"com.microsoft": 1}, folder="com_microsoft")


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
    folder = REPO / "testdata" / case.folder / case.name
    shutil.rmtree(folder, ignore_errors=True)
    data = folder / "test_data_set_0"
    data.mkdir(parents=True)
    model = case.model()
    onnx.save(model, str(folder / "model.onnx"))
    for i, (n, a) in enumerate(case.inputs.items()):
        (data / f"input_{i}.pb").write_bytes(onnx.numpy_helper.from_array(a, n).SerializeToString())
    if case.expected:
        for i, n in enumerate(case.outputs):
            (data / f"output_{i}.pb").write_bytes(onnx.numpy_helper.from_array(case.expected[n], n).SerializeToString())
        return
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
