#!/usr/bin/env bash
# Builds tests/tsan (the session store, rate limiter, verified-token cache, requestState
# codec and SQLite pool driven by many threads) with clang and ThreadSanitizer into
# ./build-tsan, and runs it. Any data race TSan reports, or a broken promise, fails.
#   scripts/tsan.sh [build dir, default build-tsan]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-tsan}
[[ $BUILD == /* ]] || BUILD="$PWD/$BUILD"
if ! command -v clang++ >/dev/null; then
  echo "tsan: clang++ not found (scripts/setup-debian.sh installs clang)" >&2
  exit 2
fi
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="-O1 -g1 -fno-omit-frame-pointer -fsanitize=thread" -DCRMD_TSAN=ON \
  -DCRMD_BUILD_TESTS=OFF -DCRMD_BUILD_BENCH=OFF -DCRMD_PCH=OFF >/dev/null
cmake --build "$BUILD" -j2 --target crmd_tsan
DIR=$(mktemp -d /tmp/crmd-tsan.XXXXXX)
trap 'rm -rf "$DIR"' EXIT
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" "$BUILD/tests/tsan/crmd_tsan" "$DIR"
