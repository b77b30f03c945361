#pragma once
// SQL of double opt-in confirmation emails (table optin_emails, migration 0047): one row
// per pending signup, queued in the transaction that created the contact, sent by a job
// loop. Promises: Enqueue is a no-op for a contact that has a row; Lease moves a row only
// from the due time it was read at. Portable SQL. Stateless; any thread, own Conn.
// REQUIRES: lookups inside Database::Read or Write; every write inside Database::Write.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm::optin_emails_repo {

Status Enqueue(store::Conn& c, int64_t contact_id, int64_t now);
// Queues the email again for a contact whose earlier one went out (or was skipped): a
// subscribed contact asking through a form to rejoin lists it left (list_preferences.h).
Status Rearm(store::Conn& c, int64_t contact_id, int64_t now);

struct DueOptin {
  int64_t contact_id = 0, due_at = 0, attempts = 0;
  std::string email, first_name, last_name, contact_status;
  bool rejoin = false;  // has memberships waiting for confirmation (state 'pending')
};
// Pending rows due at `now`, oldest first (skipping rows another transaction holds).
Result<std::vector<DueOptin>> Due(store::Conn& c, int64_t now, int limit);
// Sets due_at from o.due_at to `due_at` (a lease or a retry) with `attempts`; false when
// the row moved meanwhile.
Result<bool> Reschedule(store::Conn& c, const DueOptin& o, int64_t due_at, int64_t attempts,
                        const std::optional<std::string>& reason);
// Final: status sent | failed | skipped, from o.due_at only.
Result<bool> Finish(store::Conn& c, const DueOptin& o, const std::string& status,
                    const std::optional<std::string>& message_id,
                    const std::optional<std::string>& reason, int64_t now);

}  // namespace crmd::crm::optin_emails_repo
