#pragma once
// Dynamic client registration (RFC 7591) at POST /oauth/register and the client
// configuration endpoint (RFC 7592) at GET/PUT/DELETE /oauth/register/<client_id>.
//
// Public clients (token_endpoint_auth_method "none", what MCP clients send) get no secret;
// confidential ones (client_secret_basic, the RFC 7591 default, or client_secret_post)
// get a client_secret shown once. Every successful response carries a fresh
// registration_access_token (RFC 7592 §3 allows rotation; the previous one stops working).
// Registration is rate-limited per IP and, beside that, for every address together (a
// global cap: many addresses cannot fill the registry either); clients never used for a
// grant are purged by housekeeping a day after they registered.
//
// Thread-safe (state is in the database).
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "auth/clients.h"
#include "auth/rate_limit.h"
#include "auth/token_errors.h"  // OAuthError, OAuthResult (shared with the token side)
#include "src/core/clock.h"
#include "src/core/http_types.h"
#include "src/core/random.h"

namespace crmd::auth {

// Validates RFC 7591 §2 client metadata and returns the client it describes (client_id,
// times and source left for the caller). Unknown fields are ignored and not echoed.
// Errors: invalid_redirect_uri, invalid_client_metadata.
OAuthResult<Client> ClientFromMetadata(const nlohmann::json& metadata);

struct RegistrationOptions {
  std::string issuer;                                    // registration_client_uri base
  RateLimit rate_limit = {.limit = 20, .window_s = 60};  // per client IP
  // Every address together (config registration_limit_per_hour); limit 0: none.
  RateLimit global_limit = {.limit = 1000, .window_s = 3600};
};

class Registration {
 public:
  Registration(ClientStore& clients, RateLimiter& limiter, Random& random, const Clock& clock,
               RegistrationOptions options)
      : clients_(clients),
        limiter_(limiter),
        random_(random),
        clock_(clock),
        options_(std::move(options)) {}
  Registration(const Registration&) = delete;
  Registration& operator=(const Registration&) = delete;

  // POST /oauth/register
  http::Response HandleRegister(const http::Request& req);
  // GET, PUT, DELETE /oauth/register/<client_id>
  http::Response HandleConfiguration(const http::Request& req);

 private:
  http::Response Read(const Client& client);
  http::Response Update(const Client& client, const http::Request& req);
  http::Response Delete(const Client& client);
  // The client information response (RFC 7591 §3.2.1, RFC 7592 §3), with a new
  // registration access token already stored.
  nlohmann::json InformationResponse(const Client& client, const std::string& registration_token,
                                     const std::optional<std::string>& secret);

  ClientStore& clients_;
  RateLimiter& limiter_;
  Random& random_;
  const Clock& clock_;
  const RegistrationOptions options_;
};

}  // namespace crmd::auth
