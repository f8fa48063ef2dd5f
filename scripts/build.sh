#!/usr/bin/env bash
# Installs missing dependencies, then configures and builds nxrt into build/ (Release).
# Prints only the build's warnings and errors; the full log is build/build.log.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh

build_dir=${NXRT_BUILD_DIR:-build}
jobs=${NXRT_JOBS:-$(nproc)}
mkdir -p "$build_dir"
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >"$build_dir/configure.log" 2>&1 ||
    { cat "$build_dir/configure.log" >&2; echo "build: cmake configure failed (log above)" >&2; exit 1; }
fi
echo "build: compiling nxrt in $build_dir with $jobs jobs (first build takes a few minutes)" >&2
if ! cmake --build "$build_dir" -j "$jobs" >"$build_dir/build.log" 2>&1; then
  grep -E "error|Error" "$build_dir/build.log" | head -40 >&2
  echo "build: compilation failed; full log: $build_dir/build.log" >&2
  exit 1
fi
grep -E "warning:" "$build_dir/build.log" >&2 || true
