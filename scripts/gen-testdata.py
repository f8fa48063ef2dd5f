#!/usr/bin/python3
"""Generates testdata/: small ONNX models with their inputs and expected outputs.

Run with Debian's python (python3-onnx 1.12, python3-numpy):  /usr/bin/python3 scripts/gen-testdata.py
Deterministic: fixed seeds, no timestamps, each case folder rebuilt from scratch, so a rerun
writes byte-identical files. Expected outputs come from the small numpy references below,
computed in float32, never from a runtime under test. testdata/README.md says what each
case is for.
"""

import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.external_data_helper import convert_model_to_external_data

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "testdata")
PRODUCER = "nxrt scripts/gen-testdata.py"
F32 = np.float32


# ---- numpy references, one per op used, float32 throughout -------------------------------

def ref_relu(x):
    return np.maximum(x, F32(0))


def ref_softmax(x, axis=-1):
    # Opset 13+ semantics: normalise along one axis; subtracting the max keeps exp finite.
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(F32)


def ref_conv2d(x, w, b, pads, strides=(1, 1), group=1):
    """Direct convolution; pads in ONNX order [top, left, bottom, right]."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    assert c == cg * group and m % group == 0
    top, left, bottom, right = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    oh = (h + top + bottom - kh) // strides[0] + 1
    ow = (wd + left + right - kw) // strides[1] + 1
    y = np.zeros((n, m, oh, ow), F32)
    per_group = m // group
    for oc in range(m):
        g = oc // per_group
        for ic in range(cg):
            for i in range(kh):
                for j in range(kw):
                    patch = xp[:, g * cg + ic,
                               i:i + strides[0] * (oh - 1) + 1:strides[0],
                               j:j + strides[1] * (ow - 1) + 1:strides[1]]
                    y[:, oc] += w[oc, ic, i, j] * patch
        y[:, oc] += b[oc]
    return y


def ref_batchnorm(x, scale, bias, mean, var, epsilon):
    shape = (1, -1, 1, 1)
    inv = (F32(1) / np.sqrt(var + F32(epsilon))).reshape(shape)
    return ((x - mean.reshape(shape)) * inv * scale.reshape(shape) + bias.reshape(shape)).astype(F32)


def ref_maxpool2d(x, kernel, strides):
    n, c, h, wd = x.shape
    oh = (h - kernel[0]) // strides[0] + 1
    ow = (wd - kernel[1]) // strides[1] + 1
    y = np.full((n, c, oh, ow), -np.inf, F32)
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            y = np.maximum(y, x[:, :, i:i + strides[0] * (oh - 1) + 1:strides[0],
                                j:j + strides[1] * (ow - 1) + 1:strides[1]])
    return y


def ref_global_average_pool(x):
    return x.mean(axis=(2, 3), keepdims=True, dtype=F32)


def ref_flatten(x, axis=1):
    return x.reshape(int(np.prod(x.shape[:axis])), -1)


def ref_gemm_trans_b(a, b, c):
    return (a @ b.T + c).astype(F32)


# ---- writing one case ----------------------------------------------------------------------

def weights(seed, shape, scale):
    # RandomState's stream is frozen across numpy versions, unlike default_rng's methods.
    return (np.random.RandomState(seed).standard_normal(shape) * scale).astype(F32)


def tensor_input(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def make_model(graph, opset, ir_version, extra_opsets=()):
    model = helper.make_model(
        graph, producer_name=PRODUCER, ir_version=ir_version,
        opset_imports=[helper.make_opsetid("", opset)] + list(extra_opsets))
    return model


def fresh_dir(name):
    path = os.path.join(ROOT, name)
    # Rebuilt from scratch: save_model appends to an existing external-data file.
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def save_tensor_pb(array, name, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def save_test_data(path, inputs, outputs):
    """ONNX backend-test layout plus the same tensors as .npy named after the values."""
    data_set = os.path.join(path, "test_data_set_0")
    for folder in (data_set, os.path.join(path, "inputs"), os.path.join(path, "expected")):
        os.makedirs(folder)
    for kind, folder, values in (("input", "inputs", inputs), ("output", "expected", outputs)):
        for k, (name, array) in enumerate(values.items()):
            save_tensor_pb(array, name, os.path.join(data_set, f"{kind}_{k}.pb"))
            np.save(os.path.join(path, folder, f"{name}.npy"), array)


def check(model_path, outputs):
    """The checker with shape inference, and the inferred output types against the references."""
    onnx.checker.check_model(model_path, full_check=True)
    model = onnx.shape_inference.infer_shapes(onnx.load(model_path), check_type=True, strict_mode=True)
    for value in model.graph.output:
        array = outputs[value.name]
        assert value.type.tensor_type.elem_type == onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype], value.name
        dims = value.type.tensor_type.shape.dim
        assert len(dims) == array.ndim, (value.name, dims, array.shape)
        for dim, size in zip(dims, array.shape):
            assert not dim.HasField("dim_value") or dim.dim_value == size, (value.name, dims, array.shape)


def write_case(name, model, inputs, outputs):
    path = fresh_dir(name)
    model_path = os.path.join(path, "model.onnx")
    onnx.save(model, model_path)
    save_test_data(path, inputs, outputs)
    check(model_path, outputs)


# ---- the cases -----------------------------------------------------------------------------

def gen_mlp():
    w1, b1 = weights(1, (16, 32), 0.25), weights(2, (32,), 0.1)
    w2, b2 = weights(3, (32, 8), 0.18), weights(4, (8,), 0.1)
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["fc1.mm"], name="fc1_matmul"),
        helper.make_node("Add", ["fc1.mm", "fc1.bias"], ["fc1.out"], name="fc1_add"),
        helper.make_node("Relu", ["fc1.out"], ["relu1.out"], name="relu1"),
        helper.make_node("MatMul", ["relu1.out", "fc2.weight"], ["fc2.mm"], name="fc2_matmul"),
        helper.make_node("Add", ["fc2.mm", "fc2.bias"], ["fc2.out"], name="fc2_add"),
        helper.make_node("Softmax", ["fc2.out"], ["y"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "mlp", [tensor_input("x", ["batch", 16])], [tensor_input("y", ["batch", 8])],
        initializer=[numpy_helper.from_array(a, n) for a, n in
                     ((w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"), (b2, "fc2.bias"))],
        doc_string="two-layer perceptron with a symbolic batch dimension")
    x = weights(5, (2, 16), 1.0)
    y = ref_softmax(ref_relu(x @ w1 + b1) @ w2 + b2, axis=-1)
    write_case("mlp", make_model(graph, 17, 8), {"x": x}, {"y": y})


def gen_cnn():
    c1w, c1b = weights(10, (8, 3, 3, 3), 0.27), weights(11, (8,), 0.1)
    bn_scale = (1 + weights(12, (8,), 0.1)).astype(F32)
    bn_bias = weights(13, (8,), 0.1)
    bn_mean = weights(14, (8,), 0.1)
    bn_var = (0.5 + np.abs(weights(15, (8,), 0.5))).astype(F32)
    eps = 1e-5
    c2w, c2b = weights(16, (16, 8, 3, 3), 0.12), weights(17, (16,), 0.1)
    dww, dwb = weights(18, (16, 1, 3, 3), 0.33), weights(19, (16,), 0.1)
    fcw, fcb = weights(20, (10, 16), 0.25), weights(21, (10,), 0.1)
    pad1 = [1, 1, 1, 1]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.weight", "conv1.bias"], ["conv1.out"], name="conv1",
                         kernel_shape=[3, 3], pads=pad1),
        helper.make_node("BatchNormalization", ["conv1.out", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"],
                         ["bn1.out"], name="bn1", epsilon=eps),
        helper.make_node("Relu", ["bn1.out"], ["relu1.out"], name="relu1"),
        helper.make_node("MaxPool", ["relu1.out"], ["pool1.out"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["pool1.out", "conv2.weight", "conv2.bias"], ["conv2.out"], name="conv2",
                         kernel_shape=[3, 3], pads=pad1, strides=[1, 1], group=1),
        helper.make_node("Relu", ["conv2.out"], ["relu2.out"], name="relu2"),
        helper.make_node("Conv", ["relu2.out", "dw.weight", "dw.bias"], ["dw.out"], name="dwconv",
                         kernel_shape=[3, 3], pads=pad1, group=16),
        helper.make_node("Relu", ["dw.out"], ["relu3.out"], name="relu3"),
        helper.make_node("GlobalAveragePool", ["relu3.out"], ["gap.out"], name="gap"),
        helper.make_node("Flatten", ["gap.out"], ["flat.out"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat.out", "fc.weight", "fc.bias"], ["logits"], name="fc", transB=1),
    ]
    inits = [(c1w, "conv1.weight"), (c1b, "conv1.bias"), (bn_scale, "bn1.scale"), (bn_bias, "bn1.bias"),
             (bn_mean, "bn1.mean"), (bn_var, "bn1.var"), (c2w, "conv2.weight"), (c2b, "conv2.bias"),
             (dww, "dw.weight"), (dwb, "dw.bias"), (fcw, "fc.weight"), (fcb, "fc.bias")]
    graph = helper.make_graph(
        nodes, "cnn", [tensor_input("image", [1, 3, 32, 32])], [tensor_input("logits", [1, 10])],
        initializer=[numpy_helper.from_array(a, n) for a, n in inits],
        doc_string="small convolutional classifier: conv, batchnorm, pooling, depthwise conv, gemm")
    image = weights(22, (1, 3, 32, 32), 1.0)
    h = ref_relu(ref_batchnorm(ref_conv2d(image, c1w, c1b, pad1), bn_scale, bn_bias, bn_mean, bn_var, eps))
    h = ref_maxpool2d(h, (2, 2), (2, 2))
    h = ref_relu(ref_conv2d(h, c2w, c2b, pad1))
    h = ref_relu(ref_conv2d(h, dww, dwb, pad1, group=16))
    logits = ref_gemm_trans_b(ref_flatten(ref_global_average_pool(h)), fcw, fcb)
    write_case("cnn", make_model(graph, 13, 7), {"image": image}, {"logits": logits})


def gen_unsupported_op():
    # com.microsoft::Inverse (a matrix inverse from ONNX Runtime's contrib ops): no nxrt EP
    # implements it.
    nodes = [
        helper.make_node("Relu", ["x"], ["relu.out"], name="relu"),
        helper.make_node("Inverse", ["relu.out"], ["inverse.out"], name="inverse", domain="com.microsoft"),
        helper.make_node("Abs", ["inverse.out"], ["y"], name="abs"),
    ]
    graph = helper.make_graph(
        nodes, "unsupported_op", [tensor_input("x", [2, 3, 3])], [tensor_input("y", [2, 3, 3])],
        value_info=[tensor_input("inverse.out", [2, 3, 3])],  # shape inference cannot see into contrib ops
        doc_string="com.microsoft::Inverse, an op no nxrt EP implements, between two ordinary ops")
    # Positive matrices with a dominant diagonal: Relu keeps them and they invert.
    x = (np.abs(weights(30, (2, 3, 3), 1.0)) + 3 * np.eye(3, dtype=F32)).astype(F32)
    y = np.abs(np.linalg.inv(ref_relu(x).astype(np.float64))).astype(F32)
    write_case("unsupported_op", make_model(graph, 17, 8, [helper.make_opsetid("com.microsoft", 1)]), {"x": x},
               {"y": y})


def gen_external_data():
    w1, b1 = weights(40, (32, 24), 0.18), weights(41, (24,), 0.1)  # w1: 3072 bytes
    w2 = weights(42, (24, 16), 0.2)                                  # w2: 1536 bytes
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["fc1.mm"], name="fc1_matmul"),
        helper.make_node("Add", ["fc1.mm", "fc1.bias"], ["fc1.out"], name="fc1_add"),
        helper.make_node("Relu", ["fc1.out"], ["relu1.out"], name="relu1"),
        helper.make_node("MatMul", ["relu1.out", "fc2.weight"], ["y"], name="fc2_matmul"),
    ]
    graph = helper.make_graph(
        nodes, "external_data", [tensor_input("x", ["batch", 32])], [tensor_input("y", ["batch", 16])],
        initializer=[numpy_helper.from_array(a, n) for a, n in
                     ((w1, "fc1.weight"), (b1, "fc1.bias"), (w2, "fc2.weight"))],
        doc_string="weights stored beside the model in weights.bin (ONNX external data)")
    model = make_model(graph, 17, 8)
    # Only the two matrices pass the threshold; the small bias stays inline. Offsets follow
    # initializer order in a file created fresh by fresh_dir, so they are the same every run.
    convert_model_to_external_data(model, all_tensors_to_one_file=True, location="weights.bin",
                                   size_threshold=1024)
    x = weights(43, (3, 32), 1.0)
    y = (ref_relu(x @ w1 + b1) @ w2).astype(F32)
    write_case("external_data", model, {"x": x}, {"y": y})
    external = [t.name for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL]
    assert external == ["fc1.weight", "fc2.weight"], external


def gen_foreign_epcontext():
    # Opaque to every reader but the QNN EP; its content only has to be stable.
    payload = b"QNNCTX\x00\x01" + bytes(range(56))
    partition = "QNNExecutionProvider_QNN_9273561520584731920_1_0"
    node = helper.make_node(
        "EPContext", ["x"], ["y"], name=partition, domain="com.microsoft",
        main_context=1, ep_cache_context=payload, embed_mode=1, source="QNNExecutionProvider",
        partition_name=partition, ep_sdk_version="2.26.0", hardware_architecture="v73")
    graph = helper.make_graph(
        [node], "foreign_epcontext", [tensor_input("x", [1, 16])], [tensor_input("y", [1, 4])],
        doc_string="an EPContext node made for ONNX Runtime's QNN EP, which nxrt does not load")
    model = make_model(graph, 17, 8, [helper.make_opsetid("com.microsoft", 1)])
    path = fresh_dir("foreign_epcontext")
    model_path = os.path.join(path, "model.onnx")
    onnx.save(model, model_path)
    # check_model rejects the contrib op; check the parts nxrt's reader relies on instead.
    loaded = onnx.load(model_path)
    assert {(o.domain, o.version) for o in loaded.opset_import} == {("", 17), ("com.microsoft", 1)}
    attrs = {a.name: helper.get_attribute_value(a) for a in loaded.graph.node[0].attribute}
    assert attrs["source"] == b"QNNExecutionProvider" and attrs["ep_cache_context"] == payload


def main():
    gen_mlp()
    gen_cnn()
    gen_unsupported_op()
    gen_external_data()
    gen_foreign_epcontext()
    too_big = []
    for folder, _, files in os.walk(ROOT):
        for f in files:
            size = os.path.getsize(os.path.join(folder, f))
            if size >= 100 * 1024:
                too_big.append(f"{os.path.join(folder, f)} ({size} bytes)")
    if too_big:
        sys.exit("gen-testdata: files over 100 KiB: " + ", ".join(too_big))


if __name__ == "__main__":
    main()
