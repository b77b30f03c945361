#!/usr/bin/env bash
# The console's Contacts page at scale: N contacts (default 1,000,000) seeded by
# `crmctl seed` into a SQLite database, then pages of /console/contacts timed over real
# HTTP with a signed-in administrator's session, each 20 times (median and slowest):
#   - baseline: /console/people, a console page of the same layout whose query reads a
#     handful of rows (the session lookup, the HTML and the HTTP around any page);
#   - the first page, a page deep in the book (a keyset cursor past 90 % of the ids),
#     and the filters: status, list, tag, a name or address prefix, source, creation dates,
#     and a combination, each also deep.
# Every answer must be 200 with its table. Usage:
#   bench/console/contacts.sh <build dir> [N]
set -euo pipefail
source "$(dirname "$0")/../lib/csv_bench.sh" consolebench "$@"

DB="$TMP/crmd.db"
t0=$(date +%s.%N)
"$CRMCTL" --database_url="sqlite:$DB" seed --contacts "$N" --lists 5 --tags 8 >/dev/null
say "seeded $N contacts in $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s ($(du -m "$DB" | cut -f1) MiB)"
PASSWORD=bench-correct-horse-battery
"$CRMCTL" --database_url="sqlite:$DB" user create bench@example.com --admin <<<"$PASSWORD" >/dev/null 2>&1
PORT=$(free_port)
"$CRMD" --port="$PORT" --database_url="sqlite:$DB" --log_level=warn --housekeeping_interval_s=0 >"$TMP/crmd.log" 2>&1 &
CRMD_PID=$!
PIDS+=($CRMD_PID)
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done

python3 - "http://127.0.0.1:$PORT" bench@example.com "$PASSWORD" "$N" <<'PY'
import base64, http.cookiejar, re, statistics, sys, time, urllib.parse, urllib.request
base, email, password, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
jar = http.cookiejar.CookieJar()
web = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
login = web.open(base + "/console/login").read().decode()
token = re.search(r'name="login_token" value="([^"]*)"', login).group(1)
form = urllib.parse.urlencode({"email": email, "password": password, "login_token": token, "next": "/console"})
req = urllib.request.Request(base + "/console/login", data=form.encode(), headers={"Origin": base})
assert "Overview" in web.open(req).read().decode(), "sign-in failed"

def cursor(after_id):
    return base64.urlsafe_b64encode(f"c:{after_id}".encode()).decode().rstrip("=")

deep = cursor(int(n * 0.9))
today = time.strftime("%Y-%m-%d", time.gmtime())
cases = [
    ("baseline: /console/people", "/console/people", "People"),
    ("first page", "/console/contacts", "<table id=\"contacts\">"),
    ("deep page (90 %)", f"/console/contacts?cursor={deep}", "<table id=\"contacts\">"),
    ("status=subscribed", "/console/contacts?status=subscribed", "<table id=\"contacts\">"),
    ("status, deep", f"/console/contacts?status=subscribed&cursor={deep}", "<table id=\"contacts\">"),
    ("list (by id)", "/console/contacts?list=1", "<table id=\"contacts\">"),
    ("list, deep", f"/console/contacts?list=1&cursor={deep}", "<table id=\"contacts\">"),
    ("tag (by id)", "/console/contacts?tag=1", "<table id=\"contacts\">"),
    ("tag, deep", f"/console/contacts?tag=1&cursor={deep}", "<table id=\"contacts\">"),
    ("prefix q=ma", "/console/contacts?q=ma", "<table id=\"contacts\">"),
    ("prefix, deep", f"/console/contacts?q=ma&cursor={deep}", "<table id=\"contacts\">"),
    ("source=seed", "/console/contacts?source=seed", "Contacts"),
    ("created today", f"/console/contacts?from={today}&to={today}", "Contacts"),
    ("status+list+tag", "/console/contacts?status=subscribed&list=1&tag=2", "Contacts"),
]
print(f"{'page':<22} {'median ms':>10} {'slowest ms':>11}")
for name, path, expect in cases:
    times = []
    for _ in range(20):
        t = time.monotonic()
        r = web.open(base + path)
        body = r.read().decode()
        times.append((time.monotonic() - t) * 1000)
        assert r.status == 200 and expect in body, f"{path}: {r.status}"
    print(f"{name:<22} {statistics.median(times):>10.1f} {max(times):>11.1f}")
PY
say "crmd's peak RSS $(( $(awk '/VmHWM/ {print $2}' "/proc/$CRMD_PID/status") / 1024 )) MiB"
