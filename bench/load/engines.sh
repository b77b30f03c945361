#!/usr/bin/env bash
# get_contact and create_contact through /mcp on PostgreSQL, as ratios of the same figures
# on SQLite measured in the same run (bench/load/run.sh once per engine, same machine,
# same wrk settings). Starts its own PostgreSQL (tests/support/pg.sh).
#   bench/load/engines.sh [build-dir] [seconds] [connections]
set -euo pipefail
BUILD=${1:-build}; SECS=${2:-10}; CONNS=${3:-32}
HERE=$(cd "$(dirname "$0")" && pwd); ROOT=$(cd "$HERE/../.." && pwd)
PGDIR=$(mktemp -d /tmp/crmd-bench-pg.XXXXXX); chmod 755 "$PGDIR"
trap '"$ROOT/tests/support/pg.sh" stop "$PGDIR/pg" >/dev/null 2>&1; rm -rf "$PGDIR"' EXIT
ADMIN=$("$ROOT/tests/support/pg.sh" start "$PGDIR/pg")
psql "$ADMIN" -qc "CREATE DATABASE bench"
# The test cluster runs with fsync off; the benchmark measures crmd with PostgreSQL's
# durable defaults.
psql "$ADMIN" -qc "ALTER SYSTEM SET fsync = on" -c "ALTER SYSTEM SET synchronous_commit = on" \
  -c "ALTER SYSTEM SET full_page_writes = on" -c "SELECT pg_reload_conf()" >/dev/null
echo "== SQLite" >&2
"$HERE/run.sh" "$BUILD" "$SECS" "$CONNS" >"$PGDIR/sqlite.out"
echo "== PostgreSQL" >&2
LOAD_DATABASE_URL="${ADMIN%/postgres}/bench" "$HERE/run.sh" "$BUILD" "$SECS" "$CONNS" >"$PGDIR/pg.out"
python3 - "$PGDIR/sqlite.out" "$PGDIR/pg.out" <<'PY'
import sys
def load(p):
    return {l.split()[1]: float(l.split()[2]) for l in open(p) if l.startswith("RESULT ")}
s, p = load(sys.argv[1]), load(sys.argv[2])
print(f"{'what':<28}{'SQLite req/s':>14}{'PostgreSQL req/s':>18}{'PG / SQLite':>13}")
for k in ("healthz", "get_contact", "list_contacts", "create_contact"):
    print(f"{k:<28}{s[k]:>14.0f}{p[k]:>18.0f}{p[k]/s[k]:>13.2f}")
PY
