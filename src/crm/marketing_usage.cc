#include "src/crm/marketing_usage.h"

namespace crmd::crm {

Result<std::vector<Usage>> FindMarketingUses(store::Conn& c, const std::string& kind, int64_t id) {
  std::vector<Usage> out;
  auto campaigns = c.Query(
      "SELECT k.id, k.name, k.status, a.mode FROM campaign_audience a JOIN campaigns k ON k.id = "
      "a.campaign_id WHERE a.kind = ? AND a.ref_id = ? ORDER BY k.id, a.mode",
      {kind, id});
  if (!campaigns) return Fail(campaigns.error());
  for (const auto& r : *campaigns) {
    std::string status = r.Str(2);
    out.push_back({.kind = "campaign",
                   .id = r.Int(0),
                   .name = r.Str(1),
                   .status = status,
                   .role = r.Str(3) == "exclude" ? "exclusion" : "audience",
                   .blocking = status == "scheduled" || status == "sending"});
  }
  auto automations = c.Query(
      "SELECT a.id, a.name, a.status, r.role FROM automation_refs r JOIN automations a ON a.id = "
      "r.automation_id WHERE r.kind = ? AND r.ref_id = ? ORDER BY a.id, r.role",
      {kind, id});
  if (!automations) return Fail(automations.error());
  for (const auto& r : *automations) {
    std::string status = r.Str(2);
    out.push_back({.kind = "automation",
                   .id = r.Int(0),
                   .name = r.Str(1),
                   .status = status,
                   .role = r.Str(3),
                   .blocking = status == "active"});
  }
  return out;
}

}  // namespace crmd::crm
