#!/usr/bin/env bash
# The whole test suite: build nxrt, then run the unit and CLI tests with ctest.
#   scripts/test.sh              the plain build in build/: every suite
#   scripts/test.sh --sanitize   an ASan+UBSan build in build-asan/: unit and CLI suites and a
#                                sample of the conformance cases, any sanitizer report fatal
#   scripts/test.sh --tsan       a ThreadSanitizer build in build-tsan/: bench --concurrency 4 on
#                                the cpu and onednn,cpu EPs over the test models, any report fatal
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ "${1:-}" == "--tsan" ]]; then
  export NXRT_BUILD_DIR=${NXRT_BUILD_DIR:-build-tsan}
  mkdir -p "$NXRT_BUILD_DIR"
  [[ -f "$NXRT_BUILD_DIR/CMakeCache.txt" ]] ||
    cmake -S . -B "$NXRT_BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DNXRT_SANITIZE=thread \
      >"$NXRT_BUILD_DIR/configure.log"
  cmake --build "$NXRT_BUILD_DIR" -j "${NXRT_JOBS:-$(nproc)}" --target nxrt_cli >"$NXRT_BUILD_DIR/build.log" ||
    { grep -E "error" "$NXRT_BUILD_DIR/build.log" | head -40 >&2; exit 1; }
  exec tests/tsan/bench_concurrency.sh "$NXRT_BUILD_DIR/cli/nxrt"
fi
if [[ "${1:-}" == "--sanitize" ]]; then
  export NXRT_BUILD_DIR=${NXRT_BUILD_DIR:-build-asan}
  mkdir -p "$NXRT_BUILD_DIR"
  [[ -f "$NXRT_BUILD_DIR/CMakeCache.txt" ]] ||
    # -O1 with asserts: half the compile time of -O3 under the sanitizers, still quick to run.
    cmake -S . -B "$NXRT_BUILD_DIR" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O1 -DNXRT_SANITIZE=address,undefined \
      >"$NXRT_BUILD_DIR/configure.log"
  scripts/build.sh
  # A report aborts the process: CLI tests see a signal, conformance.sh a crash. An allocation
  # too big returns null as malloc does (nxrt must report it), instead of ASan aborting.
  export ASAN_OPTIONS=abort_on_error=1:detect_leaks=0:allocator_may_return_null=1
  export UBSAN_OPTIONS=abort_on_error=1:print_stacktrace=1
  ctest --test-dir "$NXRT_BUILD_DIR" -R 'unit|cli' --output-on-failure -j "${NXRT_JOBS:-$(nproc)}"
  exec scripts/conformance.sh --only 'test_(a|conv|gemm|matmul|lstm|gru|loop|if|scan|resize|maxpool|reduce_sum|slice|gather|scatter|pad|sequence|optional|cast|qlinear|einsum)' \
    --check tests/conformance/cpu_passing.txt --exclude tests/conformance/cpu_not_passing.tsv
fi
scripts/build.sh
build_dir=${NXRT_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure -j "${NXRT_JOBS:-$(nproc)}"
