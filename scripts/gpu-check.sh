#!/usr/bin/env bash
# The cuda EP's checks on a machine with an NVIDIA GPU, in a few minutes (CI machines without
# one run the rest of the suite; tests/cli/test_cuda.py skips its GPU classes there).
#
#   scripts/gpu-check.sh [--models DIR] [--runs N] [--no-conformance]
#     --models DIR       bench models (default: .cache/bench-models from
#                        scripts/export-bench-models.sh; the committed testdata models
#                        are used when that folder holds none)
#     --runs N           bench runs per model and EP list (default: 20)
#     --no-conformance   skip the ONNX backend suite
#
# Steps: nxrt list-eps (stops when cuda is unavailable, with its reason); the [cuda] unit
# tests and tests/cli/test_cuda.py; the conformance suite with --ep cuda,cpu against the cpu
# ratchet (its figure is printed); nxrt bench with --ep cuda,cpu and --ep onednn,cpu on each
# model, side by side. Everything goes to $NXRT_BUILD_DIR/gpu-check/ (default build/).
# Exit status: 0 when every step passed, 1 otherwise (all steps run either way).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${NXRT_BUILD_DIR:-build}
nxrt=$build/cli/nxrt
models=.cache/bench-models
runs=20
conformance=1
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    --models) [[ $# -ge 2 ]] || usage; models=$2; shift 2 ;;
    --runs) [[ $# -ge 2 ]] || usage; runs=$2; shift 2 ;;
    --no-conformance) conformance=0; shift ;;
    *) usage ;;
  esac
done
[[ -x $nxrt ]] || { echo "gpu-check: $nxrt not found; build first with scripts/build.sh" >&2; exit 2; }
out=$build/gpu-check
mkdir -p "$out"
status=0
step() { echo; echo "== $*"; }

step "nxrt list-eps"
"$nxrt" list-eps
"$nxrt" list-eps --json >"$out/list-eps.json"
reason=$(/usr/bin/python3 -c 'import json,sys; e=[e for e in json.load(open(sys.argv[1]))["eps"] if e["name"]=="cuda"][0]; print("" if e["available"] else e["reason"])' "$out/list-eps.json")
if [[ -n $reason ]]; then
  echo "gpu-check: the cuda EP is unavailable: $reason" >&2
  exit 1
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv

step "unit tests [cuda]"
"$build/tests/nxrt_unit_tests" "[cuda]" || status=1

step "CLI tests: tests/cli/test_cuda.py"
NXRT=$nxrt NXRT_SOURCE_DIR=$PWD /usr/bin/python3 tests/cli/test_cuda.py -v 2>&1 | tee "$out/test_cuda.log" | tail -25
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

if ((conformance)); then
  step "conformance with --ep cuda,cpu"
  NXRT_BUILD_DIR=$build scripts/conformance.sh --ep cuda,cpu --out "$out/conformance-cuda.tsv" \
    --check tests/conformance/cpu_passing.txt --exclude tests/conformance/cpu_not_passing.tsv 2>&1 | tail -20
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi

step "bench: --ep cuda,cpu next to --ep onednn,cpu ($runs runs)"
mapfile -t files < <(find "$models" -maxdepth 1 -name '*.onnx' 2>/dev/null | sort)
if ((${#files[@]} == 0)); then
  echo "gpu-check: no models in $models (scripts/export-bench-models.sh makes them); using testdata" >&2
  files=(testdata/mlp/model.onnx testdata/cnn/model.onnx)
fi
printf '%-40s %14s %14s\n' MODEL "cuda,cpu ms" "onednn,cpu ms"
for f in "${files[@]}"; do
  name=$(basename "$(dirname "$f")")/$(basename "$f")
  row=()
  for eps in cuda,cpu onednn,cpu; do
    json=$out/bench-$(echo "$name" | tr '/' '_')-${eps%%,*}.json
    if "$nxrt" bench "$f" --ep "$eps" -n "$runs" --warmup 3 --json >"$json" 2>"$json.err"; then
      row+=("$(/usr/bin/python3 -c 'import json,sys; print("%.3f" % json.load(open(sys.argv[1]))["latency_ms"]["median"])' "$json")")
    else
      row+=("failed")
      status=1
      sed 's/^/  /' "$json.err" >&2
    fi
  done
  printf '%-40s %14s %14s\n' "$name" "${row[@]}"
done
echo
echo "gpu-check: $( ((status)) && echo "some steps failed" || echo "all steps passed"); logs in $out"
exit $status
