#pragma once
// Signing a person in outside an authorization request (the console's approval pages):
// the same accounts (Users), the same login sessions and cookie (LoginSessions,
// CookieNamesFor), and the same per-IP and per-account rate limits as the OAuth login
// page (AuthorizeOptions' defaults). A new session on every sign-in, so a session id
// planted before login is never promoted. Thread-safe (state is in the database).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "auth/login_session.h"
#include "auth/rate_limit.h"
#include "auth/users.h"
#include "src/core/http_types.h"
#include "src/core/result.h"

namespace crmd::auth {

struct SignedIn {
  User user;
  LoginSession session;
};

struct SignInAttempt {
  std::optional<User> user;  // set on success
  int status = 200;          // 401 wrong credentials, 429 rate limited, 500
  std::string error;         // for the person, when !user
  int64_t retry_after = 0;   // with 429
  std::vector<std::string> set_cookies;
};

struct PersonSignInOptions {
  std::string issuer;
  std::vector<std::string> allowed_origins;
  RateLimit limit_per_ip = {.limit = 10, .window_s = 15 * 60};
  RateLimit limit_per_account = {.limit = 10, .window_s = 15 * 60};
};

class PersonSignIn {
 public:
  PersonSignIn(Users& users, LoginSessions& sessions, RateLimiter& limiter,
               PersonSignInOptions options);
  PersonSignIn(const PersonSignIn&) = delete;
  PersonSignIn& operator=(const PersonSignIn&) = delete;

  // The person of the request's session cookie (live session, existing user), or nullopt.
  Result<std::optional<SignedIn>> Current(const http::Request& req);
  // Checks the password (rate-limited) and starts a session.
  SignInAttempt SignIn(const http::Request& req, const std::string& email,
                       const std::string& password);
  // False when a POST carries a foreign Origin (OriginAllowed, csrf.h).
  bool OriginAllowed(const http::Request& req) const;

 private:
  Users& users_;
  LoginSessions& sessions_;
  RateLimiter& limiter_;
  const PersonSignInOptions options_;
  const CookieNames cookies_;
};

}  // namespace crmd::auth
