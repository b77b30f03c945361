#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs unit, integration and end-to-end tests.
#   scripts/test.sh [ctest arguments, e.g. -LE 'postgres|e2e']
# CRMD_TEST_SANITIZE=address,undefined builds with AddressSanitizer and
# UndefinedBehaviorSanitizer (leaks detected) into ./build-test instead and runs every test
# against those binaries; any sanitizer report fails (docs/fuzzing.md). ./build
# (scripts/build.sh, the README's run command, bench/) stays the plain optimised build.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SANITIZE=${CRMD_TEST_SANITIZE:-}
./scripts/setup-debian.sh
if [[ -z $SANITIZE ]]; then
  ./scripts/build.sh
  cd build
  exec ctest --output-on-failure -j2 --timeout 900 "$@"
fi

BUILD=build-test
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRMD_SANITIZE="$SANITIZE"
cmake --build "$BUILD" -j2
# The test binaries set these themselves (tests/support/test_main.cc) and collect what the
# crmd/crmctl processes they spawn report. The processes the scripted tests start (e2e,
# browser, package) inherit these: their reports are written under $REPORTS and any one
# fails the run below.
REPORTS=$ROOT/$BUILD/sanitizer-reports
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:check_initialization_order=1:log_path=$REPORTS/report:log_exe_name=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$REPORTS/report:log_exe_name=1"
export LSAN_OPTIONS="suppressions=$ROOT/tests/support/lsan.supp"
echo "test: sanitized build ($BUILD, -fsanitize=$SANITIZE, leaks detected): any sanitizer report fails"

cd "$BUILD"
status=0
ctest --output-on-failure -j2 --timeout 900 "$@" || status=$?
for report in "$REPORTS"/*; do
  [[ -e $report ]] || continue
  echo "FAIL: sanitizer report of a process a scripted test started ($(basename "$report")):"
  cat "$report"
  status=1
done
exit $status
