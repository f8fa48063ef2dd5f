"""CLI tests on hostile input: every case of tests/hostile/gen_corpus.py through explain-claims,
run and compile-epcontext. Each must end with the manifest's exit code and message, never a
signal or a hang, within a bounded address space, and leave no output files behind."""
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

import numpy as np
import onnx
import onnx.numpy_helper
from onnx import TensorProto, helper

from test_cli import NXRT, ROOT, TempDirTest

# A 4 TiB tensor claim must be refused, not attempted: 4 GiB of address space is plenty for
# these tiny models. Sanitizer builds reserve terabytes of shadow memory, so they run unbounded.
ADDRESS_SPACE_LIMIT = 4 << 30
SANITIZED = bool(os.environ.get("NXRT_SANITIZED"))


def limit_memory():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_LIMIT, ADDRESS_SPACE_LIMIT))


def run_bounded(*args, timeout=60):
    # Names in a corrupted model may be any bytes: they are compared, not decoded strictly.
    p = subprocess.run([NXRT, *map(str, args)], capture_output=True, text=True, errors="backslashreplace",
                       timeout=timeout, preexec_fn=limit_memory)
    return p.returncode, p.stdout, p.stderr


def save_relu_model(path):
    """A model of one Relu on float[2], saved at `path`; returns `path`."""
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


class HostileCorpus(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="nxrt-hostile-"))
        cls.corpus = cls.tmp / "corpus"
        subprocess.run([sys.executable, ROOT / "tests/hostile/gen_corpus.py", cls.corpus, "--nxrt", NXRT], check=True,
                       capture_output=True)
        cls.cases = json.loads((cls.corpus / "manifest.json").read_text())["cases"]

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def check(self, command):
        ran = 0
        for case in self.cases:
            expect = case["expect"].get(command)
            if expect is None:
                continue
            ran += 1
            model = self.corpus / case["model"]
            out_dir = self.tmp / "out" / command / case["name"]
            out_dir.mkdir(parents=True)
            args = [command, model]
            if command == "run":
                args += [a.replace("{dir}", str(model.parent)) for a in case["run_args"]] + ["-q"]
            if command == "compile-epcontext":
                args += ["-o", out_dir / "ctx.onnx"]
            with self.subTest(case=case["name"]):
                try:
                    rc, out, err = run_bounded(*args)
                except subprocess.TimeoutExpired:
                    self.fail(f"{command} {case['name']}: no answer within 60 s")
                self.assertGreaterEqual(rc, 0, f"{command} {case['name']}: killed by signal {-rc}\n{err}")
                # A report; not ASan's warning that an allocation failed (nxrt reports that itself).
                self.assertNotIn("ERROR: AddressSanitizer", err)
                self.assertNotIn("runtime error:", err)  # UBSan
                if expect["code"] is not None:
                    self.assertEqual(rc, expect["code"], f"{command} {case['name']}\nstdout:\n{out}\nstderr:\n{err}")
                else:
                    self.assertIn(rc, (0, 1, 3, 4), f"{command} {case['name']}\n{err}")
                if rc != 0:
                    # Every error names the file concerned (its path holds the case's folder).
                    self.assertIn(case["name"], err, f"{command} {case['name']}: the error names no file")
                    self.assertIn("error:", err)
                for text in expect["stderr"]:  # a declined node's reason is in the table on stdout
                    self.assertIn(text, out + err, f"{command} {case['name']}")
                left = sorted(p.name for p in out_dir.iterdir())
                self.assertEqual(left, [] if rc != 0 else left, f"{command} {case['name']} left files behind")
                self.assertEqual([p.name for p in model.parent.iterdir() if p.name.startswith(".")], [],
                                 f"{command} {case['name']} left temporary files beside the model")
        self.assertGreater(ran, 10)

    def test_explain_claims(self):
        self.check("explain-claims")

    def test_run(self):
        self.check("run")

    def test_compile_epcontext(self):
        self.check("compile-epcontext")


class Interrupts(TempDirTest):
    """SIGINT at any moment of compile-epcontext: either every output is there and whole, or none."""

    def test_sigint_leaves_no_partial_files(self):
        # 32 MiB of weights, so writing the outputs takes a while.
        w = onnx.numpy_helper.from_array(np.ones((2048, 4096), np.float32), "w")
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2048])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4096])], [w])
        model = self.tmp / "big.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(model))
        args = [NXRT, "compile-epcontext", str(model), "--ep", "cpu"]
        start = time.monotonic()
        self.assertEqual(subprocess.run(args + ["-o", str(self.tmp / "full" / "ctx.onnx")],
                                        capture_output=True).returncode, 0)
        full = time.monotonic() - start
        interrupted = 0
        # Eight moments across the first run's length; on a machine that got faster meanwhile
        # (so that every try finished), ever earlier ones until a compile is caught midway.
        delays = [full * (i + 0.5) / 8 for i in range(8)] + [full / 16 / 2**k for k in range(10)]
        for i, delay in enumerate(delays):
            if i >= 8 and interrupted:
                break
            out = self.tmp / f"try{i}"
            p = subprocess.Popen(args + ["-o", str(out / "sub" / "ctx.onnx"), "-q"], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, errors="backslashreplace")
            time.sleep(delay)
            p.send_signal(signal.SIGINT)
            err = p.communicate(timeout=60)[1]
            rc = p.returncode
            # The signal may also land after the outputs were committed, while the process ends
            # (ASan makes that stretch long): then they are all there and whole.
            committed = out.exists()
            if committed:
                self.assertEqual(sorted(f.name for f in (out / "sub").iterdir()), ["ctx.onnx", "ctx_cpu.bin"],
                                 f"try {i} (exit {rc}): an interrupted compile left part of its outputs")
                self.assertEqual((out / "sub" / "ctx_cpu.bin").read_bytes(),
                                 (self.tmp / "full" / "ctx_cpu.bin").read_bytes())
            if rc != 0:
                self.assertEqual(rc, -signal.SIGINT, f"try {i}, SIGINT after {delay:.3f} s: exit {rc}\n{err}")
            if rc != 0 and not committed:
                interrupted += 1
        self.assertGreater(interrupted, 0)
        self.assertEqual(sorted(f.name for f in self.tmp.iterdir() if f.name.startswith(".")), [])

    def test_a_failed_compile_takes_back_the_folders_it_made(self):
        model = save_relu_model(self.tmp / "m.onnx")
        taken = self.tmp / "taken"
        taken.mkdir()
        (taken / "m_ctx.onnx").write_bytes(b"already here")  # no --force: this output is refused
        rc = subprocess.run([NXRT, "compile-epcontext", model, model, "--ep", "cpu", "--output-dir", taken],
                            capture_output=True).returncode
        self.assertNotEqual(rc, 0)
        self.assertEqual(sorted(f.name for f in taken.iterdir()), ["m_ctx.onnx"], "a folder it did not make stays")
        compiled = self.tmp / "compiled.onnx"
        self.assertEqual(subprocess.run([NXRT, "compile-epcontext", model, "--ep", "cpu", "-o", compiled],
                                        capture_output=True).returncode, 0)
        fresh = self.tmp / "a" / "b"
        p = subprocess.run([NXRT, "compile-epcontext", compiled, "--ep", "cpu", "-o", fresh / "m.onnx"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("already contains EPContext nodes", p.stderr)
        self.assertFalse((self.tmp / "a").exists(), "the folders made for the output are taken back")


class HostilePaths(TempDirTest):
    """Paths the file system refuses, and numbered value files that skip, repeat or overflow
    their numbers: an error naming the file, never an uncaught exception (SIGABRT)."""

    LONG = "n" * 300  # one name longer than any file system takes (255 bytes)

    def test_an_output_name_too_long(self):
        model = save_relu_model(self.tmp / "m.onnx")
        rc, _, err = run_bounded("compile-epcontext", model, "--ep", "cpu", "-o", self.tmp / self.LONG)
        self.assertEqual(rc, 1, err)
        self.assertIn(f"error: cannot write '{self.tmp / self.LONG}", err)  # the model or its side file
        self.assertIn("File name too long", err)
        rc, _, err = run_bounded("compile-epcontext", model, "--ep", "cpu", "-o", self.tmp / self.LONG / "m.onnx")
        self.assertEqual(rc, 1, err)
        self.assertIn(f"error: cannot create the folder '{self.tmp / self.LONG}'", err)
        self.assertEqual(sorted(f.name for f in self.tmp.iterdir()), ["m.onnx"])

    def check_numbered(self, files, expected_error):
        """A backend-test folder whose test_data_set_0 holds `files`, through run --test-dir and
        (with the same files as a reference folder) run --compare-to."""
        case = self.tmp / "case"
        data = case / "test_data_set_0"
        data.mkdir(parents=True)
        save_relu_model(case / "model.onnx")
        tensor = onnx.numpy_helper.from_array(np.ones(2, np.float32))
        for name in files:
            (data / name).write_bytes(tensor.SerializeToString())
        rc, _, err = run_bounded("run", "--test-dir", case)
        self.assertEqual(rc, 3, err)
        self.assertIn(expected_error.format(dir=data), err)
        rc, _, err = run_bounded("run", case / "model.onnx", "--compare-to", data, "-q")
        self.assertEqual(rc, 3, err)
        self.assertIn(expected_error.format(dir=data), err)

    def test_numbered_files_with_a_gap(self):
        self.check_numbered(["input_0.pb", "output_1.pb"], "error: '{dir}' has output_1.pb but no output_0.pb")

    def test_numbered_files_numbered_twice(self):
        self.check_numbered(["input_0.pb", "output_0.pb", "output_00.pb"],
                            "error: '{dir}' has two files numbered 0: 'output_0.pb' and 'output_00.pb'\n"
                            "  why: file output_K.pb holds the K-th output, so each number names one file\n"
                            "  how to fix: keep one of them")

    def test_numbered_files_beyond_any_index(self):
        self.check_numbered(["input_0.pb", "output_99999999999999999999.pb"],
                            "error: '{dir}/output_99999999999999999999.pb' is numbered 99999999999999999999")


class TerminalEscapes(TempDirTest):
    """Names in a model are data: printed, their control characters are escaped so a model
    cannot recolour the terminal, move the cursor or fake output lines."""

    NAME = "evil\x1b[2J\x1b]0;owned\x07\nline\u009b"

    def test_names_are_escaped_in_tables_and_errors(self):
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["h"], name=self.NAME),
                                   helper.make_node("Inverse", ["h"], ["y"], name=self.NAME + "inverse",
                                                    domain="com.microsoft")], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2, 2])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2, 2])])
        model = self.tmp / "escapes.onnx"
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                          helper.make_opsetid("com.microsoft", 1)]), model)
        for command in ("explain-claims", "run"):
            rc, out, err = run_bounded(command, model, "--ep", "cpu")
            self.assertEqual(rc, 4, err)  # the contrib Inverse is claimed by no EP
            for stream in (out, err):
                for raw in ("\x1b", "\x07", "\u009b"):
                    self.assertNotIn(raw, stream, command)
            self.assertIn("evil\\x1b[2J\\x1b]0;owned\\x07", out + err)
            if command == "explain-claims":  # a table cell stays on one line
                self.assertIn("evil\\x1b[2J\\x1b]0;owned\\x07\\x0aline\\u009b", out)


if __name__ == "__main__":
    unittest.main()
