#!/usr/bin/env bash
# Packs what scripts/gpu-check.sh needs on a GPU machine that has the NVIDIA driver and CUDA
# 13 (NVRTC, cuBLASLt, cuDNN 9) but none of nxrt's Debian packages and no network: the built
# nxrt, every shared library it links beyond the C and C++ runtimes, jq (conformance.sh reads
# its JSON lines), and the ONNX backend test data. One gzip archive (gzip is on every Linux
# machine; xz is not), about 30 MiB.
#
#   scripts/gpu-bundle.sh [--out FILE]
#     --out FILE   the archive (default: .cache/gpu-bundle.tar.gz, which git ignores)
#
# On the GPU machine, from a copy of this repository with the archive in it:
#   scripts/gpu-check.sh --bundle .cache/gpu-bundle.tar.gz
# The CUDA libraries are the GPU machine's own: nxrt loads them by soname when it runs.
# nxrt is $NXRT_BUILD_DIR/cli/nxrt (default build/cli/nxrt), built with the cuda EP.
set -euo pipefail
cd "$(dirname "$0")/.."

out=.cache/gpu-bundle.tar.gz
build=${NXRT_BUILD_DIR:-build}
data=/usr/share/libonnx-testdata/data
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0" >&2; exit 2; }
while (($#)); do
  case $1 in
    --out) [[ $# -ge 2 ]] || usage; out=$2; shift 2 ;;
    *) usage ;;
  esac
done
die() { echo "gpu-bundle: $*" >&2; exit 1; }

nxrt=$build/cli/nxrt
[[ -x $nxrt ]] || die "$nxrt not found; build first with scripts/build.sh"
command -v jq >/dev/null || die "jq not found; install it with scripts/install-deps.sh"
reason=$("$nxrt" list-eps --json | jq -r '.eps[] | select(.name == "cuda") | .reason')
[[ $reason != "not built"* ]] || die "this nxrt has no cuda EP ($reason); build where the CUDA Toolkit is installed"
[[ -d $data ]] || die "no ONNX backend test data at $data; install Debian's libonnx-testdata (scripts/install-deps.sh)"

stage=$(mktemp -d)
trap 'rm -rf "$stage" "$out.part"' EXIT
mkdir -p "$stage/build/cli" "$stage/bin" "$stage/lib" "$stage/runtime"
cp "$nxrt" "$stage/build/cli/nxrt"
cp "$(command -v jq)" "$stage/bin/jq"

# The C runtime stays the GPU machine's own (nxrt needs glibc 2.34 or newer). libstdc++ and
# libgcc_s go to runtime/, which gpu-check.sh adds only when the machine's copies are older
# than these binaries need. Everything else goes to lib/.
is_c_runtime() { [[ $1 =~ ^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libutil|libresolv)[.-] ]]; }
is_cxx_runtime() { [[ $1 =~ ^(libstdc\+\+|libgcc_s)\. ]]; }
for binary in "$stage/build/cli/nxrt" "$stage/bin/jq"; do
  while read -r name _ path _; do
    is_c_runtime "$name" && continue
    [[ -f $path ]] || die "ldd $binary: $name is not found here"
    if is_cxx_runtime "$name"; then cp -L "$path" "$stage/runtime/$name"; else cp -L "$path" "$stage/lib/$name"; fi
  done < <(ldd "$binary" | awk '$2 == "=>" { print }')
done

# Self-check: with the bundle's folders first on the search path, every library but the C
# runtime's resolves inside the bundle.
for binary in "$stage/build/cli/nxrt" "$stage/bin/jq"; do
  outside=$(LD_LIBRARY_PATH=$stage/lib:$stage/runtime ldd "$binary" | awk '$2 == "=>" { print $1, $3 }' |
    while read -r name path; do is_c_runtime "$name" || [[ $path == "$stage"/* ]] || echo "$name ($path)"; done)
  [[ -z $outside ]] || die "$(basename "$binary") would load these from outside the bundle: $outside"
done

tar -C "$(dirname "$data")" -cf "$stage/testdata.tar" "$(basename "$data")"
{
  echo "nxrt: $("$nxrt" --version | head -1)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with changes)')"
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), $(ldd --version | head -1)"
} >"$stage/MANIFEST"

mkdir -p "$(dirname "$out")"
tar -C "$stage" -cf - MANIFEST build bin lib runtime testdata.tar | gzip -6 >"$out.part"
mv "$out.part" "$out"
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1)); on the GPU machine: scripts/gpu-check.sh --bundle $out"
