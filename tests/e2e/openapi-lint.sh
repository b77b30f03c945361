#!/usr/bin/env bash
# ctest "openapi_lint": lints the REST API's OpenAPI 3.1 document with Redocly CLI's
# recommended-strict rules (redocly.yaml); any warning fails the test.
set -euo pipefail
DOC=$(realpath "$1")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
say() { echo "[openapi-lint $(date -u +%H:%M:%S)] $*"; }
source "$E2E_DIR/npm-ci.sh"
export PATH="$E2E_DIR/node_modules/.bin:$PATH"  # Node 22 from the lock file
export NO_COLOR=1 REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
cd "$E2E_DIR"
exec redocly lint --config "$E2E_DIR/redocly.yaml" "$DOC"
