#include "src/governance/audit_repo.h"

namespace crmd::governance::audit_repo {

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

namespace {

constexpr const char* kColumns =
    "SELECT id, occurred_at, actor_kind, subject, client_id, request_id, action, target_type, "
    "target_ids, revision_before, revision_after, details FROM audit_log ";

Result<std::vector<AuditRecord>> Records(const std::vector<store::Row>& rows);

}  // namespace

Result<std::vector<AuditRecord>> Recent(store::Conn& c, int limit) {
  auto rows =
      c.Query(std::string(kColumns) + "ORDER BY id DESC LIMIT ?", {static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  return Records(*rows);
}

std::pair<std::string, std::vector<store::Value>> FindSql(const AuditFilter& f) {
  // Every value is a bound parameter; only the fixed condition texts are concatenated.
  std::string where;
  std::vector<store::Value> params;
  auto add = [&](const char* condition, store::Value v) {
    where += where.empty() ? "WHERE " : " AND ";
    where += condition;
    params.push_back(std::move(v));
  };
  if (!f.client_id.empty()) add("client_id = ?", f.client_id);
  if (!f.subject.empty()) add("subject = ?", f.subject);
  if (!f.action.empty()) add("action = ?", f.action);
  if (f.from) add("occurred_at >= ?", *f.from);
  if (f.to) add("occurred_at < ?", *f.to);
  if (f.before_id) add("id < ?", *f.before_id);
  params.push_back(static_cast<int64_t>(f.limit));
  return {std::string(kColumns) + where + " ORDER BY id DESC LIMIT ?", std::move(params)};
}

Result<std::vector<AuditRecord>> Find(store::Conn& c, const AuditFilter& f) {
  auto [sql, params] = FindSql(f);
  auto rows = c.Query(sql, params);
  if (!rows) return Fail(rows.error());
  return Records(*rows);
}

Result<std::vector<AuditRecord>> AboutTarget(store::Conn& c, const std::string& target_type,
                                             int64_t id) {
  // target_ids is the JSON array Insert writes (nlohmann's dump: no spaces), so the id is
  // the whole array, its first, last or a middle element.
  const std::string n = std::to_string(id);
  auto rows =
      c.Query(std::string(kColumns) +
                  "WHERE target_type = ? AND (target_ids = ? OR target_ids LIKE ? OR "
                  "target_ids LIKE ? OR target_ids LIKE ?) ORDER BY id",
              {target_type, "[" + n + "]", "[" + n + ",%", "%," + n + "]", "%," + n + ",%"});
  if (!rows) return Fail(rows.error());
  return Records(*rows);
}

const char* const kLastActivitySql =
    "SELECT occurred_at FROM audit_log WHERE client_id = ? ORDER BY id DESC LIMIT 1";

Result<std::map<std::string, int64_t>> LastActivityByClient(
    store::Conn& c, const std::set<std::string>& client_ids) {
  // The latest entry by id (the order they were written in), found from the end of the
  // client's part of audit_log_client; MAX(occurred_at) would read all of a client's rows.
  std::map<std::string, int64_t> out;
  for (const auto& id : client_ids) {
    if (id.empty()) continue;
    auto row = c.QueryOne(kLastActivitySql, {id});
    if (!row) return Fail(row.error());
    if (*row) out.emplace(id, (*row)->Int(0));
  }
  return out;
}

namespace {

Result<std::vector<AuditRecord>> Records(const std::vector<store::Row>& rows_in) {
  const auto* rows = &rows_in;
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

}  // namespace

}  // namespace crmd::governance::audit_repo
