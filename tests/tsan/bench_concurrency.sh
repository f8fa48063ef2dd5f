#!/usr/bin/env bash
# Runs nxrt bench --concurrency 4 under ThreadSanitizer on the cpu and onednn,cpu EPs over the
# test models (mlp, cnn, and a residual CNN, an attention block and an If model written by the
# CLI tests' generators); the first report fails it. Usage: tests/tsan/bench_concurrency.sh NXRT
set -euo pipefail
cd "$(dirname "$0")/../.."
nxrt=${1:?usage: tests/tsan/bench_concurrency.sh PATH/TO/nxrt (built with -DNXRT_SANITIZE=thread)}
models=$(mktemp -d)
trap 'rm -rf "$models"' EXIT
PYTHONPATH=tests/cli /usr/bin/python3 - "$models" <<'PY'
import sys
from pathlib import Path
from test_concurrency import attention_block, branching, residual_cnn
out = Path(sys.argv[1])
residual_cnn(out / "residual.onnx")
attention_block(out / "attention.onnx")
branching(out / "branching.onnx")
PY
# No suppressions: oneDNN (libdnnl) and its OpenMP runtime (libgomp) are not instrumented, so
# TSan checks nxrt's own accesses only, not what runs inside oneDNN primitives. It would still
# see libdnnl's memset/memcpy through its interceptors while missing libgomp's barriers, and
# report a write by an OpenMP worker to a buffer nxrt filled before the primitive started:
# ignore_noninstrumented_modules drops those intercepted calls from uninstrumented libraries.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 ignore_noninstrumented_modules=1"
has_onednn=$("$nxrt" list-eps --json | /usr/bin/python3 -c \
  'import json, sys; print(any(e["name"] == "onednn" and e["available"] for e in json.load(sys.stdin)["eps"]))')
status=0
for model in testdata/mlp/model.onnx testdata/cnn/model.onnx "$models"/residual.onnx "$models"/attention.onnx \
             "$models"/branching.onnx; do
  for eps in cpu onednn,cpu; do
    [[ $eps == cpu || $has_onednn == True ]] || continue
    [[ $eps == cpu || $model != *branching* ]] || continue  # If runs on the cpu EP alone
    start=$SECONDS
    if "$nxrt" bench "$model" --ep "$eps" --concurrency 4 --threads 2 -n 32 --warmup 4 -q >/dev/null; then
      echo "tsan: $(basename "$(dirname "$model")")/$(basename "$model") on $eps: clean ($((SECONDS - start)) s)"
    else
      echo "tsan: $model on $eps: FAILED (report above)" >&2
      status=1
    fi
  done
done
exit $status
