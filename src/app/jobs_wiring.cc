// jobs: the housekeeping sweep and the import loop (started in App::Start), with the MCP sessions
// rule whose table's repository lives in src/app.
#include "src/app/services.h"
#include "src/app/wiring.h"

namespace crmd::app {

void WireHousekeeping(App::Services& s) {
  s.housekeeping = std::make_unique<jobs::Housekeeping>(
      *s.db, *s.clock,
      jobs::HousekeepingOptions{
          .interval_s = s.config.housekeeping_interval_s,
          .retention_days = s.config.retention_days,
          // Idle past the MCP session TTL (1 h) plus the touch granularity.
          .more_rules = {{"mcp_sessions", &DeleteMcpSessionsIdleSince,
                          [](int64_t now, int64_t) { return now - 2 * 3600; }}}});
  s.import_runner = std::make_unique<jobs::ImportRunner>(
      *s.crm->imports, jobs::ImportRunnerOptions{.lease_s = s.config.import_lease_s});
}

}  // namespace crmd::app
