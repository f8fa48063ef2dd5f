#!/usr/bin/env bash
# The cuda EP's checks on a machine with an NVIDIA GPU, in a few minutes (CI machines without
# one run the rest of the suite; tests/cli/test_cuda.py skips its GPU classes there).
#
#   scripts/gpu-check.sh [--bundle FILE] [--out DIR] [--models DIR] [--runs N] [--no-conformance]
#                        [--no-sanitizer] [--without-gpu]
#     --bundle FILE      run the nxrt of an archive from scripts/gpu-bundle.sh, with the shared
#                        libraries, jq and ONNX test data packed in it: for a GPU machine
#                        that has the driver and CUDA 13 but none of nxrt's Debian packages
#     --out DIR          where the logs, JSON and TSV go (default: $NXRT_BUILD_DIR/gpu-check,
#                        build/gpu-check; with --bundle, .cache/gpu-check)
#     --models DIR       bench models (default: .cache/bench-models from
#                        scripts/export-bench-models.sh, which runs first when that folder
#                        holds none and a Python here has torch and torchvision; else the
#                        committed testdata models)
#     --runs N           bench runs per model and EP list (default: 20)
#     --no-conformance   skip the ONNX backend suite
#     --no-sanitizer     skip compute-sanitizer (memcheck, racecheck, initcheck on every 20th
#                        case of the cpu ratchet, in one nxrt process per tool)
#     --without-gpu      run every step even when the cuda EP is unavailable (its nodes go to
#                        the cpu EP): checks this script and a bundle where there is no GPU
#
# Steps: nxrt list-eps (stops when cuda is unavailable, with its reason); the [cuda] unit tests
# (not with --bundle: they test the host stand-ins and need a compiler; CI runs them) and
# tests/cli/test_cuda.py; compute-sanitizer's memcheck, racecheck and initcheck over a slice
# of the backend suite (when it is installed); the conformance suite with --ep cuda,cpu against
# the cpu ratchet (its figure is printed); ORT's contrib-op cases in testdata/com_microsoft that
# pass on the host build of the kernels (tests/conformance/cuda_on_host_passing.txt); nxrt bench
# with --ep cuda,cpu and --ep onednn,cpu on each model, side by side. The Python for the tests is
# $NXRT_PYTHON, else the first of /usr/bin/python3 and python3 that has numpy and onnx.
# Exit status: 0 when every step passed, 1 otherwise (all steps run either way), 2 when it
# cannot start (no nxrt, bundle or Python).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${NXRT_BUILD_DIR:-build}
out=
bundle=
models=.cache/bench-models
models_given=0
runs=20
conformance=1
sanitizer=1
without_gpu=0
data=/usr/share/libonnx-testdata/data
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    --bundle) [[ $# -ge 2 ]] || usage; bundle=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    --models) [[ $# -ge 2 ]] || usage; models=$2; models_given=1; shift 2 ;;
    --runs) [[ $# -ge 2 ]] || usage; runs=$2; shift 2 ;;
    --no-conformance) conformance=0; shift ;;
    --no-sanitizer) sanitizer=0; shift ;;
    --without-gpu) without_gpu=1; shift ;;
    *) usage ;;
  esac
done
die() { echo "gpu-check: $*" >&2; exit 2; }
step() { echo; echo "== $*"; }

if [[ -n $bundle ]]; then
  [[ -f $bundle ]] || die "no bundle at $bundle; make one with scripts/gpu-bundle.sh where nxrt is built"
  unpacked=$(mktemp -d)
  trap 'rm -rf "$unpacked"' EXIT
  tar -C "$unpacked" -xzf "$bundle" || die "could not unpack $bundle"
  mkdir -p "$unpacked/testdata"
  tar -C "$unpacked/testdata" -xf "$unpacked/testdata.tar" || die "could not unpack the test data of $bundle"
  cat "$unpacked/MANIFEST"
  build=$unpacked/build
  out=${out:-.cache/gpu-check}
  data=$unpacked/testdata/data
  export PATH=$unpacked/bin:$PATH
  export LD_LIBRARY_PATH=$unpacked/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
nxrt=$build/cli/nxrt
[[ -x $nxrt ]] || die "$nxrt not found; build first with scripts/build.sh (or pass --bundle)"
out=${out:-$build/gpu-check}
mkdir -p "$out"
status=0

python=
for candidate in ${NXRT_PYTHON:-} /usr/bin/python3 python3; do
  if "$candidate" -c 'import numpy, onnx' 2>/dev/null; then python=$(command -v "$candidate"); break; fi
done
[[ -n $python ]] || die "no Python with numpy and onnx (tried ${NXRT_PYTHON:+$NXRT_PYTHON, }/usr/bin/python3, python3); set NXRT_PYTHON"

if [[ -n $bundle ]]; then
  step "libraries"
  # libstdc++ and libgcc_s of the bundle only where this machine's are older than nxrt needs.
  if ldd "$nxrt" 2>&1 | grep -q "version \`GLIBCXX\|version \`GCC"; then
    echo "this machine's libstdc++ is older than nxrt needs: using the bundle's"
    export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$unpacked/runtime
  fi
  missing=$(ldd "$nxrt" "$unpacked/bin/jq" 2>&1 | grep -E "not found|version \`" || true)
  [[ -z $missing ]] || die "the bundle's programs cannot load here: $missing"
  # The CUDA libraries nxrt opens by soname (majors from the versions it was built with),
  # looked for where CUDA installs put them when the loader does not know them.
  versions=$("$nxrt" list-eps --json | jq -r '.eps[] | select(.name == "cuda") | .version')
  cuda_major=$(sed -E 's/.*CUDA ([0-9]+).*/\1/' <<<"$versions")
  cublas_major=$(sed -E 's/.*cuBLASLt ([0-9]+).*/\1/' <<<"$versions")
  cudnn_major=$(sed -E 's/.*cuDNN ([0-9]+).*/\1/' <<<"$versions")
  site=$("$python" -c 'import site; print(" ".join(site.getsitepackages()))' 2>/dev/null || true)
  for soname in libcuda.so.1 "libnvrtc.so.$cuda_major" "libcublasLt.so.$cublas_major" "libcudnn.so.$cudnn_major"; do
    known=$(ldconfig -p 2>/dev/null | awk -v s="$soname" '$1 == s { print $NF; exit }')
    if [[ -n $known ]]; then
      echo "$soname: $known"
      continue
    fi
    found=$(find /usr/local/nvidia /usr/local/cuda* /usr/lib/x86_64-linux-gnu /usr/lib64 /opt \
      $(for s in $site; do echo "$s/nvidia"; done) -name "$soname" 2>/dev/null | head -1)
    if [[ -n $found ]]; then
      echo "$soname: $found"
      export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$(dirname "$found")
    else
      echo "$soname: not found (nxrt will say what it is missing)"
    fi
  done
fi

step "nxrt list-eps"
"$nxrt" list-eps || die "$nxrt list-eps failed (above)"
"$nxrt" list-eps --json >"$out/list-eps.json" || die "$nxrt list-eps --json failed"
reason=$(jq -re '.eps[] | select(.name == "cuda") | if .available then "" else .reason end' "$out/list-eps.json") ||
  die "list-eps --json does not list the cuda EP"
if [[ -n $reason ]]; then
  echo "gpu-check: the cuda EP is unavailable: $reason" >&2
  ((without_gpu)) || exit 1
  echo "gpu-check: --without-gpu: going on; the cuda EP declines every node, so the cpu EP runs them" >&2
fi
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv

if [[ -z $bundle ]]; then
  step "unit tests [cuda]"
  "$build/tests/nxrt_unit_tests" "[cuda]" || status=1
fi

step "CLI tests: tests/cli/test_cuda.py"
NXRT=$nxrt NXRT_SOURCE_DIR=$PWD "$python" tests/cli/test_cuda.py -v 2>&1 | tee "$out/test_cuda.log" | tail -25
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

if ((sanitizer)); then
  step "compute-sanitizer: memcheck, racecheck and initcheck with --ep cuda,cpu"
  tool=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  if [[ -n $reason ]]; then
    echo "skipped: the cuda EP is unavailable"
  elif [[ -z $tool ]]; then
    echo "skipped: compute-sanitizer is not installed here"
  else
    # Every 20th case the cpu EP passes: each op family of the cuda EP, in one process a tool.
    mapfile -t dirs < <(grep -v '^#' tests/conformance/cpu_passing.txt | awk -v d="$data" 'NR % 20 == 1 { print d "/" $0 }')
    for check in memcheck racecheck initcheck; do
      log=$out/sanitizer-$check.log
      timeout 300 "$tool" --tool "$check" --error-exitcode 99 --print-limit 20 \
        "$nxrt" run --test-dir "${dirs[@]}" --ep cuda,cpu --threads 1 >"$log" 2>&1
      rc=$?
      summary=$(grep -m1 "ERROR SUMMARY" "$log" | sed 's/^=* *//')
      case $rc in
        99) echo "$check: ${summary:-errors}; first reports:"; grep -m 20 "^=========" "$log" | sed 's/^/  /'; status=1 ;;
        124) echo "$check: stopped after 300 s (log: $log)"; status=1 ;;
        *) echo "$check: ${summary:-no summary} over ${#dirs[@]} cases (nxrt exit $rc; mismatches show in the conformance step)" ;;
      esac
    done
  fi
fi

if ((conformance)); then
  step "conformance with --ep cuda,cpu"
  NXRT_BUILD_DIR=$build scripts/conformance.sh --ep cuda,cpu --out "$out/conformance-cuda.tsv" \
    --check tests/conformance/cpu_passing.txt --exclude tests/conformance/cpu_not_passing.tsv "$data" 2>&1 | tail -20
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi

# ONNX Runtime's contrib ops (testdata/com_microsoft, ORT 1.30's outputs) that pass on the host
# build of the cuda EP's kernels, now on the GPU.
step "ONNX Runtime's contrib-op cases with --ep cuda,cpu"
mapfile -t ms_cases < <(grep '^com_microsoft/' tests/conformance/cuda_on_host_passing.txt)
ms_failed=0
for c in "${ms_cases[@]}"; do
  if ! "$nxrt" run -q --test-dir "testdata/$c" --ep cuda,cpu >"$out/ms-case.log" 2>&1; then
    echo "failed: $c: $(tail -3 "$out/ms-case.log" | tr '\n' ' ')"
    ms_failed=$((ms_failed + 1))
  fi
done
echo "$((${#ms_cases[@]} - ms_failed)) of ${#ms_cases[@]} contrib-op cases pass with --ep cuda,cpu"
((ms_failed == 0)) || status=1

step "bench: --ep cuda,cpu next to --ep onednn,cpu ($runs runs)"
mapfile -t files < <(find "$models" -maxdepth 1 -name '*.onnx' 2>/dev/null | sort)
if ((${#files[@]} == 0 && !models_given)) && "$python" -c 'import torch, torchvision' 2>/dev/null; then
  NXRT_PYTHON=$python NXRT_BUILD_DIR=$build scripts/export-bench-models.sh --out "$models" 2>&1 | tail -12
  mapfile -t files < <(find "$models" -maxdepth 1 -name '*.onnx' 2>/dev/null | sort)
fi
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
      row+=("$(jq -r '.latency_ms.median | . * 1000 | round / 1000' "$json")")
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
