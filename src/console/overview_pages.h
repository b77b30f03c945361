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
//   GET /console/contacts.csv     the contacts as CSV (administrators; the Export link of
//                                 the overview, the export form of the Contacts page with
//                                 its filters status, type, tag and list, each optional:
//                                 a tag or list by id or name), crm::ContactExporter's
//                                 columns. The whole file is one answer: the listener
//                                 does not stream bodies, so a very large list is better
//                                 exported with crmctl
// Thread-safe; handlers block on the database (worker pool).
#include <functional>
#include <string>

#include "src/console/shell.h"
#include "src/crm/contacts_export.h"
#include "src/governance/audit.h"
#include "src/marketing/reports.h"

namespace crmd::console {

struct OverviewPagesDeps {
  marketing::ReportService* reports = nullptr;
  governance::AuditLog* audit = nullptr;
  crm::ContactExporter* exporter = nullptr;  // null: no Export link
  ConsolePeople people;
  // How the audit page names an actor who is a person (their email, or "deleted user #N");
  // "" for other actors. May be empty: subjects only.
  std::function<std::string(const std::string& actor_kind, const std::string& subject)>
      person_label;
};

ConsoleRoutes OverviewRoutes(OverviewPagesDeps deps);

}  // namespace crmd::console
