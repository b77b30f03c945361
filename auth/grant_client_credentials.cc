// grant_type=client_credentials (RFC 6749 §4.4): a confidential client acting for itself,
// limited to the scopes an administrator granted it (oauth_clients.allowed_scopes).
#include "auth/grant_handlers.h"
#include "auth/scopes.h"
#include "auth/repo/grants_repo.h"

namespace crmd::auth {

OAuthResult<nlohmann::json> GrantClientCredentials(const GrantContext& ctx) {
  const OAuthClient& client = ctx.client;
  if (!client.Confidential() || !client.authenticated_with_secret)
    return Refuse(OAuthError::UnauthorizedClient("client_credentials requires a confidential client"));
  auto allowed = ParseScope(client.allowed_scopes.value_or(""));
  if (!allowed || allowed->empty())
    return Refuse(OAuthError::UnauthorizedClient("client is not allowed the client_credentials grant"));
  std::set<std::string> scopes = *allowed;
  if (auto s = http::FormValue(ctx.form, "scope")) {
    auto parsed = ParseScope(*s);
    if (!parsed) return Refuse(OAuthError::InvalidScope(parsed.error().message));
    if (!IsSubset(*parsed, *allowed))
      return Refuse(OAuthError::InvalidScope("scope exceeds what the client is allowed"));
    if (!parsed->empty()) scopes = std::move(*parsed);
  }
  TokenService& tokens = ctx.tokens;
  if (ctx.resource && *ctx.resource != tokens.options().resource)
    return Refuse(OAuthError::InvalidTarget("unknown resource"));

  // Everything the token says is known here, so it is signed before the transaction
  // (TokenService::SignAccessToken): the write transaction only records the grant and jti.
  auto key = tokens.keys().Current();
  if (!key) {
    LogGrantFailure("client_credentials", key.error());
    return Refuse(OAuthError::ServerError());
  }
  repo::GrantRow grant{.grant_id = tokens.random().Token(16),
                       .client_id = client.client_id,
                       .user_id = std::nullopt,
                       .scope = JoinScope(scopes),
                       .resource = tokens.options().resource};
  AccessTokenRequest request{.subject = GrantSubject(std::nullopt, client.client_id),
                             .client_id = client.client_id,
                             .scopes = scopes,
                             .grant_id = grant.grant_id,
                             .audience = grant.resource,
                             .ttl_seconds = std::nullopt};
  auto issued = tokens.SignAccessToken(*key, request);
  if (!issued) {
    LogGrantFailure("client_credentials", issued.error());
    return Refuse(OAuthError::ServerError());
  }
  return RunGrant(tokens, "client_credentials",
                  [&](store::Conn& c, const SigningKey&) -> Result<GrantOutcome> {
    if (auto st = repo::InsertGrant(c, grant, tokens.clock().NowUnix()); !st)
      return Fail(st.error());
    if (auto st = tokens.RecordAccessToken(c, *issued, request); !st) return Fail(st.error());
    // RFC 6749 §4.4.3: no refresh token; the client can always ask again.
    return GrantOutcome{TokenResponseBody(*issued, grant.scope, std::nullopt), false};
  });
}

}  // namespace crmd::auth
