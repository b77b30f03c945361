#pragma once
// The grant repository (table grants): one row per authorization a client holds (for a
// person, or for itself under client_credentials). A grant is the root of a token family:
// the access-token records and refresh tokens issued from it (tokens_repo.h) name it, and
// RevokeGrant ends all of them together. The only place where grants' SQL lives.
//
// Promises: grant_id is unique (InsertGrant answers kAlreadyExists for a duplicate);
// RevokeGrant is idempotent and leaves no live access-token record or unexpired refresh
// token of the grant behind.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for the lookups.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/grants.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

struct GrantRow {
  std::string grant_id;
  std::string client_id;
  std::optional<int64_t> user_id;  // nullopt for client_credentials
  std::string scope;
  std::string resource;
};

Status InsertGrant(store::Conn& c, const GrantRow& grant, int64_t now);
Result<bool> GrantExists(store::Conn& c, std::string_view grant_id);
// nullopt: no such grant; otherwise whether it is revoked.
Result<std::optional<bool>> GrantRevoked(store::Conn& c, const std::string& grant_id);
// A live client_credentials grant (no user) of `client_id` with exactly this scope and
// resource, which a new token of the same request joins instead of creating a grant.
Result<std::optional<std::string>> FindLiveClientGrant(store::Conn& c, const std::string& client_id,
                                                       const std::string& scope,
                                                       const std::string& resource);
// The grants revoked at or after `since` (unix seconds).
Result<std::vector<std::string>> ListGrantsRevokedSince(store::Conn& c, int64_t since);
// Revokes a grant and everything it produced: grants.revoked_at, every access token's
// revoked_at, and every refresh token's expiry (set to now). Idempotent.
Status RevokeGrant(store::Conn& c, std::string_view grant_id, int64_t now);
// Revokes every grant of a client (optionally only those of one user) with RevokeGrant,
// and deletes its codes not yet redeemed (codes_repo.h).
Status RevokeGrantsOfClient(store::Conn& c, std::string_view client_id,
                            std::optional<int64_t> user_id, int64_t now);
// Ids of every grant of a client (revoked or not), optionally only those of one user.
Result<std::vector<std::string>> GrantIdsOfClient(store::Conn& c, std::string_view client_id,
                                                  std::optional<int64_t> user_id);
// Ids of the live (unrevoked) grants of a client, or of a user.
Result<std::vector<std::string>> LiveGrantIdsOfClient(store::Conn& c, std::string_view client_id);
Result<std::vector<std::string>> LiveGrantIdsOfUser(store::Conn& c, int64_t user_id);
// The live (unrevoked) grants of a user, oldest first.
Result<std::vector<GrantRow>> LiveGrantsOfUser(store::Conn& c, int64_t user_id);
// Every grant (or only `client_id`'s) with the person's email ("-" when none), oldest first.
Result<std::vector<GrantRecord>> ListGrants(store::Conn& c,
                                            const std::optional<std::string>& client_id);

}  // namespace crmd::auth::repo
