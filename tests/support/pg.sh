#!/usr/bin/env bash
# A throwaway PostgreSQL 15 server for the tests: `pg.sh start DIR` runs initdb into DIR
# (as the unprivileged user `nobody` when run as root), starts the server on a free
# loopback port and writes its maintenance URL to DIR/url; `pg.sh stop DIR` stops it and
# removes DIR. Used as a ctest fixture (label postgres) and by the multi-node tests.
set -euo pipefail
cmd=${1:?start|stop}; dir=${2:?directory}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "pg.sh: PostgreSQL server binaries not found (apt-get install postgresql-15)" >&2; exit 1; }
as_user() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}
case "$cmd" in
  start)
    if [ -f "$dir/url" ] && as_user "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
      cat "$dir/url"; exit 0
    fi
    rm -rf "$dir"; mkdir -p "$dir"
    [ "$(id -u)" -eq 0 ] && chown nobody "$dir"
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    as_user "$bin/initdb" -D "$dir/data" -U crmd --auth=trust --encoding=UTF8 --locale=C >"$dir/initdb.log" 2>&1 \
      || { cat "$dir/initdb.log" >&2; exit 1; }
    # A test cluster: durability off for speed (crmd's own crash tests kill crmd, not
    # PostgreSQL), enough connections for parallel suites.
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
max_connections = 400
fsync = off
synchronous_commit = off
full_page_writes = off
shared_buffers = 64MB
CONF
    as_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start >/dev/null \
      || { cat "$dir/server.log" >&2; exit 1; }
    echo "postgresql://crmd@127.0.0.1:$port/postgres" >"$dir/url"
    chmod a+r "$dir/url"
    cat "$dir/url"
    ;;
  stop)
    if [ -d "$dir/data" ]; then as_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true; fi
    rm -rf "$dir"
    ;;
  *) echo "usage: pg.sh start|stop DIR" >&2; exit 2 ;;
esac
