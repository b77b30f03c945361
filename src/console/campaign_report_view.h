#pragma once
// The report section of the console's campaign page (campaign_pages.h): the totals of
// ReportService::CampaignReport, and the activity over time and per link as SVG charts
// (charts.h) with the same numbers in tables. Pure functions; thread-safe.
#include <nlohmann/json.hpp>

#include "src/console/templates.h"
#include "src/marketing/campaign_activity.h"

namespace crmd::console {

// Adds has_report, totals, the timeline (chart, caption, rows) and the links (chart,
// rows) to a campaign page's `ctx`. `report` is CampaignReport's answer.
void AddReportView(ViewMap& ctx, const nlohmann::json& report,
                   const marketing::CampaignActivity& activity, bool track_clicks);

}  // namespace crmd::console
