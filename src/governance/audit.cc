#include "src/governance/audit.h"

#include "src/core/clock.h"
#include "src/governance/audit_repo.h"

namespace crmd::governance {

nlohmann::json ToJson(const AuditRecord& r) {
  nlohmann::json j = {{"id", r.id},
                      {"occurred_at", FormatRfc3339(r.occurred_at)},
                      {"actor",
                       {{"kind", r.actor.kind},
                        {"subject", r.actor.subject},
                        {"client_id", r.actor.client_id},
                        {"request_id", r.actor.request_id}}},
                      {"action", r.entry.action},
                      {"target_type", r.entry.target_type},
                      {"target_ids", r.entry.target_ids},
                      {"details", r.entry.details}};
  j["revision_before"] =
      r.entry.revision_before ? nlohmann::json(*r.entry.revision_before) : nullptr;
  j["revision_after"] = r.entry.revision_after ? nlohmann::json(*r.entry.revision_after) : nullptr;
  return j;
}

Status AuditLog::Record(store::Conn& conn, const Actor& actor, const AuditEntry& e) {
  return audit_repo::Insert(conn, clock_->NowUnix(), actor, e);
}

Result<std::vector<AuditRecord>> AuditLog::Recent(int limit) {
  if (!db_) return Fail(Error::Internal("AuditLog built without a database"));
  return db_->Read([&](store::Conn& c) { return Recent(c, limit); });
}

Result<std::vector<AuditRecord>> AuditLog::Find(const AuditFilter& filter) {
  if (!db_) return Fail(Error::Internal("AuditLog built without a database"));
  return db_->Read([&](store::Conn& c) { return audit_repo::Find(c, filter); });
}

Result<std::map<std::string, int64_t>> AuditLog::LastActivityByClient(
    const std::set<std::string>& client_ids) {
  if (!db_) return Fail(Error::Internal("AuditLog built without a database"));
  return db_->Read([&](store::Conn& c) { return audit_repo::LastActivityByClient(c, client_ids); });
}

Result<std::vector<AuditRecord>> AuditLog::Recent(store::Conn& conn, int limit) {
  return audit_repo::Recent(conn, limit);
}

}  // namespace crmd::governance
