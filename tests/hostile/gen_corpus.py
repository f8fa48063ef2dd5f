#!/usr/bin/python3
"""Generates the hostile-input corpus: malformed models, external data, EPContext blobs and
input files, plus manifest.json saying what each nxrt command must answer for each case.

Usage: gen_corpus.py OUT_DIR --nxrt PATH   (nxrt compiles the EPContext models to tamper with)

Every case is a folder OUT_DIR/<case>/ holding model.onnx (and whatever it refers to). A
manifest entry lists, per command, the exit code and the texts stderr must contain; commands
a case does not list are not run on it. Crashing inputs the fuzzers found live in
tests/hostile/crashes/ and are added as cases too.
"""
import argparse
import json
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
COMMANDS = ("explain-claims", "run", "compile-epcontext")
TB = 1 << 40


def tensor_info(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, initializers=(), opset=17, extra_opsets=()):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), *extra_opsets])
    model.ir_version = 8
    return model


def relu_model():
    """x[2,3] -> Relu -> Add(w) -> y: small, valid, and two nodes for the EPs to compile."""
    w = onnx.numpy_helper.from_array(np.arange(6, dtype=np.float32).reshape(2, 3), "w")
    return make_model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                       helper.make_node("Add", ["r", "w"], ["y"], name="add")],
                      [tensor_info("x", [2, 3])], [tensor_info("y", [2, 3])], [w])


def fnv1a(data):
    """nxrt's blob checksum: FNV-1a over little-endian 64-bit words, then the tail bytes."""
    h, prime, mask = 1469598103934665603, 1099511628211, (1 << 64) - 1
    whole = len(data) // 8 * 8
    for (word,) in struct.iter_unpack("<Q", data[:whole]):
        h = ((h ^ word) * prime) & mask
    for b in data[whole:]:
        h = ((h ^ b) * prime) & mask
    return h


def reseal(body):
    """A blob body with a valid checksum appended: tampering the checksum cannot see."""
    return body + struct.pack("<Q", fnv1a(body))


class Corpus:
    def __init__(self, out, nxrt):
        self.out = out
        self.nxrt = nxrt
        self.cases = []

    def folder(self, name):
        d = self.out / name
        d.mkdir(parents=True)
        return d

    def add(self, name, expect, model_file="model.onnx", run_args=()):
        """expect: command -> (exit code or None for any exit without a signal, [stderr texts])."""
        self.cases.append({"name": name, "model": f"{name}/{model_file}", "run_args": list(run_args),
                           "expect": {c: {"code": code, "stderr": texts} for c, (code, texts) in expect.items()}})

    def model_case(self, name, model, expect=None, texts=()):
        d = self.folder(name)
        data = model if isinstance(model, bytes) else model.SerializeToString()
        (d / "model.onnx").write_bytes(data)
        self.add(name, expect or {c: (3, list(texts)) for c in COMMANDS})
        return d


def protobuf_cases(c):
    good = relu_model().SerializeToString()
    c.model_case("truncated_half", good[: len(good) // 2], texts=["is not a valid ONNX model", "truncated"])
    c.model_case("empty_file", b"", texts=["the model has no graph"])
    c.model_case("text_file", b"this is not a model\n" * 4, texts=["is not a valid ONNX model"])
    # Bit flips may leave a valid model (a weight changes): then only "no signal" is asserted.
    rng = random.Random(6)
    for i in range(24):
        data = bytearray(good)
        for _ in range(1 + i % 3):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        d = c.folder(f"bitflip_{i:02d}")
        (d / "model.onnx").write_bytes(bytes(data))
        c.add(f"bitflip_{i:02d}", {cmd: (None, []) for cmd in COMMANDS})


def graph_cases(c):
    x, y = tensor_info("x", [2, 3]), tensor_info("y", [2, 3])
    c.model_case("attr_wrong_type",
                 make_model([helper.make_node("Transpose", ["x"], ["y"], name="t", perm="1,0")], [x],
                            [tensor_info("y", [3, 2])]),
                 texts=["node 't'", "Transpose-13", "Mismatched attribute type in 't : perm'"])
    c.model_case("attr_float_for_ints",
                 make_model([helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=1.5)], [x], [y]),
                 texts=["node 'sm'", "Mismatched attribute type in 'sm : axis'"])
    # ONNX's Scan shape inference read num_scan_inputs without checking for it (found by fuzzing).
    body = helper.make_graph([helper.make_node("Identity", ["s_in"], ["s_out"])], "body",
                             [tensor_info("s_in", [3])], [tensor_info("s_out", [3])])
    c.model_case("scan_missing_num_scan_inputs",
                 make_model([helper.make_node("Scan", ["x"], ["y"], name="scan1", body=body)], [x], [y]),
                 texts=["node 'scan1'", "Scan", "num_scan_inputs"])
    # ONNX's Conv shape inference divided by a zero stride (found by fuzzing).
    x4 = tensor_info("x", [1, 1, 4, 4])
    w = onnx.numpy_helper.from_array(np.ones((1, 1, 1, 1), np.float32), "w")
    c.model_case("conv_zero_stride",
                 make_model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv0", strides=[1, 0])], [x4],
                            [tensor_info("y", [1, 1, 4, 4])], [w]),
                 expect={cmd: (4, ["conv0", "strides [1, 0] has a value below 1"]) for cmd in COMMANDS})
    c.model_case("missing_required_input",
                 make_model([helper.make_node("Add", ["x"], ["y"], name="add1")], [x], [y]),
                 texts=["node 'add1'", "input"])
    c.model_case("empty_required_input",
                 make_model([helper.make_node("Add", ["x", ""], ["y"], name="add2")], [x], [y]),
                 texts=["node 'add2'", "input"])
    c.model_case("dangling_input",
                 make_model([helper.make_node("Relu", ["ghost"], ["y"], name="r")], [x], [y]),
                 texts=["reads 'ghost', which nothing defines"])
    c.model_case("dangling_output",
                 make_model([helper.make_node("Relu", ["x"], ["r"], name="r")], [x], [y]),
                 texts=["graph output 'y' is not produced by any node"])
    c.model_case("cycle",
                 make_model([helper.make_node("Add", ["x", "b"], ["a"], name="n1"),
                             helper.make_node("Relu", ["a"], ["b"], name="n2"),
                             helper.make_node("Identity", ["a"], ["y"], name="n3")], [x], [y]),
                 texts=["the graph has a cycle"])
    c.model_case("duplicate_output",
                 make_model([helper.make_node("Relu", ["x"], ["y"], name="a"),
                             helper.make_node("Neg", ["x"], ["y"], name="b")], [x], [y]),
                 texts=["value 'y' is produced twice"])
    w = onnx.numpy_helper.from_array(np.zeros((2, 3), np.float32), "w")
    c.model_case("duplicate_initializer",
                 make_model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [w, w]),
                 texts=["initializer 'w' is defined twice"])
    c.model_case("duplicate_graph_input",
                 make_model([helper.make_node("Relu", ["x"], ["y"])], [x, x], [y]),
                 texts=["graph input 'x' is listed twice"])
    c.model_case("output_overwrites_input",
                 make_model([helper.make_node("Relu", ["x"], ["x"], name="self")], [x], [tensor_info("x", [2, 3])]),
                 texts=["value 'x' is produced twice"])
    c.model_case("unknown_domain",
                 make_model([helper.make_node("Relu", ["x"], ["y"], domain="com.nowhere")], [x], [y]),
                 texts=["uses domain 'com.nowhere', which the model does not import"])
    # An If branch reads a value no scope defines.
    then_g = helper.make_graph([helper.make_node("Relu", ["ghost"], ["t"])], "then", [], [tensor_info("t", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Relu", ["x"], ["e"])], "else", [], [tensor_info("e", [2, 3])])
    cond = onnx.numpy_helper.from_array(np.array(True), "cond")
    c.model_case("subgraph_missing_outer_value",
                 make_model([helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                                              else_branch=else_g)], [x], [y], [cond]),
                 texts=["reads 'ghost', which nothing defines", "subgraph"])


def size_cases(c):
    x, y = tensor_info("x", [2, 3]), tensor_info("y", [2, 3])

    def init_model(tensor):
        return make_model([helper.make_node("Add", ["x", tensor.name], ["y"])], [x], [y], [tensor])

    def raw(name, dtype, dims, data=b""):
        t = TensorProto(name=name, data_type=dtype, dims=dims)
        t.raw_data = data
        return t

    def typed(name, dims, floats):
        return TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims, float_data=floats)

    c.model_case("init_size_mismatch", init_model(raw("w", TensorProto.FLOAT, [2, 3], b"\0" * 10)),
                 texts=["initializer 'w'", "raw_data has 10 bytes", "needs 24"])
    c.model_case("init_typed_count_mismatch", init_model(typed("w", [2, 3], [1.0, 2.0])),
                 texts=["initializer 'w'", "holds 2 values"])
    c.model_case("init_negative_dim", init_model(raw("w", TensorProto.FLOAT, [-2, 3])),
                 texts=["initializer 'w'", "negative dimension"])
    c.model_case("init_dims_overflow_int64", init_model(raw("w", TensorProto.FLOAT, [1 << 40, 1 << 40])),
                 texts=["initializer 'w'", "more than 2^63 elements"])
    # 2^62 doubles: the element count fits int64, the byte count does not fit 64 bits.
    c.model_case("init_bytes_overflow", init_model(raw("w", TensorProto.DOUBLE, [1 << 62])),
                 texts=["initializer 'w'", "bytes"])
    c.model_case("init_rank_overflow", init_model(raw("w", TensorProto.FLOAT, [2] * 100)),
                 texts=["initializer 'w'", "more than 2^63 elements"])
    c.model_case("init_terabyte_typed", init_model(typed("w", [TB], [1.0])),
                 texts=["initializer 'w'", "holds 1 values"])
    c.model_case("init_unknown_dtype", init_model(raw("w", 99, [1])),
                 texts=["initializer 'w'", "element type 99"])
    # The model asks for a 4 TiB input: refused before anything is allocated.
    big = make_model([helper.make_node("Relu", ["x"], ["y"])], [tensor_info("x", [TB])], [tensor_info("y", [TB])])
    c.model_case("input_terabytes", big,
                 expect={"explain-claims": (0, []), "run": (3, ["input 'x'", "more than this machine's"]),
                         "compile-epcontext": (None, [])})
    # A constant asks for a terabyte-sized intermediate.
    shape = onnx.numpy_helper.from_array(np.array([TB], np.int64), "shape")
    c.model_case("constant_of_shape_terabytes",
                 make_model([helper.make_node("ConstantOfShape", ["shape"], ["big"]),
                             helper.make_node("ReduceSum", ["big"], ["y"], keepdims=0)],
                            [x], [tensor_info("y", [])], [shape]),
                 expect={c: (None, []) for c in COMMANDS})


def external_cases(c):
    x, y = tensor_info("x", [2, 3]), tensor_info("y", [2, 3])

    def ext_model(location, offset=None, length=None):
        t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3])
        t.data_location = TensorProto.EXTERNAL
        entries = [("location", location)]
        if offset is not None:
            entries.append(("offset", str(offset)))
        if length is not None:
            entries.append(("length", str(length)))
        for k, v in entries:
            e = t.external_data.add()
            e.key, e.value = k, v
        return make_model([helper.make_node("Add", ["x", "w"], ["y"])], [x], [y], [t])

    weights = np.arange(6, dtype=np.float32).tobytes()
    d = c.model_case("external_absolute", ext_model("/etc/passwd"), texts=["external data path '/etc/passwd' is absolute"])
    d = c.model_case("external_dotdot", ext_model("../secret.bin"), texts=["contains '..'"])
    (d.parent / "secret.bin").write_bytes(weights)
    d = c.model_case("external_symlink_out", ext_model("link.bin"), texts=["leads outside the model's folder"])
    (d / "link.bin").symlink_to(d.parent / "secret.bin")
    d = c.model_case("external_offset_past_end", ext_model("w.bin", offset=1 << 40),
                     texts=["external data 'w.bin' has 24 bytes"])
    (d / "w.bin").write_bytes(weights)
    d = c.model_case("external_short_file", ext_model("w.bin", offset=8), texts=["external data 'w.bin' has 24 bytes"])
    (d / "w.bin").write_bytes(weights)
    d = c.model_case("external_length_mismatch", ext_model("w.bin", length=4), texts=["length 4 does not fit"])
    (d / "w.bin").write_bytes(weights)
    d = c.model_case("external_bad_offset", ext_model("w.bin", offset="12abc"), texts=["'offset' is not a number"])
    (d / "w.bin").write_bytes(weights)
    d = c.model_case("external_huge_offset", ext_model("w.bin", offset="99999999999999999999999"),
                     texts=["'offset' is not a number"])
    (d / "w.bin").write_bytes(weights)
    c.model_case("external_missing_file", ext_model("nowhere.bin"), texts=["nowhere.bin"])
    d = c.model_case("external_is_folder", ext_model("sub"), texts=["sub"])
    (d / "sub").mkdir()


def compile_context(c, ep):
    """Compiles relu_model with one EP (external payload); returns (model bytes, blob bytes) or None."""
    work = c.out / f"_compile_{ep}"
    work.mkdir()
    (work / "m.onnx").write_bytes(relu_model().SerializeToString())
    p = subprocess.run([c.nxrt, "compile-epcontext", work / "m.onnx", "-o", work / "ctx.onnx", "--ep", ep],
                       capture_output=True, text=True)
    if p.returncode != 0:
        print(f"gen_corpus: no {ep} EPContext cases: {p.stderr.strip()}", file=sys.stderr)
        return None
    model, blob = (work / "ctx.onnx").read_bytes(), (work / f"ctx_{ep}.bin").read_bytes()
    shutil.rmtree(work)
    return onnx.load_from_string(model), blob


def set_context_attr(model, name, value):
    node = next(n for n in model.graph.node if n.op_type == "EPContext")
    for a in list(node.attribute):
        if a.name == name:
            node.attribute.remove(a)
    if value is not None:
        node.attribute.append(helper.make_attribute(name, value))
    return model


def epcontext_cases(c):
    # A compiled model is never compiled again (exit 2) unless loading it fails first.
    load_fail = lambda texts: {"explain-claims": (None, []), "run": (3, texts), "compile-epcontext": (3, texts)}
    for ep in ("cpu", "onednn"):
        compiled = compile_context(c, ep)
        if not compiled:
            continue
        model, blob = compiled
        bin_name = f"ctx_{ep}.bin"

        def case(name, mutate_model=None, blob_bytes=blob, expect=None, texts=()):
            m = onnx.ModelProto()
            m.CopyFrom(model)
            if mutate_model:
                mutate_model(m)
            d = c.folder(f"epcontext_{ep}_{name}")
            (d / "model.onnx").write_bytes(m.SerializeToString())
            if blob_bytes is not None:
                (d / bin_name).write_bytes(blob_bytes)
            c.add(f"epcontext_{ep}_{name}", expect or load_fail(list(texts)))

        case("missing_payload", lambda m: set_context_attr(m, "ep_cache_context", None),
             texts=["has no 'ep_cache_context' payload"])
        case("unknown_source", lambda m: set_context_attr(m, "source", "vendor.nothing"),
             expect={cmd: (4, ["vendor.nothing"]) for cmd in COMMANDS})
        case("dangling_main_context_0", lambda m: set_context_attr(m, "main_context", 0),
             texts=["has main_context=0 but no main_context=1 node"])
        case("missing_blob", blob_bytes=None, texts=[bin_name])
        flipped = bytearray(blob)
        flipped[len(flipped) // 2] ^= 0x40
        case("tampered_blob", blob_bytes=bytes(flipped), texts=["corrupted", "checksum"])
        case("truncated_blob", blob_bytes=blob[: len(blob) // 2], texts=["corrupted"])
        case("empty_blob", blob_bytes=b"", texts=["EPContext"])
        case("absolute_payload", lambda m: set_context_attr(m, "ep_cache_context", "/etc/passwd"),
             texts=["EPContext payload path '/etc/passwd' is absolute"])
        case("dotdot_payload", lambda m: set_context_attr(m, "ep_cache_context", "../" + bin_name),
             texts=["contains '..'"])
        # The header names another ISA, checksum recomputed: refused as built for another host.
        body = blob[:-8]
        other = body.replace(b'"isa":"', b'"isa":"zz', 1)
        if other != body:
            # The header's length prefix (u64 before the JSON) grows by the two bytes added.
            start = other.index(b'{"')
            (hlen,) = struct.unpack_from("<Q", other, start - 8)
            other = other[: start - 8] + struct.pack("<Q", hlen + 2) + other[start:]
            case("other_isa", blob_bytes=reseal(other), texts=["another host" if ep == "cpu" else "zz"])
        # Bytes that are no nxrt blob under this EP's source key, checksum valid.
        case("foreign_magic", blob_bytes=reseal(b"NOTNXRT!" + b"\0" * 40), texts=["is not a"])
    # A model whose payload was resealed after the length of its embedded ONNX model was
    # changed: the reader must stop at the payload's end.
    compiled = compile_context(c, "cpu")
    if compiled:
        model, blob = compiled
        body = bytearray(blob[:-8])
        start = body.index(b'{"')
        (hlen,) = struct.unpack_from("<Q", body, start - 8)
        struct.pack_into("<Q", body, start + hlen, (1 << 63) + 5)
        d = c.folder("epcontext_cpu_model_length_overflow")
        (d / "model.onnx").write_bytes(model.SerializeToString())
        (d / "ctx_cpu.bin").write_bytes(reseal(bytes(body)))
        c.add("epcontext_cpu_model_length_overflow", load_fail(["truncated"]))


def input_cases(c):
    model = relu_model()

    def case(name, file_name, data, texts):
        d = c.folder(name)
        (d / "model.onnx").write_bytes(model.SerializeToString())
        (d / file_name).write_bytes(data)
        c.cases.append({"name": name, "model": f"{name}/model.onnx", "run_args": ["--input", f"x={{dir}}/{file_name}"],
                        "expect": {"run": {"code": 3, "stderr": [file_name, *texts]}}})

    def npy_raw(header, data_bytes=0):
        """A format 1.0 .npy file with this header text (padded as numpy pads it) and zero data."""
        text = header.encode()
        pad = -(10 + len(text) + 1) % 64
        text += b" " * pad + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + b"\0" * data_bytes

    def npy(array):
        import io
        buf = io.BytesIO()
        np.save(buf, array)
        return buf.getvalue()

    case("npy_wrong_dtype", "x.npy", npy(np.zeros((2, 3), np.int32)), ["input 'x' is int32, the model expects float"])
    case("npy_wrong_shape", "x.npy", npy(np.zeros((3, 2), np.float32)), ["[3,2]", "[2,3]"])
    case("npy_wrong_rank", "x.npy", npy(np.zeros((6,), np.float32)), ["[6]", "[2,3]"])
    good = npy(np.zeros((2, 3), np.float32))
    case("npy_truncated_data", "x.npy", good[:-5], ["the file has 19 after"])
    case("npy_truncated_header", "x.npy", good[:20], ["x.npy"])
    case("npy_not_npy", "x.npy", b"PK\x03\x04 a zip file", ["x.npy"])
    case("npy_terabyte_header", "x.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776, 3), }"),
         ["needs 13194139533312 bytes"])
    case("npy_overflow_header", "x.npy", npy_raw("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904,), }"),
         ["more elements than a 64-bit size can count"])
    case("npy_negative_dim", "x.npy", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }"), ["must be non-negative"])
    case("npy_fortran_order", "x.npy", npy_raw("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24),
         ["Fortran"])
    case("npy_big_endian", "x.npy", npy_raw("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24),
         ["big-endian"])
    case("npy_header_not_a_dict", "x.npy", npy_raw("[1, 2, 3]"), ["not a Python dict literal"])
    pb = onnx.numpy_helper.from_array(np.zeros((2, 3), np.int64), "x").SerializeToString()
    case("pb_wrong_dtype", "x.pb", pb, ["input 'x' is int64, the model expects float"])
    t = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[2, 3])
    t.raw_data = b"\0" * 7
    case("pb_wrong_size", "x.pb", t.SerializeToString(), ["raw_data has 7 bytes"])
    t = TensorProto(name="x", data_type=TensorProto.FLOAT, dims=[TB, TB])
    case("pb_dims_overflow", "x.pb", t.SerializeToString(), ["more than 2^63 elements"])
    case("pb_garbage", "x.pb", b"\xff" * 33, ["is not a valid TensorProto file"])


def crash_cases(c):
    """Inputs the fuzzers once crashed on: models (.onnx), blobs (.bin), tensors (.npy/.pb)."""
    folder = HERE / "crashes"
    if not folder.is_dir():
        return
    for path in sorted(folder.iterdir()):
        name = f"crash_{path.stem}"
        d = c.folder(name)
        if path.suffix == ".onnx":
            shutil.copy(path, d / "model.onnx")
            c.add(name, {cmd: (None, []) for cmd in COMMANDS})
        elif path.suffix in (".npy", ".pb"):
            (d / "model.onnx").write_bytes(relu_model().SerializeToString())
            shutil.copy(path, d / f"x{path.suffix}")
            c.cases.append({"name": name, "model": f"{name}/model.onnx",
                            "run_args": ["--input", f"x={{dir}}/x{path.suffix}"],
                            "expect": {"run": {"code": None, "stderr": []}}})


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--nxrt", required=True)
    args = ap.parse_args()
    if args.out.exists():
        shutil.rmtree(args.out)
    args.out.mkdir(parents=True)
    c = Corpus(args.out, args.nxrt)
    for gen in (protobuf_cases, graph_cases, size_cases, external_cases, epcontext_cases, input_cases, crash_cases):
        gen(c)
    (args.out / "manifest.json").write_text(json.dumps({"cases": c.cases}, indent=1))
    print(f"gen_corpus: {len(c.cases)} cases in {args.out}")


if __name__ == "__main__":
    main()
