#include "auth/consent.h"

#include "auth/clients.h"
#include "auth/scopes.h"

namespace crmd::auth {

Result<bool> Consents::Covers(std::string_view client_id, int64_t user_id,
                              const std::set<std::string>& scopes) {
  return db_.Read([&](store::Conn& c) -> Result<bool> {
    auto rows = c.Query(
        "SELECT scope FROM consents WHERE client_id = ? AND user_id = ? AND revoked_at IS NULL",
        {std::string(client_id), user_id});
    if (!rows) return Fail(rows.error());
    for (const auto& r : *rows) {
      // Stored sets were valid when stored; a scope since removed from the catalogue makes
      // the record unusable rather than silently partial.
      auto granted = ParseScope(r.Str(0));
      if (granted && IsSubset(scopes, *granted)) return true;
    }
    return false;
  });
}

Status Consents::Remember(store::Conn& c, std::string_view client_id, int64_t user_id,
                          const std::set<std::string>& scopes) {
  auto r = c.Exec(
      "INSERT INTO consents (client_id, user_id, scope, created_at, revoked_at) VALUES (?, ?, ?, ?, NULL) "
      "ON CONFLICT (client_id, user_id, scope) DO UPDATE SET created_at = excluded.created_at, "
      "revoked_at = NULL",
      {std::string(client_id), user_id, JoinScope(scopes), clock_.NowUnix()});
  if (!r) return Fail(r.error());
  return Ok();
}

Status Consents::Remember(std::string_view client_id, int64_t user_id, const std::set<std::string>& scopes) {
  auto r = db_.Write([&](store::Conn& c) -> Result<bool> {
    if (auto st = Remember(c, client_id, user_id, scopes); !st) return Fail(st.error());
    return true;
  });
  if (!r) return Fail(r.error());
  return Ok();
}

Result<int64_t> Consents::Revoke(std::string_view client_id, int64_t user_id) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = c.Exec(
        "UPDATE consents SET revoked_at = ? WHERE client_id = ? AND user_id = ? AND revoked_at IS NULL",
        {now, std::string(client_id), user_id});
    if (!n) return n;
    if (auto st = RevokeGrantsOf(c, client_id, user_id, now); !st) return Fail(st.error());
    return n;
  });
}

Result<std::vector<ConsentRecord>> Consents::List() {
  return db_.Read([&](store::Conn& c) -> Result<std::vector<ConsentRecord>> {
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
  });
}

}  // namespace crmd::auth
