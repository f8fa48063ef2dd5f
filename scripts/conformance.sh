#!/usr/bin/env bash
# Runs the ONNX backend test suite (Debian's libonnx-testdata) through `nxrt run --test-dir`
# and writes a TSV: case, status, seconds, message. Cases run in batches, one process per
# batch with a time limit; the cases that did not pass in their batch run again one by one.
#
#   scripts/conformance.sh [options] [DATA_DIR]
#     --ep LIST          EPs in priority order (default: cpu)
#     --out FILE         the TSV (default: $NXRT_BUILD_DIR/conformance-<ep>.tsv)
#     --check FILE       ratchet: fail when a case listed in FILE does not pass
#     --update FILE      write the sorted list of passing cases to FILE
#     --exclude FILE     cases (first column) left out of --check and --update: those
#                        whose expected outputs come from a random generator
#     --only REGEX       run only the cases whose name matches
#     -j N               cases run at once (default: number of cores)
#     --timeout SECONDS  per case (default: 60)
#     -q, --quiet        no progress line (shown only when stderr is a terminal, from
#                        NXRT_PROGRESS_DELAY seconds on: default 1)
#
# Status is pass (exit 0), mismatch (5), declined (4), timeout, crash (killed by a signal) or
# error (any other exit code). The last line is "N passed, M failed". The exit code is 1
# when a case crashed or hung, or (with --check) when a listed case no longer passes.
set -euo pipefail
cd "$(dirname "$0")/.."

ep=cpu
out=
check=
update=
exclude=
only=
jobs=$(nproc)
per_case_timeout=60
quiet=0
data_dir=/usr/share/libonnx-testdata/data
build_dir=${NXRT_BUILD_DIR:-build}

usage() { sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while (($#)); do
  case $1 in
    --ep) ep=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --update) update=$2; shift 2 ;;
    --exclude) exclude=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    --timeout) per_case_timeout=$2; shift 2 ;;
    -q|--quiet) quiet=1; shift ;;
    -h|--help) usage ;;
    -*) echo "conformance: unknown option $1" >&2; usage ;;
    *) data_dir=$1; shift ;;
  esac
done

nxrt=$build_dir/cli/nxrt
[[ -x $nxrt ]] || { echo "conformance: $nxrt not found; build first with scripts/build.sh" >&2; exit 2; }
[[ -d $data_dir ]] || {
  echo "conformance: no test data at $data_dir; install Debian's libonnx-testdata (scripts/install-deps.sh) or pass DATA_DIR" >&2
  exit 2
}
command -v jq >/dev/null 2>&1 || {
  echo "conformance: jq not found; it reads nxrt's results: install it (scripts/install-deps.sh, or apt-get install jq)" >&2
  exit 2
}
[[ -z $check || -f $check ]] || { echo "conformance: ratchet list $check not found" >&2; exit 2; }
[[ -z $exclude || -f $exclude ]] || { echo "conformance: exclusion list $exclude not found" >&2; exit 2; }
out=${out:-$build_dir/conformance-${ep//,/-}.tsv}

# A case is a folder holding model.onnx; its name is <suite>/<case> (e.g. node/test_abs).
mapfile -t cases < <(cd "$data_dir" && find . -name model.onnx -printf '%h\n' | sed 's|^\./||' | sort)
if [[ -n $only ]]; then
  mapfile -t cases < <(printf '%s\n' "${cases[@]}" | grep -E -- "$only" || true)
fi
((${#cases[@]})) || { echo "conformance: no cases under $data_dir${only:+ matching $only}" >&2; exit 2; }

run_case() {
  local name=$1 log rc status start end seconds message
  log=$(mktemp)
  start=$(date +%s.%N)
  rc=0
  timeout -k 5 "$per_case_timeout" "$nxrt" run --test-dir "$data_dir/$name" --ep "$ep" --threads 1 -q \
    >"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  case $rc in
    0) status=pass ;;
    5) status=mismatch ;;
    4) status=declined ;;
    124|137) status=timeout ;;
    *) if ((rc > 128)); then status=crash; else status=error; fi ;;
  esac
  # The first line that says what went wrong; tabs and newlines would break the TSV.
  case $status in
    declined) message=$(grep -v -E '^ +(why|how to fix):' "$log" | grep -m1 -E '^ +[a-z0-9_]+: ' | sed 's/^ *//' || true) ;;
    mismatch) message=$(grep -m1 -E '^[^ ]+ +MISMATCH' "$log" | tr -s ' ' || true) ;;
    *) message=$(grep -m1 -E '^error: ' "$log" || head -n1 "$log" || true)
       message+=$(grep -m1 -E '^ +why: ' "$log" | sed 's/^ */ /' || true) ;;
  esac
  [[ $status == timeout ]] && message="no result within ${per_case_timeout}s"
  [[ $status == crash ]] && message="killed by signal $((rc - 128)): ${message}"
  [[ $status == pass ]] && message=
  message=${message//$'\t'/ }
  seconds=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
  printf '%s\t%s\t%s\t%s\n' "$name" "$status" "$seconds" "$message"
  rm -f "$log"
}
# Starting nxrt costs more than most cases take (about 0.05 s, 0.3 s under ASan), so a batch
# of cases shares one process (`nxrt run --json` with several folders prints a JSON line per
# case as soon as it is done), with the time limit of one case. Only its passes count: every
# other case (failed, or left without a line by a crash, a hang or a slow batch) runs again
# alone, so a failure is never blamed on what an earlier case left behind (a GPU error, say)
# and a crash is pinned on its case.
run_batch() {
  local out name passed args=()
  out=$(mktemp)
  for name in "$@"; do args+=(--test-dir "$data_dir/$name"); done
  timeout -k 5 "$per_case_timeout" "$nxrt" run --ep "$ep" --threads 1 -q --json "${args[@]}" \
    >"$out" 2>/dev/null || true
  # A line cut short by the end of the process is not a result.
  passed=$(grep -E '^\{.*\}$' "$out" | jq -r --arg dir "$data_dir" \
    'select(.status == "pass") | [(.test_dir | ltrimstr($dir + "/")), "pass",
     ((.seconds * 100 | round) / 100 | tostring), ""] | @tsv' 2>/dev/null || true)
  local -A finished=()
  if [[ -n $passed ]]; then
    printf '%s\n' "$passed"
    while IFS=$'\t' read -r name _; do finished[$name]=1; done <<<"$passed"
  fi
  for name in "$@"; do
    [[ -n ${finished[$name]:-} ]] || run_case "$name"
  done
  rm -f "$out"
}
export -f run_case run_batch
export nxrt data_dir ep per_case_timeout

# Passes the result lines through; on a terminal, after the first NXRT_PROGRESS_DELAY seconds
# (default 1), keeps a progress line on stderr ("conformance: 120 of 1318 cases, 98 passed")
# and erases it at the end.
show_progress() {
  local line done_cases=0 passed_cases=0 start=$SECONDS shown=0 delay=${NXRT_PROGRESS_DELAY:-1}
  while IFS= read -r line; do
    printf '%s\n' "$line"
    done_cases=$((done_cases + 1))
    [[ $line == *$'\tpass\t'* ]] && passed_cases=$((passed_cases + 1))
    if ((quiet == 0 && SECONDS - start >= delay)) && [[ -t 2 ]]; then
      printf '\r\033[Kconformance: %d of %d cases, %d passed' "$done_cases" "${#cases[@]}" "$passed_cases" >&2
      shown=1
    fi
  done
  if ((shown)); then printf '\r\033[K' >&2; fi
}

# Batches of up to 24 cases, at least four per job so that the jobs end together.
batch=$(((${#cases[@]} + 4 * jobs - 1) / (4 * jobs)))
((batch > 24)) && batch=24
((batch < 1)) && batch=1

mkdir -p "$(dirname "$out")"
{
  printf 'case\tstatus\tseconds\tmessage\n'
  printf '%s\n' "${cases[@]}" | xargs -P "$jobs" -n "$batch" bash -c 'run_batch "$@"' _ | show_progress | sort
} >"$out.tmp"
mv "$out.tmp" "$out"

passed=$(awk -F'\t' 'NR > 1 && $2 == "pass"' "$out" | wc -l)
total=$((${#cases[@]}))
awk -F'\t' 'NR > 1 { n[$2]++ } END { for (s in n) printf "  %-9s %d\n", s, n[s] }' "$out" | sort >&2
echo "conformance: results in $out" >&2

# Cases named in the exclusion list (comments start with #) never enter the ratchet.
excluded() { if [[ -n $exclude ]]; then grep -v '^#' "$exclude" | cut -f1; fi; }

if [[ -n $update ]]; then
  awk -F'\t' 'NR == FNR { skip[$1] = 1; next } FNR > 1 && $2 == "pass" && !($1 in skip) { print $1 }' \
    <(excluded) "$out" >"$update"
  echo "conformance: wrote the $(wc -l <"$update") passing cases to $update" >&2
fi

status=0
# A crash or a hang is a bug whatever the case: nxrt declines or reports, never dies.
broken=$(awk -F'\t' 'NR > 1 && ($2 == "crash" || $2 == "timeout") { print "  " $1 " (" $2 ": " $4 ")" }' "$out")
if [[ -n $broken ]]; then
  echo "conformance: these cases crashed or hung:" >&2
  echo "$broken" >&2
  status=1
fi
if [[ -n $check ]]; then
  regressed=$(awk -F'\t' 'FILENAME == ARGV[1] { skip[$1] = 1; next }
                          FILENAME == ARGV[2] { if (FNR > 1) st[$1] = $2; next }
                          /^[^#]/ && ($1 in st) && !($1 in skip) && st[$1] != "pass" { print $1 " (" st[$1] ")" }' \
                          <(excluded) "$out" "$check")
  if [[ -n $regressed ]]; then
    echo "conformance: these cases passed before and do not now (ratchet $check):" >&2
    echo "$regressed" | sed 's/^/  /' >&2
    status=1
  fi
fi
echo "$passed passed, $((total - passed)) failed"
exit $status
