# The setup bench/import/contacts.sh and bench/export/contacts.sh share. Source it with
# the bench's name and its arguments: `source bench/lib/csv_bench.sh importbench "$@"`.
# Sets BUILD, N (default 1,000,000), CRMD, CRMCTL and TMP (removed on exit unless KEEP is
# set; PIDS are killed), and defines say, free_port, rate, measure and cpu_of.
BENCH_NAME=$1
shift
BUILD=$(realpath "${1:?usage: $0 <build dir> [N]}")
N=${2:-1000000}
CRMD="$BUILD/src/app/crmd"
CRMCTL="$BUILD/src/app/crmctl"
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 shell" >&2; exit 2; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 2; }

TMP=$(mktemp -d "/tmp/crmd-$BENCH_NAME.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; [[ -n ${KEEP:-} ]] && echo "kept $TMP" || rm -rf "$TMP"; }
trap cleanup EXIT
say() { echo "[$BENCH_NAME] $*"; }
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
rate() { python3 -c "print(round($1 / $2))"; }

# Runs a command with stdout to a file; prints "<seconds> <peak RSS KiB> <CPU seconds>" of
# that command (CPU: user + system; on a shared machine the wall time also counts the
# time the process waited for a core).
measure() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
out, cmd = sys.argv[1], sys.argv[2:]
t = time.monotonic()
with open(out, "wb") as f:
    r = subprocess.run(cmd, stdout=f, stderr=subprocess.DEVNULL)
dt = time.monotonic() - t
if r.returncode != 0:
    sys.exit(f"{cmd[0]} exited with {r.returncode}")
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(f"{dt:.3f} {u.ru_maxrss} {u.ru_utime + u.ru_stime:.2f}")
PY
}
# CPU seconds (user + system) a running process has used so far.
cpu_of() { python3 -c "import os,sys;f=open(f'/proc/{sys.argv[1]}/stat').read().rsplit(')',1)[1].split();print((int(f[11])+int(f[12]))/os.sysconf('SC_CLK_TCK'))" "$1"; }
