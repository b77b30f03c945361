#!/usr/bin/env bash
# The web console in a real headless Chromium (ctest browser_console; docs/console.md).
#   tests/browser/run.sh <crmd> <crmctl> <output dir>
# Installs Node 22 and puppeteer-core from package-lock.json into tests/browser/node_modules
# (skipped when it already matches), starts a real crmd on a free loopback port with a
# fresh SQLite database and one administrator, and runs console.mjs against Debian's
# /usr/bin/chromium (CHROMIUM overrides it). Screenshots go to <output dir>.
set -uo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 <crmd> <crmctl> <output dir>" >&2
  exit 2
fi
CRMD=$(realpath "$1")
CRMCTL=$(realpath "$2")
OUT=$3
DIR=$(cd "$(dirname "$0")" && pwd)
say() { echo "[browser $(date -u +%H:%M:%S)] $*"; }

source "$DIR/setup.sh"

TMP=$(mktemp -d /tmp/crmd-browser.XXXXXX)
CRMD_PID=""
cleanup() {
  if [[ -n $CRMD_PID ]]; then
    kill "$CRMD_PID" 2>/dev/null
    wait "$CRMD_PID" 2>/dev/null
  fi
  if [[ ${BROWSER_KEEP:-0} == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

PORT=$("$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
export CONSOLE_BASE="http://127.0.0.1:$PORT"
export CONSOLE_EMAIL=admin@example.com
export CONSOLE_PASSWORD=browser-correct-horse-battery
export MAIL_DIR="$TMP/mail"  # the messages crmd writes without a relay (console.mjs reads them)
DB="sqlite:$TMP/crmd.db"
if ! "$CRMCTL" --database_url="$DB" user create "$CONSOLE_EMAIL" --admin <<<"$CONSOLE_PASSWORD" >"$TMP/crmctl.log" 2>&1; then
  cat "$TMP/crmctl.log" >&2
  say "crmctl user create failed"
  exit 1
fi
# The postal address every marketing message needs (the pre-send check blocks without it).
"$CRMCTL" --database_url="$DB" settings company-address "crmd console, 1 Test Street" >"$TMP/crmctl.log" 2>&1 \
  || { cat "$TMP/crmctl.log" >&2; say "crmctl settings company-address failed"; exit 1; }
# Webhook targets and the OAuth callback are on loopback (the test's own receiver).
"$CRMD" --port="$PORT" --database_url="$DB" --log_level=warn --mcp_validate_output=true \
  --allow_private_network_targets=true --webhook_poll_interval_ms=200 \
  --mail_dir="$MAIL_DIR" --mail_poll_interval_ms=200 >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
ready=0
for _ in $(seq 1 100); do
  if curl -fsS -o /dev/null "$CONSOLE_BASE/readyz" 2>/dev/null; then ready=1; break; fi
  if ! kill -0 "$CRMD_PID" 2>/dev/null; then break; fi
  sleep 0.1
done
if [[ $ready != 1 ]]; then
  say "crmd did not become ready; its log:"
  cat "$TMP/crmd.log" >&2
  exit 1
fi
mkdir -p "$OUT"
rm -f "$OUT"/*.png  # this run's screenshots only
say "crmd at $CONSOLE_BASE, Chromium $("$CHROMIUM" --version 2>/dev/null | head -1), screenshots in $OUT"
CHROMIUM="$CHROMIUM" SCREENSHOTS="$OUT" "$NODE" "$DIR/console.mjs"
status=$?
if [[ $status != 0 ]]; then
  say "crmd's log:"
  tail -50 "$TMP/crmd.log" >&2
fi
exit $status
