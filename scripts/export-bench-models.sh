#!/usr/bin/env bash
# Exports the benchmark models (random weights, seed 0, batch 1, static shapes) to ONNX with
# Debian's python3-torch / python3-torchvision (or the Python named by NXRT_PYTHON, which must
# have torch and torchvision), then checks that nxrt loads each of them.
#
#   scripts/export-bench-models.sh [options] [MODEL...]
#     --out DIR     where the models go (default: .cache/bench-models, which git ignores)
#     --force       export again even when a model file already exists
#     --no-check    skip the `nxrt explain-claims` load check
#
# MODEL is a file stem; by default all of: resnet18 resnet50 mobilenet_v2 squeezenet1_1
# (torchvision, 1x3x224x224, opset 13) and transformer_encoder_op13 / transformer_encoder_op17
# (torch.nn.TransformerEncoder: 2 layers, d_model 256, 4 heads, feed-forward 1024, batch_first,
# input 1x64x256, at opset 13 and 17). nxrt is $NXRT_BUILD_DIR/cli/nxrt (default build/cli/nxrt).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

out=$repo/.cache/bench-models
force=()
check=1
models=()
# Debian's interpreter (the apt torch packages live there, not in pyenv), or $NXRT_PYTHON.
python=${NXRT_PYTHON:-/usr/bin/python3}
nxrt=${NXRT_BUILD_DIR:-build}/cli/nxrt

usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --force) force=(--force); shift ;;
    --no-check) check=0; shift ;;
    -h|--help) usage ;;
    -*) echo "export-bench-models: unknown option $1" >&2; usage ;;
    *) models+=("$1"); shift ;;
  esac
done

if ! "$python" -c 'import torch, torchvision' 2>/dev/null; then
  [[ -z ${NXRT_PYTHON:-} ]] || { echo "export-bench-models: $python (NXRT_PYTHON) has no torch and torchvision" >&2; exit 1; }
  echo "export-bench-models: installing python3-torch and python3-torchvision with apt-get" >&2
  if [[ $(id -u) -ne 0 ]]; then
    echo "export-bench-models: torch is missing from $python and this is not root;" \
      "run: sudo apt-get install python3-torch python3-torchvision" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q python3-torch python3-torchvision >&2 ||
    { apt-get update -q >&2 && apt-get install -y -q python3-torch python3-torchvision >&2; } ||
    { echo "export-bench-models: apt-get could not install python3-torch python3-torchvision (output above)" >&2; exit 1; }
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
# The exporter prints "exported|kept  PATH ..." per model; PATH is what gets checked below.
listing=$(mktemp)
trap 'rm -f "$listing"' EXIT
"$python" scripts/bench/export_models.py --out "$out" "${force[@]}" "${models[@]}" | tee "$listing" ||
  { echo "export-bench-models: the export failed (error above)" >&2; exit 1; }
mapfile -t paths < <(awk '{print $2}' "$listing")

if ((check)); then
  [[ -x $nxrt ]] || {
    echo "export-bench-models: cannot check the models: $nxrt not found;" \
      "build nxrt first (scripts/build.sh or NXRT_BUILD_DIR=...), or pass --no-check" >&2
    exit 1
  }
  failed=0
  for f in "${paths[@]}"; do
    log=$("$nxrt" explain-claims "$f" --threads 1 2>&1) && rc=0 || rc=$?
    if ((rc)); then
      echo "export-bench-models: nxrt explain-claims $f failed (exit $rc):" >&2
      printf '%s\n' "$log" | tail -n 20 >&2
      failed=1
    else
      echo "loads     $f  ($(grep -m1 '^summary:' <<<"$log" | sed 's/^summary: //'))"
    fi
  done
  ((failed == 0)) || { echo "export-bench-models: some models do not load in nxrt (above)" >&2; exit 1; }
fi
echo "models are in $out"
