#include "auth/token_errors.h"

#include <nlohmann/json.hpp>

namespace crmd::auth {

http::Response NoStoreJson(int status, const nlohmann::json& body) {
  auto r = http::Response::Json(status, body);
  r.Set("Cache-Control", "no-store");
  r.Set("Pragma", "no-cache");
  return r;
}

http::Response OAuthErrorResponse(const OAuthError& e) {
  nlohmann::json body = {{"error", e.error}};
  if (!e.description.empty()) body["error_description"] = e.description;
  auto r = NoStoreJson(e.status, body);
  if (e.status == 401 && e.basic_challenge) r.Set("WWW-Authenticate", "Basic realm=\"crmd\"");
  return r;
}

}  // namespace crmd::auth
