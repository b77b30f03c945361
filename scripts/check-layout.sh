#!/usr/bin/env bash
# The dependency direction of ARCHITECTURE.md, checked on the includes:
#   core <- store <- governance <- crm <- marketing <- {tools, rest, jobs, console} <- app
#   webhooks uses crm and governance (and http's address checks); mail uses core only;
#   auth uses core and store; mcp and http use core only.
# Prints every include against the direction and exits 1 if there is one.
set -euo pipefail
cd "$(dirname "$0")/.."
declare -A allowed=(
  [src/core]="src/core"
  [src/store]="src/core src/store"
  [src/mail]="src/core src/mail"
  [src/http]="src/core src/http"
  [src/mcp]="src/core src/mcp"
  [auth]="src/core src/store auth"
  [src/governance]="src/core src/store src/governance"
  [src/crm]="src/core src/store src/governance src/crm"
  [src/marketing]="src/core src/store src/governance src/crm src/mail src/marketing"
  [src/webhooks]="src/core src/store src/governance src/crm src/http src/webhooks"
  [tools]="src/core src/store src/governance src/crm src/marketing src/mcp tools"
  [src/rest]="src/core src/store src/governance src/crm src/marketing src/webhooks src/http src/rest"
  [src/jobs]="src/core src/store src/governance src/crm src/marketing src/mail src/webhooks src/http auth src/jobs"
  [src/console]="src/core src/store src/governance src/crm src/marketing src/mail src/webhooks src/http auth src/console"
)
bad=0
for module in "${!allowed[@]}"; do
  while IFS= read -r line; do
    file=${line%%:*}
    target=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    ok=0
    for prefix in ${allowed[$module]}; do
      [[ $target == "$prefix"/* ]] && ok=1 && break
    done
    # Generated headers (embedded files, templates) are not modules.
    [[ $target != */* ]] && ok=1
    if ((!ok)); then
      echo "layout: $file includes $target, against the direction of $module (ARCHITECTURE.md)"
      bad=1
    fi
  done < <(grep -rn --include='*.h' --include='*.cc' '^#include "' "$module" | grep -E '#include "(src|auth|tools)/' || true)
done
exit $bad
