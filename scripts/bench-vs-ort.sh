#!/usr/bin/env bash
# Times nxrt against ONNX Runtime 1.30.0's CPU EP (onnxruntime-node) on identical inputs with
# the same thread count, alternating the two so that machine noise hits both alike.
#
#   scripts/bench-vs-ort.sh [options] MODEL...
#     --threads LIST   thread counts, comma separated (default: 1)
#     --runs N         timed runs per engine, model and thread count, over all rounds (default: 20)
#     --rounds N       blocks per engine, run alternately nxrt, ORT, nxrt, ORT... (default: 4)
#     --warmup N       untimed runs at the start of each block (default: 3)
#     --ep LIST        EPs for nxrt, comma separated (default: nxrt's own default)
#     --cpus LIST      run both engines on these CPUs only (taskset -c LIST, e.g. 1 or 0-1); on
#                      a VM whose CPUs run at different speeds (one 30-50% slower here at times), it
#                      keeps a block's speed from depending on where the system put its process
#     --json           print the results as JSON
#
# MODEL is an .onnx file or the name of one in .cache/bench-models (scripts/export-bench-models.sh
# puts them there). Each block is a fresh process: session creation, first inference, warm-up,
# then timed runs. ORT runs with intraOpNumThreads=N, interOpNumThreads=1, graph optimization
# level all, sequential execution; each run's outputs are garbage-collected, untimed, before the
# next (ort_runner.mjs says why). ORT is installed with npm into .cache/ort-node on first use.
# nxrt is $NXRT_BUILD_DIR/cli/nxrt (default build/cli/nxrt).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

threads_list=1
runs=20
rounds=4
warmup=3
ep=
cpus=
json=0
models=()
python=/usr/bin/python3  # Debian's interpreter, which has numpy and python3-onnx
nxrt=${NXRT_BUILD_DIR:-build}/cli/nxrt
seed=0

die() { echo "bench-vs-ort: $*" >&2; exit 1; }
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2; }
is_count() { [[ $1 =~ ^[0-9]+$ ]] && (($1 >= $2)); }
while (($#)); do
  case $1 in
    --threads|--runs|--rounds|--warmup|--ep|--cpus) [[ $# -ge 2 ]] || usage ;;&
    --threads) threads_list=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --ep) ep=$2; shift 2 ;;
    --cpus) cpus=$2; shift 2 ;;
    --json) json=1; shift ;;
    -h|--help) usage ;;
    -*) echo "bench-vs-ort: unknown option $1" >&2; usage ;;
    *) models+=("$1"); shift ;;
  esac
done
((${#models[@]})) || { echo "bench-vs-ort: no MODEL given" >&2; usage; }
is_count "$runs" 1 || die "--runs $runs is not a whole number of at least 1"
is_count "$rounds" 1 || die "--rounds $rounds is not a whole number of at least 1"
is_count "$warmup" 0 || die "--warmup $warmup is not a whole number"
IFS=, read -r -a thread_counts <<<"$threads_list"
((${#thread_counts[@]})) || die "--threads is empty; give e.g. --threads 1,2"
for t in "${thread_counts[@]}"; do
  is_count "$t" 1 || die "--threads $threads_list: '$t' is not a thread count of at least 1"
done
((rounds <= runs)) || rounds=$runs

# Resolve the models first, so that a typo fails before anything slow happens.
model_paths=()
for m in "${models[@]}"; do
  if [[ -f $m ]]; then
    model_paths+=("$(cd "$(dirname "$m")" && pwd)/$(basename "$m")")
  elif [[ -f $repo/.cache/bench-models/$m.onnx ]]; then
    model_paths+=("$repo/.cache/bench-models/$m.onnx")
  else
    die "model '$m' not found: it is neither a file nor $repo/.cache/bench-models/$m.onnx;" \
      "export the benchmark models with scripts/export-bench-models.sh, or give the path of an .onnx file"
  fi
done

[[ -x $nxrt ]] || die "$nxrt not found: nxrt is not built;" \
  "build it with scripts/build.sh (or point NXRT_BUILD_DIR at a build folder holding cli/nxrt)"
nxrt=$(cd "$(dirname "$nxrt")" && pwd)/nxrt
"$python" -c 'import numpy, onnx' 2>/dev/null ||
  die "$python lacks numpy or onnx, which write the inputs; apt-get install python3-numpy python3-onnx"
ort_dir=$(scripts/fetch-ort-peer.sh) || die "no ONNX Runtime to compare with (the reason is above)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
manifest=$work/manifest.tsv
: >"$manifest"
ep_args=()
[[ -z $ep ]] || ep_args=(--ep "$ep")
pin=()
if [[ -n $cpus ]]; then
  command -v taskset >/dev/null || die "--cpus needs taskset (apt-get install util-linux)"
  taskset -c "$cpus" true 2>/dev/null ||
    die "--cpus $cpus: taskset refuses it; give CPUs this machine has, e.g. 0 or 0-$(($(nproc) - 1))"
  pin=(taskset -c "$cpus")
fi

# run_block ENGINE MODEL_PATH LABEL THREADS RUNS OUT INPUT_SPEC...
run_block() {
  local engine=$1 model=$2 label=$3 threads=$4 n=$5 out=$6
  shift 6
  local input_args=() spec rc=0
  for spec in "$@"; do input_args+=(--input "$spec"); done
  if [[ $engine == nxrt ]]; then
    "${pin[@]}" "$nxrt" bench "$model" --threads "$threads" --runs "$n" --warmup "$warmup" --json -q \
      "${ep_args[@]}" "${input_args[@]}" >"$out" 2>"$out.err" || rc=$?
  else
    "${pin[@]}" node --expose-gc scripts/bench/ort_runner.mjs --ort-dir "$ort_dir" --model "$model" \
      --threads "$threads" --runs "$n" --warmup "$warmup" "${input_args[@]}" >"$out" 2>"$out.err" || rc=$?
  fi
  if ((rc)); then
    cat "$out.err" >&2
    die "$engine failed on $model with $threads thread(s) (exit $rc, its messages above)"
  fi
  printf '%s\t%s\t%s\t%s\n' "$label" "$threads" "$engine" "$out" >>"$manifest"
}

for i in "${!model_paths[@]}"; do
  model=${model_paths[$i]}
  label=$(basename "$model" .onnx)
  mkdir -p "$work/$i"
  "$python" scripts/bench/bench_tool.py inputs "$model" "$work/$i" "$seed" >"$work/$i/inputs.txt" ||
    die "could not write random inputs for $model (error above)"
  mapfile -t inputs <"$work/$i/inputs.txt"
  for t in "${thread_counts[@]}"; do
    echo "bench-vs-ort: $label, $t thread(s): $runs timed runs per engine in $rounds alternating rounds" >&2
    for ((r = 0; r < rounds; ++r)); do
      n=$((runs / rounds + (r < runs % rounds ? 1 : 0)))
      run_block nxrt "$model" "$label" "$t" "$n" "$work/$i/nxrt-$t-$r.json" "${inputs[@]}"
      run_block ort "$model" "$label" "$t" "$n" "$work/$i/ort-$t-$r.json" "${inputs[@]}"
    done
  done
done

json_flag=()
((json == 0)) || json_flag=(--json)
"$python" scripts/bench/bench_tool.py report "$manifest" --cpus "$cpus" "${json_flag[@]}"
