#!/usr/bin/env bash
# Fresh Debian machine -> running crmd on SQLite at http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
# Only what runs here: crmd and crmctl (./scripts/build.sh builds the tests and benchmarks
# as well).
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build -j2 --target crmd crmctl
mkdir -p var
exec ./build/src/app/crmd --database_url=sqlite:var/crmd.db --port=8080 "$@"
