#pragma once
// What marketing still holds open for a contact that is about to be deleted: campaign
// recipients still pending, automation and sequence runs still active. Their rows go with
// the contact (ON DELETE CASCADE), so the counters the reports read (pending = queued -
// sent - failed - skipped, active = enrolled - completed - exited - cancelled) must close
// them first. crm depends only on this interface; marketing implements it
// (MarketingUsage) and the composition root hands it to the contact service.
// Implementations must be thread-safe and work only through the given Conn (they run in
// the deletion's transaction). Write transactions are serialised on both engines (SQLite's
// one writer; PostgreSQL's cluster-wide advisory write lock, src/store/postgres.h), so the
// rows read here are exactly those the cascade removes: a sender or runner that recorded
// an outcome first is seen, and one recording after finds the row gone and counts nothing.
#include <cstdint>

#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::crm {

// What a deletion would close for one contact (the delete_contacts preview shows it).
struct OpenMarketing {
  int64_t pending_campaign_sends = 0;
  int64_t active_automation_runs = 0;
  int64_t active_sequence_enrolments = 0;
};

class ContactExit {
 public:
  virtual ~ContactExit() = default;
  virtual Result<OpenMarketing> OpenFor(store::Conn& conn, int64_t contact_id) = 0;
  virtual Status BeforeContactDeleted(store::Conn& conn, int64_t contact_id) = 0;
};

}  // namespace crmd::crm
