# Sourced by e2e.sh and openapi-lint.sh: installs Node 22 and the test tools from
# package-lock.json into tests/e2e/node_modules (skipped when the installed tree already
# matches the lock file). Expects E2E_DIR and say().
stamp="$E2E_DIR/node_modules/.e2e-lock-sha256"
want=$(sha256sum "$E2E_DIR/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
  say "npm ci"
  if ! (cd "$E2E_DIR" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error) >/tmp/e2e-npm-ci.$$.log 2>&1; then
    cat /tmp/e2e-npm-ci.$$.log >&2
    say "npm ci failed"
    exit 1
  fi
  rm -f /tmp/e2e-npm-ci.$$.log
  echo "$want" >"$stamp"
fi
