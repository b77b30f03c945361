// grant_type=client_credentials (RFC 6749 §4.4): a confidential client acting for itself,
// limited to the scopes an administrator granted it (oauth_clients.allowed_scopes).
#include "auth/grant_handlers.h"
#include "auth/repo/grants_repo.h"
#include "auth/scopes.h"

namespace crmd::auth {

OAuthResult<nlohmann::json> GrantClientCredentials(const GrantContext& ctx) {
  const OAuthClient& client = ctx.client;
  if (!client.Confidential() || !client.authenticated_with_secret)
    return Refuse(
        OAuthError::UnauthorizedClient("client_credentials requires a confidential client"));
  auto allowed = ParseScope(client.allowed_scopes.value_or(""));
  if (!allowed || allowed->empty())
    return Refuse(
        OAuthError::UnauthorizedClient("client is not allowed the client_credentials grant"));
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

  // A repeated request joins the client's live grant of the same scope and resource, so
  // the usual case is a read and no write: the token carries its grant (gid), and
  // revoking the grant refuses it without a record of its jti (0054, docs/oauth-tokens.md).
  auto key = tokens.keys().Current();
  if (!key) {
    LogGrantFailure("client_credentials", key.error());
    return Refuse(OAuthError::ServerError());
  }
  repo::GrantRow grant{.grant_id = {},
                       .client_id = client.client_id,
                       .user_id = std::nullopt,
                       .scope = JoinScope(scopes),
                       .resource = tokens.options().resource};
  auto live = tokens.db().Read([&](store::Conn& c) {
    return repo::FindLiveClientGrant(c, grant.client_id, grant.scope, grant.resource);
  });
  if (!live) {
    LogGrantFailure("client_credentials", live.error());
    return Refuse(OAuthError::ServerError());
  }
  grant.grant_id = *live ? **live : tokens.random().Token(16);
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
  // RFC 6749 §4.4.3: no refresh token; the client can always ask again.
  if (*live) return TokenResponseBody(*issued, grant.scope, std::nullopt);
  return RunGrant(
      tokens, "client_credentials", [&](store::Conn& c, const SigningKey&) -> Result<GrantOutcome> {
        if (auto st = repo::InsertGrant(c, grant, tokens.clock().NowUnix()); !st)
          return Fail(st.error());
        return GrantOutcome{TokenResponseBody(*issued, grant.scope, std::nullopt), false};
      });
}

}  // namespace crmd::auth
