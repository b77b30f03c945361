#pragma once
// HTTP faces of the token side: /oauth/token, /oauth/revoke, /oauth/introspect, the JWKS
// and the discovery documents. The composition root registers the returned routes as exact
// paths. Handlers are thread-safe and block on the database (run them on workers).
#include <string>
#include <vector>

#include "auth/token_service.h"
#include "src/core/http_types.h"
#include "src/core/metrics.h"

namespace crmd::auth {

struct TokenRoute {
  std::string path;
  http::Handler handler;
};

// With `metrics`, /oauth/token counts crmd_oauth_tokens_issued_total{grant_type},
// crmd_oauth_token_refused_total{error} and crmd_errors_total{face="oauth",code} (the
// label values are RFC 6749's fixed words; others become "other").
// REQUIRES: `tokens` and `metrics` outlive every handler.
std::vector<TokenRoute> TokenRoutes(TokenService& tokens, metrics::Registry* metrics = nullptr);

}  // namespace crmd::auth
