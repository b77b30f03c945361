#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz with clang (AddressSanitizer and
# UndefinedBehaviorSanitizer on, into ./build-fuzz) and runs each for a bounded time on its
# seed corpus (tests/fuzz/corpus/<target>) after replaying the crashes found earlier
# (tests/fuzz/regressions/<target>). Any crash, leak, timeout or sanitizer report fails.
#   scripts/fuzz.sh [seconds per target, default 20] [build dir, default build-fuzz]
# Prints per target: executions, seconds, corpus size; then the totals.
set -euo pipefail
cd "$(dirname "$0")/.."
SECS=${1:-20}
BUILD=${2:-build-fuzz}
ROOT=$PWD
[[ $BUILD == /* ]] || BUILD="$ROOT/$BUILD"
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (scripts/setup-debian.sh installs clang)" >&2
  exit 2
fi
FLAGS="-O1 -g1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all -fsanitize=fuzzer-no-link"
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$FLAGS" -DCRMD_FUZZ=ON -DCRMD_BUILD_TESTS=OFF -DCRMD_BUILD_BENCH=OFF \
  -DCRMD_PCH=OFF >/dev/null
cmake --build "$BUILD" -j2 --target crmd_fuzzers
TARGETS=$(cd tests/fuzz && ls ./*_fuzz.cc | sed 's|^\./||; s|\.cc$||')
WORK=$(mktemp -d /tmp/crmd-fuzz.XXXXXX)
[[ ${FUZZ_KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run_one() {  # target: replays regressions, then fuzzes for SECS; writes $WORK/<t>.log
  local t=$1 bin="$BUILD/tests/fuzz/$1" log="$WORK/$1.log"
  mkdir -p "$WORK/$t.corpus" "$WORK/$t.artifacts"
  if compgen -G "$ROOT/tests/fuzz/regressions/$t/*" >/dev/null; then
    "$bin" "$ROOT/tests/fuzz/regressions/$t"/* >"$log.regressions" 2>&1 ||
      { echo "FAIL $t: a regression input fails again" >"$log"; cat "$log.regressions" >>"$log"; return 1; }
  fi
  local seeds=()
  [[ -d $ROOT/tests/fuzz/corpus/$t ]] && seeds=("$ROOT/tests/fuzz/corpus/$t")
  "$bin" -max_total_time="$SECS" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$WORK/$t.artifacts/" "$WORK/$t.corpus" "${seeds[@]}" >"$log" 2>&1
}

pids=() names=()
failed=0
for t in $TARGETS; do
  run_one "$t" & pids+=($!) names+=("$t")
  if (( ${#pids[@]} >= 2 )); then
    wait "${pids[0]}" || failed=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || failed=1; done

total_execs=0 n=0
printf '%-24s %12s %8s %8s  %s\n' target executions seconds corpus result
for t in $TARGETS; do
  log="$WORK/$t.log"
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(ls "$WORK/$t.corpus" | wc -l)
  result=ok
  # A target that did not run (or ran nothing) fails as surely as one that crashed.
  if [[ ${execs:-0} -eq 0 ]] || grep -qE '^(==[0-9]+==ERROR|SUMMARY: (Address|Undefined|Leak)Sanitizer|.*runtime error:|FAIL )|deadly signal|Test unit written' "$log"; then
    result=FAIL
    failed=1
  fi
  printf '%-24s %12s %8s %8s  %s (%s/s)\n' "$t" "${execs:-0}" "$SECS" "$corpus" "$result" "${secs:-0}"
  total_execs=$((total_execs + ${execs:-0}))
  n=$((n + 1))
  if [[ $result == FAIL ]]; then
    echo "--- $t:"
    grep -vE '^#[0-9]+' "$log" | tail -40
    for a in "$WORK/$t.artifacts"/*; do
      [[ -e $a ]] || continue
      mkdir -p "tests/fuzz/regressions/$t"
      cp "$a" "tests/fuzz/regressions/$t/"
      echo "saved the input as tests/fuzz/regressions/$t/$(basename "$a"): fix, then commit it"
    done
  fi
done
echo "fuzz: $n targets, $total_execs executions, ${SECS} s each"
exit $failed
