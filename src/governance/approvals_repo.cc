#include "src/governance/approvals_repo.h"

namespace crmd::governance::approvals_repo {

namespace {

constexpr const char* kColumns =
    "SELECT id, confirmation_id, action, client_id, subject, args_hash, revisions, status, "
    "decided_by, decided_at, created_at, expires_at FROM approvals ";

ApprovalRow FromRow(const store::Row& x) {
  return ApprovalRow{.id = x.Str(0),
                     .confirmation_id = x.Int(1),
                     .action = x.Str(2),
                     .client_id = x.Str(3),
                     .subject = x.Str(4),
                     .args_hash = x.Str(5),
                     .revisions = x.Str(6),
                     .status = x.Str(7),
                     .decided_by = x.IsNull(8) ? std::string() : x.Str(8),
                     .decided_at = x.IsNull(9) ? 0 : x.Int(9),
                     .created_at = x.Int(10),
                     .expires_at = x.Int(11)};
}

Result<std::optional<ApprovalRow>> One(store::Conn& c, const std::string& where,
                                       const std::vector<store::Value>& params) {
  auto row = c.QueryOne(std::string(kColumns) + where, params);
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<ApprovalRow>{};
  return std::optional<ApprovalRow>(FromRow(**row));
}

}  // namespace

Status Insert(store::Conn& c, const ApprovalRow& r) {
  auto n = c.Exec(
      "INSERT INTO approvals (id, confirmation_id, action, client_id, subject, args_hash, "
      "revisions, status, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?)",
      {r.id, r.confirmation_id, r.action, r.client_id, r.subject, r.args_hash, r.revisions,
       r.created_at, r.expires_at});
  if (!n) return Fail(n.error());
  return Ok();
}

Result<std::optional<ApprovalRow>> Find(store::Conn& c, const std::string& id) {
  return One(c, "WHERE id = ?", {id});
}

Result<std::optional<ApprovalRow>> FindByConfirmation(store::Conn& c, int64_t confirmation_id) {
  return One(c, "WHERE confirmation_id = ?", {confirmation_id});
}

Result<std::vector<ApprovalRow>> ListPending(store::Conn& c, const std::string& subject,
                                             int64_t now, int limit) {
  auto rows = c.Query(std::string(kColumns) +
                          "WHERE subject = ? AND status = 'pending' AND expires_at > ? "
                          "ORDER BY created_at DESC, id LIMIT ?",
                      {subject, now, static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  std::vector<ApprovalRow> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<std::vector<ApprovalRow>> ListAllPending(store::Conn& c, int64_t now, int limit) {
  auto rows = c.Query(std::string(kColumns) +
                          "WHERE status = 'pending' AND expires_at > ? "
                          "ORDER BY created_at DESC, id LIMIT ?",
                      {now, static_cast<int64_t>(limit)});
  if (!rows) return Fail(rows.error());
  std::vector<ApprovalRow> out;
  for (const auto& r : *rows) out.push_back(FromRow(r));
  return out;
}

Result<bool> Decide(store::Conn& c, const std::string& id, const std::string& subject,
                    const std::string& status, const std::string& decided_by, int64_t now) {
  auto n = c.Exec(
      "UPDATE approvals SET status = ?, decided_by = ?, decided_at = ? "
      "WHERE id = ? AND subject = ? AND status = 'pending' AND expires_at > ?",
      {status, decided_by, now, id, subject, now});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<int64_t> DeleteExpiredBefore(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM approvals WHERE expires_at <= ?", {cutoff});
}

}  // namespace crmd::governance::approvals_repo
