#include "auth/repo/tokens_repo.h"

namespace crmd::auth::repo {

Status InsertRefreshToken(store::Conn& c, const std::string& token_hash, const GrantRow& g,
                          int64_t now, int64_t expires_at) {
  auto r = c.Exec(
      "INSERT INTO refresh_tokens (token_hash, grant_id, client_id, scope, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      {token_hash, g.grant_id, g.client_id, g.scope, now, expires_at});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::optional<RefreshTokenRow>> FindRefreshToken(store::Conn& c,
                                                        const std::string& token_hash) {
  auto r = c.QueryOne(
      "SELECT r.token_hash, r.grant_id, r.client_id, r.scope, r.created_at, r.expires_at, "
      "r.used_at, g.revoked_at, g.user_id, g.resource "
      "FROM refresh_tokens r JOIN grants g ON g.grant_id = r.grant_id WHERE r.token_hash = ?",
      {token_hash});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<RefreshTokenRow>();
  const auto& x = **r;
  return std::optional<RefreshTokenRow>(RefreshTokenRow{.token_hash = x.Str(0),
                                                        .grant_id = x.Str(1),
                                                        .client_id = x.Str(2),
                                                        .scope = x.Str(3),
                                                        .created_at = x.Int(4),
                                                        .expires_at = x.Int(5),
                                                        .used_at = x.OptInt(6),
                                                        .grant_revoked_at = x.OptInt(7),
                                                        .user_id = x.OptInt(8),
                                                        .resource = x.Str(9)});
}

Result<bool> MarkRefreshTokenUsed(store::Conn& c, const std::string& token_hash, int64_t now) {
  auto used =
      c.Exec("UPDATE refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL",
             {now, token_hash});
  if (!used) return Fail(used.error());
  return *used == 1;
}

Status InsertAccessToken(store::Conn& c, const std::string& jti, const std::string& grant_id,
                         const std::string& client_id, int64_t expires_at) {
  auto ins =
      c.Exec("INSERT INTO access_tokens (jti, grant_id, client_id, expires_at) VALUES (?, ?, ?, ?)",
             {jti, grant_id, client_id, expires_at});
  if (!ins) return Fail(ins.error());
  return Ok();
}

Result<bool> RevokeAccessToken(store::Conn& c, const std::string& jti, const std::string& grant_id,
                               const std::string& client_id, int64_t expires_at, int64_t now) {
  auto n = c.Exec(
      "INSERT INTO access_tokens (jti, grant_id, client_id, expires_at, revoked_at) "
      "VALUES (?, ?, ?, ?, ?) ON CONFLICT (jti) DO UPDATE SET revoked_at = excluded.revoked_at "
      "WHERE access_tokens.client_id = excluded.client_id AND access_tokens.revoked_at IS NULL",
      {jti, grant_id, client_id, expires_at, now});
  if (!n) return Fail(n.error());
  return *n > 0;
}

Result<std::optional<bool>> AccessTokenRevoked(store::Conn& c, const std::string& jti) {
  auto r = c.QueryOne("SELECT revoked_at FROM access_tokens WHERE jti = ?", {jti});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<bool>();
  return std::optional<bool>(!(*r)->IsNull(0));
}

Result<std::vector<std::string>> ListRevokedJtis(store::Conn& c, int64_t expires_after) {
  auto rows =
      c.Query("SELECT jti FROM access_tokens WHERE revoked_at IS NOT NULL AND expires_at > ?",
              {expires_after});
  if (!rows) return Fail(rows.error());
  std::vector<std::string> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) out.push_back(r.Str(0));
  return out;
}

Result<int64_t> DeleteAccessTokensExpiredBy(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM access_tokens WHERE expires_at <= ?", {cutoff});
}

Result<int64_t> DeleteRefreshTokensExpiredBy(store::Conn& c, int64_t cutoff) {
  return c.Exec("DELETE FROM refresh_tokens WHERE expires_at <= ?", {cutoff});
}

}  // namespace crmd::auth::repo
