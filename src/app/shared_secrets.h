#pragma once
// Secrets shared by every crmd node on one database (table server_secrets, migration 0045):
// the repository of that aggregate. The first node to ask for a name creates its secret
// (32 random bytes); every later call, on any node, answers the same bytes.
//
// Stateless and thread-safe; blocking (start-up only, never on an I/O thread).
#include <string>

#include "src/core/clock.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::app {

// The name of the suppression list's HMAC key (src/crm/suppression.h): crmd and crmctl
// must hash addresses with the same key.
inline constexpr const char* kSuppressionSecret = "suppression_address_v1";

// The raw secret bytes named `name` (a fixed name, never input).
Result<std::string> SharedSecret(store::Database& db, const std::string& name, Random& random,
                                 const Clock& clock);

}  // namespace crmd::app
