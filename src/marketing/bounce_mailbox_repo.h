#pragma once
// SQL of the bounce mailbox's unattributed mails (table bounce_mailbox_unattributed,
// migration 0086). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::marketing::bounce_mailbox_repo {

struct Unattributed {
  std::string report_id, subject, sender, reason;
  int64_t first_seen_at = 0, last_seen_at = 0;
};

// Records the mail, or moves its last_seen_at; true when it was new.
Result<bool> Record(store::Conn& c, const Unattributed& u);
// A mail that was attributed after all (the contact came back, a lease moved) is no
// longer unattributed.
Status Forget(store::Conn& c, const std::string& report_id);
Result<int64_t> Count(store::Conn& c);
// Newest first.
Result<std::vector<Unattributed>> List(store::Conn& c, int limit);

}  // namespace crmd::marketing::bounce_mailbox_repo
