#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs unit, integration and end-to-end tests.
#   scripts/test.sh [ctest arguments, e.g. -LE 'postgres|e2e']
# By default everything is built with AddressSanitizer and UndefinedBehaviorSanitizer
# (leaks detected) into ./build-test and every test runs against those binaries; any
# sanitizer report fails (docs/fuzzing.md). This is what .ci/run runs.
# CRMD_TEST_SANITIZE=none runs the same tests on the plain optimised build (./build, the
# one scripts/build.sh, the README's run command and bench/ use); another value, e.g.
# CRMD_TEST_SANITIZE=address, picks the sanitizers.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SANITIZE=${CRMD_TEST_SANITIZE:-address,undefined}
# Time is injected (src/core/clock.h): outside src/core and the HTTP transport's timers in
# src/http, nothing reads a std::chrono clock itself, so tests move a FakeClock instead of
# sleeping. The lines that do are printed and fail the run before anything is built.
if grep -rnE 'std::chrono::(steady|system)_clock::now' src auth tools --include=*.cc --include=*.h |
    grep -vE '^src/(core|http)/'; then
  echo "test: time must come from crmd::Clock (src/core/clock.h); a duration for metrics or logs from crmd::Stopwatch" >&2
  exit 1
fi
./scripts/setup-debian.sh
# The rooms' dependency direction (ARCHITECTURE.md), on the includes.
./scripts/check-layout.sh
# No function of the product over 120 lines: longer ones are split into named steps.
./scripts/check-function-length.py src auth tools
# The code as .clang-format has it (clang-format -i on the files a change touches).
if git rev-parse --git-dir >/dev/null 2>&1; then  # not in an unpacked archive
  git ls-files -z '*.cc' '*.h' | xargs -0 clang-format --dry-run -Werror
fi
if [[ -z $SANITIZE || $SANITIZE == none ]]; then
  ./scripts/build.sh
  cd build
  exec ctest --output-on-failure -j2 --timeout 900 "$@"
fi

BUILD=build-test
# A sanitized build and its test run need about 6 GB here (build-test 4.7 GB, the npm
# folders of tests/e2e and tests/browser 0.5 GB, databases and a PostgreSQL cluster). With
# less, tests fail far from the cause ("database or disk is full", npm errors), so say so
# first and again at the end.
free_gb() { df -Pk . | awk 'NR == 2 { printf "%.1f", $4 / 1048576 }'; }
if awk -v f="$(free_gb)" 'BEGIN { exit !(f < 8) }'; then
  echo "test: warning: only $(free_gb) GB free on $(df -P . | awk 'NR == 2 { print $6 }'); the sanitized build and its tests need about 6 GB" >&2
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRMD_SANITIZE="$SANITIZE" -DCRMD_BUILD_BENCH=OFF
started=$SECONDS
cmake --build "$BUILD" -j2
built=$((SECONDS - started))
# The test binaries set these themselves (tests/support/test_main.cc) and collect what the
# crmd/crmctl processes they spawn report. The processes the scripted tests start (e2e,
# browser, package) inherit these: their reports are written under $REPORTS and any one
# fails the run below.
REPORTS=$ROOT/$BUILD/sanitizer-reports
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:malloc_context_size=10:log_path=$REPORTS/report:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/report:log_exe_name=1"
export LSAN_OPTIONS="suppressions=$ROOT/tests/support/lsan.supp"
echo "test: sanitized build ($BUILD, -fsanitize=$SANITIZE, leaks detected; UBSan without its null and alignment checks, docs/fuzzing.md): any sanitizer report fails"
# The test binaries run as shards of about 25 tests each (CRMD_TEST_SHARD_SIZE,
# tests/CMakeLists.txt); each shard writes a JUnit XML file here, counted below.
RESULTS=$ROOT/$BUILD/test-results
rm -rf "$RESULTS"
mkdir -p "$RESULTS"

cd "$BUILD"
status=0
started=$SECONDS
# Three at a time on two cores: a sanitized test waits on sockets, SMTP peers and databases
# much of its time (the cores were 15 % idle at -j2), and fuzz and tsan each hold a slot
# for minutes.
ctest --output-on-failure -j3 --timeout 900 "$@" || status=$?
echo "test: sanitized ($SANITIZE) build ${built} s, tests $((SECONDS - started)) s, $(free_gb) GB free after them"
python3 - "$RESULTS" <<'PY' || status=1
import glob, sys, xml.etree.ElementTree as ET
files = glob.glob(sys.argv[1] + "/*.xml")
total = {"tests": 0, "failures": 0, "errors": 0, "disabled": 0}
for f in files:
    root = ET.parse(f).getroot()
    for k in total:
        total[k] += int(root.get(k, 0))
print(f"test: GoogleTest under the sanitizers: {total['tests']} tests in {len(files)} shard "
      f"processes, {total['failures']} failed, {total['errors']} errors, {total['disabled']} disabled")
sys.exit(0 if total["failures"] == 0 and total["errors"] == 0 else 1)
PY
for report in "$REPORTS"/*; do
  [[ -e $report ]] || continue
  echo "FAIL: sanitizer report of a process a scripted test started ($(basename "$report")):"
  cat "$report"
  status=1
done
exit $status
