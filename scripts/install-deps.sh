#!/usr/bin/env bash
# Installs the Debian packages nxrt builds and tests with, skipping those already there.
set -euo pipefail

readonly packages=(
  # build
  cmake g++ make
  # libraries
  libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev libcli11-dev
  nlohmann-json3-dev libfmt-dev catch2 libdlpack-dev
  # oneDNN's CMake package looks for OpenCL (libdnnl-dev only recommends it)
  ocl-icd-opencl-dev
  # test data generator (scripts/gen-testdata.py), CLI tests, ONNX backend test cases
  python3-onnx python3-numpy libonnx-testdata
  # scripts/conformance.sh reads `nxrt run --json`
  jq
  # explain-claims format tests: the JSON schema check; Graphviz's dot (its test skips without it)
  python3-jsonschema graphviz
)

die() {
  echo "install-deps: error: $*" >&2
  exit 1
}

# --fuzz: also clang with libFuzzer, for scripts/fuzz.sh.
extra=()
[[ "${1:-}" == "--fuzz" ]] && extra=(clang-16 libclang-rt-16-dev)

missing=()
for pkg in "${packages[@]}" "${extra[@]}"; do
  # A package removed but not purged reports "deinstall ok config-files": not installed.
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done

((${#missing[@]} == 0)) && exit 0

command -v apt-get >/dev/null 2>&1 ||
  die "missing packages: ${missing[*]}; apt-get was not found (nxrt expects Debian 12 or a derivative); install them with your package manager"

sudo=()
if ((EUID != 0)); then
  command -v sudo >/dev/null 2>&1 ||
    die "missing packages: ${missing[*]}; not running as root and sudo was not found; rerun as root"
  sudo=(sudo)
fi

echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq ||
  die "apt-get update failed; check the network and /etc/apt/sources.list, then rerun"
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" ||
  die "apt-get install failed for: ${missing[*]}; the packages are in Debian 12 (bookworm) main; check that the release and sources are right, then rerun"

# Confirm, so that a package apt skipped (held, renamed) is reported rather than hidden.
still_missing=()
for pkg in "${missing[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || still_missing+=("$pkg")
done
((${#still_missing[@]} == 0)) ||
  die "still not installed after apt-get: ${still_missing[*]}"
