"""Helpers of scripts/bench-vs-ort.sh, run with Debian's /usr/bin/python3 (numpy, python3-onnx).

  bench_tool.py inputs MODEL DIR SEED
      writes one random .npy per graph input of MODEL into DIR (fixed SEED) and prints
      NAME=PATH lines, the form `nxrt bench --input` and the ORT runner both take.
  bench_tool.py report MANIFEST [--json]
      MANIFEST has one line per timed block, MODEL TAB THREADS TAB ENGINE (nxrt|ort) TAB FILE,
      FILE being that block's JSON (`nxrt bench --json` or ort_runner.mjs); prints the table.
"""
import argparse
import json
import math
import os
import sys
from collections import defaultdict

import numpy as np

# ONNX TensorProto element types -> NumPy dtypes that both readers accept.
NP_DTYPES = {1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
             9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64}


def write_inputs(model_path, out_dir, seed):
    import onnx  # only this subcommand needs it

    model = onnx.load(model_path, load_external_data=False)
    initializers = {t.name for t in model.graph.initializer}
    rng = np.random.default_rng(seed)
    for index, value in enumerate(v for v in model.graph.input if v.name not in initializers):
        tensor_type = value.type.tensor_type
        if not value.type.HasField("tensor_type") or tensor_type.elem_type not in NP_DTYPES:
            sys.exit(f"bench-vs-ort: input '{value.name}' of {model_path} is not a tensor of a supported type; "
                     "the benchmark feeds float, integer and bool tensors only")
        dims = [d.dim_value if d.HasField("dim_value") else 0 for d in tensor_type.shape.dim]
        if any(d <= 0 for d in dims):
            print(f"bench-vs-ort: note: input '{value.name}' of {model_path} has unknown dimensions; "
                  "they are set to 1 (export the model with static shapes)", file=sys.stderr)
            dims = [d if d > 0 else 1 for d in dims]
        dtype = NP_DTYPES[tensor_type.elem_type]
        if np.issubdtype(dtype, np.floating):
            data = rng.standard_normal(dims, dtype=np.float32).astype(dtype)
        elif dtype == np.bool_:
            data = rng.integers(0, 2, dims).astype(np.bool_)
        else:  # small non-negative integers: valid as indices or token ids in most models
            data = rng.integers(0, 10, dims).astype(dtype)
        path = os.path.join(out_dir, f"input_{index}.npy")
        np.save(path, np.ascontiguousarray(data))
        print(f"{value.name}={path}")


def percentile(sorted_samples, p):
    """Nearest rank, as `nxrt bench` computes it: the smallest value with at least p% at or below it."""
    rank = math.ceil(p / 100 * len(sorted_samples))
    return sorted_samples[min(max(rank, 1), len(sorted_samples)) - 1]


def median_of(values):
    return float(np.median(values)) if values else None


def summarize(blocks):
    """Pools the per-run samples of every block; falls back to the median of the per-block
    statistics when a block carries no samples (then both engines get the same estimator)."""
    pooled = all(b.get("samples_ms") for b in blocks)
    if pooled:
        samples = sorted(x for b in blocks for x in b["samples_ms"])
        median, p90 = percentile(samples, 50), percentile(samples, 90)
        runs, lo, hi = len(samples), samples[0], samples[-1]
    else:
        median = median_of([b["median_ms"] for b in blocks])
        p90 = median_of([b["p90_ms"] for b in blocks])
        runs = sum(b["runs"] for b in blocks)
        lo, hi = min(b["min_ms"] for b in blocks), max(b["max_ms"] for b in blocks)
    return {
        "median_ms": median, "p90_ms": p90, "min_ms": lo, "max_ms": hi, "runs": runs, "blocks": len(blocks),
        "pooled": pooled,
        "session_create_ms": median_of([b["session_create_ms"] for b in blocks]),
        "first_inference_ms": median_of([b["first_inference_ms"] for b in blocks]),
        "peak_rss_mib": max(b["peak_rss_mib"] for b in blocks),
    }


def block_stats(samples):
    s = sorted(samples)
    return {"median_ms": percentile(s, 50), "p90_ms": percentile(s, 90), "min_ms": s[0], "max_ms": s[-1],
            "runs": len(s)}


def load_block(engine, path):
    """One block's result in a common form: per-run samples when the engine gave them, else stats."""
    with open(path) as f:
        raw = json.load(f)
    if engine == "ort":
        return {**raw, **block_stats(raw["samples_ms"])}
    latency = raw["latency_ms"]
    samples = raw.get("samples_ms") or latency.get("samples")  # per-run latencies, if nxrt prints them
    return {"samples_ms": samples, "median_ms": latency["median"], "p90_ms": latency["p90"],
            "min_ms": latency["min"], "max_ms": latency["max"], "runs": raw["runs"], "eps": raw["eps"],
            "session_create_ms": raw["session_create_ms"], "first_inference_ms": raw["first_inference_ms"],
            "peak_rss_mib": raw["peak_rss_mib"]}


def report(manifest_path, as_json, cpus):
    groups = defaultdict(lambda: {"nxrt": [], "ort": []})
    extra = {}
    with open(manifest_path) as f:
        for line in f:
            model, threads, engine, path = line.rstrip("\n").split("\t")
            b = load_block(engine, path)
            groups[(model, int(threads))][engine].append(b)
            if engine == "ort":
                extra.setdefault("ort_node_baseline_rss_mib", []).append(b["node_baseline_rss_mib"])
                extra["ort_version"] = b["version"]
            else:
                extra["nxrt_eps"] = b["eps"]
    # The ORT blocks have every sample; nxrt's may only have percentiles. Compare like with like.
    nxrt_pooled = all(b["samples_ms"] for g in groups.values() for b in g["nxrt"])
    rows = []
    for (model, threads), g in groups.items():
        ort_blocks = g["ort"] if nxrt_pooled else [{**b, "samples_ms": None} for b in g["ort"]]
        nx, ort = summarize(g["nxrt"]), summarize(ort_blocks)
        rows.append({"model": model, "threads": threads, "nxrt": nx, "ort": ort,
                     "ratio": nx["median_ms"] / ort["median_ms"],
                     "rss_ratio": nx["peak_rss_mib"] / ort["peak_rss_mib"]})
    baseline = median_of(extra.get("ort_node_baseline_rss_mib", []))
    if as_json:
        print(json.dumps({"ort_version": extra.get("ort_version"), "nxrt_eps": extra.get("nxrt_eps"),
                          "ort_node_baseline_rss_mib": baseline, "cpus": cpus or None,
                          "statistic": "pooled" if nxrt_pooled else "median_of_block_statistics",
                          "rows": rows}, indent=2))
        return
    header = ["model", "threads", "nxrt med", "ORT med", "nxrt/ORT", "nxrt p90", "ORT p90",
              "nxrt RSS", "ORT RSS", "RSS ratio"]
    table = [header]
    for r in rows:
        nx, ort = r["nxrt"], r["ort"]
        table.append([r["model"], str(r["threads"]), f"{nx['median_ms']:.2f} ms", f"{ort['median_ms']:.2f} ms",
                      f"{r['ratio']:.2f}", f"{nx['p90_ms']:.2f} ms", f"{ort['p90_ms']:.2f} ms",
                      f"{nx['peak_rss_mib']:.0f} MiB", f"{ort['peak_rss_mib']:.0f} MiB", f"{r['rss_ratio']:.2f}"])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))).rstrip())
    first = rows[0]
    print(f"\nnxrt EPs: {','.join(extra.get('nxrt_eps') or [])}; ORT {extra.get('ort_version')} CPU EP (Node.js).")
    if cpus:
        print(f"Both engines ran on CPU(s) {cpus} only (taskset -c {cpus}).")
    print(f"{first['nxrt']['runs']} timed runs per engine per row, in {first['nxrt']['blocks']} alternating "
          "blocks (one process each);", end=" ")
    if nxrt_pooled:
        print("median and p90 are over all runs of all blocks.")
    else:
        print("nxrt bench reports no per-run latencies, so median and p90 are the medians of the "
              "per-block median and p90, for both engines alike.")
    print(f"RSS is the largest peak RSS of any block's process. ORT's includes Node.js itself: a node process "
          f"with onnxruntime loaded and no session peaks at {baseline:.0f} MiB.")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("inputs")
    p.add_argument("model")
    p.add_argument("dir")
    p.add_argument("seed", type=int)
    p = sub.add_parser("report")
    p.add_argument("manifest")
    p.add_argument("--json", action="store_true")
    p.add_argument("--cpus", default="", help="the CPUs both engines were pinned to, if any")
    args = parser.parse_args()
    if args.command == "inputs":
        write_inputs(args.model, args.dir, args.seed)
    else:
        report(args.manifest, args.json, args.cpus)


if __name__ == "__main__":
    main()
