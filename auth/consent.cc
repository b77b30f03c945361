#include "auth/consent.h"

#include "auth/repo/consents_repo.h"
#include "auth/repo/grants_repo.h"
#include "auth/scopes.h"

namespace crmd::auth {

Result<bool> Consents::Covers(std::string_view client_id, int64_t user_id,
                              const std::set<std::string>& scopes) {
  return db_.Read([&](store::Conn& c) -> Result<bool> {
    auto stored = repo::LiveConsentScopes(c, client_id, user_id);
    if (!stored) return Fail(stored.error());
    for (const auto& scope : *stored) {
      // Stored sets were valid when stored; a scope since removed from the catalogue makes
      // the record unusable rather than silently partial.
      auto granted = ParseScope(scope);
      if (granted && IsSubset(scopes, *granted)) return true;
    }
    return false;
  });
}

Status Consents::Remember(std::string_view client_id, int64_t user_id,
                          const std::set<std::string>& scopes) {
  return db_.Write([&](store::Conn& c) {
    return repo::UpsertConsent(c, client_id, user_id, JoinScope(scopes), clock_.NowUnix());
  });
}

Result<int64_t> Consents::Revoke(std::string_view client_id, int64_t user_id) {
  const int64_t now = clock_.NowUnix();
  return db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto n = repo::RevokeConsents(c, client_id, user_id, now);
    if (!n) return n;
    if (auto st = repo::RevokeGrantsOfClient(c, client_id, user_id, now); !st)
      return Fail(st.error());
    return n;
  });
}

Result<std::vector<ConsentRecord>> Consents::List() {
  return db_.Read([&](store::Conn& c) { return repo::ListConsents(c); });
}

}  // namespace crmd::auth
