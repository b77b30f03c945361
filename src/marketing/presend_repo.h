#pragma once
// What the pre-send check reads of a campaign's audience (presend.h): a sample of its
// contacts with their merge fields, whether each ever confirmed a double opt-in
// (consent_records, migration 0077) and when each last opened or clicked a campaign.
// Free functions over a connection; the caller owns the transaction.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/marketing/campaign_render.h"
#include "src/store/db.h"

namespace crmd::marketing::presend_repo {

struct AudienceMember {
  MailRecipient fields;  // contact_id 0: for rendering only
  bool confirmed = false;
  std::optional<int64_t> last_engaged_at;  // latest open or click of any campaign
};

// The first `n` contacts of the campaign's audience (by id).
Result<std::vector<AudienceMember>> SampleMembers(store::Conn& c, int64_t campaign_id, int n);

}  // namespace crmd::marketing::presend_repo
