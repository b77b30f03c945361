#include "src/governance/confirmations_repo.h"

namespace crmd::governance::confirmations_repo {

using nlohmann::json;

Result<int64_t> Insert(store::Conn& c, const NewConfirmation& n) {
  return c.InsertReturningId(
      "INSERT INTO confirmations (token_hash, action, scope, client_id, subject, args, args_hash, "
      "revisions, preview, status, created_at, expires_at, requires_approval) "
      "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?) RETURNING id",
      {n.token_hash, n.action, n.scope, n.client_id, n.subject, n.args, n.args_hash, n.revisions,
       n.preview, n.created_at, n.expires_at, int64_t{n.requires_approval ? 1 : 0}});
}

Result<std::optional<StoredConfirmation>> FindByTokenHash(store::Conn& c,
                                                          const std::string& token_hash) {
  auto row = c.QueryOne(
      "SELECT id, action, scope, client_id, subject, args, args_hash, revisions, status, "
      "requires_approval, expires_at, preview FROM confirmations WHERE token_hash = ?",
      {token_hash});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<StoredConfirmation>{};
  const store::Row& x = **row;
  return std::optional<StoredConfirmation>(StoredConfirmation{.id = x.Int(0),
                                                              .action = x.Str(1),
                                                              .scope = x.Str(2),
                                                              .client_id = x.Str(3),
                                                              .subject = x.Str(4),
                                                              .args = x.Str(5),
                                                              .args_hash = x.Str(6),
                                                              .revisions = x.Str(7),
                                                              .status = x.Str(8),
                                                              .requires_approval = x.Int(9) != 0,
                                                              .expires_at = x.Int(10),
                                                              .preview = x.Str(11)});
}

Result<std::optional<ConfirmationInfo>> FindInfo(store::Conn& c, int64_t id) {
  auto row = c.QueryOne(
      "SELECT id, action, status, client_id, subject, args, preview, requires_approval, "
      "created_at, expires_at FROM confirmations WHERE id = ?",
      {id});
  if (!row) return Fail(row.error());
  if (!*row) return std::optional<ConfirmationInfo>{};
  const auto& x = **row;
  return std::optional<ConfirmationInfo>(
      ConfirmationInfo{.id = x.Int(0),
                       .action = x.Str(1),
                       .status = x.Str(2),
                       .client_id = x.Str(3),
                       .subject = x.Str(4),
                       .args = json::parse(x.Str(5), nullptr, false),
                       .preview = json::parse(x.Str(6), nullptr, false),
                       .requires_approval = x.Int(7) != 0,
                       .created_at = x.Int(8),
                       .expires_at = x.Int(9)});
}

Status MarkSuperseded(store::Conn& c, int64_t id) {
  auto sup = c.Exec(
      "UPDATE confirmations SET status = 'superseded' WHERE id = ? AND "
      "status IN ('pending','approved')",
      {id});
  if (!sup) return Fail(sup.error());
  return Ok();
}

Result<bool> MarkUsed(store::Conn& c, int64_t id, int64_t now) {
  auto used = c.Exec(
      "UPDATE confirmations SET status = 'used', used_at = ? WHERE id = ? AND "
      "status IN ('pending','approved')",
      {now, id});
  if (!used) return Fail(used.error());
  return *used == 1;
}

Status SaveResult(store::Conn& c, int64_t id, const std::string& result_json) {
  auto saved = c.Exec("UPDATE confirmations SET result = ? WHERE id = ?", {result_json, id});
  if (!saved) return Fail(saved.error());
  return Ok();
}

Result<bool> Approve(store::Conn& c, int64_t id, const std::string& approved_by, int64_t now) {
  auto n = c.Exec(
      "UPDATE confirmations SET status = 'approved', approved_by = ?, approved_at = ? "
      "WHERE id = ? AND status = 'pending' AND expires_at > ?",
      {approved_by, now, id, now});
  if (!n) return Fail(n.error());
  return *n == 1;
}

Result<int64_t> ExpireStale(store::Conn& c, int64_t now) {
  return c.Exec(
      "UPDATE confirmations SET status = 'expired' WHERE status IN ('pending','approved') AND "
      "expires_at <= ?",
      {now});
}

Result<int64_t> DeleteExpiredBefore(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM confirmations WHERE expires_at <= ?", {cutoff});
}

}  // namespace crmd::governance::confirmations_repo
