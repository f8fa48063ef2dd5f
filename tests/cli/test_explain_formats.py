"""CLI tests for explain-claims' formats (text, json, md, dot) and its summary, for
`nxrt --version` and for the bash completion: each format checked against the others."""
import json
import os
import re
import shutil
import subprocess
import unittest

import jsonschema
import numpy as np
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import DATA, NXRT, ROOT, TempDirTest, nxrt
from test_control_flow import save_model

SCHEMA = json.loads((ROOT / "docs/json/explain-claims.schema.json").read_text())
MODELS = ["cnn", "mlp", "external_data", "unsupported_op", "foreign_epcontext"]
HAVE_DOT = shutil.which("dot") is not None


def compiled_eps():
    rc, out, _ = nxrt("--version")
    assert rc == 0, out
    return re.search(r"^EPs: (.*)$", out, re.M).group(1).split(", ")


HAVE_ONEDNN = "onednn" in compiled_eps()


def text_tables(out):
    """The text format's tables, as (header names, rows as dicts); blocks are separated by
    blank lines, a table's header is upper case and may follow a caption line ("boundaries:
    ..."). Columns start where header cells start."""
    tables = []
    for block in out.split("\n\n"):
        lines = block.rstrip("\n").split("\n")
        if not re.match(r"^[A-Z][A-Z .]*(  +\S.*)?$", lines[0]):
            lines = lines[1:]
        if not lines or not re.match(r"^[A-Z][A-Z .]*(  +\S.*)?$", lines[0]):
            continue
        header = lines[0]
        starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]
        names = [header[s:e].strip() for s, e in zip(starts, starts[1:] + [None])]
        rows = []
        for line in lines[1:]:
            if not line or line.startswith(" "):
                break
            rows.append({n: line[s:e].strip() for n, s, e in zip(names, starts, starts[1:] + [None])})
        tables.append((names, rows))
    return tables


def table_with(out, first_column):
    return next(rows for names, rows in text_tables(out) if names[0] == first_column)


def md_table(out, header_start):
    """Rows of the Markdown table whose header starts with `header_start`, as lists of cells."""
    lines = out.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(f"| {header_start} |"))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]])
    return rows


def float_info(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


class ExplainFormats(TempDirTest):
    def split_model(self, mid_name="mid"):
        """Relu -> Sin -> Relu: onednn takes the Relus, cpu the Sin: three partitions."""
        return save_model(self.tmp / "split.onnx",
                          [helper.make_node("Relu", ["x"], ["a"], name="r1"),
                           helper.make_node("Sin", ["a"], ["b"], name=mid_name),
                           helper.make_node("Relu", ["b"], ["y"], name="r2")],
                          [float_info("x", [2, 3])], [float_info("y", [2, 3])], opset=17)

    def loop_model(self):
        """Relu, then a Loop whose body adds, takes the sine and passes the condition on."""
        body = helper.make_graph(
            [helper.make_node("Add", ["x_in", "step"], ["x_out"], name="add"),
             helper.make_node("Sin", ["x_out"], ["s"], name="sin"),
             helper.make_node("Identity", ["c_in"], ["c_out"], name="id")],
            "body",
            [helper.make_tensor_value_info("i", TensorProto.INT64, []),
             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []), float_info("x_in", [2])],
            [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), float_info("s", [2])])
        inits = [onnx.numpy_helper.from_array(np.array([1.0, 2.0], np.float32), "step"),
                 onnx.numpy_helper.from_array(np.array(3, np.int64), "M"),
                 onnx.numpy_helper.from_array(np.array(True), "cond")]
        return save_model(self.tmp / "loop.onnx",
                          [helper.make_node("Relu", ["x"], ["r"], name="relu"),
                           helper.make_node("Loop", ["M", "cond", "r"], ["y"], body=body, name="loop")],
                          [float_info("x", [2])], [float_info("y", [2])], inits, opset=16)

    def models(self):
        """The committed models, the Loop model and, with onednn, the split model."""
        out = [DATA / name / "model.onnx" for name in MODELS] + [self.loop_model()]
        return out + [self.split_model()] if HAVE_ONEDNN else out

    def explain(self, model, *args):
        rc, out, err = nxrt("explain-claims", model, *args)
        self.assertIn(rc, (0, 4), f"{model}: {err}")
        return out

    def test_text_summary_agrees_with_the_node_table(self):
        for model in self.models():
            out = self.explain(model)
            nodes = [r for r in table_with(out, "NODE") if not r["NODE"].endswith("(subgraph)")]
            subgraph = [r for r in table_with(out, "NODE") if r["NODE"].endswith("(subgraph)")]
            parts = table_with(out, "PARTITION") if "no partitions" not in out else []
            eps = table_with(out, "EP")
            self.assertEqual([e["EP"] for e in eps], re.search(r"EPs in priority order: (.*)", out).group(1).split(", "))
            for e in eps:
                # "cpu*": placed on cpu by the placement policy.
                self.assertEqual(int(e["NODES"]), sum(r["PLACED"].rstrip("*") == e["EP"] for r in nodes), f"{model}: {e}")
                self.assertEqual(int(e["PARTITIONS"]), sum(p["EP"] == e["EP"] for p in parts), f"{model}: {e}")
                self.assertEqual(int(e["NODES"]), sum(int(p["NODES"]) for p in parts if p["EP"] == e["EP"]), model)
            unplaced = sum(r["PLACED"] == "NONE" for r in nodes)
            line = re.search(r"^summary: (.*)$", out, re.M).group(1)
            expected = (f"{len(nodes)} node{'s' if len(nodes) != 1 else ''}, {len(nodes) - unplaced} placed, "
                        f"{unplaced} unclaimed, {len(parts)} partition{'s' if len(parts) != 1 else ''}")
            if subgraph:
                expected += f", {len(subgraph)} nodes in subgraphs"
            self.assertEqual(line, expected, model)
            self.assertEqual(sum(int(e["SUBGRAPH NODES"]) for e in eps), len(subgraph), model)

    def test_text_decline_table_counts_the_declined_cells(self):
        for model in self.models():
            out = self.explain(model)
            rows = table_with(out, "NODE")
            eps = [e["EP"] for e in table_with(out, "EP")]
            declined = {}
            for r in rows:
                op = r["OP"].rsplit("-", 1)[0]
                for ep in eps:
                    if r[ep].startswith("declined: "):
                        declined.setdefault((ep, op, r[ep][len("declined: "):]), []).append(r["NODE"])
            if not declined:
                self.assertIn("no EP declined any of these nodes", out, model)
                continue
            table = {(d["DECLINED BY"], d["OP"], d["REASON"]): d for d in table_with(out, "DECLINED BY")}
            self.assertEqual(sorted(table), sorted(declined), model)
            for key, names in declined.items():
                self.assertEqual(int(table[key]["COUNT"]), len(names), f"{model}: {key}")
                self.assertEqual(table[key]["NODES"], ", ".join(names[:8]) + (
                    f", +{len(names) - 8} more" if len(names) > 8 else ""), f"{model}: {key}")

    def test_unsupported_op_text(self):
        rc, out, err = nxrt("explain-claims", DATA / "unsupported_op/model.onnx", "--ep", "cpu")
        self.assertEqual(rc, 4)
        self.assertEqual(table_with(out, "DECLINED BY"), [{
            "DECLINED BY": "cpu", "OP": "com.microsoft::Inverse", "COUNT": "1", "NODES": "inverse",
            "REASON": "Inverse: com.microsoft::Inverse (opset 1) is not implemented by the cpu EP; "
                      "use an EP that lists it in 'nxrt list-eps --ops'"}])
        self.assertEqual(table_with(out, "EP"), [{"EP": "cpu", "DEVICE": "cpu", "NODES": "2", "SUBGRAPH NODES": "0",
                                                   "PARTITIONS": "2", "EST. FLOPS": "36 FLOP"}])
        # Both partitions border the unplaced node, not each other.
        self.assertIn("boundaries: 0 values (0 B) between partitions, 0 values (0 B) copied across devices\n", out)
        self.assertIn("summary: 3 nodes, 2 placed, 1 unclaimed, 2 partitions\n", out)

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_boundaries_between_partitions(self):
        # Under the default fewer-partitions policy both Relus move to cpu: one partition.
        out = self.explain(self.split_model(), "--placement", "first-claim")
        self.assertIn("boundaries: 2 values (48 B) between partitions, 0 values (0 B) copied across devices\n", out)
        self.assertEqual(table_with(out, "VALUE"), [
            {"VALUE": "a", "FROM": "onednn_0", "TO": "cpu_0", "DEVICES": "cpu", "SIZE": "24 B"},
            {"VALUE": "b", "FROM": "cpu_0", "TO": "onednn_1", "DEVICES": "cpu", "SIZE": "24 B"}])
        s = json.loads(self.explain(self.split_model(), "--json", "--placement", "first-claim"))["summary"]
        self.assertEqual(s["between_partitions"], {"values": 2, "bytes": 48, "unknown_size": 0})
        self.assertEqual(s["device_copies"], {"values": 0, "bytes": 0, "unknown_size": 0})
        self.assertEqual([(b["value"], b["from"], b["to"]) for b in s["boundaries"]],
                         [("x", None, "onednn_0"), ("a", "onednn_0", "cpu_0"), ("b", "cpu_0", "onednn_1"),
                          ("y", "onednn_1", None)])

    def test_subgraph_nodes_are_counted_and_marked(self):
        model = self.loop_model()
        out = self.explain(model)
        self.assertIn("loop/body/sin (subgraph)", out)
        self.assertIn(", 3 nodes in subgraphs\n", out)
        report = json.loads(self.explain(model, "--json"))
        self.assertEqual(report["summary"]["subgraph_nodes"], 3)
        cpu = next(e for e in report["summary"]["eps"] if e["ep"] == "cpu")
        self.assertEqual(cpu["subgraph_nodes"], 3)  # the Loop runs on cpu, and so does its body
        if HAVE_ONEDNN:
            sin = next(d for d in report["declines"] if d["ep"] == "onednn" and d["op_type"] == "Sin")
            self.assertEqual(sin["nodes"], [{"path": "loop/body/sin", "in_subgraph": True}])

    def test_json_validates_against_the_schema(self):
        validator = jsonschema.Draft202012Validator(SCHEMA)
        jsonschema.Draft202012Validator.check_schema(SCHEMA)
        for model in self.models():
            for args in [("--json",), ("--format", "json"), ("--format", "json", "--declined-only")]:
                report = json.loads(self.explain(model, *args))
                errors = [f"{'/'.join(map(str, e.path))}: {e.message}" for e in validator.iter_errors(report)]
                self.assertEqual(errors, [], f"{model} {args}")

    def test_json_summary_agrees_with_the_nodes(self):
        for model in self.models():
            r = json.loads(self.explain(model, "--json"))
            s = r["summary"]
            main = [n for n in r["nodes"] if not n["in_subgraph"]]
            self.assertEqual(s["nodes"], len(main))
            self.assertEqual(s["placed"], sum(n["placed_ep"] is not None for n in main))
            self.assertEqual(s["unclaimed"], r["unclaimed"])
            self.assertEqual(s["subgraph_nodes"], len(r["nodes"]) - len(main))
            self.assertEqual(s["partitions"], len(r["partitions"]))
            for e in s["eps"]:
                placed = [n for n in main if n["placed_ep"] == e["ep"]]
                self.assertEqual(e["nodes"], len(placed))
                self.assertEqual(e["partitions"], sum(p["ep"] == e["ep"] for p in r["partitions"]))
                flops = sum(v["cost"]["flops"] for n in placed for v in n["verdicts"] if v["ep"] == e["ep"])
                self.assertAlmostEqual(e["flops"], flops)
            declined = {}
            for n in r["nodes"]:
                for v in n["verdicts"]:
                    if not v["claimed"]:
                        declined.setdefault((v["ep"], n["domain"], n["op_type"], v["reason"]), []).append(n["path"])
            groups = {(d["ep"], d["domain"], d["op_type"], d["reason"]): d for d in r["declines"]}
            self.assertEqual(sorted(groups), sorted(declined), model)
            for key, d in groups.items():
                self.assertEqual(d["count"], len(d["nodes"]))
                self.assertEqual([x["path"] for x in d["nodes"]], declined[key])

    def test_filters_narrow_nodes_and_declines_not_the_summary(self):
        model = DATA / "unsupported_op/model.onnx"
        whole = json.loads(self.explain(model, "--json"))
        only_relu = json.loads(self.explain(model, "--format", "json", "--op", "Relu"))
        self.assertEqual([n["name"] for n in only_relu["nodes"]], ["relu"])
        self.assertEqual(only_relu["declines"], [])
        self.assertEqual(only_relu["summary"], whole["summary"])
        rc, out, _ = nxrt("explain-claims", model, "--op", "Relu")
        self.assertIn("no EP declined any of these nodes", out)

    def test_markdown_agrees_with_the_text(self):
        for model in self.models():
            text, md = self.explain(model), self.explain(model, "--format", "md")
            self.assertTrue(md.startswith(f"## nxrt explain-claims: `{model.name}`\n"), model)
            summary = re.search(r"^summary: (.*)$", text, re.M).group(1)
            self.assertIn(f"**{summary}**", md)
            self.assertEqual(md_table(md, "EP"), [list(e.values()) for e in table_with(text, "EP")], model)
            report = json.loads(self.explain(model, "--json"))
            declines = md_table(md, "DECLINED BY") if report["declines"] else []
            self.assertEqual([(d[0], d[3]) for d in declines],
                             [(d["ep"], str(d["count"])) for d in report["declines"]], model)
            self.assertEqual(len(md_table(md, "NODE")), len(report["nodes"]), model)
            self.assertIn(f"<summary>Every node's verdicts ({len(report['nodes'])})</summary>", md)
            if report["unclaimed"]:
                self.assertIn(f"> **{report['unclaimed']} node", md)

    @unittest.skipUnless(HAVE_ONEDNN, "this build has no onednn EP")
    def test_markdown_escapes_cells(self):
        model = self.split_model(mid_name="a|b <c>")
        md = self.explain(model, "--format", "md")
        self.assertIn("| onednn | Sin | ", md)
        self.assertIn(" | 1 | a\\|b &lt;c&gt; |", md)
        self.assertEqual(md_table(md, "DECLINED BY")[0][4], "a|b &lt;c&gt;")

    def dot_checked(self, model):
        rc, dot, err = nxrt("explain-claims", model, "--format", "dot")
        self.assertIn(rc, (0, 4), err)
        self.assertTrue(dot.startswith("digraph "), model)
        if HAVE_DOT:
            p = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, f"{model}: dot rejected the graph: {p.stderr}\n{dot}")
            self.assertIn("<svg", p.stdout)
            self.assertEqual(p.stderr, "", model)
        return dot

    def test_dot_colours_nodes_by_ep_and_draws_partitions_as_clusters(self):
        for model in self.models():
            dot = self.dot_checked(model)
            r = json.loads(self.explain(model, "--json"))
            legend = dict(re.findall(r'"legend\d+" \[label="([^"]+)", fillcolor="(#[0-9a-f]{6})"', dot))
            self.assertEqual(list(legend), r["eps"], model)
            nodes = re.findall(r'"n(\d+)" \[label="((?:[^"\\]|\\.)*)", fillcolor="(#[0-9a-f]{6})"', dot)
            self.assertEqual(len(nodes), len(r["nodes"]), model)
            owner = {}
            for (index, label, colour), node in zip(sorted(nodes, key=lambda n: int(n[0])), r["nodes"]):
                ep = node["placed_ep"] or owner.get(node["path"].split("/")[0])
                owner[node["path"]] = node["placed_ep"]
                self.assertEqual(colour, legend[ep] if ep else "#fb8072", f"{model}: {node['path']}")
                moved = "*" if node["placement_note"] else ""
                self.assertTrue(label.endswith(f"\\n{ep or 'NONE'}{moved}" + (" (subgraph)" if node["in_subgraph"] else "")),
                                label)
            clusters = re.findall(r'subgraph "cluster_p\d+" \{\n\s+label="([^"]+) \(([^)]+)\)"', dot)
            self.assertEqual(clusters, [(p["name"], p["ep"]) for p in r["partitions"]], model)

    def test_dot_quotes_names(self):
        model = save_model(self.tmp / "quoted.onnx", [helper.make_node("Relu", ["x"], ["y \"q\""], name='say "hi" \\')],
                           [float_info("x", [2])], [float_info('y "q"', [2])], opset=17)
        dot = self.dot_checked(model)
        self.assertIn('label="say \\"hi\\" \\\\\\nRelu\\n', dot)

    def test_dot_refuses_filters(self):
        rc, out, err = nxrt("explain-claims", DATA / "cnn/model.onnx", "--format", "dot", "--op", "Conv")
        self.assertEqual(rc, 2)
        self.assertEqual(out, "")
        self.assertIn("--format dot draws the whole graph: --node, --op and --declined-only do not apply", err)

    def test_format_names(self):
        model = DATA / "cnn/model.onnx"
        self.assertEqual(self.explain(model, "--format", "table"), self.explain(model))
        self.assertEqual(self.explain(model, "--format", "text"), self.explain(model))
        self.assertEqual(self.explain(model, "--json"), self.explain(model, "--format", "json"))
        rc, _, err = nxrt("explain-claims", model, "--format", "yaml")
        self.assertEqual(rc, 2)
        self.assertIn("yaml", err)
        rc, out, err = nxrt("explain-claims", model, "--format", "md", "--json")
        self.assertEqual((rc, out), (2, ""))
        self.assertIn("--format excludes --json", err)


class Version(TempDirTest):
    def test_version_names_every_component(self):
        rc, out, _ = nxrt("--version")
        self.assertEqual(rc, 0)
        self.assertEqual(nxrt("-V"), (0, out, ""))
        lines = out.rstrip("\n").split("\n")
        self.assertRegex(lines[0], r"^nxrt \d+\.\d+\.\d+$")
        self.assertRegex(lines[1], r"^ONNX \d+\.\d+\.\d+ \(libonnx\)$")
        self.assertRegex(lines[2], r"^oneDNN (\d+\.\d+\.\d+|: not built \(.+\))$")
        if "cuda" in compiled_eps():
            self.assertRegex(lines[3], r"^CUDA \d+\.\d+$")
        else:
            self.assertRegex(lines[3], r"^CUDA: not built \(.+ when nxrt was configured\)$")
        self.assertEqual(lines[4], "EPs: " + ", ".join(compiled_eps()))
        self.assertEqual(len(lines), 5)
        rc, listed, _ = nxrt("list-eps", "--json")
        for e in json.loads(listed)["eps"]:  # list-eps also names the EPs this build left out, and why
            self.assertTrue(e["name"] in compiled_eps() or "not built" in e["reason"], e)
        if HAVE_ONEDNN:
            onednn = next(e for e in json.loads(listed)["eps"] if e["name"] == "onednn")
            self.assertIn(f"(oneDNN {lines[2].split()[1]})", onednn["version"])


class Completion(TempDirTest):
    SCRIPT = ROOT / "scripts/nxrt-completion.bash"

    def complete(self, *words, cwd=None):
        """COMPREPLY for the command line `nxrt WORDS...`, the last word being completed."""
        line = " ".join(f"'{w}'" for w in (NXRT, *words))
        script = (f"source '{self.SCRIPT}'\nCOMP_WORDS=({line})\nCOMP_CWORD={len(words)}\n_nxrt\n"
                  "printf '%s\\n' \"${COMPREPLY[@]}\"")
        p = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=cwd, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return [w for w in p.stdout.split("\n") if w]

    def test_subcommands_flags_and_values(self):
        self.assertEqual(self.complete(""), ["list-eps", "explain-claims", "compile-epcontext", "run", "bench"])
        self.assertEqual(self.complete("ex"), ["explain-claims"])
        self.assertEqual(self.complete("-"), ["-h", "--help", "-V", "--version"])
        self.assertEqual(self.complete("explain-claims", "--fo"), ["--format"])
        self.assertEqual(self.complete("explain-claims", "--dec"), ["--declined-only"])
        self.assertEqual(sorted(self.complete("explain-claims", "--de")), ["--declined-only", "--device"])
        self.assertEqual(self.complete("explain-claims", "--format", ""), ["text", "table", "json", "md", "dot"])
        self.assertEqual(self.complete("explain-claims", "--format", "d"), ["dot"])
        self.assertEqual(self.complete("run", "--ep", "c"), [e for e in compiled_eps() if e.startswith("c")])
        self.assertEqual(self.complete("run", "--ep", "cp"), ["cpu"])
        if HAVE_ONEDNN:
            self.assertEqual(self.complete("bench", "--ep", "cpu,o"), ["cpu,onednn"])
        self.assertEqual(self.complete("explain-claims", "--threads", ""), [])
        self.assertEqual(self.complete("run", "--placement", ""), ["first-claim", "fewer-partitions"])
        self.assertEqual(self.complete("bench", "--placement", "f"), ["first-claim", "fewer-partitions"])
        self.assertEqual(self.complete("compile-epcontext", "--placement", "fe"), ["fewer-partitions"])

    def test_files(self):
        case = DATA / "mlp"
        self.assertEqual(self.complete("explain-claims", "mo", cwd=case), ["model.onnx"])
        self.assertEqual(self.complete("run", "--input", "x=inputs/", cwd=case), ["x=inputs/x.npy"])
        # Bash splits "x=inputs/" at "=" itself.
        self.assertEqual(self.complete("run", "--input", "x", "=", "inputs/", cwd=case), ["inputs/x.npy"])
        self.assertEqual(self.complete("run", "--test-dir", "test_", cwd=case), ["test_data_set_0"])

    def test_cmake_install_puts_it_where_bash_completion_looks(self):
        build = os.environ.get("NXRT_BUILD_DIR")
        if not build:
            self.skipTest("NXRT_BUILD_DIR is not set (ctest sets it)")
        p = subprocess.run(["cmake", "--install", build, "--prefix", self.tmp / "prefix"], capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        installed = self.tmp / "prefix/share/bash-completion/completions/nxrt"
        self.assertEqual(installed.read_text(), self.SCRIPT.read_text())
        self.assertTrue((self.tmp / "prefix/share/doc/nxrt/json/explain-claims.schema.json").is_file())


if __name__ == "__main__":
    unittest.main()
