#!/usr/bin/env bash
# Two crmd nodes on one PostgreSQL, with a streaming hot standby for the reads that
# tolerate lag, behind a real load balancer (nginx, round robin, no
# sticky sessions), driven by the official MCP TypeScript SDK client (multinode.mjs):
#   tests/e2e/multinode.sh <crmd> <crmctl>          (ctest: multinode, labels postgres;multinode)
# Starts its own PostgreSQL (tests/support/pg.sh), the two nodes, nginx and, inside
# multinode.mjs, a webhook receiver; removes everything afterwards. Env: E2E_KEEP=1 keeps
# the temp dir (logs, database), E2E_VERBOSE=1.
set -uo pipefail
if [[ $# -lt 2 ]]; then echo "usage: $0 <crmd> <crmctl>" >&2; exit 2; fi
CRMD=$(realpath "$1"); CRMCTL=$(realpath "$2")
E2E_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$E2E_DIR/../.." && pwd)
cd "$E2E_DIR"
say() { echo "[multinode $(date -u +%H:%M:%S)] $*"; }
source "$E2E_DIR/npm-ci.sh"
NODE="$E2E_DIR/node_modules/.bin/node"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[[ -x $NGINX ]] || { say "nginx not installed (scripts/setup-debian.sh installs it)"; exit 1; }

TMP=$(mktemp -d /tmp/crmd-multinode.XXXXXX)
chmod 755 "$TMP"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
  [[ -f $TMP/nginx.pid ]] && kill "$(cat "$TMP/nginx.pid")" 2>/dev/null
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
  "$ROOT/tests/support/pg.sh" stop "$TMP/pg-standby" >/dev/null 2>&1
  "$ROOT/tests/support/pg.sh" stop "$TMP/pg" >/dev/null 2>&1
  if [[ ${E2E_KEEP:-0} == 1 ]]; then say "kept $TMP"; else rm -rf "$TMP"; fi
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

say "starting PostgreSQL"
ADMIN=$("$ROOT/tests/support/pg.sh" start "$TMP/pg") || { say "PostgreSQL did not start"; exit 1; }
psql "$ADMIN" -qc "CREATE DATABASE crmd" || exit 1
DB="${ADMIN%/postgres}/crmd"
# A streaming hot standby of it: both nodes send the reads that tolerate lag there
# (database_read_url: reports, the dashboard, exports).
say "starting a hot standby"
STANDBY_ADMIN=$("$ROOT/tests/support/pg.sh" replica "$TMP/pg-standby" "$TMP/pg") || { say "the standby did not start"; exit 1; }
DB_READ="${STANDBY_ADMIN%/postgres}/crmd"
for _ in $(seq 1 100); do psql "$DB_READ" -qAtc "SELECT 1" >/dev/null 2>&1 && break; sleep 0.1; done

export E2E_EMAIL=e2e@example.com E2E_PASSWORD=e2e-correct-horse-battery
"$CRMCTL" --database_url="$DB" user create "$E2E_EMAIL" --role administrator <<<"$E2E_PASSWORD" >"$TMP/crmctl.log" 2>&1 \
  || { cat "$TMP/crmctl.log" >&2; say "crmctl user create failed"; exit 1; }
# The postal address every marketing message needs (the pre-send check blocks without it).
"$CRMCTL" --database_url="$DB" settings company-address "multinode, 1 Test Street" >"$TMP/address.log" 2>&1 \
  || { cat "$TMP/address.log" >&2; say "crmctl settings company-address failed"; exit 1; }
# This suite is about nodes sharing one database; human approval is e2e.sh's, and only one
# step of multinode.mjs turns it on: the operator lets the assistant confirm alone.
"$CRMCTL" --database_url="$DB" settings approval-policy set '{"require_person":[]}' >"$TMP/policy.log" 2>&1 \
  || { cat "$TMP/policy.log" >&2; say "crmctl settings approval-policy failed"; exit 1; }

LB_PORT=$(free_port); PORT_A=$(free_port); PORT_B=$(free_port); RECEIVER_PORT=$(free_port)
# One SMTP server for both nodes; each node says who it is in EHLO (smtp_url's path).
MAIL_DIR="$TMP/mail"; mkdir -p "$MAIL_DIR"
/usr/bin/python3 "$E2E_DIR/smtp-sink.py" "$MAIL_DIR" >"$TMP/sink.port" 2>"$TMP/sink.log" &
PIDS+=($!)
SMTP_PORT=""
for _ in $(seq 1 100); do SMTP_PORT=$(head -1 "$TMP/sink.port" 2>/dev/null); [[ -n $SMTP_PORT ]] && break; sleep 0.1; done
[[ -n $SMTP_PORT ]] || { cat "$TMP/sink.log" >&2; say "the SMTP sink did not start"; exit 1; }
LB="http://127.0.0.1:$LB_PORT"
# The receiver: every contact event, to multinode.mjs's HTTP server.
"$CRMCTL" --database_url="$DB" --allow_private_network_targets=true webhook create \
  "http://127.0.0.1:$RECEIVER_PORT/hook" all >"$TMP/webhook.log" 2>&1 \
  || { cat "$TMP/webhook.log" >&2; say "crmctl webhook create failed"; exit 1; }

start_node() {  # name port
  "$CRMD" --port="$2" --database_url="$DB" --database_read_url="$DB_READ" --public_base_url="$LB" --log_level=warn \
    --allow_private_network_targets=true --mcp_calls_per_second=0 --webhook_lease_grace_s=1 \
    --webhook_poll_interval_ms=200 --smtp_url="smtp://127.0.0.1:$SMTP_PORT/node-$1" \
    --mail_rate_per_second=100 --mail_poll_interval_ms=100 >"$TMP/crmd-$1.log" 2>&1 &
  echo $!
}
# A port chosen above may have been taken meanwhile by a suite running beside this one
# (a CI run had "Address already in use"): a node that cannot listen gets a new port, up to
# three times. Sets PORT_<NAME> and PID_<NAME>.
start_ready() {  # name
  local name=$1 port pid var="PORT_${1^^}"
  for _attempt in 1 2 3; do
    port=${!var}
    pid=$(start_node "$name" "$port")
    PIDS+=("$pid")
    for _ in $(seq 1 150); do
      if curl -fsS -o /dev/null "http://127.0.0.1:$port/readyz" 2>/dev/null; then
        printf -v "PID_${name^^}" %s "$pid"
        return 0
      fi
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if ! kill -0 "$pid" 2>/dev/null && grep -q 'Address already in use' "$TMP/crmd-$name.log"; then
      say "port $port of node $name was taken meanwhile; another port"
      printf -v "$var" %s "$(free_port)"
      continue
    fi
    say "node $name on $port not ready"; cat "$TMP"/crmd-*.log >&2; exit 1
  done
  say "node $name found no free port"; exit 1
}
start_ready a
start_ready b

mkdir -p "$TMP/nginx"; chmod 777 "$TMP/nginx"
cat >"$TMP/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $TMP/nginx/body;
  proxy_temp_path $TMP/nginx/proxy;
  fastcgi_temp_path $TMP/nginx/fastcgi;
  uwsgi_temp_path $TMP/nginx/uwsgi;
  scgi_temp_path $TMP/nginx/scgi;
  upstream crmd {
    # Round robin, no stickiness: consecutive requests of one client alternate nodes.
    server 127.0.0.1:$PORT_A max_fails=1 fail_timeout=2s;
    server 127.0.0.1:$PORT_B max_fails=1 fail_timeout=2s;
    keepalive 32;
  }
  server {
    listen 127.0.0.1:$LB_PORT;
    location / {
      proxy_pass http://crmd;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host \$http_host;
      proxy_buffering off;
    }
  }
}
CONF
"$NGINX" -c "$TMP/nginx.conf" -p "$TMP/nginx" 2>"$TMP/nginx-start.log" || { cat "$TMP/nginx-start.log" >&2; exit 1; }
for _ in $(seq 1 50); do curl -fsS -o /dev/null "$LB/healthz" 2>/dev/null && break; sleep 0.1; done

say "nodes a=:$PORT_A b=:$PORT_B behind nginx $LB"
CRMCTL="$CRMCTL" LB_URL="$LB" NODE_A="http://127.0.0.1:$PORT_A" NODE_B="http://127.0.0.1:$PORT_B" PID_B="$PID_B" \
  RECEIVER_PORT="$RECEIVER_PORT" DATABASE_URL="$DB" MAIL_DIR="$MAIL_DIR" \
  STANDBY_URL="$DB_READ" STANDBY_DIR="$TMP/pg-standby" PG_SH="$ROOT/tests/support/pg.sh" \
  "$NODE" "$E2E_DIR/multinode.mjs"
rc=$?
if [[ $rc != 0 ]]; then
  say "failed; node logs (tail):"
  for f in "$TMP"/crmd-*.log "$TMP/nginx-error.log"; do echo "== $f"; tail -n 30 "$f"; done >&2
fi
exit $rc
