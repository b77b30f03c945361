#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the tests: `pg.sh start DIR` runs initdb into a
# fresh folder under /tmp (as the unprivileged user `nobody` when run as root, so the
# checkout's own folders need not be readable by it), starts the server on a free loopback
# port and writes its maintenance URL to DIR/url; `pg.sh stop DIR` stops it and removes
# both folders; `pg.sh replica DIR PRIMARY_DIR` starts a streaming hot standby of it. Used
# as a ctest fixture (label postgres), by e2e and the multi-node test (with a standby).
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql-15)" >&2; exit 1; }
as_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
case "$cmd" in
  start)
    if [ -f "$dir/url" ] && [ -f "$dir/datadir" ] && as_user "$bin/pg_ctl" -D "$(cat "$dir/datadir")/data" status >/dev/null 2>&1; then
      cat "$dir/url"; exit 0
    fi
    "$0" stop "$dir" >/dev/null 2>&1 || true
    mkdir -p "$dir"
    run=$(mktemp -d /tmp/crmd-pg.XXXXXX)
    chmod 755 "$run"
    [ "$(id -u)" -eq 0 ] && chown nobody "$run"
    echo "$run" >"$dir/datadir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_user "$bin/initdb" -D "$run/data" -U crmd --auth=trust --encoding=UTF8 --locale=C >"$run/initdb.log" 2>&1 \
      || { cat "$run/initdb.log" >&2; exit 1; }
    # A test cluster: durability off for speed (crmd's own crash tests kill crmd, not
    # PostgreSQL), enough connections for parallel suites.
    cat >>"$run/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$run'
max_connections = 400
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
CONF
    as_user "$bin/pg_ctl" -D "$run/data" -l "$run/server.log" -w -t 60 start >/dev/null \
      || { cat "$run/server.log" >&2; exit 1; }
    echo "postgresql://crmd@127.0.0.1:$port/postgres" >"$dir/url"
    chmod a+r "$dir/url"
    cat "$dir/url"
    ;;
  replica)
    # `pg.sh replica DIR PRIMARY_DIR`: a hot standby of the server PRIMARY_DIR started,
    # streaming from it (pg_basebackup -R), on its own free port; its URL in DIR/url.
    # `pg.sh stop DIR` stops it like any other.
    primary=${3:?primary directory}
    purl=$(cat "$primary/url")
    pport=${purl##*:}; pport=${pport%%/*}
    "$0" stop "$dir" >/dev/null 2>&1 || true
    mkdir -p "$dir"
    run=$(mktemp -d /tmp/crmd-pg.XXXXXX)
    chmod 755 "$run"
    [ "$(id -u)" -eq 0 ] && chown nobody "$run"
    echo "$run" >"$dir/datadir"
    as_user "$bin/pg_basebackup" -h 127.0.0.1 -p "$pport" -U crmd -D "$run/data" -R -X stream -c fast \
      >"$run/basebackup.log" 2>&1 || { cat "$run/basebackup.log" >&2; exit 1; }
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    cat >>"$run/data/postgresql.conf" <<CONF
port = $port
unix_socket_directories = '$run'
hot_standby = on
CONF
    as_user "$bin/pg_ctl" -D "$run/data" -l "$run/server.log" -w -t 60 start >/dev/null \
      || { cat "$run/server.log" >&2; exit 1; }
    echo "postgresql://crmd@127.0.0.1:$port/postgres" >"$dir/url"
    chmod a+r "$dir/url"
    cat "$dir/url"
    ;;
  stop)
    if [ -f "$dir/datadir" ]; then
      run=$(cat "$dir/datadir")
      case "$run" in /tmp/crmd-pg.*) ;; *) echo "pg.sh: unexpected data folder $run" >&2; exit 1 ;; esac
      [ -d "$run/data" ] && as_user "$bin/pg_ctl" -D "$run/data" -m immediate -w stop >/dev/null 2>&1
      rm -rf "$run"
    fi
    rm -rf "$dir"
    ;;
  *) echo "usage: pg.sh start|stop DIR | pg.sh replica DIR PRIMARY_DIR" >&2; exit 2 ;;
esac
