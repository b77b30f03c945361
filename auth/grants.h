#pragma once
// Grants as an operator sees them (crmctl grant list / revoke): one row per grant with the
// person's email, and revocation of a grant with everything it produced. The grant
// handlers create grants through auth/repo/grants_repo.h inside their own transactions.
//
// Thread-safe (state is in the database); each method runs its own transaction.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct GrantRecord {
  std::string grant_id;
  std::string client_id;
  std::string user_email;  // "-" for client_credentials grants
  std::string scope;
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
};

class Grants {
 public:
  Grants(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  Grants(const Grants&) = delete;
  Grants& operator=(const Grants&) = delete;

  // Every grant (or only `client_id`'s), oldest first.
  Result<std::vector<GrantRecord>> List(const std::optional<std::string>& client_id);
  // Revokes the grant, its access tokens and its refresh tokens. kNotFound for an unknown
  // grant; revoking a revoked grant again succeeds.
  Status Revoke(std::string_view grant_id);

 private:
  store::Database& db_;
  const Clock& clock_;
};

}  // namespace crmd::auth
