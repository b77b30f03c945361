#pragma once
// HTTP faces of the token side: /oauth/token, /oauth/revoke, /oauth/introspect, the JWKS
// and the discovery documents. The composition root registers the returned routes as exact
// paths. Handlers are thread-safe and block on the database (run them on workers).
#include <string>
#include <vector>

#include "auth/token_service.h"
#include "src/core/http_types.h"

namespace crmd::auth {

struct TokenRoute {
  std::string path;
  http::Handler handler;
};

// REQUIRES: `tokens` outlives every handler.
std::vector<TokenRoute> TokenRoutes(TokenService& tokens);

}  // namespace crmd::auth
