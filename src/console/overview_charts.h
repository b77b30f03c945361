#pragma once
// The Overview's charts (charts.h, server-rendered SVG) of get_dashboard's and
// get_contacts_report's numbers: contacts by status and by type, campaigns and
// automations by status, and the contacts of the last 30 days (new each day, and the
// total) with their sources; each chart with its numbers as a table. Pure functions;
// thread-safe.
#include <nlohmann/json.hpp>

#include "src/console/templates.h"

namespace crmd::console {

// `dashboard`: ReportService::Dashboard's answer; `report`: ContactsReport's for the last
// 30 days by day (null: no such chart). Answers the list of charts for overview.mustache
// ({id, title, svg, caption, head, rows}).
ViewList OverviewCharts(const nlohmann::json& dashboard, const nlohmann::json& report);

}  // namespace crmd::console
