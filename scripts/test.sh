#!/usr/bin/env bash
# Every test: installs dependencies, builds, runs unit, integration and end-to-end tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
./scripts/build.sh
cd build
ctest --output-on-failure -j2 --timeout 900
