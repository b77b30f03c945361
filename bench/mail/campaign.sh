#!/usr/bin/env bash
# Campaign throughput: one campaign of N recipients (default 100,000) from crmd to
# Postfix's smtp-sink on loopback, unthrottled (mail_rate_per_second=0), SQLite.
#
# Reports, in the same run:
#   - queue: the time `crmctl campaign activate --yes` takes to snapshot the audience
#     into the send queue;
#   - baseline: messages per second of Postfix's own smtp-source to the same sink with
#     the same number of connections and a message of the same size (what the sink and
#     loopback allow);
#   - crmd: messages per second from activation to `sent`, and the ratio to the baseline;
#   - memory: crmd's peak resident set (VmHWM), to show recipients are streamed.
# Usage: bench/mail/campaign.sh <build dir> [N] [mail_concurrency]
set -euo pipefail
BUILD=$(realpath "${1:?usage: campaign.sh <build dir> [N] [concurrency]}")
N=${2:-100000}
CONC=${3:-4}
CRMD="$BUILD/src/app/crmd"
CRMCTL="$BUILD/src/app/crmctl"
SINK=$(command -v smtp-sink || echo /usr/sbin/smtp-sink)
SOURCE=$(command -v smtp-source || echo /usr/sbin/smtp-source)
[[ -x $SINK && -x $SOURCE ]] || { echo "needs Postfix's smtp-sink and smtp-source (apt-get install postfix)" >&2; exit 2; }

TMP=$(mktemp -d /tmp/crmd-mailbench.XXXXXX)
chmod 755 "$TMP"
PIDS=()
cleanup() { [[ -n ${KEEP:-} ]] && { echo "kept $TMP"; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; return; }; for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMP"; }
trap cleanup EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
now() { date +%s.%N; }
say() { echo "[mailbench] $*"; }

SINK_PORT=$(free_port)
# -c: count; -u nobody when run as root; a backlog as deep as the connections.
SINK_USER=(); [[ $(id -u) -eq 0 ]] && SINK_USER=(-u nobody)
"$SINK" "${SINK_USER[@]}" -c "127.0.0.1:$SINK_PORT" 256 >"$TMP/sink.out" 2>&1 &
PIDS+=($!)
sleep 0.5

BODY_KB=2
# --- baseline: smtp-source, same connections, same size, a tenth of N (at least 5,000)
BASE_N=$(( N / 10 > 5000 ? N / 10 : 5000 ))
t0=$(now)
"$SOURCE" -s "$CONC" -m "$BASE_N" -l $((BODY_KB * 1024)) -f bench@example.com -t sink@example.com \
  "127.0.0.1:$SINK_PORT" >/dev/null 2>&1
t1=$(now)
BASE_RATE=$(python3 -c "print(round($BASE_N / ($t1 - $t0)))")
say "baseline smtp-source: $BASE_N messages, $CONC connections: $BASE_RATE msg/s"

# --- crmd
DB="sqlite:$TMP/crmd.db"
"$CRMCTL" --database_url="$DB" migrate >/dev/null
BODY=$(python3 -c "print('Hello {{first_name}}. ' + 'Lorem ipsum dolor sit amet. ' * ($BODY_KB * 1024 // 28))")
sqlite3 "$TMP/crmd.db" >/dev/null <<SQL
PRAGMA journal_mode=WAL;
INSERT INTO lists (id, name, created_at, updated_at) VALUES (1, 'bench', 0, 0);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $N)
INSERT INTO contacts (id, email, first_name, status, source, created_at, updated_at)
  SELECT i, 'r' || i || '@example.com', 'R' || i, 'subscribed', 'bench', 0, 0 FROM n;
INSERT INTO contact_lists (contact_id, list_id, created_at) SELECT id, 1, 0 FROM contacts;
INSERT INTO campaigns (id, name, subject, from_email, text_body, status, created_at, updated_at)
  VALUES (1, 'bench', 'Hello {{first_name}}', 'news@example.com', '$BODY', 'draft', 0, 0);
INSERT INTO campaign_audience (campaign_id, kind, ref_id, mode) VALUES (1, 'list', 1, 'include');
SQL
t0=$(now)
"$CRMCTL" --database_url="$DB" campaign activate 1 --yes >/dev/null
t1=$(now)
QUEUE_S=$(python3 -c "print(round($t1 - $t0, 2))")
say "queued $N recipients in $QUEUE_S s"

PORT=$(free_port)
t0=$(now)
"$CRMD" --port="$PORT" --database_url="$DB" --log_level=warn --smtp_url="smtp://127.0.0.1:$SINK_PORT" \
  --mail_rate_per_second=0 --mail_concurrency="$CONC" --mail_poll_interval_ms=100 \
  --housekeeping_interval_s=0 >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
PIDS+=($CRMD_PID)
status=""
while [[ $status != sent ]]; do
  sleep 0.5
  kill -0 "$CRMD_PID" 2>/dev/null || { cat "$TMP/crmd.log" >&2; exit 1; }
  status=$(sqlite3 "$TMP/crmd.db" "SELECT status FROM campaigns WHERE id = 1")
done
t1=$(now)
SENT=$(sqlite3 "$TMP/crmd.db" "SELECT sent FROM campaign_stats WHERE campaign_id = 1")
HWM=$(awk '/VmHWM/ {print $2}' "/proc/$CRMD_PID/status")
RATE=$(python3 -c "print(round($SENT / ($t1 - $t0)))")
RATIO=$(python3 -c "print(round($RATE / $BASE_RATE, 2))")
say "crmd: $SENT of $N sent in $(python3 -c "print(round($t1 - $t0, 1))") s: $RATE msg/s, peak RSS $((HWM / 1024)) MiB"
echo "RESULT recipients=$N connections=$CONC queue_s=$QUEUE_S baseline_msgs_per_s=$BASE_RATE crmd_msgs_per_s=$RATE ratio=$RATIO peak_rss_mib=$((HWM / 1024))"
[[ $SENT -eq $N ]]
