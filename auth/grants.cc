#include "auth/grants.h"

#include "auth/repo/grants_repo.h"

namespace crmd::auth {

Result<std::vector<GrantRecord>> Grants::List(const std::optional<std::string>& client_id) {
  return db_.Read([&](store::Conn& c) { return repo::ListGrants(c, client_id); });
}

Status Grants::Revoke(std::string_view grant_id) {
  return db_.Write([&](store::Conn& c) -> Status {
    auto found = repo::GrantExists(c, grant_id);
    if (!found) return Fail(found.error());
    if (!*found) return Fail(Errc::kNotFound, "unknown grant");
    return repo::RevokeGrant(c, grant_id, clock_.NowUnix());
  });
}

}  // namespace crmd::auth
