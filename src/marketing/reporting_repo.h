#pragma once
// The repository of the reporting read model: every read-only query that summarises
// across aggregates (contacts, forms, campaigns, automations, sequences) for the dashboard
// and the reports lives here, and nowhere else. It promises counts consistent within the
// caller's snapshot and never writes.
//
// Stateless; any thread, with its own Conn.
// REQUIRES: inside a Database::Read (or Write) transaction.
#include <array>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing::reporting_repo {

// The counters that triggers keep as contacts and memberships change (migration 0053);
// ContactCounts, ContactGrowth, the per-bucket and per-source/status reads, list and tag
// member counts and a one-group campaign audience read them instead of scanning. On
// SQLite a new contact's counters are written by contacts_repo::InsertContact (migration 0059),
// not by a trigger. A copy to another database does not copy them (store::CopyOptions)
// and rebuilds them at the destination afterwards (RebuildCounters).
inline constexpr std::array<const char*, 3> kCounterTables = {"contact_totals", "contact_daily",
                                                              "group_member_counts"};

// Recomputes every counter row from the contacts and memberships (a scan of each), as
// migration 0053 first filled them: for a database whose rows came in without the
// services, such as a copy's destination. Run it in a write transaction.
Status RebuildCounters(store::Conn& c);

// {"total": n, "by_status": {...}, "by_type": {...}}
Result<nlohmann::json> ContactCounts(store::Conn& c);
// {"last_7_days": n, "last_30_days": n, "previous_30_days": n}
Result<nlohmann::json> ContactGrowth(store::Conn& c, int64_t now);
// {"available": bool, "total_generated": n, "top": [{id, name, generated_contacts}]}
Result<nlohmann::json> FormCounts(store::Conn& c, int limit);
// {"by_status": {...}, "active": [{id, name, status, ..., sent, failed, opened, clicked}],
//  "delivery": {sent, failed, bounced, complained, unsubscribed, opened, clicked}} (all
// campaigns, from campaign_stats).
Result<nlohmann::json> CampaignSummary(store::Conn& c, int limit);
Result<nlohmann::json> AutomationSummary(store::Conn& c, int limit);
Result<nlohmann::json> SequenceSummary(store::Conn& c);

// Runs "SELECT key, COUNT(*) ... GROUP BY key" and folds the rows into an object.
Result<nlohmann::json> GroupCounts(store::Conn& c, const std::string& sql,
                                   const std::vector<store::Value>& params);

// What get_contacts_report shows of the contacts created in [from, to): per bucket
// (bucket index ((created_at - from) / bucket) -> count, zero buckets left out), by
// source and by status, and how many were created before `from`. Whole days come from
// contact_daily in one read; the part of a day before or after an edge that is not
// midnight UTC is counted from contacts (a day of rows at most per edge).
struct NewContacts {
  std::vector<std::pair<int64_t, int64_t>> per_bucket;
  nlohmann::json by_source = nlohmann::json::object();
  nlohmann::json by_status = nlohmann::json::object();
  int64_t created_before = 0;
};
// REQUIRES: from < to, bucket a positive multiple of a day.
Result<NewContacts> NewContactsIn(store::Conn& c, int64_t from, int64_t to, int64_t bucket);
// {status: count} of one campaign's recipients.
Result<nlohmann::json> RecipientsByStatus(store::Conn& c, int64_t campaign_id);
struct AutomationHead {
  std::string name, status, steps, trigger_type;
};
Result<std::optional<AutomationHead>> FindAutomationHead(store::Conn& c, int64_t id);
// (current_step, status, count) of one automation's enrolments.

}  // namespace crmd::marketing::reporting_repo
