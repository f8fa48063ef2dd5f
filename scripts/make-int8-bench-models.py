#!/usr/bin/python3
"""Writes int8 models to .cache/bench-models/ for `nxrt bench` and scripts/bench-vs-ort.sh:
single ops of the shapes of a quantized CNN's layers and of a decoder's MLP, and a ResNet block
in the QDQ form a static quantizer writes.

  qlinearconv_3x3.onnx        QLinearConv 64 -> 64 channels, 3x3, pads 1, on uint8 [1, 64, 56, 56]
  qlinearconv_1x1.onnx        QLinearConv 256 -> 64, 1x1, on [1, 256, 56, 56]
  qlinearconv_depthwise.onnx  QLinearConv depthwise 3x3 (144 groups) on [1, 144, 56, 56]
  matmulinteger.onnx          MatMulInteger uint8 [128, 512] x int8 [512, 1376], zero points
  dynamicquantizelinear.onnx  DynamicQuantizeLinear of float [128, 1376]
  qdq_basic_block.onnx        ResNet's basic block (64 channels, 56x56) in QDQ form: float X
                              quantized, two 3x3 convolutions between DequantizeLinear and
                              QuantizeLinear (the first with its Relu), the float residual Add
                              and Relu, Y quantized and dequantized
  qdq_matmul.onnx             float [128, 512] quantized, by int8 [512, 1376] (per column) in
                              QDQ form, Y quantized and dequantized
  qdq_resnet18.onnx           ResNet-18 (1x3x224x224, 1000 classes) in the QDQ form of
                              ONNX Runtime's quantize_static: every Conv and the Gemm between
                              DequantizeLinear and QuantizeLinear, the residual Adds, MaxPool,
                              GlobalAveragePool and Flatten each between their own
                              quantizations, the logits quantized and dequantized
  qdq_mobilenet_v2.onnx       MobileNetV2 (1x3x224x224, 1000 classes) the same way: depthwise
                              convolutions, Clip(0, 6) after each expanding and depthwise
                              Conv, the residual Adds between their quantizations
  qdq_squeezenet1_1.onnx      SqueezeNet 1.1's layers the same way: fire modules whose two
                              expansions a Concat joins (its inputs and output quantized alike)
  qop_resnet18.onnx           the same three networks with the same weights in the QOperator
  qop_mobilenet_v2.onnx       form of quantize_static (QuantFormat.QOperator): QLinearConv with
  qop_squeezenet1_1.onnx      its Relu or Clip folded into Y's quantization, com.microsoft's
                              QLinearAdd, QLinearConcat, QLinearGlobalAveragePool and QGemm,
                              MaxPool and Flatten on uint8; float X quantized, the logits
                              dequantized

Weights are int8 with per-channel scales, random (seed 0); run with /usr/bin/python3.

  scripts/make-int8-bench-models.py [--out-dir DIR]
"""
import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent


def save(out_dir, name, node, inputs, outputs, inits):
    save_graph(out_dir, name, [node], inputs, outputs, inits)


def save_graph(out_dir, name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    imports = [helper.make_opsetid("", 13)]
    if any(n.domain == "com.microsoft" for n in nodes):
        imports.append(helper.make_opsetid("com.microsoft", 1))
    model = helper.make_model(graph, opset_imports=imports, producer_name="nxrt-bench")
    model.ir_version = 8
    onnx.save(model, str(out_dir / f"{name}.onnx"))
    print(f"wrote {out_dir / name}.onnx")


def qlinearconv(out_dir, rng, name, channels, out_channels, size, kernel, group=1):
    weights = rng.integers(-127, 128, (out_channels, channels // group, kernel, kernel)).astype(np.int8)
    inits = [
        numpy_helper.from_array(weights, "w"),
        numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zero"),
        numpy_helper.from_array(rng.uniform(0.005, 0.02, out_channels).astype(np.float32), "w_scale"),
        numpy_helper.from_array(np.zeros(out_channels, np.int8), "w_zero"),
        numpy_helper.from_array(np.array(0.5, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "y_zero"),
        numpy_helper.from_array(rng.integers(-1000, 1000, out_channels).astype(np.int32), "bias"),
    ]
    node = helper.make_node("QLinearConv", ["x", "x_scale", "x_zero", "w", "w_scale", "w_zero", "y_scale", "y_zero",
                                            "bias"], ["y"], pads=[kernel // 2] * 4, group=group)
    save(out_dir, name, node, [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, channels, size, size])],
         [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, out_channels, size, size])], inits)


def qdq_basic_block(out_dir, rng, channels=64, size=56):
    inits, nodes = [], []

    def init(name, array):
        inits.append(numpy_helper.from_array(array, name))

    def quantize(x, scale, zero, name):
        init(f"{name}_s", np.array(scale, np.float32))
        init(f"{name}_z", np.array(zero, np.uint8))
        nodes.append(helper.make_node("QuantizeLinear", [x, f"{name}_s", f"{name}_z"], [name]))
        nodes.append(helper.make_node("DequantizeLinear", [name, f"{name}_s", f"{name}_z"], [f"{name}_f"]))
        return f"{name}_f", scale

    def conv(x, x_scale, name, relu):
        w_scale = rng.uniform(0.002, 0.006, channels).astype(np.float32)
        init(f"{name}_w", rng.integers(-127, 128, (channels, channels, 3, 3)).astype(np.int8))
        init(f"{name}_ws", w_scale)
        init(f"{name}_wz", np.zeros(channels, np.int8))
        init(f"{name}_b", rng.integers(-1000, 1000, channels).astype(np.int32))
        init(f"{name}_bs", (np.float32(x_scale) * w_scale).astype(np.float32))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_ws", f"{name}_wz"], [f"{name}_wf"],
                                      axis=0))
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_b", f"{name}_bs"], [f"{name}_bf"], axis=0))
        nodes.append(helper.make_node("Conv", [x, f"{name}_wf", f"{name}_bf"], [f"{name}_y"], pads=[1, 1, 1, 1],
                                      name=name))
        if not relu:
            return quantize(f"{name}_y", 0.1, 128, f"{name}_q")
        nodes.append(helper.make_node("Relu", [f"{name}_y"], [f"{name}_r"]))
        return quantize(f"{name}_r", 0.05, 0, f"{name}_q")

    x, x_scale = quantize("x", 0.05, 128, "x_q")
    h, h_scale = conv(x, x_scale, "conv1", relu=True)
    h, _ = conv(h, h_scale, "conv2", relu=False)
    nodes.append(helper.make_node("Add", [h, x], ["sum"]))
    nodes.append(helper.make_node("Relu", ["sum"], ["out"]))
    y, _ = quantize("out", 0.05, 0, "y_q")
    nodes.append(helper.make_node("Identity", [y], ["y"]))
    shape = [1, channels, size, size]
    save_graph(out_dir, "qdq_basic_block", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)], inits)


class QdqGraph:
    """Builds a QDQ model: activations quantized to uint8 per tensor, weights int8 per output
    channel, biases int32 at input scale x weight scale, each float op between DequantizeLinear
    and QuantizeLinear nodes as ONNX Runtime's quantize_static writes them."""

    def __init__(self, out_dir, rng):
        self.out_dir, self.rng, self.inits, self.nodes, self.count = out_dir, rng, [], [], 0

    def name(self, stem):
        self.count += 1
        return f"{stem}{self.count}"

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def quantize(self, x, scale, zero):
        """x (float) -> QuantizeLinear -> DequantizeLinear: the float value a quantized op reads."""
        q = self.name("q")
        self.init(f"{q}_s", np.array(scale, np.float32))
        self.init(f"{q}_z", np.array(zero, np.uint8))
        self.nodes.append(helper.make_node("QuantizeLinear", [x, f"{q}_s", f"{q}_z"], [q], name=f"{q}_quantize"))
        self.nodes.append(helper.make_node("DequantizeLinear", [q, f"{q}_s", f"{q}_z"], [f"{q}_f"],
                                           name=f"{q}_dequantize"))
        return f"{q}_f", scale

    def draw_weights(self, stem, shape):
        """int8 weights of `shape` per output channel (scaled as He's initialization: outputs after
        a Relu keep the inputs' spread) and their int32 bias, as initializers; the weights' scales."""
        fan_in = int(np.prod(shape[1:]))
        w_scale = (np.sqrt(6.0 / fan_in) / 127 * self.rng.uniform(0.8, 1.2, shape[0])).astype(np.float32)
        self.init(f"{stem}_w", self.rng.integers(-127, 128, shape).astype(np.int8))
        self.init(f"{stem}_ws", w_scale)
        self.init(f"{stem}_wz", np.zeros(shape[0], np.int8))
        self.init(f"{stem}_b", self.rng.integers(-200, 200, shape[0]).astype(np.int32))
        return w_scale

    def weights(self, stem, shape, x_scale):
        """draw_weights' weights and bias dequantized (the bias at x_scale * w_scale)."""
        w_scale = self.draw_weights(stem, shape)
        self.init(f"{stem}_bs", (np.float32(x_scale) * w_scale).astype(np.float32))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{stem}_w", f"{stem}_ws", f"{stem}_wz"],
                                           [f"{stem}_wf"], axis=0))
        self.nodes.append(helper.make_node("DequantizeLinear", [f"{stem}_b", f"{stem}_bs"], [f"{stem}_bf"], axis=0))
        return f"{stem}_wf", f"{stem}_bf"

    def conv(self, x, x_scale, channels, out_channels, kernel, stride=1, relu=True, group=1, relu6=False):
        """A Conv with its Relu (or, `relu6`, a Clip to [0, 6]) or none, its output quantized."""
        stem = self.name("conv")
        w, b = self.weights(stem, (out_channels, channels // group, kernel, kernel), x_scale)
        self.nodes.append(helper.make_node("Conv", [x, w, b], [f"{stem}_y"], name=stem, kernel_shape=[kernel] * 2,
                                           strides=[stride] * 2, pads=[kernel // 2] * 4, group=group))
        if relu6:
            lo, hi = self.init(f"{stem}_lo", np.array(0, np.float32)), self.init(f"{stem}_hi", np.array(6, np.float32))
            self.nodes.append(helper.make_node("Clip", [f"{stem}_y", lo, hi], [f"{stem}_r"], name=f"{stem}_clip"))
            return self.quantize(f"{stem}_r", 6 / 255, 0)
        if not relu:
            return self.quantize(f"{stem}_y", 0.08, 128)
        self.nodes.append(helper.make_node("Relu", [f"{stem}_y"], [f"{stem}_r"], name=f"{stem}_relu"))
        return self.quantize(f"{stem}_r", 0.04, 0)

    def op(self, op_type, inputs, scale, zero, **attrs):
        stem = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, inputs, [f"{stem}_y"], name=stem, **attrs))
        return self.quantize(f"{stem}_y", scale, zero)

    def add(self, a, b, relu, scale, zero):
        """The residual Add (with its Relu), its output quantized."""
        stem = self.name("add")
        self.nodes.append(helper.make_node("Add", [a, b], [f"{stem}_y"], name=stem))
        if relu:
            self.nodes.append(helper.make_node("Relu", [f"{stem}_y"], [f"{stem}_r"], name=f"{stem}_relu"))
            return self.quantize(f"{stem}_r", scale, zero)
        return self.quantize(f"{stem}_y", scale, zero)

    def gemm(self, x, x_scale, channels, classes, name):
        """The classifier's Gemm, its logits quantized and dequantized."""
        w, b = self.weights(name, (classes, channels), x_scale)
        self.nodes.append(helper.make_node("Gemm", [x, w, b], ["logits_f"], name=name, transB=1))
        y, _ = self.quantize("logits_f", 0.1, 128)
        return y

    def logits(self, x):
        """The float value of x, the network's last (already dequantized here)."""
        return x

    def save(self, name, output):
        self.nodes.append(helper.make_node("Identity", [output], ["logits"], name="output"))
        save_graph(self.out_dir, name, self.nodes,
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 224, 224])],
                   [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 1000])], self.inits)


class QopGraph(QdqGraph):
    """The same networks in ONNX Runtime's QOperator form: each value between ops is uint8 with
    its scale and zero point (initializers named after it); QLinearConv folds its Relu or Clip
    into Y's quantization (zero point 0 saturates below 0, and 6 / 255 at 255 above 6), as
    quantize_static does. Weights are drawn as QdqGraph draws them, so both forms of a network
    hold the same ones."""

    def quantize(self, x, scale, zero):
        q = self.name("q")
        self.init(f"{q}_s", np.array(scale, np.float32))
        self.init(f"{q}_z", np.array(zero, np.uint8))
        if x == "x":  # the float input
            self.nodes.append(helper.make_node("QuantizeLinear", [x, f"{q}_s", f"{q}_z"], [q], name=f"{q}_quantize"))
        return q, scale

    def params(self, q):
        """A quantized value's scale and zero point."""
        return [f"{q}_s", f"{q}_z"]

    def output(self, scale, zero):
        """A new quantized value (its scale and zero point made), for an op to write."""
        q, _ = self.quantize(None, scale, zero)
        return q

    def weights(self, stem, shape, x_scale):
        """draw_weights' weights with their scale and zero point, and the int32 bias, as QLinearConv
        and QGemm read them."""
        self.draw_weights(stem, shape)
        return [f"{stem}_w", f"{stem}_ws", f"{stem}_wz"], f"{stem}_b"

    def conv(self, x, x_scale, channels, out_channels, kernel, stride=1, relu=True, group=1, relu6=False):
        stem = self.name("conv")
        w, b = self.weights(stem, (out_channels, channels // group, kernel, kernel), x_scale)
        scale, zero = (6 / 255, 0) if relu6 else (0.04, 0) if relu else (0.08, 128)
        y = self.output(scale, zero)
        self.nodes.append(helper.make_node("QLinearConv", [x, *self.params(x), *w, *self.params(y), b], [y], name=stem,
                                           kernel_shape=[kernel] * 2, strides=[stride] * 2, pads=[kernel // 2] * 4,
                                           group=group))
        return y, scale

    def op(self, op_type, inputs, scale, zero, **attrs):
        stem = self.name(op_type.lower())
        x = inputs[0]
        if op_type == "GlobalAveragePool":
            y = self.output(scale, zero)
            self.nodes.append(helper.make_node("QLinearGlobalAveragePool", [x, *self.params(x), *self.params(y)], [y],
                                               name=stem, domain="com.microsoft"))
            return y, scale
        if op_type == "Concat":
            y = self.output(scale, zero)
            joined = [v for q in inputs for v in (q, *self.params(q))]
            self.nodes.append(helper.make_node("QLinearConcat", [*self.params(y), *joined], [y], name=stem,
                                               domain="com.microsoft", **attrs))
            return y, scale
        # MaxPool and Flatten move quantized values: Y keeps X's scale and zero point.
        self.nodes.append(helper.make_node(op_type, [x], [f"{stem}_y"], name=stem, **attrs))
        self.init(f"{stem}_y_s", np.array(scale, np.float32))
        self.init(f"{stem}_y_z", np.array(zero, np.uint8))
        return f"{stem}_y", scale

    def add(self, a, b, relu, scale, zero):
        stem = self.name("add")
        y = self.output(scale, zero)
        self.nodes.append(helper.make_node("QLinearAdd", [a, *self.params(a), b, *self.params(b), *self.params(y)],
                                           [y], name=stem, domain="com.microsoft"))
        return y, scale

    def logits(self, x):
        self.nodes.append(helper.make_node("DequantizeLinear", [x, *self.params(x)], [f"{x}_f"],
                                           name=f"{x}_dequantize"))
        return f"{x}_f"

    def gemm(self, x, x_scale, channels, classes, name):
        w, b = self.weights(name, (classes, channels), x_scale)
        y = self.output(0.1, 128)
        self.nodes.append(helper.make_node("QGemm", [x, *self.params(x), *w, b, *self.params(y)], [y], name=name,
                                           domain="com.microsoft", transB=1))
        self.nodes.append(helper.make_node("DequantizeLinear", [y, *self.params(y)], [f"{name}_f"],
                                           name=f"{name}_dequantize"))
        return f"{name}_f"


def resnet18(g, name):
    x, s = g.quantize("x", 0.03, 128)
    x, s = g.conv(x, s, 3, 64, 7, stride=2)
    x, s = g.op("MaxPool", [x], s, 0, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    channels = 64
    for stage, width in enumerate((64, 128, 256, 512)):
        for block in range(2):
            stride = 2 if stage > 0 and block == 0 else 1
            h, hs = g.conv(x, s, channels, width, 3, stride)
            h, hs = g.conv(h, hs, width, width, 3, relu=False)
            shortcut = x
            if stride != 1 or channels != width:
                shortcut, _ = g.conv(x, s, channels, width, 1, stride, relu=False)
            x, s = g.add(h, shortcut, True, 0.04, 0)
            channels = width
    classifier(g, x, s, 512, name)


def classifier(g, x, s, channels, name):
    """GlobalAveragePool, Flatten and the 1000-class Gemm, the logits quantized and dequantized."""
    x, s = g.op("GlobalAveragePool", [x], s, 0)
    x, s = g.op("Flatten", [x], s, 0)
    g.save(name, g.gemm(x, s, channels, 1000, "fc"))


def mobilenet_v2(g, name):
    x, s = g.quantize("x", 0.03, 128)
    x, s = g.conv(x, s, 3, 32, 3, stride=2, relu6=True)
    channels = 32
    for expand, width, repeats, first_stride in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                                                 (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(repeats):
            stride = first_stride if i == 0 else 1
            hidden = channels * expand
            h, hs = x, s
            if expand != 1:
                h, hs = g.conv(h, hs, channels, hidden, 1, relu6=True)
            h, hs = g.conv(h, hs, hidden, hidden, 3, stride, group=hidden, relu6=True)
            h, hs = g.conv(h, hs, hidden, width, 1, relu=False)
            if stride == 1 and channels == width:
                h, hs = g.add(h, x, False, 0.08, 128)
            x, s, channels = h, hs, width
    x, s = g.conv(x, s, channels, 1280, 1, relu6=True)
    classifier(g, x, s, 1280, name)


def squeezenet1_1(g, name):
    """SqueezeNet 1.1's layers: fire modules whose 1x1 and 3x3 expansions are joined along their
    channels (Concat of equally quantized values, QLinearConcat in QOperator form), a 1x1
    convolution to the 1000 classes, GlobalAveragePool and Flatten."""
    x, s = g.quantize("x", 0.03, 128)
    x, s = g.conv(x, s, 3, 64, 3, stride=2)
    x, s = g.op("MaxPool", [x], s, 0, kernel_shape=[3, 3], strides=[2, 2])
    channels = 64
    for squeeze, expand, pool in ((16, 64, False), (16, 64, True), (32, 128, False), (32, 128, True),
                                  (48, 192, False), (48, 192, False), (64, 256, False), (64, 256, False)):
        h, hs = g.conv(x, s, channels, squeeze, 1)
        e1, _ = g.conv(h, hs, squeeze, expand, 1)
        e3, _ = g.conv(h, hs, squeeze, expand, 3)
        x, s = g.op("Concat", [e1, e3], 0.04, 0, axis=1)
        channels = 2 * expand
        if pool:
            x, s = g.op("MaxPool", [x], s, 0, kernel_shape=[3, 3], strides=[2, 2])
    x, s = g.conv(x, s, channels, 1000, 1)
    x, s = g.op("GlobalAveragePool", [x], s, 0)
    x, s = g.op("Flatten", [x], s, 0)
    g.save(name, g.logits(x))


def qdq_matmul(out_dir, rng, m=128, k=512, n=1376):
    inits = [numpy_helper.from_array(np.array(0.05, np.float32), "a_s"),
             numpy_helper.from_array(np.array(128, np.uint8), "a_z"),
             numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "b"),
             numpy_helper.from_array(rng.uniform(0.002, 0.006, n).astype(np.float32), "b_s"),
             numpy_helper.from_array(np.zeros(n, np.int8), "b_z"),
             numpy_helper.from_array(np.array(0.2, np.float32), "y_s"),
             numpy_helper.from_array(np.array(128, np.uint8), "y_z")]
    nodes = [helper.make_node("QuantizeLinear", ["x", "a_s", "a_z"], ["a_q"]),
             helper.make_node("DequantizeLinear", ["a_q", "a_s", "a_z"], ["a"]),
             helper.make_node("DequantizeLinear", ["b", "b_s", "b_z"], ["b_f"], axis=1),
             helper.make_node("MatMul", ["a", "b_f"], ["y_f"]),
             helper.make_node("QuantizeLinear", ["y_f", "y_s", "y_z"], ["y_q"]),
             helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"])]
    save_graph(out_dir, "qdq_matmul", nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
               [helper.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], inits)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=REPO / ".cache" / "bench-models")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    qlinearconv(args.out_dir, rng, "qlinearconv_3x3", 64, 64, 56, 3)
    qlinearconv(args.out_dir, rng, "qlinearconv_1x1", 256, 64, 56, 1)
    qlinearconv(args.out_dir, rng, "qlinearconv_depthwise", 144, 144, 56, 3, group=144)
    qdq_basic_block(args.out_dir, np.random.default_rng(1))
    qdq_matmul(args.out_dir, np.random.default_rng(2))
    for form, graph in (("qdq", QdqGraph), ("qop", QopGraph)):
        resnet18(graph(args.out_dir, np.random.default_rng(3)), f"{form}_resnet18")
        mobilenet_v2(graph(args.out_dir, np.random.default_rng(4)), f"{form}_mobilenet_v2")
        squeezenet1_1(graph(args.out_dir, np.random.default_rng(5)), f"{form}_squeezenet1_1")
    m, k, n = 128, 512, 1376
    inits = [numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "b"),
             numpy_helper.from_array(np.array(7, np.uint8), "a_zero"),
             numpy_helper.from_array(np.array(0, np.int8), "b_zero")]
    save(args.out_dir, "matmulinteger", helper.make_node("MatMulInteger", ["a", "b", "a_zero", "b_zero"], ["y"]),
         [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
         [helper.make_tensor_value_info("y", TensorProto.INT32, [m, n])], inits)
    save(args.out_dir, "dynamicquantizelinear", helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "s", "z"]),
         [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, n])],
         [helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n]),
          helper.make_tensor_value_info("s", TensorProto.FLOAT, []),
          helper.make_tensor_value_info("z", TensorProto.UINT8, [])], [])


if __name__ == "__main__":
    main()
