#pragma once
// Row-level operations on grants, refresh tokens and access-token records shared by the
// grant handlers, revocation and introspection. Each takes the caller's Conn so that it is
// part of the caller's transaction. Portable SQL, bound parameters only.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct GrantRow {
  std::string grant_id;
  std::string client_id;
  std::optional<int64_t> user_id;  // nullopt for client_credentials
  std::string scope;
  std::string resource;
};

Status InsertGrant(store::Conn& c, const GrantRow& grant, int64_t now);

// Revokes a grant and everything it produced: grants.revoked_at, every access token's
// revoked_at, and every refresh token's expiry (set to now). Idempotent.
Status RevokeGrant(store::Conn& c, std::string_view grant_id, int64_t now);

// Creates a refresh token of `grant` and returns its plaintext (only the hash is stored).
Result<std::string> InsertRefreshToken(store::Conn& c, Random& random, const GrantRow& grant,
                                       int64_t now, int64_t ttl);

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

// The refresh token whose hash is HashSecret(token), with its grant's state.
Result<std::optional<RefreshTokenRow>> FindRefreshToken(store::Conn& c, std::string_view token);

// The subject ("sub") of tokens from a grant: the user id, or "client:<client_id>".
std::string GrantSubject(std::optional<int64_t> user_id, std::string_view client_id);

}  // namespace crmd::auth
