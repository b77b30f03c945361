#include "src/crm/audit.h"

#include "src/core/clock.h"

namespace crmd::crm {

nlohmann::json ToJson(const AuditRecord& r) {
  nlohmann::json j = {{"id", r.id},
                      {"occurred_at", FormatRfc3339(r.occurred_at)},
                      {"actor", {{"kind", r.actor.kind}, {"subject", r.actor.subject},
                                 {"client_id", r.actor.client_id},
                                 {"request_id", r.actor.request_id}}},
                      {"action", r.entry.action},
                      {"target_type", r.entry.target_type},
                      {"target_ids", r.entry.target_ids},
                      {"details", r.entry.details}};
  j["revision_before"] = r.entry.revision_before ? nlohmann::json(*r.entry.revision_before) : nullptr;
  j["revision_after"] = r.entry.revision_after ? nlohmann::json(*r.entry.revision_after) : nullptr;
  return j;
}

Status AuditLog::Record(store::Conn& conn, const Actor& actor, const AuditEntry& e) {
  auto r = conn.Exec(
      "INSERT INTO audit_log (occurred_at, actor_kind, subject, client_id, request_id, action, "
      "target_type, target_ids, revision_before, revision_after, details) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {clock_->NowUnix(), actor.kind.empty() ? std::string("system") : actor.kind, actor.subject,
       actor.client_id, actor.request_id, e.action, e.target_type,
       nlohmann::json(e.target_ids).dump(), store::Opt(e.revision_before),
       store::Opt(e.revision_after), e.details.dump()});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<AuditRecord>> AuditLog::Recent(int limit) {
  if (!db_) return Fail(Error::Internal("AuditLog built without a database"));
  return db_->Read([&](store::Conn& c) { return Recent(c, limit); });
}

Result<std::vector<AuditRecord>> AuditLog::Recent(store::Conn& conn, int limit) {
  auto rows = conn.Query(
      "SELECT id, occurred_at, actor_kind, subject, client_id, request_id, action, target_type, "
      "target_ids, revision_before, revision_after, details FROM audit_log "
      "ORDER BY id DESC LIMIT ?",
      {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  std::vector<AuditRecord> out;
  for (const auto& r : *rows) {
    AuditRecord rec;
    rec.id = r.Int(0);
    rec.occurred_at = r.Int(1);
    rec.actor = {r.Str(2), r.Str(3), r.Str(4), r.Str(5)};
    rec.entry.action = r.Str(6);
    rec.entry.target_type = r.Str(7);
    auto ids = nlohmann::json::parse(r.Str(8), nullptr, false);
    if (ids.is_array())
      for (const auto& id : ids)
        if (id.is_number_integer()) rec.entry.target_ids.push_back(id.get<int64_t>());
    rec.entry.revision_before = r.OptInt(9);
    rec.entry.revision_after = r.OptInt(10);
    rec.entry.details = nlohmann::json::parse(r.Str(11), nullptr, false);
    out.push_back(std::move(rec));
  }
  return out;
}

}  // namespace crmd::crm
