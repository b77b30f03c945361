#include "auth/introspection.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "auth/client_auth.h"
#include "auth/grant_handlers.h"
#include "auth/repo/tokens_repo.h"
#include "auth/token_endpoint.h"
#include "src/core/crypto.h"

namespace crmd::auth {

namespace {

// The database, not the 2-second cache, is the authority here: introspection is rare.
Result<nlohmann::json> IntrospectAccessToken(TokenService& tokens,
                                             const AccessTokenClaims& claims) {
  return tokens.db().Read([&](store::Conn& c) -> Result<nlohmann::json> {
    auto revoked = repo::AccessTokenRevoked(c, claims.jti);
    if (!revoked) return Fail(revoked.error());
    if (*revoked && **revoked) return nlohmann::json{{"active", false}};
    if (claims.grant_id.empty()) {
      // A token from before 0054 (no gid claim) is known by its record alone.
      if (!*revoked) return nlohmann::json{{"active", false}};
    } else {
      // Its grant must exist and be live (client_credentials tokens have no record).
      auto grant = repo::GrantRevoked(c, claims.grant_id);
      if (!grant) return Fail(grant.error());
      if (!*grant || **grant) return nlohmann::json{{"active", false}};
    }
    return nlohmann::json{
        {"active", true},          {"scope", claims.scope},  {"client_id", claims.client_id},
        {"sub", claims.subject},   {"token_type", "Bearer"}, {"exp", claims.expires_at},
        {"iat", claims.issued_at}, {"iss", claims.issuer},   {"aud", claims.audience},
        {"jti", claims.jti}};
  });
}

Result<nlohmann::json> IntrospectRefreshToken(TokenService& tokens, const std::string& token,
                                              const std::string& client_id) {
  int64_t now = tokens.clock().NowUnix();
  return tokens.db().Read([&](store::Conn& c) -> Result<nlohmann::json> {
    auto rt = repo::FindRefreshToken(c, crypto::HashSecret(token));
    if (!rt) return Fail(rt.error());
    if (!*rt || (*rt)->client_id != client_id || (*rt)->used_at || (*rt)->grant_revoked_at ||
        (*rt)->expires_at <= now)
      return nlohmann::json{{"active", false}};
    const auto& r = **rt;
    return nlohmann::json{{"active", true},
                          {"scope", r.scope},
                          {"client_id", r.client_id},
                          {"sub", GrantSubject(r.user_id, r.client_id)},
                          {"exp", r.expires_at},
                          {"iat", r.created_at},
                          {"iss", tokens.options().issuer},
                          {"aud", r.resource}};
  });
}

}  // namespace

http::Response HandleIntrospection(TokenService& tokens, const http::Request& req) {
  auto form = ReadOAuthForm(req);
  if (!form) return OAuthErrorResponse(form.error());
  auto client = AuthenticateClient(tokens.db(), req, *form);
  if (!client) return OAuthErrorResponse(client.error());
  if (!client->authenticated_with_secret)
    return OAuthErrorResponse(
        OAuthError::InvalidClient("introspection requires a confidential client"));
  auto token = http::FormValue(*form, "token");
  if (!token || token->empty())
    return OAuthErrorResponse(OAuthError::InvalidRequest("token is required"));

  Result<nlohmann::json> answer = nlohmann::json{{"active", false}};
  if (std::count(token->begin(), token->end(), '.') == 2) {
    auto claims = tokens.VerifySignature(*token);
    if (claims && claims->client_id == client->client_id)
      answer = IntrospectAccessToken(tokens, *claims);
  } else {
    answer = IntrospectRefreshToken(tokens, *token, client->client_id);
  }
  if (!answer) {
    spdlog::error(R"("event":"introspection_failed","detail":"{}")", answer.error().detail);
    return OAuthErrorResponse(OAuthError::ServerError());
  }
  return NoStoreJson(200, *answer);
}

}  // namespace crmd::auth
