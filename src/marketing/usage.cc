#include "src/marketing/usage.h"

#include "src/marketing/automation_runs_repo.h"
#include "src/marketing/automations_repo.h"
#include "src/marketing/campaign_sends_repo.h"
#include "src/marketing/campaigns_repo.h"
#include "src/marketing/sequence_runs_repo.h"

namespace crmd::marketing {

Result<std::vector<crm::Usage>> FindMarketingUses(store::Conn& c, const std::string& kind,
                                                  int64_t id) {
  std::vector<crm::Usage> out;
  auto campaigns = campaigns_repo::AudienceUses(c, kind, id);
  if (!campaigns) return Fail(campaigns.error());
  for (const auto& u : *campaigns) {
    out.push_back({.kind = "campaign",
                   .id = u.campaign_id,
                   .name = u.name,
                   .status = u.status,
                   .role = u.mode == "exclude" ? "exclusion" : "audience",
                   .blocking = u.status == "scheduled" || u.status == "sending"});
  }
  auto automations = automations_repo::RefUses(c, kind, id);
  if (!automations) return Fail(automations.error());
  for (const auto& u : *automations) {
    out.push_back({.kind = "automation",
                   .id = u.automation_id,
                   .name = u.name,
                   .status = u.status,
                   .role = u.role,
                   .blocking = u.status == "active"});
  }
  return out;
}

Result<crm::OpenMarketing> OpenMarketingOfContact(store::Conn& c, int64_t contact_id) {
  auto campaigns = campaign_sends_repo::PendingCampaignsOfContact(c, contact_id);
  if (!campaigns) return Fail(campaigns.error());
  auto runs = automation_runs_repo::ActiveRunsOfContact(c, contact_id);
  if (!runs) return Fail(runs.error());
  auto sequences = sequence_runs_repo::ActiveSequencesOfContact(c, contact_id);
  if (!sequences) return Fail(sequences.error());
  crm::OpenMarketing out{.pending_campaign_sends = static_cast<int64_t>(campaigns->size()),
                         .active_sequence_enrolments = static_cast<int64_t>(sequences->size())};
  for (const auto& run : *runs) out.active_automation_runs += run.second;
  return out;
}

Status CloseMarketingOfContact(store::Conn& c, int64_t contact_id) {
  if (auto n = campaign_sends_repo::SkipPendingOfContact(c, contact_id); !n) return Fail(n.error());
  if (auto n = automation_runs_repo::ExitActiveOfContact(c, contact_id); !n) return Fail(n.error());
  if (auto n = sequence_runs_repo::ExitActiveOfContact(c, contact_id); !n) return Fail(n.error());
  return Ok();
}

}  // namespace crmd::marketing
