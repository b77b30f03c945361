#!/usr/bin/env bash
# Contact import at scale: a CSV of N rows (default 1,000,000; email, names, phone, type,
# one tag of 8 and a custom field "plan" on a third of the rows) imported into a fresh
# SQLite database.
#
# Reports, in the same run and from the same file:
#   - baseline: the sqlite3 shell's own `.import --csv` of the file into a bare table (no
#     index, no rules): what the engine itself needs to parse and store the rows;
#   - crmctl: `crmctl contacts import FILE` into a fresh database (every rule, events on),
#     rows per second and its peak resident set (ru_maxrss);
#   - rest (IMPORT_SKIP_REST=1 skips it): the same file posted to a crmd on a fresh
#     database (POST /imports, text/csv), polled until done, rows per second from the
#     upload to `done` and crmd's peak resident set (VmHWM).
# Each import's counts are checked: N created, nothing else. Usage:
#   bench/import/contacts.sh <build dir> [N]
set -euo pipefail
source "$(dirname "$0")/../lib/csv_bench.sh" importbench "$@"

CSV="$TMP/contacts.csv"
python3 - "$CSV" "$N" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w", newline="") as f:
    f.write("email,first_name,last_name,phone,type,tags,plan\r\n")
    for i in range(n):
        plan = ("pro", "team", "")[i % 3]
        kind = "customer" if i % 5 == 0 else "lead"
        f.write(f"person{i}@example{i % 97}.com,First{i},Last{i % 1000},+1555{i:07d},{kind},t{i % 8},{plan}\r\n")
PY
say "$N rows, $(du -m "$CSV" | cut -f1) MiB"

# --- baseline: the engine's own import into a bare table
read -r BASE_S BASE_KB BASE_CPU < <(measure "$TMP/baseline.out" sqlite3 "$TMP/bare.db" ".import --csv $CSV bare")
BASE_ROWS=$(sqlite3 "$TMP/bare.db" "SELECT count(*) FROM bare")
say "baseline sqlite3 .import: $BASE_ROWS rows in $BASE_S s ($BASE_CPU s CPU): $(rate "$BASE_ROWS" "$BASE_S") rows/s, peak RSS $((BASE_KB / 1024)) MiB"

check_counts() {  # <import JSON file> <label>
  python3 - "$1" "$2" "$N" <<'PY'
import json, sys
j = json.load(open(sys.argv[1])); n = int(sys.argv[3])
bad = {k: j[k] for k in ("updated", "unchanged", "skipped", "suppressed", "invalid") if j[k]}
if j["status"] != "done" or j["created"] != n or j["rows_done"] != n or bad:
    sys.exit(f"{sys.argv[2]}: {j['status']}, created {j['created']} of {n}, {bad}")
PY
}

# --- crmctl contacts import into a fresh database
DB="$TMP/crmd.db"
"$CRMCTL" --database_url="sqlite:$DB" migrate >/dev/null 2>&1 || true
read -r CTL_S CTL_KB CTL_CPU < <(measure "$TMP/crmctl.json" "$CRMCTL" --database_url="sqlite:$DB" contacts import "$CSV")
check_counts "$TMP/crmctl.json" crmctl
CTL_ROWS=$(sqlite3 "$DB" "SELECT count(*) FROM contacts")
say "crmctl contacts import: $CTL_ROWS contacts in $CTL_S s ($CTL_CPU s CPU): $(rate "$CTL_ROWS" "$CTL_S") rows/s, peak RSS $((CTL_KB / 1024)) MiB ($(du -m "$DB" | cut -f1) MiB database)"
RESULT="RESULT rows=$N baseline_s=$BASE_S baseline_cpu_s=$BASE_CPU baseline_rows_per_s=$(rate "$BASE_ROWS" "$BASE_S") crmctl_s=$CTL_S crmctl_cpu_s=$CTL_CPU crmctl_rows_per_s=$(rate "$CTL_ROWS" "$CTL_S") crmctl_peak_rss_mib=$((CTL_KB / 1024))"

# --- REST: the same file posted to crmd
if [[ -z ${IMPORT_SKIP_REST:-} ]]; then
  DB2="$TMP/crmd-rest.db"
  KEY=$("$CRMCTL" --database_url="sqlite:$DB2" apikey create bench --admin 2>/dev/null | python3 -c "import json,sys;print(json.load(sys.stdin)['key'])")
  PORT=$(free_port)
  # max_body_bytes stays at its default: a text/csv upload is streamed into the import.
  "$CRMD" --port="$PORT" --database_url="sqlite:$DB2" --log_level=warn --housekeeping_interval_s=0 \
    >"$TMP/crmd.log" 2>&1 &
  CRMD_PID=$!
  PIDS+=($CRMD_PID)
  for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  BEFORE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$CRMD_PID/status")
  CPU0=$(cpu_of "$CRMD_PID")
  t0=$(date +%s.%N)
  curl -fsS -D "$TMP/headers" -o /dev/null -H "Authorization: Bearer $KEY" -H "Content-Type: text/csv" \
    --data-binary "@$CSV" "http://127.0.0.1:$PORT/api/crm/v1/imports"
  loc=$(awk -F': ' 'tolower($1) == "location" {print $2}' "$TMP/headers" | tr -d '\r')
  while :; do
    curl -fsS -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT$loc" >"$TMP/rest.json"
    st=$(python3 -c "import json,sys;print(json.load(open(sys.argv[1]))['status'])" "$TMP/rest.json")
    [[ $st = queued || $st = running ]] || break
    sleep 0.2
  done
  REST_S=$(python3 -c "print(round($(date +%s.%N) - $t0, 3))")
  REST_KB=$(awk '/VmHWM/ {print $2}' "/proc/$CRMD_PID/status")
  REST_CPU=$(python3 -c "print(round($(cpu_of "$CRMD_PID") - $CPU0, 2))")
  check_counts "$TMP/rest.json" rest
  say "REST POST /imports: $N rows in $REST_S s (crmd $REST_CPU s CPU): $(rate "$N" "$REST_S") rows/s, crmd RSS $((BEFORE_KB / 1024)) MiB before, peak $((REST_KB / 1024)) MiB"
  RESULT+=" rest_s=$REST_S rest_cpu_s=$REST_CPU rest_rows_per_s=$(rate "$N" "$REST_S") crmd_peak_rss_mib=$((REST_KB / 1024))"
fi
echo "$RESULT"
