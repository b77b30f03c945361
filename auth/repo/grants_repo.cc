#include "auth/repo/grants_repo.h"

#include "auth/repo/codes_repo.h"

namespace crmd::auth::repo {
namespace {

Result<std::vector<std::string>> Ids(Result<std::vector<store::Row>> rows) {
  if (!rows) return Fail(rows.error());
  std::vector<std::string> out;
  out.reserve(rows->size());
  for (const auto& r : *rows) out.push_back(r.Str(0));
  return out;
}

}  // namespace

Status InsertGrant(store::Conn& c, const GrantRow& g, int64_t now) {
  auto r = c.Exec(
      "INSERT INTO grants (grant_id, client_id, user_id, scope, resource, created_at) "
      "VALUES (?, ?, ?, ?, ?, ?)",
      {g.grant_id, g.client_id, store::Opt(g.user_id), g.scope, g.resource, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<bool> GrantExists(store::Conn& c, std::string_view grant_id) {
  auto found = c.QueryOne("SELECT 1 FROM grants WHERE grant_id = ?", {std::string(grant_id)});
  if (!found) return Fail(found.error());
  return found->has_value();
}

Result<std::optional<bool>> GrantRevoked(store::Conn& c, const std::string& grant_id) {
  auto r = c.QueryOne("SELECT revoked_at FROM grants WHERE grant_id = ?", {grant_id});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<bool>();
  return std::optional<bool>(!(*r)->IsNull(0));
}

Result<std::optional<std::string>> FindLiveClientGrant(store::Conn& c, const std::string& client_id,
                                                       const std::string& scope,
                                                       const std::string& resource) {
  // Index grants_client_live (0054).
  auto r = c.QueryOne(
      "SELECT grant_id FROM grants WHERE client_id = ? AND scope = ? AND user_id IS NULL "
      "AND revoked_at IS NULL AND resource = ? LIMIT 1",
      {client_id, scope, resource});
  if (!r) return Fail(r.error());
  if (!*r) return std::optional<std::string>();
  return std::optional<std::string>((*r)->Str(0));
}

Result<std::vector<std::string>> ListGrantsRevokedSince(store::Conn& c, int64_t since) {
  // Index grants_revoked (0054).
  return Ids(c.Query("SELECT grant_id FROM grants WHERE revoked_at >= ?", {since}));
}

Status RevokeGrant(store::Conn& c, std::string_view grant_id, int64_t now) {
  std::string id(grant_id);
  auto g = c.Exec("UPDATE grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL",
                  {now, id});
  if (!g) return Fail(g.error());
  auto a =
      c.Exec("UPDATE access_tokens SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL",
             {now, id});
  if (!a) return Fail(a.error());
  auto r = c.Exec("UPDATE refresh_tokens SET expires_at = ? WHERE grant_id = ? AND expires_at > ?",
                  {now, id, now});
  if (!r) return Fail(r.error());
  return Ok();
}

Result<std::vector<std::string>> GrantIdsOfClient(store::Conn& c, std::string_view client_id,
                                                  std::optional<int64_t> user_id) {
  std::string cid(client_id);
  return Ids(user_id ? c.Query("SELECT grant_id FROM grants WHERE client_id = ? AND user_id = ?",
                               {cid, *user_id})
                     : c.Query("SELECT grant_id FROM grants WHERE client_id = ?", {cid}));
}

Status RevokeGrantsOfClient(store::Conn& c, std::string_view client_id,
                            std::optional<int64_t> user_id, int64_t now) {
  auto ids = GrantIdsOfClient(c, client_id, user_id);
  if (!ids) return Fail(ids.error());
  for (const auto& id : *ids)
    if (auto st = RevokeGrant(c, id, now); !st) return st;
  return DeleteUnredeemedCodes(c, client_id, user_id);
}

Result<std::vector<std::string>> LiveGrantIdsOfClient(store::Conn& c, std::string_view client_id) {
  return Ids(c.Query("SELECT grant_id FROM grants WHERE revoked_at IS NULL AND client_id = ?",
                     {std::string(client_id)}));
}

Result<std::vector<std::string>> LiveGrantIdsOfUser(store::Conn& c, int64_t user_id) {
  return Ids(
      c.Query("SELECT grant_id FROM grants WHERE revoked_at IS NULL AND user_id = ?", {user_id}));
}

Result<std::vector<GrantRow>> LiveGrantsOfUser(store::Conn& c, int64_t user_id) {
  auto rows = c.Query(
      "SELECT grant_id, client_id, user_id, scope, resource FROM grants "
      "WHERE revoked_at IS NULL AND user_id = ? ORDER BY created_at, grant_id",
      {user_id});
  if (!rows) return Fail(rows.error());
  std::vector<GrantRow> out;
  for (const auto& r : *rows)
    out.push_back(GrantRow{.grant_id = r.Str(0),
                           .client_id = r.Str(1),
                           .user_id = r.Int(2),
                           .scope = r.Str(3),
                           .resource = r.Str(4)});
  return out;
}

Result<std::vector<GrantRecord>> ListGrants(store::Conn& c,
                                            const std::optional<std::string>& client_id) {
  const std::string sql =
      "SELECT g.grant_id, g.client_id, COALESCE(u.email, '-'), g.scope, g.created_at, g.revoked_at "
      "FROM grants g LEFT JOIN users u ON u.id = g.user_id ";
  auto rows = client_id ? c.Query(sql + "WHERE g.client_id = ? ORDER BY g.created_at", {*client_id})
                        : c.Query(sql + "ORDER BY g.created_at");
  if (!rows) return Fail(rows.error());
  std::vector<GrantRecord> out;
  out.reserve(rows->size());
  for (const auto& r : *rows)
    out.push_back({.grant_id = r.Str(0),
                   .client_id = r.Str(1),
                   .user_email = r.Str(2),
                   .scope = r.Str(3),
                   .created_at = r.Int(4),
                   .revoked_at = r.OptInt(5)});
  return out;
}

}  // namespace crmd::auth::repo
