#!/usr/bin/env bash
# Proves that nxrt's ORT plugin ABI is ONNX Runtime's: the test plugin EP (tests/plugins/test_ep.c),
# built against nxrt's own declarations, runs inside the real ONNX Runtime 1.30, driven by
# tests/plugins/ort_host_check.c (itself written against those declarations, so every OrtApi
# slot it calls is found at nxrt's position), and EPContext models pass between the two hosts.
#
#   scripts/plugin-vs-ort.sh
#
# Installs the peer with npm into .cache/ort-node on first use (scripts/fetch-ort-peer.sh),
# builds nxrt, the test plugins and the driver in $NXRT_BUILD_DIR (default build), then runs the
# ThroughOnnxRuntime CLI tests, showing each ORT step ("ok:" or "FAIL:") and each scenario's
# verdict. Exits 0 when every scenario passed, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${NXRT_BUILD_DIR:-build}
python=/usr/bin/python3  # Debian's interpreter, which has numpy and python3-onnx

die() { echo "plugin-vs-ort: $*" >&2; exit 1; }
[[ $# -eq 0 ]] || { sed -n '2,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
library=$(scripts/fetch-ort-peer.sh --library) || die "no ONNX Runtime to run the plugin in (the reason is above)"
echo "plugin-vs-ort: peer $library"
[[ -f $build_dir/CMakeCache.txt ]] || cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
targets=(nxrt_cli ort_host_check nxrt_test_ep_good nxrt_test_ep_kernel_wrong_version)
cmake --build "$build_dir" -j "${NXRT_JOBS:-2}" --target "${targets[@]}" >"$build_dir/plugin-vs-ort-build.log" 2>&1 ||
  { tail -n 30 "$build_dir/plugin-vs-ort-build.log" >&2; die "building ${targets[*]} failed (log: $build_dir/plugin-vs-ort-build.log)"; }
echo "plugin-vs-ort: built ${targets[*]} in $build_dir"

build_path=$(cd "$build_dir" && pwd)
status=0
NXRT=$build_path/cli/nxrt NXRT_SOURCE_DIR=$PWD NXRT_BUILD_DIR=$build_path NXRT_TEST_PLUGIN_DIR=$build_path/tests/plugins \
  NXRT_ORT_LIBRARY=$library NXRT_SHOW_ORT_STEPS=1 \
  "$python" tests/cli/test_plugins.py -v ThroughOnnxRuntime 2>&1 | grep -v ' \[W:onnxruntime:' || status=$?
((status == 0)) && echo "plugin-vs-ort: PASS, ONNX Runtime runs nxrt's test plugin as nxrt does" ||
  die "FAIL: see the scenario marked FAIL or ERROR above"
