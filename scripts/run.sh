#!/usr/bin/env bash
# Fresh Debian machine -> running crmd on SQLite at http://127.0.0.1:8080.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup-debian.sh
./scripts/build.sh
mkdir -p var
exec ./build/src/app/crmd --database_url=sqlite:var/crmd.db --port=8080 "$@"
