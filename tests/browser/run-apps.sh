#!/usr/bin/env bash
# crmd's MCP Apps views with the official AppBridge in a real headless Chromium (ctest
# browser_apps and browser_apps_postgres; docs/mcp.md "Views").
#   tests/browser/run-apps.sh <crmd> <crmctl> <output dir>
# Installs the pinned npm packages from package-lock.json into tests/browser/node_modules
# (skipped when it already matches), bundles apps/host.mjs for the page with esbuild,
# starts a real crmd on a free loopback port (a fresh SQLite database, or with
# APPS_ENGINE=postgres a PostgreSQL server of its own) with one administrator, and runs
# apps/apps.mjs against Debian's /usr/bin/chromium (CHROMIUM overrides it). Screenshots
# go to <output dir>.
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 <crmd> <crmctl> <output dir>" >&2
  exit 2
fi
CRMD=$(realpath "$1")
CRMCTL=$(realpath "$2")
OUT=$3
DIR=$(cd "$(dirname "$0")" && pwd)
ENGINE=${APPS_ENGINE:-sqlite}
say() { echo "[browser-apps $(date -u +%H:%M:%S)] $*"; }

source "$DIR/setup.sh"

TMP=$(mktemp -d /tmp/crmd-browser-apps.XXXXXX)
CRMD_PID=""
cleanup() {
  if [[ -n $CRMD_PID ]]; then
    kill "$CRMD_PID" 2>/dev/null
    wait "$CRMD_PID" 2>/dev/null
  fi
  if [[ $ENGINE == postgres ]]; then "$DIR/../support/pg.sh" stop "$TMP/pg" >/dev/null 2>&1; fi
  if [[ ${BROWSER_KEEP:-0} == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

export APPS_BUNDLE="$TMP/host.js"
if ! "$DIR/node_modules/.bin/esbuild" "$DIR/apps/host.mjs" --bundle --format=iife --platform=browser \
  --log-level=warning --outfile="$APPS_BUNDLE"; then
  say "esbuild failed"
  exit 1
fi

free_port() {
  "$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
PORT=$(free_port)
export APPS_PAGE_PORT=$(free_port)
export APPS_CRMD_BASE="http://127.0.0.1:$PORT"
export CONSOLE_EMAIL=admin@example.com
export CONSOLE_PASSWORD=browser-correct-horse-battery
export APPS_ENGINE=$ENGINE
DB="sqlite:$TMP/crmd.db"
if [[ $ENGINE == postgres ]]; then
  chmod 755 "$TMP"
  PG_ADMIN=$("$DIR/../support/pg.sh" start "$TMP/pg") || { say "PostgreSQL did not start"; exit 1; }
  psql "$PG_ADMIN" -qc "CREATE DATABASE crmd" || exit 1
  DB="${PG_ADMIN%/postgres}/crmd"
fi
if ! "$CRMCTL" --database_url="$DB" user create "$CONSOLE_EMAIL" --admin <<<"$CONSOLE_PASSWORD" >"$TMP/crmctl.log" 2>&1; then
  cat "$TMP/crmctl.log" >&2
  say "crmctl user create failed"
  exit 1
fi
# The host page is another origin: /mcp answers it (allowed_origins), the OAuth endpoints
# it uses allow cross-origin requests.
"$CRMD" --port="$PORT" --database_url="$DB" --log_level=warn --mcp_validate_output=true \
  --allowed_origins="http://127.0.0.1:$APPS_PAGE_PORT" --mail_dir="$TMP/mail" >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
ready=0
for _ in $(seq 1 100); do
  if curl -fsS -o /dev/null "$APPS_CRMD_BASE/readyz" 2>/dev/null; then ready=1; break; fi
  if ! kill -0 "$CRMD_PID" 2>/dev/null; then break; fi
  sleep 0.1
done
if [[ $ready != 1 ]]; then
  say "crmd did not become ready; its log:"
  cat "$TMP/crmd.log" >&2
  exit 1
fi
mkdir -p "$OUT"
rm -f "$OUT"/mcp-apps-*.png
say "crmd at $APPS_CRMD_BASE on $ENGINE, host page at http://127.0.0.1:$APPS_PAGE_PORT, screenshots in $OUT"
CHROMIUM="$CHROMIUM" SCREENSHOTS="$OUT" "$NODE" "$DIR/apps/apps.mjs"
status=$?
if [[ $status != 0 ]]; then
  say "crmd's log:"
  tail -50 "$TMP/crmd.log" >&2
fi
exit $status
