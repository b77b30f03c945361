#!/usr/bin/env bash
# The Debian package, built by CPack from this build and inspected without installing it
# on the machine: control fields, conffile, maintainer scripts, the unit's hardening, and
# the packaged binaries run from an extracted root (crmctl migrates a database, crmd
# starts with the packaged config file and answers /readyz).
# Usage: deb_test.sh <build dir>
set -euo pipefail
BUILD=$(realpath "$1")
TMP=$(mktemp -d /tmp/crmd-deb.XXXXXX)
PID=""
cleanup() { [[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$TMP"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

(cd "$TMP" && cpack -G DEB --config "$BUILD/CPackConfig.cmake" -B "$TMP/out" >"$TMP/cpack.log" 2>&1) \
  || { cat "$TMP/cpack.log" >&2; fail "cpack"; }
DEB=$(ls "$TMP"/out/crmd_*.deb)
echo "package: $(basename "$DEB") ($(du -h "$DEB" | cut -f1))"

info=$(dpkg-deb -I "$DEB")
grep -q "^ Package: crmd$" <<<"$info" || fail "package name"
grep -q "^ Depends:.*adduser" <<<"$info" || fail "depends on adduser"
grep -q "^ Depends:.*libsqlite3" <<<"$info" || fail "shared library dependencies (shlibdeps)"
# From a sanitized build (scripts/test.sh's build-test) the package says so in its version,
# which sorts before the release, and depends on the sanitizer runtime; a release does not.
sanitize=$(sed -n 's/^CRMD_SANITIZE:STRING=//p' "$BUILD/CMakeCache.txt")
if [[ -n $sanitize ]]; then
  echo "package from a sanitized build ($sanitize): not for production"
  grep -q "^ Version: [0-9.]*~" <<<"$info" || fail "a sanitized package's version sorts before the release"
  grep -q "^ Depends:.*libasan" <<<"$info" || fail "a sanitized package depends on libasan"
else
  grep -q "^ Depends:.*libasan" <<<"$info" && fail "a release package depends on libasan"
fi
mkdir "$TMP/control"
dpkg-deb -e "$DEB" "$TMP/control"
grep -qx "/etc/crmd/crmd.json" "$TMP/control/conffiles" || fail "crmd.json is a conffile"
grep -q "adduser --system" "$TMP/control/postinst" || fail "postinst creates the user"

files=$(dpkg-deb -c "$DEB")
for f in ./usr/bin/crmd ./usr/bin/crmctl ./lib/systemd/system/crmd.service ./etc/crmd/crmd.json \
         ./usr/share/doc/crmd/operations.md; do
  grep -q " $f$" <<<"$files" || fail "missing $f"
done

dpkg-deb -x "$DEB" "$TMP/root"
unit="$TMP/root/lib/systemd/system/crmd.service"
for line in "Type=notify" "User=crmd" "ProtectSystem=strict" "NoNewPrivileges=true" \
            "StateDirectory=crmd" "Restart=on-failure" "Environment=CRMD_CONFIG=/etc/crmd/crmd.json"; do
  grep -qx "$line" "$unit" || fail "unit lacks $line"
done
if command -v systemd-analyze >/dev/null 2>&1; then
  systemd-analyze verify "$unit" 2>&1 | grep -v "crmd.service:.*/usr/bin/crmd" || true
fi

# The packaged binaries run (no missing library), against the packaged config file.
"$TMP/root/usr/bin/crmctl" --database_url="sqlite:$TMP/crmd.db" migrate | grep -q "migrations applied" \
  || fail "packaged crmctl"
PORT=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
CRMD_CONFIG="$TMP/root/etc/crmd/crmd.json" CRMD_DATABASE_URL="sqlite:$TMP/crmd.db" CRMD_PORT="$PORT" \
  CRMD_MAIL_DIR="$TMP/mail" "$TMP/root/usr/bin/crmd" >"$TMP/crmd.log" 2>&1 &
PID=$!
for _ in $(seq 1 100); do
  curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fsS "http://127.0.0.1:$PORT/readyz" | grep -q ready || { cat "$TMP/crmd.log" >&2; fail "packaged crmd"; }
echo "deb: ok"
