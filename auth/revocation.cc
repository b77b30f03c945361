#include "auth/revocation.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "auth/client_auth.h"
#include "auth/repo/grants_repo.h"
#include "auth/repo/tokens_repo.h"
#include "auth/token_endpoint.h"
#include "src/core/crypto.h"

namespace crmd::auth {

http::Response HandleRevocation(TokenService& tokens, const http::Request& req) {
  auto form = ReadOAuthForm(req);
  if (!form) return OAuthErrorResponse(form.error());
  auto client = AuthenticateClient(tokens.db(), req, *form);
  if (!client) return OAuthErrorResponse(client.error());
  auto token = http::FormValue(*form, "token");
  if (!token || token->empty())
    return OAuthErrorResponse(OAuthError::InvalidRequest("token is required"));
  // token_type_hint only orders the search (RFC 7009 §2.1); both kinds are tried.
  bool looks_like_jwt = std::count(token->begin(), token->end(), '.') == 2;

  std::optional<AccessTokenClaims> access;
  if (looks_like_jwt) {
    // An expired token needs no revocation; a forged one has nothing to revoke.
    if (auto claims = tokens.VerifySignature(*token);
        claims && claims->client_id == client->client_id)
      access = std::move(*claims);
  }
  int64_t now = tokens.clock().NowUnix();
  auto changed = tokens.db().Write([&](store::Conn& c) -> Result<bool> {
    if (access) {
      // A client_credentials token has no record until it is revoked (0054).
      return repo::RevokeAccessToken(c, access->jti, access->grant_id, client->client_id,
                                     access->expires_at, now);
    }
    if (looks_like_jwt) return false;
    auto rt = repo::FindRefreshToken(c, crypto::HashSecret(*token));
    if (!rt) return Fail(rt.error());
    if (!*rt || (*rt)->client_id != client->client_id) return false;
    if (auto st = repo::RevokeGrant(c, (*rt)->grant_id, now); !st) return Fail(st.error());
    return true;
  });
  if (!changed) {
    spdlog::error(R"("event":"revocation_failed","detail":"{}")", changed.error().detail);
    // RFC 7009 §2.2.1: the client may retry later.
    return OAuthErrorResponse({503, "temporarily_unavailable", "try again later"});
  }
  if (*changed) tokens.RevocationsChanged();
  return NoStoreJson(200, nlohmann::json::object());
}

}  // namespace crmd::auth
