#pragma once
// Remembered consent (table consents): what a person allowed a client to do. A later
// authorization by the same client and person for a subset of an allowed scope set skips
// the consent page. Revoking consent (crmctl consent revoke) also revokes the grants the
// client holds for that person, so access ends as well as being asked again.
//
// Thread-safe (state is in the database).
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "src/core/clock.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct ConsentRecord {
  std::string client_id;
  int64_t user_id = 0;
  std::string user_email;
  std::string scope;  // sorted, space-separated
  int64_t created_at = 0;
  std::optional<int64_t> revoked_at;
};

class Consents {
 public:
  Consents(store::Database& db, const Clock& clock) : db_(db), clock_(clock) {}
  Consents(const Consents&) = delete;
  Consents& operator=(const Consents&) = delete;

  // True when one live consent of (client, user) includes every scope in `scopes`.
  Result<bool> Covers(std::string_view client_id, int64_t user_id,
                      const std::set<std::string>& scopes);
  // Records consent for exactly `scopes` (re-activating a revoked identical record).
  Status Remember(std::string_view client_id, int64_t user_id, const std::set<std::string>& scopes);
  // Revokes every live consent of (client, user) and the client's grants for that user.
  // Answers how many consents were revoked.
  Result<int64_t> Revoke(std::string_view client_id, int64_t user_id);
  // Every consent, newest first (for crmctl consent list).
  Result<std::vector<ConsentRecord>> List();

 private:
  store::Database& db_;
  const Clock& clock_;
};

}  // namespace crmd::auth
