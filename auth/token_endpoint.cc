#include "auth/token_endpoint.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "auth/grant_handlers.h"

namespace crmd::auth {

OAuthResult<Form> ReadOAuthForm(const http::Request& req,
                                std::initializer_list<std::string_view> repeatable) {
  auto ct = req.Header("Content-Type").value_or("");
  auto semi = ct.find(';');
  auto media = ct.substr(0, semi);
  while (!media.empty() && media.back() == ' ') media.remove_suffix(1);
  if (!http::IEquals(media, "application/x-www-form-urlencoded"))
    return Refuse(OAuthError::InvalidRequest("expected application/x-www-form-urlencoded"));
  Form form = http::ParseForm(req.body);
  std::set<std::string_view> seen;
  for (const auto& [k, v] : form) {
    if (std::find(repeatable.begin(), repeatable.end(), k) != repeatable.end()) continue;
    if (!seen.insert(k).second)
      return Refuse(OAuthError::InvalidRequest("repeated parameter: " + k));
  }
  return form;
}

http::Response HandleTokenRequest(TokenService& tokens, const http::Request& req) {
  auto form = ReadOAuthForm(req, {"resource"});
  if (!form) return OAuthErrorResponse(form.error());

  // RFC 8707: crmd protects one resource, so at most one resource parameter.
  std::optional<std::string> resource;
  for (const auto& [k, v] : *form) {
    if (k != "resource") continue;
    if (resource)
      return OAuthErrorResponse(OAuthError::InvalidTarget("only one resource may be requested"));
    resource = v;
  }

  auto grant_type = http::FormValue(*form, "grant_type");
  if (!grant_type || grant_type->empty())
    return OAuthErrorResponse(OAuthError::InvalidRequest("grant_type is required"));
  // Client authentication comes first: an unauthenticated caller learns nothing more.
  auto client = AuthenticateClient(tokens.db(), req, *form);
  if (!client) return OAuthErrorResponse(client.error());

  GrantContext ctx{.tokens = tokens, .client = *client, .form = *form, .resource = resource};
  OAuthResult<nlohmann::json> result;
  if (*grant_type == "authorization_code") {
    result = GrantAuthorizationCode(ctx);
  } else if (*grant_type == "refresh_token") {
    result = GrantRefreshToken(ctx);
  } else if (*grant_type == "client_credentials") {
    result = GrantClientCredentials(ctx);
  } else {
    return OAuthErrorResponse(OAuthError::UnsupportedGrantType("unsupported grant_type"));
  }
  if (!result) return OAuthErrorResponse(result.error());
  return NoStoreJson(200, *result);
}

}  // namespace crmd::auth
