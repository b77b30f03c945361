#include "src/crm/audit_repo.h"

namespace crmd::crm::audit_repo {

Status Insert(store::Conn& c, int64_t occurred_at, const Actor& actor, const AuditEntry& e) {
  auto r = c.Exec(
      "INSERT INTO audit_log (occurred_at, actor_kind, subject, client_id, request_id, action, "
      "target_type, target_ids, revision_before, revision_after, details) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      {occurred_at, actor.kind.empty() ? std::string("system") : actor.kind, actor.subject,
       actor.client_id, actor.request_id, e.action, e.target_type,
       nlohmann::json(e.target_ids).dump(), store::Opt(e.revision_before),
       store::Opt(e.revision_after), e.details.dump()});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<AuditRecord>> Recent(store::Conn& c, int limit) {
  auto rows = c.Query(
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

}  // namespace crmd::crm::audit_repo
