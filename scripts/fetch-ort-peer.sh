#!/usr/bin/env bash
# Installs the ONNX Runtime peer, the npm package onnxruntime-node@1.30.0 (whose Linux x64
# folder holds libonnxruntime.so.1), into .cache/ort-node unless it is there already.
# scripts/bench-vs-ort.sh and scripts/plugin-vs-ort.sh share it.
#
#   scripts/fetch-ort-peer.sh [--library]
#     --library   print the path of libonnxruntime.so.1 (default: print the install folder)
set -euo pipefail
cd "$(dirname "$0")/.."
ort_version=1.30.0
ort_dir=$PWD/.cache/ort-node
library=$ort_dir/node_modules/onnxruntime-node/bin/napi-v6/linux/x64/libonnxruntime.so.1

die() { echo "fetch-ort-peer: $*" >&2; exit 1; }
[[ $# -eq 0 || $1 == --library ]] || { echo "usage: scripts/fetch-ort-peer.sh [--library]" >&2; exit 2; }
{ command -v node && command -v npm; } >/dev/null ||
  die "node and npm are needed to install and run ONNX Runtime; install Node.js 20 (apt-get install nodejs npm)"

ort_ok() {
  [[ $(node -p 'require(process.argv[1]).version' "$ort_dir/node_modules/onnxruntime-node/package.json" 2>/dev/null) == "$ort_version" ]] &&
    (cd "$ort_dir" && node -e "require('onnxruntime-node')" 2>/dev/null) && [[ -f $library ]]
}
if ! ort_ok; then
  echo "fetch-ort-peer: installing onnxruntime-node@$ort_version into $ort_dir with npm" >&2
  mkdir -p "$ort_dir"
  [[ -f $ort_dir/package.json ]] || echo '{"private": true, "description": "nxrt benchmark peer"}' >"$ort_dir/package.json"
  # Its install script would download GPU binaries; skip that.
  if ! (cd "$ort_dir" && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --loglevel=error \
      "onnxruntime-node@$ort_version" >"$ort_dir/npm-install.log" 2>&1); then
    tail -n 20 "$ort_dir/npm-install.log" >&2
    die "npm install onnxruntime-node@$ort_version failed (log above, full log $ort_dir/npm-install.log);" \
      "check that the npm registry is reachable (npm config get registry), then run this again"
  fi
  ort_ok || die "onnxruntime-node@$ort_version was installed into $ort_dir but does not load in node or lacks" \
    "$library; remove $ort_dir and run this again (log: $ort_dir/npm-install.log)"
fi
if [[ ${1:-} == --library ]]; then echo "$library"; else echo "$ort_dir"; fi
