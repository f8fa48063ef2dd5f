#!/usr/bin/python3
"""Writes .cache/bench-models/bert_encoder_fused.onnx: a BERT-style encoder as ONNX Runtime's
transformer optimizer (onnxruntime.transformers.optimizer, model_type "bert") writes it, for
`nxrt bench` and scripts/bench-vs-ort.sh: com.microsoft EmbedLayerNormalization (word, position
and segment embeddings, the mask's key lengths), then per layer Attention (Q, K and V from one
merged weight, keys past each entry's length hidden), the output projection, SkipLayerNormalization,
MatMul, BiasGelu, MatMul and SkipLayerNormalization. Inputs: input_ids, segment_ids and
attention_mask, int32 [batch, seq] (right padding: each row's ones first). Random weights (seed
0); run with /usr/bin/python3 (Debian's python3-onnx).

With --form standard, the same encoder in standard opset 17 ops (Gather, LayerNormalization, Q, K
and V MatMuls, Reshape, Transpose, Softmax, Erf's GELU, the mask as (1 - mask) * -10000 added to
the scores), as a model exported from PyTorch before optimization: both forms compute the same.
It writes bert_encoder.onnx unless --out says otherwise.

With --form int8, the fused encoder with its weights quantized as ONNX Runtime's quantize_dynamic
writes them (int8, one symmetric scale per weight) and ORT fuses them at load: each Attention a
DynamicQuantizeLinear of its input and a QAttention, each MatMul a DynamicQuantizeMatMul (the bias
Add folded in). It writes bert_encoder_int8.onnx.

  scripts/make-encoder-bench-model.py [--form fused|standard|int8] [--layers L] [--hidden H] [--heads N]
                                      [--ffn F] [--seq S] [--batch B] [--vocab V] [--out FILE]
"""
import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = Path(__file__).resolve().parent.parent
EPSILON = 1e-12
# Rows of the segment (token type) table: BERT has 2; 10 let the random ids of `nxrt bench` and
# scripts/bench-vs-ort.sh (0 to 9) be in range.
SEGMENTS = 10


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--form", choices=("fused", "standard", "int8"), default="fused",
                        help="ONNX Runtime's fused ops (default), standard ONNX ops, or the fused ops quantized")
    parser.add_argument("--layers", type=int, default=4, help="encoder layers (default 4)")
    parser.add_argument("--hidden", type=int, default=256, help="hidden size (default 256)")
    parser.add_argument("--heads", type=int, default=4, help="attention heads (default 4)")
    parser.add_argument("--ffn", type=int, default=1024, help="feed-forward size (default 1024)")
    parser.add_argument("--seq", type=int, default=128, help="tokens per input row (default 128)")
    parser.add_argument("--batch", type=int, default=1, help="input rows (default 1)")
    parser.add_argument("--vocab", type=int, default=1000, help="word embedding rows (default 1000)")
    parser.add_argument("--out", type=Path, help="the model file (default: .cache/bench-models/bert_encoder_fused.onnx, "
                        "bert_encoder.onnx with --form standard, bert_encoder_int8.onnx with --form int8)")
    args = parser.parse_args()
    if args.hidden % args.heads:
        parser.error(f"--hidden {args.hidden} is not a multiple of --heads {args.heads}")
    name = {"fused": "bert_encoder_fused", "standard": "bert_encoder", "int8": "bert_encoder_int8"}[args.form]
    args.out = args.out or REPO / ".cache" / "bench-models" / f"{name}.onnx"
    weights = draw_weights(args)
    nodes, inits = {"fused": fused_graph, "standard": standard_graph, "int8": int8_graph}[args.form](args, weights)
    ids = [helper.make_tensor_value_info(n, TensorProto.INT32, [args.batch, args.seq])
           for n in ("input_ids", "segment_ids", "attention_mask")]
    graph = helper.make_graph(nodes, name, ids,
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT,
                                                             [args.batch, args.seq, args.hidden])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    args.out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(args.out))
    print(f"wrote {args.out}")


def draw_weights(args):
    """Every weight, drawn in one order whatever the form."""
    rng = np.random.default_rng(0)
    h, f = args.hidden, args.ffn

    def u(lo, hi, *shape):
        return rng.uniform(lo, hi, shape).astype(np.float32)

    w = {"word": u(-1, 1, args.vocab, h), "position": u(-1, 1, max(args.seq, 16), h), "segment": u(-1, 1, SEGMENTS, h),
         "emb_gamma": u(0.5, 1.5, h), "emb_beta": u(-0.5, 0.5, h)}
    scale = 1 / np.sqrt(h)
    for i in range(args.layers):
        w.update({f"l{i}_qkv": u(-scale, scale, h, 3 * h), f"l{i}_qkv_bias": u(-0.1, 0.1, 3 * h),
                  f"l{i}_out": u(-scale, scale, h, h), f"l{i}_out_bias": u(-0.1, 0.1, h),
                  f"l{i}_gamma1": u(0.5, 1.5, h), f"l{i}_beta1": u(-0.5, 0.5, h),
                  f"l{i}_ffn1": u(-scale, scale, h, f), f"l{i}_ffn1_bias": u(-0.1, 0.1, f),
                  f"l{i}_ffn2": u(-1 / np.sqrt(f), 1 / np.sqrt(f), f, h), f"l{i}_ffn2_bias": u(-0.1, 0.1, h),
                  f"l{i}_gamma2": u(0.5, 1.5, h), f"l{i}_beta2": u(-0.5, 0.5, h)})
    return w


def fused_graph(args, w):
    ms = {"domain": "com.microsoft"}
    nodes = [helper.make_node("EmbedLayerNormalization",
                              ["input_ids", "segment_ids", "word", "position", "segment", "emb_gamma", "emb_beta",
                               "attention_mask"], ["hidden0", "mask_index"], name="embed", epsilon=EPSILON, **ms)]
    x = "hidden0"
    for i in range(args.layers):
        p = f"l{i}_"
        nodes += [
            helper.make_node("Attention", [x, p + "qkv", p + "qkv_bias", "mask_index"], [p + "attn"],
                             name=p + "attention", num_heads=args.heads, **ms),
            helper.make_node("MatMul", [p + "attn", p + "out"], [p + "proj"], name=p + "out_proj"),
            helper.make_node("SkipLayerNormalization", [p + "proj", x, p + "gamma1", p + "beta1", p + "out_bias"],
                             [p + "norm1"], name=p + "skip1", epsilon=EPSILON, **ms),
            helper.make_node("MatMul", [p + "norm1", p + "ffn1"], [p + "ffn1_out"], name=p + "ffn1"),
            helper.make_node("BiasGelu", [p + "ffn1_out", p + "ffn1_bias"], [p + "gelu"], name=p + "gelu", **ms),
            helper.make_node("MatMul", [p + "gelu", p + "ffn2"], [p + "ffn2_out"], name=p + "ffn2"),
            helper.make_node("SkipLayerNormalization", [p + "ffn2_out", p + "norm1", p + "gamma2", p + "beta2",
                                                       p + "ffn2_bias"],
                             ["output" if i == args.layers - 1 else p + "norm2"], name=p + "skip2", epsilon=EPSILON,
                             **ms)]
        x = p + "norm2"
    inits = [numpy_helper.from_array(a, n) for n, a in w.items()]
    return nodes, inits


def int8_graph(args, w):
    """The fused graph with every weight product quantized (QAttention, DynamicQuantizeMatMul)."""
    nodes, inits = fused_graph(args, w)
    consts = {t.name: numpy_helper.to_array(t) for t in inits}
    ms = {"domain": "com.microsoft"}

    def quantize(name):
        weight = consts.pop(name)
        scale = np.float32(np.abs(weight).max() / 127)
        consts[name + "_q"] = np.clip(np.round(weight / scale), -127, 127).astype(np.int8)
        consts[name + "_scale"] = np.array(scale, np.float32)
        consts[name + "_zero"] = np.array(0, np.int8)
        return [name + "_q", name + "_scale", name + "_zero"]

    out = []
    for node in nodes:
        if node.op_type == "Attention":
            x, weight, bias, mask = node.input
            q, scale, zero = quantize(weight)
            out += [helper.make_node("DynamicQuantizeLinear", [x], [x + "_u8", x + "_scale", x + "_zero"],
                                     name=node.name + "_quantize"),
                    helper.make_node("QAttention", [x + "_u8", q, bias, x + "_scale", scale, mask, x + "_zero", zero],
                                     list(node.output), name=node.name, num_heads=args.heads, **ms)]
        elif node.op_type == "MatMul":
            q, scale, zero = quantize(node.input[1])
            out.append(helper.make_node("DynamicQuantizeMatMul", [node.input[0], q, scale, zero], list(node.output),
                                        name=node.name, **ms))
        else:
            out.append(node)
    return out, [numpy_helper.from_array(a, n) for n, a in consts.items()]


def standard_graph(args, w):
    h, heads, seq = args.hidden, args.heads, args.seq
    head = h // heads
    consts = dict(w)
    consts.update({"positions": np.arange(seq, dtype=np.int64), "one": np.float32(1), "big": np.float32(-10000),
                   "scale": np.float32(1 / np.sqrt(head)), "sqrt2": np.float32(np.sqrt(2)), "half": np.float32(0.5),
                   "heads_shape": np.array([args.batch, seq, heads, head], np.int64),
                   "hidden_shape": np.array([args.batch, seq, h], np.int64), "mask_axes": np.array([1, 2], np.int64)})
    n = helper.make_node
    nodes = [n("Gather", ["word", "input_ids"], ["word_rows"]),
             n("Gather", ["position", "positions"], ["position_rows"]),
             n("Gather", ["segment", "segment_ids"], ["segment_rows"]),
             n("Add", ["word_rows", "position_rows"], ["emb_sum0"]),
             n("Add", ["emb_sum0", "segment_rows"], ["emb_sum"]),
             n("LayerNormalization", ["emb_sum", "emb_gamma", "emb_beta"], ["hidden0"], epsilon=EPSILON),
             # (1 - mask) * -10000, [batch, 1, 1, seq]: added to every head's scores.
             n("Cast", ["attention_mask"], ["mask_float"], to=TensorProto.FLOAT),
             n("Sub", ["one", "mask_float"], ["mask_hidden"]),
             n("Mul", ["mask_hidden", "big"], ["mask_term2d"]),
             n("Unsqueeze", ["mask_term2d", "mask_axes"], ["mask_term"])]
    x = "hidden0"
    for i in range(args.layers):
        p = f"l{i}_"
        for j, part in enumerate("qkv"):
            consts[p + part] = w[p + "qkv"][:, j * h:(j + 1) * h]
            consts[p + part + "_bias"] = w[p + "qkv_bias"][j * h:(j + 1) * h]
            perm = [0, 2, 3, 1] if part == "k" else [0, 2, 1, 3]
            nodes += [n("MatMul", [x, p + part], [p + part + "_mm"]),
                      n("Add", [p + part + "_mm", p + part + "_bias"], [p + part + "_b"]),
                      n("Reshape", [p + part + "_b", "heads_shape"], [p + part + "_r"]),
                      n("Transpose", [p + part + "_r"], [p + part + "_t"], perm=perm)]
        nodes += [n("MatMul", [p + "q_t", p + "k_t"], [p + "scores0"]),
                  n("Mul", [p + "scores0", "scale"], [p + "scores1"]),
                  n("Add", [p + "scores1", "mask_term"], [p + "scores"]),
                  n("Softmax", [p + "scores"], [p + "probs"], axis=-1),
                  n("MatMul", [p + "probs", p + "v_t"], [p + "ctx"]),
                  n("Transpose", [p + "ctx"], [p + "ctx_t"], perm=[0, 2, 1, 3]),
                  n("Reshape", [p + "ctx_t", "hidden_shape"], [p + "attn"]),
                  n("MatMul", [p + "attn", p + "out"], [p + "proj"]),
                  n("Add", [p + "proj", p + "out_bias"], [p + "proj_b"]),
                  n("Add", [p + "proj_b", x], [p + "res1"]),
                  n("LayerNormalization", [p + "res1", p + "gamma1", p + "beta1"], [p + "norm1"], epsilon=EPSILON),
                  n("MatMul", [p + "norm1", p + "ffn1"], [p + "ffn1_out"]),
                  n("Add", [p + "ffn1_out", p + "ffn1_bias"], [p + "ffn1_b"]),
                  # GELU, erf form: 0.5 * x * (1 + erf(x / sqrt(2))).
                  n("Div", [p + "ffn1_b", "sqrt2"], [p + "gelu_in"]),
                  n("Erf", [p + "gelu_in"], [p + "gelu_erf"]),
                  n("Add", [p + "gelu_erf", "one"], [p + "gelu_1"]),
                  n("Mul", [p + "ffn1_b", p + "gelu_1"], [p + "gelu_2"]),
                  n("Mul", [p + "gelu_2", "half"], [p + "gelu"]),
                  n("MatMul", [p + "gelu", p + "ffn2"], [p + "ffn2_out"]),
                  n("Add", [p + "ffn2_out", p + "ffn2_bias"], [p + "ffn2_b"]),
                  n("Add", [p + "ffn2_b", p + "norm1"], [p + "res2"]),
                  n("LayerNormalization", [p + "res2", p + "gamma2", p + "beta2"],
                    ["output" if i == args.layers - 1 else p + "norm2"], epsilon=EPSILON)]
        x = p + "norm2"
    for name in [k for k in consts if k.endswith("_qkv") or k.endswith("_qkv_bias")]:
        del consts[name]
    inits = [numpy_helper.from_array(np.ascontiguousarray(a), k) for k, a in consts.items()]
    return nodes, inits


if __name__ == "__main__":
    main()
