#pragma once
// The consent repository (table consents): what a person allowed a client, one row per
// (client, user, scope set). The only place where consents' SQL lives.
//
// Promises: (client_id, user_id, scope) is unique; UpsertConsent re-activates a revoked
// identical record instead of adding one; RevokeConsents only touches live records.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for the lookups.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "auth/consent.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

// The scope strings of every live consent of (client, user).
Result<std::vector<std::string>> LiveConsentScopes(store::Conn& c, std::string_view client_id,
                                                   int64_t user_id);
Status UpsertConsent(store::Conn& c, std::string_view client_id, int64_t user_id,
                     const std::string& scope, int64_t now);
// Revokes every live consent of (client, user); answers how many.
Result<int64_t> RevokeConsents(store::Conn& c, std::string_view client_id, int64_t user_id,
                               int64_t now);
// Deletes every consent given to a client (the client is being deleted).
Status DeleteConsentsOfClient(store::Conn& c, std::string_view client_id);
// Deletes every consent a person gave (the person is being deleted).
Status DeleteConsentsOfUser(store::Conn& c, int64_t user_id);
// Every consent with the person's email, newest first.
Result<std::vector<ConsentRecord>> ListConsents(store::Conn& c);

}  // namespace crmd::auth::repo
