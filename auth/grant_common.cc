#include <spdlog/spdlog.h>

#include "auth/grant_handlers.h"

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

void LogGrantFailure(const char* grant, const Error& error) {
  spdlog::error(R"("event":"token_grant_failed","grant_type":"{}","detail":"{}")", grant,
                error.detail.empty() ? error.message : error.detail);
}

}  // namespace crmd::auth
