#pragma once
// SQL for the audit log (table audit_log). Promises: Insert appends one row and never
// changes an existing one (the log is append-only); Recent answers rows newest first
// (by id, which only grows). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "src/core/result.h"
#include "src/crm/audit.h"
#include "src/store/db.h"

namespace crmd::crm::audit_repo {

// Appends `entry` by `actor` at `occurred_at` (an empty actor kind is stored as "system").
// REQUIRES: inside Database::Write, the transaction of the change it describes.
Status Insert(store::Conn& c, int64_t occurred_at, const Actor& actor, const AuditEntry& entry);
// At most `limit` records, newest first. REQUIRES: inside Database::Read or Write.
Result<std::vector<AuditRecord>> Recent(store::Conn& c, int limit);
// At most filter.limit records matching `filter`, newest first. REQUIRES: inside Read/Write.
Result<std::vector<AuditRecord>> Find(store::Conn& c, const AuditFilter& filter);
// client_id -> latest occurred_at, over rows with a client. REQUIRES: inside Read/Write.
Result<std::map<std::string, int64_t>> LastActivityByClient(store::Conn& c);

}  // namespace crmd::crm::audit_repo
