#include "auth/grants.h"

#include "auth/token_store.h"

namespace crmd::auth {

Result<std::vector<GrantRecord>> Grants::List(const std::optional<std::string>& client_id) {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<GrantRecord>> {
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
  });
}

Status Grants::Revoke(std::string_view grant_id) {
  return db_.Write([&](store::Conn& c) -> Status {
    auto found = c.QueryOne("SELECT 1 FROM grants WHERE grant_id = ?", {std::string(grant_id)});
    if (!found) return Fail(found.error());
    if (!*found) return Fail(Errc::kNotFound, "unknown grant");
    return RevokeGrant(c, grant_id, clock_.NowUnix());
  });
}

}  // namespace crmd::auth
