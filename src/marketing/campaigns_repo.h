#pragma once
// SQL for campaigns, their audience and recipients (portable, bound parameters only).
// Functions take the caller's Conn so that a service can compose them inside one
// Database::Write transaction. Stateless; any thread, with its own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/marketing/campaigns.h"
#include "src/store/db.h"

namespace crmd::marketing::campaigns_repo {

Result<int64_t> Insert(store::Conn& c, const Campaign& campaign);
Result<std::optional<Campaign>> Load(store::Conn& c, int64_t id);
// Writes every field and the audience; bumps the revision. kRevisionConflict when the stored
// revision is not `expected_revision`.
Status Save(store::Conn& c, Campaign& campaign, int64_t expected_revision);
// Ids ascending after `after_id`; fetches limit+1 to know whether there is a next page.
// The audience is left empty (compact rows).
Result<std::vector<Campaign>> List(store::Conn& c, std::optional<CampaignStatus> status,
                                   int64_t after_id, int limit);
Status Remove(store::Conn& c, int64_t id);

// Subscribed contacts in any included list or tag, minus any excluded list or tag.
Result<int64_t> CountAudience(store::Conn& c, int64_t campaign_id);
Result<std::vector<int64_t>> SampleAudience(store::Conn& c, int64_t campaign_id, int n);
// How many of the audience hold a suppressed address (an address entry pointing at them,
// or a domain entry for their domain): counted within CountAudience, skipped at their
// turn. Reads the suppressions table of the contact book (migration 0071).
Result<int64_t> CountSuppressedAudience(store::Conn& c, int64_t campaign_id);
// Inserts the resolved audience into campaign_recipients (existing rows kept): how many
// were added, and how many the campaign has afterwards.
struct Recorded {
  int64_t added = 0, total = 0;
};
Result<Recorded> RecordRecipients(store::Conn& c, int64_t campaign_id, int64_t now);
// How many recipients were recorded for the campaign. REQUIRES: Read or Write.
Result<int64_t> CountRecipients(store::Conn& c, int64_t campaign_id);

// Ids of lists / tags among `ids` that do not exist.
Result<std::vector<int64_t>> MissingIds(store::Conn& c, const char* table,
                                        const std::vector<int64_t>& ids);

// A campaign whose audience or exclusion names a list or tag.
struct AudienceUse {
  int64_t campaign_id = 0;
  std::string name;
  std::string status;
  std::string mode;  // "include" | "exclude"
};
// kind: "list" | "tag"; by campaign id. REQUIRES: inside Database::Read or Write.
Result<std::vector<AudienceUse>> AudienceUses(store::Conn& c, const std::string& kind,
                                              int64_t ref_id);

// Whether some row of campaigns is called `name`. REQUIRES: inside Database::Read or Write.
Result<bool> NameTaken(store::Conn& c, const std::string& name);

}  // namespace crmd::marketing::campaigns_repo
