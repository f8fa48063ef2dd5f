#!/usr/bin/env bash
# The main job on a bundled model: build nxrt, then explain-claims, compile-epcontext and
# run on testdata/cnn, and compare the EPContext model's outputs with the original's.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
nxrt=${NXRT_BUILD_DIR:-build}/cli/nxrt
model=testdata/cnn/model.onnx
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "which EPs this build has"
"$nxrt" list-eps

step "explain-claims: every EP's verdict on every node of $model"
"$nxrt" explain-claims "$model"

step "explain-claims on a model with an op no EP implements (look at the reason; exit code 4)"
"$nxrt" explain-claims testdata/unsupported_op/model.onnx --declined-only || echo "(exit code $?: a node no EP claims)"

step "compile-epcontext: precompile $model into an EPContext model (payload in a side file)"
mkdir -p "$out/cnn_ctx"
"$nxrt" compile-epcontext "$model" -o "$out/cnn_ctx/model.onnx"
ls -l "$out/cnn_ctx"

step "run the EPContext model on the bundled input"
"$nxrt" run "$out/cnn_ctx/model.onnx" --input image=testdata/cnn/inputs/image.npy

step "check the EPContext model against the expected outputs (exit code 5 on a mismatch)"
cp -r testdata/cnn/test_data_set_0 "$out/cnn_ctx/"
"$nxrt" run --test-dir "$out/cnn_ctx"

step "bench the EPContext model"
"$nxrt" bench "$out/cnn_ctx/model.onnx" -n 20 -q
