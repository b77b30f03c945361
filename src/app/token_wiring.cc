// auth, token side: /oauth/token (its outcomes counted by auth), /oauth/revoke,
// /oauth/introspect, the JWKS and metadata, and the bearer guard behind s.authenticate.
#include "auth/bearer.h"
#include "auth/token_routes.h"
#include "src/app/services.h"
#include "src/app/wiring.h"

namespace crmd::app {

void WireTokens(App::Services& s) {
  s.tokens = std::make_unique<auth::TokenService>(
      auth::TokenServiceOptions{.issuer = s.config.Issuer(),
                                .resource = s.config.McpResource(),
                                .access_token_ttl = s.config.access_token_ttl,
                                .refresh_token_ttl = s.config.refresh_token_ttl,
                                .signing_key_rotation = s.config.signing_key_rotation},
      *s.db, *s.clock, *s.random);
  s.bearer = std::make_unique<auth::BearerGuard>(*s.tokens);
  s.authenticate = [&s](const http::Request& req) {
    auto principal = s.bearer->Authenticate(req);
    if (!principal) {
      // RFC 6750 §3.1's words (missing, invalid_request, invalid_token) or "unavailable".
      std::string_view reason =
          principal.error().code == Errc::kUnavailable              ? "unavailable"
          : principal.error().detail == auth::kBearerMissing        ? auth::kBearerMissing
          : principal.error().detail == auth::kBearerInvalidRequest ? auth::kBearerInvalidRequest
                                                                    : auth::kBearerInvalidToken;
      s.metrics
          ->Counter("crmd_bearer_refused_total",
                    "Requests whose bearer token was refused, by reason.", {{"reason", reason}})
          .Inc();
    }
    return principal;
  };
  for (auto& route : auth::TokenRoutes(*s.tokens, s.metrics.get()))
    s.router.Exact(std::move(route.path), std::move(route.handler));
}

}  // namespace crmd::app
