#include "auth/token_store.h"

#include "src/core/crypto.h"

namespace crmd::auth {

Status InsertGrant(store::Conn& c, const GrantRow& g, int64_t now) {
  auto r = c.Exec(
      "INSERT INTO grants (grant_id, client_id, user_id, scope, resource, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      {g.grant_id, g.client_id, store::Opt(g.user_id), g.scope, g.resource, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Status RevokeGrant(store::Conn& c, std::string_view grant_id, int64_t now) {
  std::string id(grant_id);
  auto g = c.Exec("UPDATE grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL",
                  {now, id});
  if (!g) return Fail(g.error());
  auto a = c.Exec(
      "UPDATE access_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL",
      {now, id});
  if (!a) return Fail(a.error());
  auto r = c.Exec("UPDATE refresh_tokens SET expires_at = ? WHERE grant_id = ? AND expires_at > ?",
                  {now, id, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::string> InsertRefreshToken(store::Conn& c, Random& random, const GrantRow& g,
                                       int64_t now, int64_t ttl) {
  std::string token = random.Token(32);
  auto r = c.Exec(
      "INSERT INTO refresh_tokens (token_hash, grant_id, client_id, scope, created_at, expires_at) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      {crypto::HashSecret(token), g.grant_id, g.client_id, g.scope, now, now + ttl});
  if (!r) return Fail(r.error());
  return token;
}

Result<std::optional<RefreshTokenRow>> FindRefreshToken(store::Conn& c, std::string_view token) {
  auto r = c.QueryOne(
      "SELECT r.token_hash, r.grant_id, r.client_id, r.scope, r.created_at, r.expires_at, "
      "r.used_at, g.revoked_at, g.user_id, g.resource "
      "FROM refresh_tokens r JOIN grants g ON g.grant_id = r.grant_id WHERE r.token_hash = ?",
      {crypto::HashSecret(token)});
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

std::string GrantSubject(std::optional<int64_t> user_id, std::string_view client_id) {
  if (user_id) return std::to_string(*user_id);
  return "client:" + std::string(client_id);
}

}  // namespace crmd::auth
