#include "auth/token_service.h"

#include <algorithm>

#include "auth/repo/grants_repo.h"
#include "auth/repo/tokens_repo.h"
#include "auth/scopes.h"

namespace crmd::auth {

TokenService::TokenService(TokenServiceOptions options, store::Database& db, const Clock& clock,
                           Random& random)
    : options_(std::move(options)),
      db_(db),
      clock_(clock),
      random_(random),
      keys_(KeyStoreOptions{.rotation_s = options_.signing_key_rotation,
                            .retire_grace_s = options_.access_token_ttl + options_.leeway_s + 300},
            db, clock),
      revoked_(db, clock, options_.revocation_refresh, std::chrono::seconds(10),
               // A token of a revoked grant lives at most this long after the revocation:
               // its lifetime, at least 7 days in case a longer access_token_ttl was
               // configured before, plus the leeway.
               std::chrono::seconds(std::max<int64_t>(options_.access_token_ttl, 7 * 86400) +
                                    options_.leeway_s + 300)) {}

Result<IssuedAccessToken> TokenService::SignAccessToken(const SigningKey& key,
                                                        const AccessTokenRequest& request) {
  if (request.grant_id.empty() || request.client_id.empty() || request.subject.empty())
    return Fail(Error::Internal("access token request lacks grant, client or subject"));
  int64_t now = clock_.NowUnix();
  int64_t ttl = request.ttl_seconds.value_or(options_.access_token_ttl);
  AccessTokenClaims claims{
      .issuer = options_.issuer,
      .audience = request.audience.empty() ? options_.resource : request.audience,
      .subject = request.subject,
      .client_id = request.client_id,
      .scope = JoinScope(request.scopes),
      .issued_at = now,
      .expires_at = now + ttl,
      .jti = random_.Token(16),
      .grant_id = request.grant_id,
  };
  auto jwt = SignEs256Jws(*key.key, key.kid, "at+jwt", ToJson(claims));
  if (!jwt) return Fail(jwt.error());
  return IssuedAccessToken{.token = std::move(*jwt),
                           .jti = std::move(claims.jti),
                           .expires_at = claims.expires_at,
                           .expires_in = ttl};
}

Status TokenService::RecordAccessToken(store::Conn& c, const IssuedAccessToken& token,
                                       const AccessTokenRequest& request) {
  return repo::InsertAccessToken(c, token.jti, request.grant_id, request.client_id,
                                 token.expires_at);
}

Result<IssuedAccessToken> TokenService::IssueAccessToken(store::Conn& c, const SigningKey& key,
                                                         const AccessTokenRequest& request) {
  auto issued = SignAccessToken(key, request);
  if (!issued) return Fail(issued.error());
  if (auto st = RecordAccessToken(c, *issued, request); !st) return Fail(st.error());
  return issued;
}

Result<IssuedAccessToken> TokenService::IssueAccessToken(const AccessTokenRequest& request) {
  auto key = keys_.Current();
  if (!key) return Fail(key.error());
  return db_.Write([&](store::Conn& c) -> Result<IssuedAccessToken> {
    AccessTokenRequest req = request;
    if (req.grant_id.empty()) {
      req.grant_id = random_.Token(16);
      // A numeric subject is a user id (as in authorization_code grants).
      std::optional<int64_t> user_id;
      if (!req.subject.empty() && req.subject.size() < 19 &&
          req.subject.find_first_not_of("0123456789") == std::string::npos)
        user_id = std::stoll(req.subject);
      auto g =
          repo::InsertGrant(c,
                            {.grant_id = req.grant_id,
                             .client_id = req.client_id,
                             .user_id = user_id,
                             .scope = JoinScope(req.scopes),
                             .resource = req.audience.empty() ? options_.resource : req.audience},
                            clock_.NowUnix());
      if (!g) return Fail(g.error());
    }
    return IssueAccessToken(c, *key, req);
  });
}

Result<int64_t> TokenService::RevokeClientTokens(std::string_view client_id) {
  return RevokeGrants([&](store::Conn& c) { return repo::LiveGrantIdsOfClient(c, client_id); });
}

Result<int64_t> TokenService::RevokeUserTokens(int64_t user_id) {
  return RevokeGrants([&](store::Conn& c) { return repo::LiveGrantIdsOfUser(c, user_id); });
}

Result<int64_t> TokenService::RevokeGrants(
    const std::function<Result<std::vector<std::string>>(store::Conn&)>& live_grants) {
  int64_t now = clock_.NowUnix();
  auto n = db_.Write([&](store::Conn& c) -> Result<int64_t> {
    auto ids = live_grants(c);
    if (!ids) return Fail(ids.error());
    for (const auto& id : *ids)
      if (auto st = repo::RevokeGrant(c, id, now); !st) return Fail(st.error());
    return static_cast<int64_t>(ids->size());
  });
  if (n && *n > 0) RevocationsChanged();
  return n;
}

Result<AccessTokenClaims> TokenService::VerifySignature(std::string_view jwt) {
  auto entry = Verified(jwt);
  if (!entry) return Fail(entry.error());
  return (*entry)->claims;
}

Result<std::shared_ptr<const VerifiedTokens::Entry>> TokenService::Verified(
    std::string_view jwt, bool (*well_formed)(std::string_view)) {
  const int64_t now = clock_.NowUnix();
  if (auto hit = verified_.Find(jwt, now, options_.leeway_s)) {
    // The key may have been retired since the token was first seen.
    if (!keys_.Find(hit->kid))
      return Fail(Errc::kUnauthenticated, "token signed by an unknown key");
    return hit;
  }
  if (well_formed && !well_formed(jwt))
    return Fail(Errc::kInvalidArgument, "malformed bearer token");
  auto jws = ParseEs256Jws(jwt);
  if (!jws) return Fail(jws.error());
  std::string kid = jws->header["kid"].get<std::string>();
  auto key = keys_.Find(kid);
  if (!key) return Fail(Errc::kUnauthenticated, "token signed by an unknown key");
  if (!key->Verify(jws->signing_input, jws->signature))
    return Fail(Errc::kUnauthenticated, "token signature invalid");
  auto claims = CheckAccessTokenClaims(*jws, {.issuer = options_.issuer,
                                              .audience = options_.resource,
                                              .now = now,
                                              .leeway_s = options_.leeway_s});
  if (!claims) return Fail(claims.error());
  auto entry = std::make_shared<VerifiedTokens::Entry>();
  entry->claims = std::move(*claims);
  entry->kid = std::move(kid);
  const AccessTokenClaims& c = entry->claims;
  Principal& p = entry->principal;
  p = Principal{.subject = c.subject,
                .client_id = c.client_id,
                .scopes = {},
                .token_id = c.jti,
                .expires_at = c.expires_at};
  // Split leniently: a scope retired from the catalogue must not void the whole token.
  std::string_view s = c.scope;
  while (!s.empty()) {
    size_t sp = s.find(' ');
    auto tok = s.substr(0, sp);
    if (!tok.empty()) p.scopes.emplace(tok);
    if (sp == std::string_view::npos) break;
    s.remove_prefix(sp + 1);
  }
  std::shared_ptr<const VerifiedTokens::Entry> done = std::move(entry);
  verified_.Insert(jwt, done, now);
  return done;
}

Result<Principal> TokenService::Verify(std::string_view jwt) {
  auto principal = VerifyShared(jwt);
  if (!principal) return Fail(principal.error());
  return **principal;
}

Result<std::shared_ptr<const Principal>> TokenService::VerifyShared(
    std::string_view jwt, bool (*well_formed)(std::string_view)) {
  auto entry = Verified(jwt, well_formed);
  if (!entry) return Fail(entry.error());
  const AccessTokenClaims& claims = (*entry)->claims;
  auto revoked = revoked_.IsRevoked(claims.jti, claims.grant_id);
  if (!revoked) return Fail(revoked.error());
  if (*revoked) return Fail(Errc::kUnauthenticated, "token revoked");
  // Shares the entry's ownership: no copy of the Principal's strings and scope set.
  const Principal* principal = &(*entry)->principal;
  return std::shared_ptr<const Principal>(std::move(*entry), principal);
}

}  // namespace crmd::auth
