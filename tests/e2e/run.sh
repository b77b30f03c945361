#!/usr/bin/env bash
# ctest entry point (tests/CMakeLists.txt): the whole end-to-end suite, see docs/e2e.md.
exec "$(dirname "$0")/e2e.sh" "$@"
