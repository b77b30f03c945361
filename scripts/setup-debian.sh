#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages (needs root or sudo).
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
APT="$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
$SUDO apt-get update -q
$APT g++ cmake ninja-build lld pkg-config ca-certificates git curl python3 \
  libboost1.81-dev libboost-context1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libvalijson-dev \
  libexpected-dev libsqlite3-dev sqlite3 libpq-dev libcurl4-openssl-dev \
  libgtest-dev libgmock-dev libbenchmark-dev wrk libjemalloc-dev clang-format
# The console's templates: kainjow's Mustache (header-only).
$APT libkainjow-mustache-dev
# Tests only: a real PostgreSQL server (started by the tests themselves, tests/support/pg.sh)
# and nginx as the load balancer of the multi-node test. The packages' own services are
# not used.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || ! command -v nginx >/dev/null 2>&1; then
  $APT postgresql postgresql-client nginx
fi
# Tests only: the SMTP server, the independent DKIM verifier and the DNS server
# (tests/support/dns_server.py) that the mail and pre-send tests drive
# through Debian's /usr/bin/python3.
$APT python3-aiosmtpd python3-dkim python3-dnslib
# Tests only: the IMAP and POP3 server of the bounce mailbox tests, started by the tests on
# loopback with their own configuration (tests/integration/tools_marketing/dovecot.h); the
# package's own service is not used.
$APT dovecot-imapd dovecot-pop3d
# Benchmarks only (bench/mail/campaign.sh): Postfix's smtp-sink and smtp-source. Postfix's
# own service is not used. Set CRMD_BENCH=1 to install it.
if [[ ${CRMD_BENCH:-0} == 1 ]] && ! command -v smtp-sink >/dev/null 2>&1 && [[ ! -x /usr/sbin/smtp-sink ]]; then
  $APT postfix
fi
# Tests only: the console's browser tests drive Debian's Chromium (headless) with
# puppeteer-core (tests/browser); no browser is downloaded.
$APT chromium
# Tests only: clang with libFuzzer and the sanitizer runtimes for the fuzz targets
# (scripts/fuzz.sh, ctest fuzz); g++ stays the compiler of everything else.
$APT clang libclang-rt-14-dev
# Node.js and npm run only the end-to-end tests and tooling. A machine that already has
# them (e.g. from NodeSource, whose nodejs conflicts with Debian's npm) keeps its own.
if ! command -v npm >/dev/null 2>&1; then
  $APT nodejs npm
fi
