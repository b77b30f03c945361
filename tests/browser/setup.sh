# Sourced by run.sh and run-apps.sh: finds Debian's Chromium and installs the browser test
# tools from package-lock.json into tests/browser/node_modules (skipped when the installed
# tree already matches the lock file; ctest's RESOURCE_LOCK browser_node_modules keeps two
# suites from installing at once). Expects DIR and say(); sets CHROMIUM and NODE.
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $CHROMIUM ]]; then
  say "no Chromium at $CHROMIUM (Debian package chromium; scripts/setup-debian.sh installs it)"
  exit 1
fi

stamp="$DIR/node_modules/.browser-lock-sha256"
want=$(sha256sum "$DIR/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
  say "npm ci"
  if ! (cd "$DIR" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >/tmp/browser-npm-ci.$$.log 2>&1; then
    cat /tmp/browser-npm-ci.$$.log >&2
    say "npm ci failed"
    exit 1
  fi
  rm -f /tmp/browser-npm-ci.$$.log
  echo "$want" >"$stamp"
fi
NODE="$DIR/node_modules/.bin/node"
