#!/usr/bin/env bash
# Contact export at scale: N contacts (default 1,000,000) seeded by `crmctl seed` into a
# SQLite database, a third of them with two custom fields, then exported as CSV.
#
# Reports, in the same run and from the same database file:
#   - baseline: `sqlite3 -csv` writing the same rows and columns (lists and tags joined
#     with '|' by group_concat, the custom fields by json_extract): what the engine itself
#     needs to read and print them;
#   - crmctl: `crmctl contacts export > file`, rows per second and its peak resident set
#     (ru_maxrss), to show that memory stays one page whatever N is;
#   - rest: crmd answering GET /contacts/export without limit (the whole file, streamed),
#     rows per second and crmd's peak resident set (VmHWM).
# Each export's row count is checked against N. Usage:
#   bench/export/contacts.sh <build dir> [N]
set -euo pipefail
source "$(dirname "$0")/../lib/csv_bench.sh" exportbench "$@"

# Records (CRLF or LF terminated) minus the header.
rows() { python3 -c "import sys,csv;r=csv.reader(open(sys.argv[1],newline=''));next(r);print(sum(1 for _ in r))" "$1"; }

DB="$TMP/crmd.db"
t0=$(date +%s.%N)
"$CRMCTL" --database_url="sqlite:$DB" seed --contacts "$N" --lists 5 --tags 8 >/dev/null
sqlite3 "$DB" "UPDATE contacts SET custom_fields = '{\"plan\":\"pro\",\"seats\":' || (id % 50) || '}' WHERE id % 3 = 0"
say "seeded $N contacts in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s ($(du -m "$DB" | cut -f1) MiB)"

# --- baseline: the engine's own CSV of the same rows
cat >"$TMP/baseline.sql" <<'SQL'
.headers on
.mode csv
SELECT c.email, c.first_name, c.last_name, c.phone, c.status, c.type,
  (SELECT group_concat(name, '|') FROM (SELECT l.name FROM contact_lists cl
     JOIN lists l ON l.id = cl.list_id WHERE cl.contact_id = c.id ORDER BY l.name)) AS lists,
  (SELECT group_concat(name, '|') FROM (SELECT t.name FROM contact_tags ct
     JOIN tags t ON t.id = ct.tag_id WHERE ct.contact_id = c.id ORDER BY t.name)) AS tags,
  json_extract(c.custom_fields, '$.plan') AS plan, json_extract(c.custom_fields, '$.seats') AS seats
FROM contacts c ORDER BY c.id;
SQL
read -r BASE_S BASE_KB _ < <(measure "$TMP/baseline.csv" sqlite3 -init "$TMP/baseline.sql" "$DB" ".quit")
BASE_ROWS=$(rows "$TMP/baseline.csv")
say "baseline sqlite3 -csv: $BASE_ROWS rows in $BASE_S s: $(rate "$BASE_ROWS" "$BASE_S") rows/s, peak RSS $((BASE_KB / 1024)) MiB"

# --- crmctl contacts export
read -r CTL_S CTL_KB _ < <(measure "$TMP/crmctl.csv" "$CRMCTL" --database_url="sqlite:$DB" contacts export)
CTL_ROWS=$(rows "$TMP/crmctl.csv")
say "crmctl contacts export: $CTL_ROWS rows in $CTL_S s: $(rate "$CTL_ROWS" "$CTL_S") rows/s, peak RSS $((CTL_KB / 1024)) MiB"
say "header: $(head -1 "$TMP/crmctl.csv" | tr -d '\r')"

# --- REST: the whole file in one streamed answer (no limit: chunked, a page at a time)
KEY=$("$CRMCTL" --database_url="sqlite:$DB" apikey create bench --admin 2>/dev/null | python3 -c "import json,sys;print(json.load(sys.stdin)['key'])")
PORT=$(free_port)
"$CRMD" --port="$PORT" --database_url="sqlite:$DB" --log_level=warn --housekeeping_interval_s=0 >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
PIDS+=($CRMD_PID)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
BEFORE_KB=$(awk '/VmRSS/ {print $2}' "/proc/$CRMD_PID/status")
t0=$(date +%s.%N)
curl -fsS -H "Authorization: Bearer $KEY" "http://127.0.0.1:$PORT/api/crm/v1/contacts/export" >"$TMP/rest.csv"
REST_S=$(python3 -c "print(round($(date +%s.%N) - $t0, 3))")
REST_KB=$(awk '/VmHWM/ {print $2}' "/proc/$CRMD_PID/status")
REST_ROWS=$(rows "$TMP/rest.csv")
say "REST GET /contacts/export: $REST_ROWS rows in $REST_S s: $(rate "$REST_ROWS" "$REST_S") rows/s, crmd RSS $((BEFORE_KB / 1024)) MiB before, peak $((REST_KB / 1024)) MiB"
cmp -s "$TMP/rest.csv" "$TMP/crmctl.csv" && say "the streamed answer is the crmctl file, byte for byte"

echo "RESULT contacts=$N baseline_s=$BASE_S baseline_rows_per_s=$(rate "$BASE_ROWS" "$BASE_S") baseline_peak_rss_mib=$((BASE_KB / 1024)) crmctl_s=$CTL_S crmctl_rows_per_s=$(rate "$CTL_ROWS" "$CTL_S") crmctl_peak_rss_mib=$((CTL_KB / 1024)) rest_s=$REST_S rest_rows_per_s=$(rate "$REST_ROWS" "$REST_S") crmd_peak_rss_mib=$((REST_KB / 1024))"
[[ $BASE_ROWS -eq $N && $CTL_ROWS -eq $N && $REST_ROWS -eq $N ]]
