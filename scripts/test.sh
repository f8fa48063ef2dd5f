#!/usr/bin/env bash
# The whole test suite, in two stages (CI runs both, through .ci/run):
#   1. the plain Release build in build/: every ctest suite (unit, CLI, conformance ratchets);
#   2. an ASan+UBSan build in build-asan/: every suite again (unit, CLI, both conformance
#      ratchets), any sanitizer report fatal.
# Options:
#   scripts/test.sh --plain      stage 1 only (the quick check while developing)
#   scripts/test.sh --sanitize   stage 2 only
#   scripts/test.sh --tsan       a ThreadSanitizer build in build-tsan/: bench --concurrency 4 on
#                                the cpu and onednn,cpu EPs over the test models, any report fatal
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${NXRT_JOBS:-$(nproc)}

usage() {
  echo "usage: scripts/test.sh [--plain | --sanitize | --tsan]" >&2
  exit 2
}

# Configures (once) a Debug sanitizer build at the given optimization level, which every
# target keeps (the kernels' own -O3 and -O2 are for timed builds). ASan+UBSan builds at -O0:
# 30 to 60% less compile time than -O1 in the files measured, and the suites still run in
# minutes. Unlike the Release build, they compile the cpu EP as unity files too (at -O0 that
# is faster, see CMakeLists.txt). The CUDA EP is left out: nvcc code is not instrumented, and
# with no GPU here its host code runs only the "unavailable" path.
configure_sanitizer_build() {  # DIR SANITIZERS LEVEL
  mkdir -p "$1"
  [[ -f "$1/CMakeCache.txt" ]] && return 0
  cmake -S . -B "$1" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="$3" -DNXRT_SANITIZE="$2" \
    -DNXRT_WITH_CUDA=OFF >"$1/configure.log" 2>&1 ||
    { cat "$1/configure.log" >&2; echo "test: cmake configure of $1 failed (log above)" >&2; exit 1; }
}

plain_stage() {
  scripts/build.sh
  ctest --test-dir "${NXRT_BUILD_DIR:-build}" --output-on-failure -j "$jobs"
}

sanitizer_stage() {
  local dir=${NXRT_ASAN_BUILD_DIR:-build-asan}
  echo "test: sanitizer stage: building with ASan+UBSan in $dir" >&2
  configure_sanitizer_build "$dir" address,undefined -O0
  NXRT_BUILD_DIR=$dir scripts/build.sh
  # A report aborts the process: CLI tests see a signal, conformance.sh a crash. An allocation
  # too big returns null as malloc does (nxrt must report it), instead of ASan aborting.
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:allocator_may_return_null=1
  export UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1
  # Every suite, the whole conformance ratchets on cpu and onednn,cpu included (under a minute
  # each on 2 cores): each case that passes must pass with no sanitizer report.
  ctest --test-dir "$dir" --output-on-failure -j "$jobs"
}

tsan_run() {
  local dir=${NXRT_TSAN_BUILD_DIR:-build-tsan}
  configure_sanitizer_build "$dir" thread -O1
  cmake --build "$dir" -j "$jobs" --target nxrt_cli >"$dir/build.log" 2>&1 ||
    { grep -E "error" "$dir/build.log" | head -40 >&2; exit 1; }
  exec tests/tsan/bench_concurrency.sh "$dir/cli/nxrt"
}

case "${1:-}" in
  "") plain_stage; sanitizer_stage ;;
  --plain) plain_stage ;;
  --sanitize) sanitizer_stage ;;
  --tsan) tsan_run ;;
  *) usage ;;
esac
