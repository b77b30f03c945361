#pragma once
// The console's read-only pages:
//   GET /console (and /console/)  Overview: the dashboard figures (contacts, growth, forms,
//                                 campaigns and automations with their report numbers), as
//                                 get_dashboard answers them; assistants and the API change
//                                 them, the console only shows them
//   GET /console/audit            the audit log (administrators), filtered by app
//                                 (client_id), user (subject), action and dates (from, to:
//                                 YYYY-MM-DD, UTC, `to` inclusive), 100 rows a page, newest
//                                 first; rows link to the same log filtered by their app,
//                                 user or action
// Thread-safe; handlers block on the database (worker pool).
#include "src/console/shell.h"
#include "src/governance/audit.h"
#include "src/marketing/reports.h"

namespace crmd::console {

struct OverviewPagesDeps {
  marketing::ReportService* reports = nullptr;
  governance::AuditLog* audit = nullptr;
  ConsolePeople people;
};

ConsoleRoutes OverviewRoutes(OverviewPagesDeps deps);

}  // namespace crmd::console
