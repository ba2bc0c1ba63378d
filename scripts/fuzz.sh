#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, LIMITSD_FUZZ=ON, clang) and runs each one, or the
# ones named, one after another on one core, each from a copy of its seed corpus in a work
# directory: the committed corpus (tests/fuzz/corpus/<target>/) only grows with --merge.
# Prints the executions of each target and the total; exits non-zero when a target crashed,
# leaked or hung, with the input saved under <work>/<target>/crashes/.
#   scripts/fuzz.sh                      every target, 60 s each
#   scripts/fuzz.sh --time 10 stream_list record_value
#   scripts/fuzz.sh --runs 1000000 http_request
#   scripts/fuzz.sh --merge ring_value   then add the new inputs that bring coverage to the corpus
# Options:
#   --time S        seconds per target (default 60)
#   --runs N        inputs per target instead (libFuzzer's -runs; the seeds count)
#   --build-dir D   the fuzz build directory (default build-fuzz at the repository's root)
#   --work D        where the corpora copies, logs and crashes go (default <build-dir>/fuzz-work)
#   --no-build      do not configure and build first
#   --merge         minimise the run's new inputs into tests/fuzz/corpus/<target>/ (-merge=1)
#   --list          print the target names and exit
# Needs clang and libFuzzer: apt-get install clang libclang-rt-14-dev (Debian 12).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
seconds=60
runs=""
build_dir="$root/build-fuzz"
work=""
build=1
merge=0
list=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --work) work="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --merge) merge=1; shift ;;
    --list) list=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/{/^#/p}' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("${1%_fuzz}"); shift ;;
  esac
done
work="${work:-$build_dir/fuzz-work}"
fuzz_dir="$root/tests/fuzz"

all=()
for f in "$fuzz_dir"/*_fuzz.cc; do
  name="$(basename "$f" _fuzz.cc)"
  all+=("$name")
done
if [ "$list" = 1 ]; then printf '%s\n' "${all[@]}"; exit 0; fi
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
for t in "${targets[@]}"; do
  if [ ! -f "$fuzz_dir/${t}_fuzz.cc" ]; then
    echo "fuzz.sh: no target $t (have: ${all[*]})" >&2
    exit 2
  fi
done

if [ "$build" = 1 ]; then
  start=$(date +%s)
  if [ ! -f "$build_dir/CMakeCache.txt" ]; then
    cmake -S "$root" -B "$build_dir" -DCMAKE_CXX_COMPILER=clang++ -DLIMITSD_FUZZ=ON \
      -DLIMITSD_BUILD_TESTS=OFF -DLIMITSD_BUILD_BENCH=OFF >/dev/null
  fi
  nice -n 10 cmake --build "$build_dir" -j2 --target $(printf '%s_fuzz ' "${targets[@]}")
  echo "fuzz.sh: build took $(( $(date +%s) - start )) s"
fi

# Dangling views into a returned frame's stack are found only with the fake stack (~10% slower).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_stack_use_after_return=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1}"
failed=()
total=0
printf '%-22s %12s %8s %8s  %s\n' target executions seconds exec/s result
for t in "${targets[@]}"; do
  bin="$build_dir/bin/${t}_fuzz"
  if [ ! -x "$bin" ]; then echo "fuzz.sh: $bin is not built" >&2; exit 2; fi
  dir="$work/$t"
  rm -rf "$dir/corpus"
  mkdir -p "$dir/corpus" "$dir/crashes"
  seeds="$fuzz_dir/corpus/$t"
  args=(-timeout=25 -rss_limit_mb=2560 -print_final_stats=1 -artifact_prefix="$dir/crashes/")
  if [ -n "$runs" ]; then args+=(-runs="$runs"); else args+=(-max_total_time="$seconds"); fi
  # A target's own libFuzzer options: a "// fuzz.sh options: ..." line in its source.
  read -r -a own <<<"$(sed -n 's|^// fuzz.sh options: ||p' "$fuzz_dir/${t}_fuzz.cc")"
  args+=("${own[@]}")
  # dict/<target>.dict, else the dictionary of its family (dict/memberlist.dict for memberlist_*).
  for d in "$fuzz_dir/dict/$t.dict" "$fuzz_dir/dict/${t%%_*}.dict"; do
    if [ -f "$d" ]; then args+=(-dict="$d"); break; fi
  done
  corpora=("$dir/corpus")
  if [ -d "$seeds" ]; then corpora+=("$seeds"); fi
  start=$(date +%s.%N)
  rc=0
  # New inputs go to the first directory, the work copy; the seeds are only read.
  nice -n 10 "$bin" "${args[@]}" "${corpora[@]}" >"$dir/log" 2>&1 || rc=$?
  elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -1)
  execs=${execs:-0}
  total=$((total + execs))
  rate=$(awk -v n="$execs" -v s="$elapsed" 'BEGIN { printf "%d", n / (s + 0.001) }')
  if [ "$rc" = 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc): $(ls "$dir/crashes" 2>/dev/null | tr '\n' ' ')log $dir/log"
    failed+=("$t")
  fi
  printf '%-22s %12s %8.1f %8s  %s\n' "$t" "$execs" "$elapsed" "$rate" "$result"
  if [ "$rc" != 0 ]; then grep -m3 -E 'ERROR|FUZZ_CHECK|runtime error|SUMMARY' "$dir/log" | sed 's/^/    /' || true; fi
  if [ "$merge" = 1 ] && [ "$rc" = 0 ]; then
    mkdir -p "$seeds"
    before=$(ls "$seeds" | wc -l)
    nice -n 10 "$bin" -merge=1 "$seeds" "$dir/corpus" >"$dir/merge.log" 2>&1
    echo "    merged: $(( $(ls "$seeds" | wc -l) - before )) new inputs in $seeds"
  fi
done
printf '%-22s %12s\n' total "$total"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failed: ${failed[*]}" >&2
  exit 1
fi
