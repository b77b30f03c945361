#include "auth/repo/consents_repo.h"

namespace crmd::auth::repo {

Result<std::vector<std::string>> LiveConsentScopes(store::Conn& c, std::string_view client_id,
                                                   int64_t user_id) {
  auto rows = c.Query(
      "SELECT scope FROM consents WHERE client_id = ? AND user_id = ? AND revoked_at IS NULL",
      {std::string(client_id), user_id});
  if (!rows) return Fail(rows.error());
  std::vector<std::string> out;
  for (const auto& r : *rows) out.push_back(r.Str(0));
  return out;
}

Status UpsertConsent(store::Conn& c, std::string_view client_id, int64_t user_id,
                     const std::string& scope, int64_t now) {
  auto r = c.Exec(
      "INSERT INTO consents (client_id, user_id, scope, created_at, revoked_at) "
      "VALUES (?, ?, ?, ?, NULL) "
      "ON CONFLICT (client_id, user_id, scope) DO UPDATE SET created_at = excluded.created_at, "
      "revoked_at = NULL",
      {std::string(client_id), user_id, scope, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> RevokeConsents(store::Conn& c, std::string_view client_id, int64_t user_id,
                               int64_t now) {
  return c.Exec(
      "UPDATE consents SET revoked_at = ? WHERE client_id = ? AND user_id = ? "
      "AND revoked_at IS NULL",
      {now, std::string(client_id), user_id});
}

Status DeleteConsentsOfUser(store::Conn& c, int64_t user_id) {
  auto d = c.Exec("DELETE FROM consents WHERE user_id = ?", {user_id});
  if (!d) return Fail(d.error());
  return Ok();
}

Status DeleteConsentsOfClient(store::Conn& c, std::string_view client_id) {
  auto d = c.Exec("DELETE FROM consents WHERE client_id = ?", {std::string(client_id)});
  if (!d) return Fail(d.error());
  return Ok();
}

Result<std::vector<ConsentRecord>> ListConsents(store::Conn& c) {
  auto rows = c.Query(
      "SELECT c.client_id, c.user_id, u.email, c.scope, c.created_at, c.revoked_at "
      "FROM consents c JOIN users u ON u.id = c.user_id ORDER BY c.created_at DESC, c.client_id");
  if (!rows) return Fail(rows.error());
  std::vector<ConsentRecord> out;
  for (const auto& r : *rows)
    out.push_back({.client_id = r.Str(0),
                   .user_id = r.Int(1),
                   .user_email = r.Str(2),
                   .scope = r.Str(3),
                   .created_at = r.Int(4),
                   .revoked_at = r.OptInt(5)});
  return out;
}

}  // namespace crmd::auth::repo
