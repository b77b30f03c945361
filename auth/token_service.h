#pragma once
// Access-token issuance and verification (RFC 9068 JWTs signed ES256) for crmd's one
// protected resource, the MCP endpoint. Issuing records the jti in access_tokens so that
// revocation can find it; verifying needs no database round trip: signature with a cached
// key, claims, and the in-memory revoked-jti set (refreshed every ~2 s).
//
// TokenService is thread-safe; it owns the KeyStore and the revoked-token cache.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "auth/jwt.h"
#include "auth/keys.h"
#include "auth/token_revocations.h"
#include "auth/verified_tokens.h"
#include "src/core/clock.h"
#include "src/core/principal.h"
#include "src/core/random.h"
#include "src/core/result.h"
#include "src/store/db.h"

namespace crmd::auth {

struct TokenServiceOptions {
  std::string issuer;    // config.Issuer()
  std::string resource;  // config.McpResource(): the audience of every access token
  int64_t access_token_ttl = 3600;
  int64_t refresh_token_ttl = 30 * 24 * 3600;
  int64_t signing_key_rotation = 30 * 24 * 3600;
  int64_t leeway_s = 10;  // tolerated clock skew on exp/iat
  std::chrono::milliseconds revocation_refresh = std::chrono::milliseconds(2000);
};

struct AccessTokenRequest {
  std::string subject;  // user id, or "client:<client_id>"
  std::string client_id;
  std::set<std::string> scopes;
  std::string grant_id;                // grants row the token belongs to (required when recording)
  std::string audience;                // empty: options.resource
  std::optional<int64_t> ttl_seconds;  // empty: options.access_token_ttl
};

struct IssuedAccessToken {
  std::string token;  // the compact JWT
  std::string jti;
  int64_t expires_at = 0;
  int64_t expires_in = 0;
};

class TokenService {
 public:
  TokenService(TokenServiceOptions options, store::Database& db, const Clock& clock,
               Random& random);
  TokenService(const TokenService&) = delete;
  TokenService& operator=(const TokenService&) = delete;

  const TokenServiceOptions& options() const { return options_; }
  KeyStore& keys() { return keys_; }
  const Clock& clock() const { return clock_; }
  Random& random() { return random_; }
  store::Database& db() { return db_; }

  // Signs an access token with `key` and records it in access_tokens through `c` (part of
  // the caller's transaction: if the transaction rolls back, the token was never issued).
  Result<IssuedAccessToken> IssueAccessToken(store::Conn& c, const SigningKey& key,
                                             const AccessTokenRequest& request);
  // The same in two halves, for a grant whose claims are known before its transaction
  // (client_credentials): SignAccessToken needs no connection, so the ES256 signature is
  // made on the caller's thread and not inside the write transaction, where a batch of
  // the group commit runs one call after the other; RecordAccessToken, inside it, only
  // writes the jti row. An unrecorded signed token is never handed out.
  Result<IssuedAccessToken> SignAccessToken(const SigningKey& key,
                                            const AccessTokenRequest& request);
  Status RecordAccessToken(store::Conn& c, const IssuedAccessToken& token,
                           const AccessTokenRequest& request);
  // Convenience for callers outside a transaction (tests, admin tools): creates a grants
  // row when request.grant_id is empty, then issues and records the token.
  // REQUIRES: not called inside Database::Read/Write.
  Result<IssuedAccessToken> IssueAccessToken(const AccessTokenRequest& request);

  // Signature (known, trusted kid), alg ES256, typ at+jwt, iss, aud == options.resource,
  // exp/iat with leeway. Does not consult revocation. kUnauthenticated when invalid.
  // A token verified before is found in a cache of verified tokens (still checked for
  // expiry and a trusted key) without repeating the signature check.
  Result<AccessTokenClaims> VerifySignature(std::string_view jwt);
  // VerifySignature plus the revoked-jti set: the bearer guard's check.
  Result<Principal> Verify(std::string_view jwt);
  // Verify, without a copy: the Principal is the cached entry's, kept alive by the pointer.
  // `well_formed`, when given, is asked about a token that is not in the cache of verified
  // tokens before anything else is done with it (kInvalidArgument when it says no): a token
  // found there is the very string that passed it before (the bearer guard's b64token
  // check, which read every byte of every request's token).
  Result<std::shared_ptr<const Principal>> VerifyShared(
      std::string_view jwt, bool (*well_formed)(std::string_view) = nullptr);

  // Call after committing any revocation so this node refuses the tokens at once.
  void RevocationsChanged() { revoked_.MarkStale(); }

  // Revokes every grant, access token and refresh token of a client (deleted through
  // RFC 7592, disabled by an administrator) or of a user (account removed, "sign out
  // everywhere"). Refused everywhere within ~2 s. Returns how many grants were revoked.
  // REQUIRES: not called inside Database::Read/Write.
  Result<int64_t> RevokeClientTokens(std::string_view client_id);
  Result<int64_t> RevokeUserTokens(int64_t user_id);

 private:
  // VerifySignature's work: the cached entry of a verified token, or a new one.
  Result<std::shared_ptr<const VerifiedTokens::Entry>> Verified(
      std::string_view jwt, bool (*well_formed)(std::string_view) = nullptr);
  // Revokes every grant `live_grants` names, in one write transaction.
  Result<int64_t> RevokeGrants(
      const std::function<Result<std::vector<std::string>>(store::Conn&)>& live_grants);

  const TokenServiceOptions options_;
  store::Database& db_;
  const Clock& clock_;
  Random& random_;
  KeyStore keys_;
  RevokedTokens revoked_;
  VerifiedTokens verified_;
};

}  // namespace crmd::auth
