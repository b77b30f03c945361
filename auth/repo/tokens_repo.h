#pragma once
// The token repository: refresh tokens (table refresh_tokens, stored as
// crypto::HashSecret of the token) and access-token records (table access_tokens, one row
// per JWT issued with a refresh-token family or revoked by itself, by jti; a
// client_credentials token is recorded only when it is revoked). Both belong to a grant
// (grants_repo.h), whose RevokeGrant ends the whole family. The only place where these
// two tables' SQL lives.
//
// Promises: MarkRefreshTokenUsed succeeds once per token (rotation: a second use answers
// false, even against a concurrent transaction on another connection or node);
// RevokeAccessToken only touches a record of the presenting client; ListRevokedJtis
// answers every revoked record that expires after the given time.
//
// Thread-safety: stateless functions; safe from any thread, each with its own Conn.
// REQUIRES: `c` is inside a Database::Write transaction for the functions that change
// rows, and inside Database::Read or Write for the lookups.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "auth/repo/grants_repo.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth::repo {

// A refresh token with its grant's state.
struct RefreshTokenRow {
  std::string token_hash;
  std::string grant_id;
  std::string client_id;
  std::string scope;
  int64_t created_at = 0;
  int64_t expires_at = 0;
  std::optional<int64_t> used_at;
  std::optional<int64_t> grant_revoked_at;
  std::optional<int64_t> user_id;
  std::string resource;
};

// Stores a refresh token of `grant` (by hash) valid until `expires_at`.
Status InsertRefreshToken(store::Conn& c, const std::string& token_hash, const GrantRow& grant,
                          int64_t now, int64_t expires_at);
Result<std::optional<RefreshTokenRow>> FindRefreshToken(store::Conn& c,
                                                        const std::string& token_hash);
// Marks the token used (rotated). True for the first use only.
Result<bool> MarkRefreshTokenUsed(store::Conn& c, const std::string& token_hash, int64_t now);

// Records an issued access token.
Status InsertAccessToken(store::Conn& c, const std::string& jti, const std::string& grant_id,
                         const std::string& client_id, int64_t expires_at);
// Revokes the token `jti` of `client_id` (its claims: grant, expiry), recording it if it
// was not recorded; a record of another client is left alone. True when it changed.
Result<bool> RevokeAccessToken(store::Conn& c, const std::string& jti, const std::string& grant_id,
                               const std::string& client_id, int64_t expires_at, int64_t now);
// nullopt: no record of `jti`; otherwise whether it is revoked.
Result<std::optional<bool>> AccessTokenRevoked(store::Conn& c, const std::string& jti);
// The jti of every revoked record expiring after `expires_after`.
Result<std::vector<std::string>> ListRevokedJtis(store::Conn& c, int64_t expires_after);

// Housekeeping: delete the access-token records / refresh tokens that expired at or
// before `cutoff`; each answers how many.
Result<int64_t> DeleteAccessTokensExpiredBy(store::Conn& c, int64_t cutoff);
Result<int64_t> DeleteRefreshTokensExpiredBy(store::Conn& c, int64_t cutoff);

}  // namespace crmd::auth::repo
