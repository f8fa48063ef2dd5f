#!/usr/bin/env bash
# The whole test suite: build nxrt, then run the unit and CLI tests with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
build_dir=${NXRT_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "${NXRT_JOBS:-$(nproc)}"
