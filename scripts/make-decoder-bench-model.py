#!/usr/bin/python3
"""Writes .cache/bench-models/decoder_op23.onnx: two Llama-style decoder layers at opset 23, for
`nxrt bench` and scripts/bench-vs-ort.sh. Each layer: RMSNormalization, the q/k/v projections
(MatMul), RotaryEmbedding on q and k (packed heads, positions 0 to seq-1), causal grouped-query
Attention (8 query heads, 2 key/value heads, head size 64), the output projection and residual
Add, then RMSNormalization and a SiLU-gated MLP (hidden 512, intermediate 1376). Input: x
float[1, 128, 512]. Random weights (seed 0); run with /usr/bin/python3 (Debian's python3-onnx).

With --int8, every MatMul is quantized as ONNX Runtime's quantize_dynamic writes it:
DynamicQuantizeLinear of the activations, MatMulInteger with int8 weights (symmetric, one
scale per weight), Cast to float and a Mul by the product of the two scales. It writes
decoder_op23_int8.onnx unless --out says otherwise.

With --int4, every MatMul by a weight becomes ONNX Runtime's com.microsoft MatMulNBits, as its
MatMulNBitsQuantizer and ONNX Runtime GenAI's model builder write int4 language models: 4 bits
in blocks of 32 along K, a scale and a uint8 zero point per block (asymmetric), accuracy_level 4
(ONNX Runtime may quantize the activations to int8; nxrt computes in float). It writes
decoder_op23_int4.onnx (decoder_op23_int4_seq1.onnx with --seq 1, a decode step's products).

With --genai, the same two layers as ONNX Runtime GenAI's model builder writes them for its CPU
int4 models: SimplifiedLayerNormalization, then SkipSimplifiedLayerNormalization at each residual
Add, Q, K and V as one packed MatMulNBits, GroupQueryAttention with its rotary embedding and KV
cache (past_key_N / past_value_N in, present_key_N / present_value_N out), seqlens_k and
total_sequence_length computed from the inputs' shapes, and every MatMul a MatMulNBits as with
--int4. With --past P the model continues P cached tokens (a decode step with --seq 1). It
writes decoder_genai_int4[_seqN][_pastP].onnx.

  scripts/make-decoder-bench-model.py [--seq N] [--int8 | --int4 | --genai [--past P]] [--out FILE]
"""
import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
HIDDEN, HEADS, KV_HEADS, HEAD, FFN, LAYERS = 512, 8, 2, 64, 1376, 2


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=128, help="tokens in the input (default 128)")
    parser.add_argument("--int8", action="store_true", help="quantize the MatMuls dynamically to int8")
    parser.add_argument("--int4", action="store_true", help="quantize the MatMuls' weights to 4 bits (MatMulNBits)")
    parser.add_argument("--genai", action="store_true", help="ONNX Runtime GenAI's form (GroupQueryAttention, "
                        "(Skip)SimplifiedLayerNormalization, MatMulNBits)")
    parser.add_argument("--past", type=int, default=0, help="with --genai: cached tokens before the input")
    parser.add_argument("--out", type=Path, help="the model file (default: .cache/bench-models/decoder_op23.onnx, "
                        "or decoder_op23_int8.onnx with --int8, decoder_op23_int4[_seqN].onnx with --int4)")
    args = parser.parse_args()
    if args.int8 + args.int4 + args.genai > 1:
        parser.error("--int8, --int4 and --genai exclude each other")
    if args.genai:
        return write_genai_model(args)
    name = "decoder_op23_int8" if args.int8 else "decoder_op23_int4" if args.int4 else "decoder_op23"
    if args.int4 and args.seq != 128:
        name += f"_seq{args.seq}"
    args.out = args.out or REPO / ".cache" / "bench-models" / f"{name}.onnx"
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def weight(name, *shape, scale=None):
        scale = scale or 1 / np.sqrt(shape[0])
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    positions = max(4096, args.seq)
    angles = np.arange(positions)[:, None] * 10000.0 ** (-np.arange(HEAD // 2) / (HEAD // 2))
    inits.append(numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"))
    inits.append(numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin"))
    inits.append(numpy_helper.from_array(np.arange(args.seq, dtype=np.int64)[None], "position_ids"))
    x = "x"
    for layer in range(LAYERS):
        p = f"l{layer}_"
        inits.append(numpy_helper.from_array(np.ones(HIDDEN, np.float32), p + "norm1"))
        inits.append(numpy_helper.from_array(np.ones(HIDDEN, np.float32), p + "norm2"))
        nodes += [
            helper.make_node("RMSNormalization", [x, p + "norm1"], [p + "h"], epsilon=1e-6),
            helper.make_node("MatMul", [p + "h", weight(p + "wq", HIDDEN, HEADS * HEAD)], [p + "q"]),
            helper.make_node("MatMul", [p + "h", weight(p + "wk", HIDDEN, KV_HEADS * HEAD)], [p + "k"]),
            helper.make_node("MatMul", [p + "h", weight(p + "wv", HIDDEN, KV_HEADS * HEAD)], [p + "v"]),
            helper.make_node("RotaryEmbedding", [p + "q", "cos", "sin", "position_ids"], [p + "qr"], num_heads=HEADS),
            helper.make_node("RotaryEmbedding", [p + "k", "cos", "sin", "position_ids"], [p + "kr"], num_heads=KV_HEADS),
            helper.make_node("Attention", [p + "qr", p + "kr", p + "v"], [p + "a"], is_causal=1, q_num_heads=HEADS,
                             kv_num_heads=KV_HEADS),
            helper.make_node("MatMul", [p + "a", weight(p + "wo", HEADS * HEAD, HIDDEN)], [p + "o"]),
            helper.make_node("Add", [x, p + "o"], [p + "r"]),
            helper.make_node("RMSNormalization", [p + "r", p + "norm2"], [p + "h2"], epsilon=1e-6),
            *mlp_nodes(p, weight),
            helper.make_node("Add", [p + "r", p + "d"], [p + "y"]),
        ]
        x = p + "y"
    nodes[-1].output[0] = "y"
    if args.int8:
        nodes = quantize_matmuls(nodes, inits)
    if args.int4:
        nodes = quantize_weights_4bit(nodes, inits)
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, args.seq, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, args.seq, HIDDEN])], inits)
    imports = [helper.make_opsetid("", 23)] + ([helper.make_opsetid("com.microsoft", 1)] if args.int4 else [])
    model = helper.make_model(graph, opset_imports=imports, producer_name="nxrt-bench")
    model.ir_version = 11
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(args.out))
    print(f"wrote {args.out}")


def mlp_nodes(p, weight):
    """A layer's SiLU-gated MLP, from its input p + "h2" to its output p + "d"; weight(name, rows,
    cols) makes each weight."""
    return [
        helper.make_node("MatMul", [p + "h2", weight(p + "wg", HIDDEN, FFN)], [p + "g"]),
        helper.make_node("MatMul", [p + "h2", weight(p + "wu", HIDDEN, FFN)], [p + "u"]),
        helper.make_node("Sigmoid", [p + "g"], [p + "gs"]),
        helper.make_node("Mul", [p + "g", p + "gs"], [p + "silu"]),
        helper.make_node("Mul", [p + "silu", p + "u"], [p + "m"]),
        helper.make_node("MatMul", [p + "m", weight(p + "wd", FFN, HIDDEN)], [p + "d"]),
    ]


def write_genai_model(args):
    """The decoder in ONNX Runtime GenAI's form (see the module's doc)."""
    name = "decoder_genai_int4" + (f"_seq{args.seq}" if args.seq != 128 else "") + (
        f"_past{args.past}" if args.past else "")
    out = args.out or REPO / ".cache" / "bench-models" / f"{name}.onnx"
    rng = np.random.default_rng(0)
    inits, nodes = [], []
    ms = {"domain": "com.microsoft"}

    def const(name, array):
        inits.append(numpy_helper.from_array(array, name))
        return name

    def weight(name, rows, cols):
        return const(name, (rng.standard_normal((rows, cols)) / np.sqrt(rows)).astype(np.float32))

    positions = max(256, args.seq + args.past)
    angles = np.arange(positions)[:, None] * 10000.0 ** (-np.arange(HEAD // 2) / (HEAD // 2))
    const("cos", np.cos(angles).astype(np.float32))
    const("sin", np.sin(angles).astype(np.float32))
    # total_sequence_length = cached + new tokens (int32 scalar); seqlens_k = total - 1 ([batch]).
    nodes.append(helper.make_node("Shape", ["x"], ["seq"], start=1, end=2))
    total64 = "seq"
    if args.past:
        nodes += [helper.make_node("Shape", ["past_key_0"], ["past"], start=2, end=3),
                  helper.make_node("Add", ["past", "seq"], ["total64"])]
        total64 = "total64"
    nodes += [helper.make_node("Sub", [total64, const("one", np.array([1], np.int64))], ["seqlens64"]),
              helper.make_node("Cast", ["seqlens64"], ["seqlens_k"], to=TensorProto.INT32),
              helper.make_node("Squeeze", [total64], ["total_scalar"]),
              helper.make_node("Cast", ["total_scalar"], ["total"], to=TensorProto.INT32)]
    kv_shape = [1, KV_HEADS, args.past, HEAD]
    graph_inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, args.seq, HIDDEN])]
    graph_outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, args.seq, HIDDEN])]
    hidden, residual = None, "x"
    for layer in range(LAYERS):
        p = f"l{layer}_"
        norm = const(p + "norm1", np.ones(HIDDEN, np.float32))
        if layer == 0:
            nodes.append(helper.make_node("SimplifiedLayerNormalization", ["x", norm], [p + "h"], epsilon=1e-6))
        else:
            nodes.append(helper.make_node("SkipSimplifiedLayerNormalization", [hidden, residual, norm],
                                          [p + "h", "", "", p + "res1"], epsilon=1e-6, **ms))
            residual = p + "res1"
        past = [f"past_key_{layer}", f"past_value_{layer}"] if args.past else ["", ""]
        if args.past:
            graph_inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, kv_shape) for n in past]
        present = [f"present_key_{layer}", f"present_value_{layer}"]
        graph_outputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in present]
        nodes += [
            helper.make_node("MatMul", [p + "h", weight(p + "wqkv", HIDDEN, (HEADS + 2 * KV_HEADS) * HEAD)],
                             [p + "qkv"]),
            helper.make_node("GroupQueryAttention", [p + "qkv", "", "", *past, "seqlens_k", "total", "cos", "sin"],
                             [p + "a", *present], num_heads=HEADS, kv_num_heads=KV_HEADS, do_rotary=1, **ms),
            helper.make_node("MatMul", [p + "a", weight(p + "wo", HEADS * HEAD, HIDDEN)], [p + "o"]),
            helper.make_node("SkipSimplifiedLayerNormalization", [p + "o", residual,
                                                                  const(p + "norm2", np.ones(HIDDEN, np.float32))],
                             [p + "h2", "", "", p + "res2"], epsilon=1e-6, **ms),
            *mlp_nodes(p, weight),
        ]
        hidden, residual = p + "d", p + "res2"
    nodes.append(helper.make_node("SkipSimplifiedLayerNormalization",
                                  [hidden, residual, const("final_norm", np.ones(HIDDEN, np.float32))], ["y"],
                                  epsilon=1e-6, **ms))
    nodes = quantize_weights_4bit(nodes, inits)
    graph = helper.make_graph(nodes, name, graph_inputs, graph_outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("com.microsoft", 1)],
                              producer_name="nxrt-bench")
    model.ir_version = 10
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(out))
    print(f"wrote {out}")


def replace_weight_matmuls(nodes, inits, rewrite):
    """Each MatMul by a constant weight W replaced by the nodes rewrite(node, W) returns (which
    adds the initializers they read); the float weights are dropped."""
    weights = {t.name: t for t in inits}
    out = []
    for node in nodes:
        if node.op_type != "MatMul" or node.input[1] not in weights:
            out.append(node)
            continue
        out += rewrite(node, numpy_helper.to_array(weights[node.input[1]]))
    unused = {n.input[1] for n in nodes if n.op_type == "MatMul"}
    inits[:] = [t for t in inits if t.name not in unused]
    return out


def quantize_matmuls(nodes, inits):
    """Replaces each MatMul by a constant weight with its dynamically quantized form."""
    def rewrite(node, w):
        scale = np.float32(np.abs(w).max() / 127)
        p = node.output[0]
        inits.append(numpy_helper.from_array(np.clip(np.round(w / scale), -127, 127).astype(np.int8), p + "_wq"))
        inits.append(numpy_helper.from_array(np.array(scale, np.float32), p + "_ws"))
        inits.append(numpy_helper.from_array(np.array(0, np.int8), p + "_wz"))
        return [
            helper.make_node("DynamicQuantizeLinear", [node.input[0]], [p + "_xq", p + "_xs", p + "_xz"]),
            helper.make_node("MatMulInteger", [p + "_xq", p + "_wq", p + "_xz", p + "_wz"], [p + "_i"]),
            helper.make_node("Cast", [p + "_i"], [p + "_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", [p + "_xs", p + "_ws"], [p + "_s"]),
            helper.make_node("Mul", [p + "_f", p + "_s"], [p]),
        ]
    return replace_weight_matmuls(nodes, inits, rewrite)


def quantize_weights_4bit(nodes, inits, block=32):
    """Replaces each MatMul by a constant weight W [K, N] with MatMulNBits: W's columns in blocks
    of `block` along K, each quantized to 0..15 between its minimum and maximum."""
    def rewrite(node, w):
        w = w.T  # [N, K]
        n, k = w.shape
        blocks = w.reshape(n, k // block, block)
        lo, hi = np.minimum(blocks.min(-1), 0), np.maximum(blocks.max(-1), 0)
        scale = np.where(hi > lo, (hi - lo) / 15, 1).astype(np.float32)
        zero = np.clip(np.round(-lo / scale), 0, 15).astype(np.uint8)
        q = np.clip(np.round(blocks / scale[..., None]) + zero[..., None], 0, 15).astype(np.uint8)
        p = node.output[0]
        zero_pairs = np.concatenate([zero, np.zeros((n, zero.shape[1] % 2), np.uint8)], 1)  # two to a byte
        inits.append(numpy_helper.from_array(q[..., 0::2] | (q[..., 1::2] << 4), p + "_wq"))
        inits.append(numpy_helper.from_array(scale, p + "_ws"))
        inits.append(numpy_helper.from_array(zero_pairs[:, 0::2] | (zero_pairs[:, 1::2] << 4), p + "_wz"))
        return [helper.make_node("MatMulNBits", [node.input[0], p + "_wq", p + "_ws", p + "_wz"], [p],
                                 domain="com.microsoft", K=k, N=n, bits=4, block_size=block, accuracy_level=4)]
    return replace_weight_matmuls(nodes, inits, rewrite)


if __name__ == "__main__":
    main()
