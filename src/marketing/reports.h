#pragma once
// Reports over contacts, campaigns and automations. Every figure is an SQL aggregate
// (COUNT ... GROUP BY) over indexed columns; no report loads every row.
// ReportService is thread-safe (all state is in the database).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/marketing/campaign_activity.h"
#include "src/store/db.h"

namespace crmd::marketing {

struct ContactsReportRequest {
  int64_t from = 0;              // unix seconds, inclusive (start of a day)
  int64_t to = 0;                // unix seconds, exclusive
  std::string interval = "day";  // "day" | "week"
};

inline constexpr int64_t kMaxReportBuckets = 400;

// Recounts the contact counters the reports read from the contacts `db` holds now, in one
// transaction (`crmctl copy`: counters are not copied but rebuilt at the destination).
Status RebuildContactCounters(store::Database& db);

class ReportService {
 public:
  ReportService(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  ReportService(const ReportService&) = delete;
  ReportService& operator=(const ReportService&) = delete;

  // Contact counts by status and type, growth over the last 7 and 30 days, forms'
  // generated-contact counts (when forms exist), campaigns and automations by status with
  // the active ones.
  Result<nlohmann::json> Dashboard() const;
  // New contacts per day or week in [from, to), with totals by source and status.
  Result<nlohmann::json> ContactsReport(const ContactsReportRequest& req) const;
  // Audience and recipient outcomes of one campaign.
  Result<nlohmann::json> CampaignReport(int64_t campaign_id) const;
  // The recipient outcome counters of one campaign (CampaignReport's "outcomes": queued,
  // pending, sent, failed, ...), without resolving its audience: for lists of campaigns.
  Result<nlohmann::json> CampaignOutcomes(int64_t campaign_id) const;
  // Campaign `id`'s activity over time and per link (campaign_activity.h), up to `until`.
  Result<CampaignActivity> CampaignActivityReport(int64_t campaign_id, int64_t until) const;
  // Enrolments, completions and per-step drop-off of one automation.
  Result<nlohmann::json> AutomationReport(int64_t automation_id) const;

 private:
  store::Database& db_;
  const Clock& clock_;
};

}  // namespace crmd::marketing
