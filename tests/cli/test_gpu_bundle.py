"""scripts/gpu-bundle.sh and scripts/gpu-check.sh --bundle, on a machine without a GPU: the
bundle holds nxrt with every library it links beyond the C and C++ runtimes, jq and the ONNX
test data; gpu-check.sh runs from it, stops with the driver's reason where the cuda EP is
unavailable, and with --without-gpu goes through every step (the cpu EP taking the nodes)."""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path

from test_cli import ROOT, TempDirTest, nxrt

CUDA = next(e for e in json.loads(nxrt("list-eps", "--json")[1])["eps"] if e["name"] == "cuda")
BUILT = not CUDA["reason"].startswith("not built")
TESTDATA = Path("/usr/share/libonnx-testdata/data")


def script(name, *args, timeout=600):
    p = subprocess.run([str(ROOT / "scripts" / name), *map(str, args)], capture_output=True, text=True,
                       timeout=timeout, env=dict(os.environ, NXRT_BUILD_DIR=str(Path(os.environ["NXRT"]).parents[1])))
    return p.returncode, p.stdout, p.stderr


@unittest.skipUnless(BUILT, "the cuda EP is not built: gpu-bundle.sh packs only an nxrt that has it")
@unittest.skipUnless(TESTDATA.is_dir(), f"no ONNX backend test data at {TESTDATA}")
class GpuBundle(TempDirTest):
    @classmethod
    def setUpClass(cls):
        cls.dir = Path(tempfile.mkdtemp(prefix="nxrt-bundle-"))
        cls.bundle = cls.dir / "bundle.tar.gz"
        cls.made = script("gpu-bundle.sh", "--out", cls.bundle)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_bundle_holds_nxrt_its_libraries_jq_and_the_test_data(self):
        self.assertExit(self.made, 0)
        self.assertIn(f"{self.bundle} (", self.made[1])
        with tarfile.open(self.bundle) as tar:
            names = set(tar.getnames())
        for name in ["MANIFEST", "build/cli/nxrt", "bin/jq", "testdata.tar", "lib/libonnx.so.1", "lib/libprotobuf.so.32",
                     "lib/libfmt.so.9", "lib/libjq.so.1", "runtime/libstdc++.so.6"]:
            self.assertIn(name, names)
        self.assertFalse([n for n in names if n.startswith("lib/libc.so") or n.startswith("lib/ld-linux")],
                         "the C runtime stays the GPU machine's")
        self.assertFalse(Path(f"{self.bundle}.part").exists())

    def test_check_stops_with_the_drivers_reason(self):
        if CUDA["available"]:
            self.skipTest("a GPU is visible")
        rc, out, err = script("gpu-check.sh", "--bundle", self.bundle, "--out", self.tmp / "logs")
        self.assertEqual(rc, 1, f"{out}\n{err}")
        self.assertIn("== libraries", out)
        self.assertIn(f"gpu-check: the cuda EP is unavailable: {CUDA['reason']}", err)
        self.assertNotIn("== CLI tests", out)

    def test_without_gpu_every_step_runs_from_the_bundle(self):
        if CUDA["available"]:
            self.skipTest("a GPU is visible")
        rc, out, err = script("gpu-check.sh", "--bundle", self.bundle, "--out", self.tmp / "logs", "--without-gpu",
                              "--no-conformance", "--models", self.tmp / "no-models", "--runs", 2)
        self.assertEqual(rc, 0, f"{out}\n{err}")
        self.assertIn("nxrt: nxrt ", out)  # the MANIFEST
        for step in ["== libraries", "== nxrt list-eps", "== CLI tests: tests/cli/test_cuda.py",
                     "== ONNX Runtime's contrib-op cases with --ep cuda,cpu", "== bench"]:
            self.assertIn(step, out)
        self.assertRegex(out, r"\n(\d+) of \1 contrib-op cases pass with --ep cuda,cpu\n")
        self.assertIn("OK (skipped=", out)
        self.assertIn("== compute-sanitizer: memcheck, racecheck and initcheck with --ep cuda,cpu\nskipped: the cuda EP is "
                      "unavailable", out)
        rows = [line.split() for line in out.splitlines() if line.startswith(("mlp/", "cnn/"))]
        self.assertEqual([r[0] for r in rows], ["mlp/model.onnx", "cnn/model.onnx"])
        for row in rows:
            self.assertTrue(all(float(ms) > 0 for ms in row[1:]), row)
        self.assertTrue((self.tmp / "logs" / "test_cuda.log").is_file())
        self.assertIn("gpu-check: all steps passed", out)

    def test_a_missing_bundle_is_named(self):
        rc, _, err = script("gpu-check.sh", "--bundle", self.tmp / "nothing.tar.gz")
        self.assertEqual(rc, 2)
        self.assertIn(f"no bundle at {self.tmp / 'nothing.tar.gz'}", err)


if __name__ == "__main__":
    unittest.main()
