#!/usr/bin/env bash
# Configures and builds crmd, crmctl, tests and benchmarks into ./build with two jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2
