#pragma once
// SQL for the audit log (table audit_log). Promises: Insert appends one row and never
// changes an existing one (the log is append-only); Recent answers rows newest first
// (by id, which only grows). Stateless; any thread, with its own Conn.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/core/result.h"
#include "src/governance/audit.h"
#include "src/store/db.h"

namespace crmd::governance::audit_repo {

// Appends `entry` by `actor` at `occurred_at` (an empty actor kind is stored as "system").
// REQUIRES: inside Database::Write, the transaction of the change it describes.
Status Insert(store::Conn& c, int64_t occurred_at, const Actor& actor, const AuditEntry& entry);
// At most `limit` records, newest first. REQUIRES: inside Database::Read or Write.
Result<std::vector<AuditRecord>> Recent(store::Conn& c, int limit);
// At most filter.limit records matching `filter`, newest first. REQUIRES: inside Read/Write.
Result<std::vector<AuditRecord>> Find(store::Conn& c, const AuditFilter& filter);
// Every record whose target is `target_type` and whose target ids include `id`, oldest
// first. There is no index on the target (migration 0055): it reads the whole log, for one
// person's export or history on request. REQUIRES: inside Read/Write.
Result<std::vector<AuditRecord>> AboutTarget(store::Conn& c, const std::string& target_type,
                                             int64_t id);
// The SQL and parameters Find runs, and the query LastActivityByClient runs for each client
// (for EXPLAIN QUERY PLAN tests).
std::pair<std::string, std::vector<store::Value>> FindSql(const AuditFilter& filter);
extern const char* const kLastActivitySql;
// client_id -> occurred_at of its latest audited action, for each of `client_ids` that has
// one: an index seek each (audit_log_client), whatever the log's size. REQUIRES: inside
// Read/Write.
Result<std::map<std::string, int64_t>> LastActivityByClient(
    store::Conn& c, const std::set<std::string>& client_ids);

}  // namespace crmd::governance::audit_repo
