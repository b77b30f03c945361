#pragma once
// The dashboard's building blocks, one aggregate query each, so that reports and tests can
// use them separately. Stateless; run inside a Database::Read.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::dashboard {

// {"total": n, "by_status": {...}, "by_type": {...}}
Result<nlohmann::json> ContactCounts(store::Conn& c);
// {"last_7_days": n, "last_30_days": n, "previous_30_days": n}
Result<nlohmann::json> ContactGrowth(store::Conn& c, int64_t now);
// {"available": bool, "total_generated": n, "top": [{id, name, generated_contacts}]}
Result<nlohmann::json> FormCounts(store::Conn& c, int limit);
// {"by_status": {...}, "active": [{id, name, status, ...}]} for "campaigns" | "automations"
Result<nlohmann::json> CampaignSummary(store::Conn& c, int limit);
Result<nlohmann::json> AutomationSummary(store::Conn& c, int limit);
Result<nlohmann::json> SequenceSummary(store::Conn& c);

// Runs "SELECT key, COUNT(*) ... GROUP BY key" and folds the rows into an object.
Result<nlohmann::json> GroupCounts(store::Conn& c, const std::string& sql,
                                   const std::vector<store::Value>& params);

}  // namespace crmd::crm::dashboard
