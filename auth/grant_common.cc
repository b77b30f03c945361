#include <spdlog/spdlog.h>

#include "auth/grant_handlers.h"
#include "auth/repo/tokens_repo.h"
#include "auth/repo/users_repo.h"
#include "auth/roles.h"
#include "src/core/crypto.h"

namespace crmd::auth {

nlohmann::json TokenResponseBody(const IssuedAccessToken& token, const std::string& scope,
                                 const std::optional<std::string>& refresh_token) {
  nlohmann::json body = {{"access_token", token.token},
                         {"token_type", "Bearer"},
                         {"expires_in", token.expires_in},
                         {"scope", scope}};
  if (refresh_token) body["refresh_token"] = *refresh_token;
  return body;
}

std::string GrantSubject(std::optional<int64_t> user_id, std::string_view client_id) {
  if (user_id) return std::to_string(*user_id);
  return "client:" + std::string(client_id);
}

Result<PersonScopes> CapToPerson(store::Conn& c, std::optional<int64_t> user_id,
                                 const std::set<std::string>& scopes) {
  PersonScopes out{.scopes = scopes};
  if (!user_id) return out;
  auto user = repo::FindUserById(c, *user_id);
  if (!user) return Fail(user.error());
  if (!*user || !(*user)->active()) {
    out.refusal = OAuthError::InvalidGrant("the person's access has ended");
    return out;
  }
  out.scopes = CapScopes(scopes, (*user)->role);
  if (out.scopes.empty())
    out.refusal = OAuthError::InvalidScope("the person's role allows none of the granted scopes");
  return out;
}

Result<std::string> IssueRefreshToken(store::Conn& c, Random& random, const repo::GrantRow& grant,
                                      int64_t now, int64_t ttl) {
  std::string token = random.Token(32);
  if (auto st = repo::InsertRefreshToken(c, crypto::HashSecret(token), grant, now, now + ttl); !st)
    return Fail(st.error());
  return token;
}

void LogGrantFailure(const char* grant, const Error& error) {
  spdlog::error(R"("event":"token_grant_failed","grant_type":"{}","detail":"{}")", grant,
                error.detail.empty() ? error.message : error.detail);
}

void LogGrantWarning(const std::string& line) { spdlog::warn("{}", line); }

}  // namespace crmd::auth
