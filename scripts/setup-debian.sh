#!/usr/bin/env bash
# Installs every build and test dependency from Debian 12 packages (needs root or sudo).
set -euo pipefail
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -q
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  g++ cmake ninja-build pkg-config ca-certificates git curl \
  libboost1.81-dev libssl-dev nlohmann-json3-dev libspdlog-dev libfmt-dev libvalijson-dev \
  libexpected-dev libsqlite3-dev sqlite3 libpq-dev \
  libgtest-dev libgmock-dev libbenchmark-dev \
  nodejs npm wrk postgresql-15
