#!/usr/bin/env bash
# Load test: authenticated MCP tool calls per second on one node, reported as a ratio
# against GET /healthz measured in the same run on the same server (the baseline: the
# HTTP stack with no auth, no JSON-RPC, no database).
#
#   [LOAD_EXTRA_ARGS="--mcp_validate_output=true"] bench/load/run.sh [build-dir] [seconds] [connections]
#
# Needs wrk (Debian package). Starts its own crmd on a free port with a fresh SQLite
# database (per-principal rate limit off), registers a confidential client, grants it
# scopes with crmctl, gets a client_credentials token, opens an MCP session and creates
# CONTACTS contacts through the create_contact tool.
set -euo pipefail
BUILD=${1:-build}
SECS=${2:-10}
CONNS=${3:-32}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CRMD="$ROOT/$BUILD/src/app/crmd"
CRMCTL="$ROOT/$BUILD/src/app/crmctl"
TMP=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
BASE="http://127.0.0.1:$PORT"
DB="${LOAD_DATABASE_URL:-sqlite:$TMP/crmd.db}"  # LOAD_DATABASE_URL: e.g. an empty PostgreSQL database
trap 'kill $PID 2>/dev/null || true; rm -rf "$TMP"' EXIT

"$CRMD" --port="$PORT" --database_url="$DB" --log_level=warn --worker_threads=2 --io_threads=1 \
  --mcp_calls_per_second=0 ${LOAD_EXTRA_ARGS:-} \
  >"$TMP/crmd.out" 2>"$TMP/crmd.err" &
PID=$!
for _ in $(seq 1 100); do curl -sf "$BASE/readyz" >/dev/null && break; sleep 0.1; done

REG=$(curl -sf "$BASE/oauth/register" -H 'Content-Type: application/json' -d '{
  "client_name":"load test","redirect_uris":["https://example.com/cb"],
  "grant_types":["client_credentials"],"token_endpoint_auth_method":"client_secret_basic"}')
CID=$(echo "$REG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_id"])')
CSECRET=$(echo "$REG" | python3 -c 'import json,sys; print(json.load(sys.stdin)["client_secret"])')
"$CRMCTL" --database_url="$DB" client grant-scopes "$CID" "contacts:read contacts:write" >/dev/null
TOKEN=$(curl -sf "$BASE/oauth/token" -u "$CID:$CSECRET" \
  -d "grant_type=client_credentials&scope=contacts:read%20contacts:write&resource=$BASE/mcp" |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
SESSION=$(curl -sf -D - -o /dev/null "$BASE/mcp" -H "Authorization: Bearer $TOKEN" \
  -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' |
  awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}' | tr -d '\r')
curl -sf "$BASE/mcp" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $SESSION" \
  -H 'MCP-Protocol-Version: 2025-11-25' -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null

mcp() {  # one JSON-RPC request on the session
  curl -sf "$BASE/mcp" -H "Authorization: Bearer $TOKEN" -H "Mcp-Session-Id: $SESSION" \
    -H 'MCP-Protocol-Version: 2025-11-25' -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -d "$1"
}
for i in $(seq 1 "${CONTACTS:-200}"); do
  mcp '{"jsonrpc":"2.0","id":'"$i"',"method":"tools/call","params":{"name":"create_contact","arguments":{"email":"load'"$i"'@example.com","first_name":"Load","status":"subscribed"}}}' >/dev/null
done
CONTACT_ID=$(mcp '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_contact","arguments":{"email":"load1@example.com"}}}' |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["structuredContent"]["contact"]["id"])')

run() {  # name, then wrk args
  local name=$1; shift
  local out
  out=$(wrk -t2 -c"$CONNS" -d"${SECS}s" --latency "$@")
  local rps
  rps=$(echo "$out" | awk '/Requests\/sec/{print $2}')
  echo "$name: $rps req/s" >&2
  echo "$out" | grep -E 'Latency|non-200|p50|50%|99%' >&2
  echo "$rps"
}

export CRMD_TOKEN=$TOKEN CRMD_SESSION=$SESSION
BASELINE=$(run "baseline GET /healthz" "$BASE/healthz")
GET=$(CRMD_TOOL=get_contact CRMD_ARGS='{"id":'"$CONTACT_ID"'}' run "tools/call get_contact" -s "$HERE/tool_call.lua" "$BASE")
LIST=$(CRMD_TOOL=list_contacts CRMD_ARGS='{"status":"subscribed","limit":25}' run "tools/call list_contacts(status)" -s "$HERE/tool_call.lua" "$BASE")
CREATE=$(CRMD_RUN=$RANDOM CRMD_TOOL=create_contact CRMD_ARGS='{"email":"w%UNIQUE%@example.com"}' run "tools/call create_contact" -s "$HERE/tool_call.lua" "$BASE")
echo "RESULT healthz $BASELINE"; echo "RESULT get_contact $GET"; echo "RESULT list_contacts $LIST"; echo "RESULT create_contact $CREATE"
python3 - "$BASELINE" "$GET" "$LIST" "$CREATE" <<'PY'
import sys
b, g, l, c = map(float, sys.argv[1:])
print(f"baseline /healthz        {b:10.0f} req/s  1.00")
print(f"get_contact tools/call   {g:10.0f} req/s  {g/b:.2f} of baseline")
print(f"list_contacts tools/call {l:10.0f} req/s  {l/b:.2f} of baseline")
print(f"create_contact tools/call {c:9.0f} req/s  {c/b:.2f} of baseline")
PY
