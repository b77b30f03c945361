#pragma once
// The audit log: every write made through a tool (and REST/forms/webhooks through the
// same services) and every confirmed action. Rows are written in the transaction of the
// change they describe. Thread-safe (stateless apart from its options).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/governance/actor.h"
#include "src/store/db.h"

namespace crmd::governance {

struct AuditEntry {
  std::string action;       // tool or action name, e.g. "update_contact"
  std::string target_type;  // "contact" | "list" | "tag" | "settings" | ...
  std::vector<int64_t> target_ids;
  std::optional<int64_t> revision_before;
  std::optional<int64_t> revision_after;
  nlohmann::json details = nlohmann::json::object();
};

struct AuditRecord {
  int64_t id = 0;
  int64_t occurred_at = 0;
  Actor actor;
  AuditEntry entry;
};
nlohmann::json ToJson(const AuditRecord& r);

// What the console's audit page filters on; empty strings match everything.
struct AuditFilter {
  std::string client_id;             // the OAuth client (the "app")
  std::string subject;               // the actor's subject (user id, key id, ...)
  std::string action;                // tool or action name
  std::optional<int64_t> from, to;   // occurred_at in [from, to)
  std::optional<int64_t> before_id;  // the next page: rows older than this id
  int limit = 100;
};

class AuditLog {
 public:
  // `db` is only needed by the Recent(limit) overload that runs its own transaction.
  explicit AuditLog(Clock* clock, store::Database* db = nullptr) : clock_(clock), db_(db) {}
  // For use inside another service's transaction (REQUIRES: Database::Write): the row
  // commits exactly when the change it describes does.
  Status Record(store::Conn& conn, const Actor& actor, const AuditEntry& entry);
  // Newest first. For use inside another service's transaction (Read or Write).
  Result<std::vector<AuditRecord>> Recent(store::Conn& conn, int limit);
  // The same in a read transaction of its own (crmctl audit). REQUIRES: built with a db.
  Result<std::vector<AuditRecord>> Recent(int limit);
  // Rows matching `filter`, newest first. REQUIRES: built with a db.
  Result<std::vector<AuditRecord>> Find(const AuditFilter& filter);
  // The time of the latest audited action of each of `client_ids` that has one (OAuth
  // client ids). REQUIRES: built with a db.
  Result<std::map<std::string, int64_t>> LastActivityByClient(
      const std::set<std::string>& client_ids);

 private:
  Clock* const clock_;
  store::Database* const db_;
};

}  // namespace crmd::governance
