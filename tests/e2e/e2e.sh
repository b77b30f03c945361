#!/usr/bin/env bash
# End-to-end tests of crmd with real MCP clients (see docs/e2e.md).
#   tests/e2e/e2e.sh <crmd binary> <crmctl binary>   (ctest: tests/e2e/run.sh, the same)
# Starts a real crmd on a free loopback port with a fresh SQLite database and one user,
# then runs, each as a separate step:
#   sdk-oauth          the MCP TypeScript SDK client: OAuth (discovery, DCR, PKCE, login,
#                      consent), tools/list, create_contact, list_contacts, wire schema
#   assistant-session  a realistic assistant session over all tool areas (when the tools
#                      it needs are served); the person approves on the console
#   sdk-v2-approval    the v2 SDK client (@modelcontextprotocol/client) at 2026-07-28:
#                      a deletion approved through URL elicitation
#   conformance-server the MCP conformance suite's server scenarios, through proxy.mjs
#   conformance-server-2026  the same suite's 2026-07-28 server scenarios
#   conformance-auth   the conformance suite's authorization server scenarios
# Exits non-zero when any step fails. Env: E2E_ENGINE=postgres runs it all on a PostgreSQL
# server of its own (tests/support/pg.sh); E2E_TLS=1 serves HTTPS with a certificate from a
# test CA made for the run (tests/support/make-test-certs.sh), which the clients trust
# through NODE_EXTRA_CA_CERTS only (default steps then: the SDK clients' OAuth flows, tool
# calls and the assistant session); E2E_ONLY="step ..." runs only those steps,
# E2E_KEEP=1 keeps the temp dir (database, logs, conformance results), E2E_VERBOSE=1.
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 <crmd> <crmctl>" >&2
  exit 2
fi
CRMD=$(realpath "$1")
CRMCTL=$(realpath "$2")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
cd "$E2E_DIR"

say() { echo "[e2e $(date -u +%H:%M:%S)] $*"; }

# --- Node 22 and the clients, from package-lock.json.
source "$E2E_DIR/npm-ci.sh"
export PATH="$E2E_DIR/node_modules/.bin:$PATH"  # node 22 first, for the conformance CLI
export NO_COLOR=1
NODE="$E2E_DIR/node_modules/.bin/node"
say "node $("$NODE" --version), crmd $CRMD"

TMP=$(mktemp -d /tmp/crmd-e2e.XXXXXX)
CRMD_PID=""
PROXY_PID=""
SINK_PID=""
cleanup() {
  [[ -n $PROXY_PID ]] && kill "$PROXY_PID" 2>/dev/null
  [[ -n $SINK_PID ]] && kill "$SINK_PID" 2>/dev/null
  if [[ -n $CRMD_PID ]]; then
    kill "$CRMD_PID" 2>/dev/null
    wait "$CRMD_PID" 2>/dev/null
  fi
  [[ -d $TMP/pg ]] && "$E2E_DIR/../support/pg.sh" stop "$TMP/pg" >/dev/null 2>&1
  if [[ ${E2E_KEEP:-0} == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT

free_port() {
  "$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

export E2E_EMAIL=${E2E_EMAIL:-e2e@example.com}
export E2E_PASSWORD=${E2E_PASSWORD:-e2e-correct-horse-battery}
DB="sqlite:$TMP/crmd.db"
if [[ ${E2E_ENGINE:-sqlite} == postgres ]]; then
  # The same suite on a PostgreSQL server of its own (ctest e2e_postgres).
  chmod 755 "$TMP"
  PG_ADMIN=$("$E2E_DIR/../support/pg.sh" start "$TMP/pg") || { say "PostgreSQL did not start"; exit 1; }
  psql "$PG_ADMIN" -qc "CREATE DATABASE crmd" || exit 1
  DB="${PG_ADMIN%/postgres}/crmd"
  say "database: PostgreSQL"
fi
PORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
TLS_ARGS=()
CURL_TLS=()
if [[ ${E2E_TLS:-0} == 1 ]]; then
  # HTTPS with a certificate nobody trusts but this run's clients (ctest e2e_tls).
  "$E2E_DIR/../support/make-test-certs.sh" "$TMP/certs" server >/dev/null || { say "cannot make test certificates"; exit 1; }
  BASE="https://127.0.0.1:$PORT"
  TLS_ARGS=(--tls_cert_file="$TMP/certs/server.pem" --tls_key_file="$TMP/certs/server.key")
  CURL_TLS=(--cacert "$TMP/certs/ca.pem")
  export NODE_EXTRA_CA_CERTS="$TMP/certs/ca.pem"
  : "${E2E_ONLY:=sdk-oauth assistant-session sdk-v2-approval}"
  say "HTTPS, test CA $TMP/certs/ca.pem"
fi
MCP_URL="$BASE/mcp"

say "creating user $E2E_EMAIL"
if ! "$CRMCTL" --database_url="$DB" user create "$E2E_EMAIL" --role administrator <<<"$E2E_PASSWORD" >"$TMP/crmctl.log" 2>&1; then
  cat "$TMP/crmctl.log" >&2
  say "crmctl user create failed"
  exit 1
fi
# The postal address every marketing message needs (the pre-send check blocks without it).
"$CRMCTL" --database_url="$DB" settings company-address "crmd e2e, 1 Test Street, Testville" >"$TMP/crmctl.log" 2>&1 \
  || { cat "$TMP/crmctl.log" >&2; say "crmctl settings company-address failed"; exit 1; }

# A real SMTP server: the assistant session ends with its campaign's messages received here.
export E2E_MAIL_DIR="$TMP/mail"
mkdir -p "$E2E_MAIL_DIR"
/usr/bin/python3 "$E2E_DIR/smtp-sink.py" "$E2E_MAIL_DIR" >"$TMP/sink.port" 2>"$TMP/sink.log" &
SINK_PID=$!
SMTP_PORT=""
for _ in $(seq 1 100); do
  SMTP_PORT=$(head -1 "$TMP/sink.port" 2>/dev/null)
  [[ -n $SMTP_PORT ]] && break
  sleep 0.1
done
if [[ -z $SMTP_PORT ]]; then
  say "the SMTP sink did not start:"
  cat "$TMP/sink.log" >&2
  exit 1
fi
say "SMTP sink on 127.0.0.1:$SMTP_PORT"

say "starting crmd on $BASE"
"$CRMD" --port="$PORT" --database_url="$DB" --log_level="${E2E_LOG_LEVEL:-warn}" --mcp_validate_output=true \
  --smtp_url="smtp://127.0.0.1:$SMTP_PORT" --mail_poll_interval_ms=200 "${TLS_ARGS[@]}" >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
ready=0
for _ in $(seq 1 100); do
  if curl -fsS "${CURL_TLS[@]}" -o /dev/null "$BASE/readyz" 2>/dev/null; then ready=1; break; fi
  if ! kill -0 "$CRMD_PID" 2>/dev/null; then break; fi
  sleep 0.1
done
if [[ $ready != 1 ]]; then
  say "crmd did not become ready; its log:"
  cat "$TMP/crmd.log" >&2
  exit 1
fi

passed=0
failed=0
failed_steps=()
want_step() { [[ -z ${E2E_ONLY:-} || " $E2E_ONLY " == *" $1 "* ]]; }
run_step() {
  local name=$1
  shift
  want_step "$name" || return 0
  say "=== $name"
  if "$@"; then
    passed=$((passed + 1))
    say "=== $name: PASS"
  else
    failed=$((failed + 1))
    failed_steps+=("$name")
    say "=== $name: FAIL"
  fi
}

# The conformance `server` scenarios that apply to any MCP server. Scenarios needing
# the reference server's fixture tools/resources/prompts are not run (docs/e2e.md).
SERVER_SCENARIOS=(server-initialize server-session-lifecycle ping tools-list dns-rebinding-protection server-sse-multiple-streams)
# The same at 2026-07-28 (stateless, request headers, caching, input-required results).
# The input-required-result-* scenarios other than unsupported-methods call the reference
# server's fixture tools (test_input_required_result_*), which crmd does not have; what
# they check is covered by tests/integration/mcp/modern_test.cc (docs/e2e.md).
SERVER_SCENARIOS_2026=(server-stateless tools-list caching http-header-validation dns-rebinding-protection
  server-sse-multiple-streams sep-2164-resource-not-found input-required-result-unsupported-methods)

# conformance_server <spec version> <baseline file> <scenario...>
conformance_server() {
  local version=$1 baseline=$2
  shift 2
  local out="$TMP/proxy.out" url="" status=0
  "$NODE" proxy.mjs "$MCP_URL" >"$out" 2>&1 &
  PROXY_PID=$!
  for _ in $(seq 1 300); do
    url=$(sed -n 's/^PROXY_URL //p' "$out")
    [[ -n $url ]] && break
    kill -0 "$PROXY_PID" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -z $url ]]; then
    say "proxy did not start:"
    cat "$out"
    return 1
  fi
  say "proxy $url -> $MCP_URL"
  for s in "$@"; do
    say "--- conformance server --spec-version $version --scenario $s"
    if ! conformance server --url "$url" --spec-version "$version" --scenario "$s" \
      --expected-failures "$baseline" --output-dir "$TMP/conformance-$version"; then
      say "--- $s: FAIL"
      status=1
    fi
  done
  kill "$PROXY_PID" 2>/dev/null
  wait "$PROXY_PID" 2>/dev/null
  PROXY_PID=""
  return $status
}

run_step sdk-oauth "$NODE" sdk-oauth.mjs "$MCP_URL"
run_step assistant-session "$NODE" assistant-session.mjs "$MCP_URL"
run_step sdk-v2-approval "$NODE" sdk-v2-approval.mjs "$MCP_URL"
run_step conformance-server conformance_server 2025-11-25 conformance-baseline.yml "${SERVER_SCENARIOS[@]}"
run_step conformance-server-2026 conformance_server 2026-07-28 conformance-baseline-2026-07-28.yml \
  "${SERVER_SCENARIOS_2026[@]}"
run_step conformance-auth "$NODE" conformance-auth.mjs "$BASE" "$TMP/conformance-auth"

if ! kill -0 "$CRMD_PID" 2>/dev/null; then
  say "crmd is no longer running"
  failed=$((failed + 1))
  failed_steps+=("crmd-alive")
fi
if [[ -s $TMP/crmd.log ]]; then
  # crmd prints the generated first administrator's password once: keep it out of logs.
  say "crmd log (warnings and errors, last 50 lines):"
  grep -v -i 'password' "$TMP/crmd.log" | tail -50 | sed 's/^/  crmd: /'
fi
[[ ${#failed_steps[@]} -gt 0 ]] && say "failed steps: ${failed_steps[*]}"
echo "e2e: $passed passed, $failed failed"
[[ $failed -eq 0 && $passed -gt 0 ]]
