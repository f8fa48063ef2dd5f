#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang-16, ASan and UBSan in build-fuzz/, seeds
# them from testdata/ and the hostile corpus, and runs each for SECONDS (or only the TARGETs named:
# model_loader, epcontext, tensor_file). Crashing inputs land in build-fuzz/crashes/<target>/;
# once fixed, add each to tests/hostile/crashes/ as a .onnx model or, for tensor_file, without its
# first byte (which picks the format) as a .npy or .pb file.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:?usage: scripts/fuzz.sh SECONDS [TARGET...]}
shift
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(model_loader epcontext tensor_file)
build=${NXRT_FUZZ_BUILD_DIR:-build-fuzz}
jobs=${NXRT_JOBS:-$(nproc)}
if ! command -v clang++-16 >/dev/null; then
  echo "fuzz: clang++-16 not found; install it with: scripts/install-deps.sh --fuzz" >&2
  exit 2
fi
mkdir -p "$build"
# clang 16 implements what libstdc++ 12's <expected> needs but reports an older __cpp_concepts.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++-16 \
  -DCMAKE_CXX_FLAGS="-U__cpp_concepts -D__cpp_concepts=202002L -Wno-builtin-macro-redefined" \
  -DNXRT_FUZZ=ON -DNXRT_SANITIZE=address,undefined -DNXRT_BUILD_TESTS=OFF -DNXRT_WITH_ONEDNN=OFF \
  >"$build/configure.log" 2>&1 || { cat "$build/configure.log" >&2; exit 1; }
echo "fuzz: building in $build" >&2
cmake --build "$build" -j "$jobs" --target "${targets[@]/#/fuzz_}" >"$build/build.log" 2>&1 ||
  { grep -E "error" "$build/build.log" | head -30 >&2; exit 1; }

# Seeds: the committed test models and tensors, the hostile corpus, compiled cpu blobs (made
# with the regular build's nxrt).
nxrt=${NXRT:-build/cli/nxrt}
[[ -x $nxrt ]] || { echo "fuzz: $nxrt not found; build it first with scripts/build.sh" >&2; exit 2; }
seeds="$build/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"/{model_loader,epcontext,tensor_file}
/usr/bin/python3 tests/hostile/gen_corpus.py "$seeds/hostile" --nxrt "$nxrt" >/dev/null
i=0
for m in testdata/*/model.onnx "$seeds"/hostile/*/model.onnx; do cp "$m" "$seeds/model_loader/$((i++)).onnx"; done
for m in testdata/mlp testdata/cnn; do
  "$nxrt" compile-epcontext "$m/model.onnx" --ep cpu -o "$seeds/ctx.onnx" --force >/dev/null
  head -c -8 "$seeds/ctx_cpu.bin" >"$seeds/epcontext/$(basename "$m").bin"  # the target appends the checksum
done
for f in testdata/*/inputs/*.npy "$seeds"/hostile/*/x.npy; do { printf '\x00'; cat "$f"; } >"$seeds/tensor_file/$((i++))"; done
for f in testdata/*/test_data_set_0/*.pb "$seeds"/hostile/*/x.pb; do { printf '\x01'; cat "$f"; } >"$seeds/tensor_file/$((i++))"; done

status=0
for target in "${targets[@]}"; do
  corpus="$build/corpus/$target" crashes="$build/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  echo "fuzz: $target for $seconds s (log: $build/fuzz_$target.log)" >&2
  if ! ASAN_OPTIONS=detect_leaks=0 "$build/tests/fuzz/fuzz_$target" "$corpus" "$seeds/$target" \
      -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 -artifact_prefix="$crashes/" \
      -print_final_stats=1 >"$build/fuzz_$target.log" 2>&1; then
    echo "fuzz: $target FAILED; crashing input(s):" >&2
    ls "$crashes" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build/fuzz_$target.log" | sed "s/^/  $target: /" >&2
done
exit $status
