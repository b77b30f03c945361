#include "auth/person_sign_in.h"

#include <algorithm>

#include "auth/csrf.h"
#include "src/core/crypto.h"

namespace crmd::auth {

PersonSignIn::PersonSignIn(Users& users, LoginSessions& sessions, RateLimiter& limiter,
                           PersonSignInOptions options)
    : users_(users),
      sessions_(sessions),
      limiter_(limiter),
      options_(std::move(options)),
      cookies_(CookieNamesFor(options_.issuer)) {}

Result<std::optional<SignedIn>> PersonSignIn::Current(const http::Request& req) {
  auto secret = CookieValue(req, cookies_.session);
  if (!secret || secret->empty()) return std::optional<SignedIn>{};
  auto session = sessions_.Find(*secret);
  if (!session) return Fail(session.error());
  if (!*session) return std::optional<SignedIn>{};
  auto user = users_.FindById((*session)->user_id);
  if (!user) return Fail(user.error());
  if (!*user) return std::optional<SignedIn>{};
  return std::optional<SignedIn>(SignedIn{.user = **user, .session = **session});
}

SignInAttempt PersonSignIn::SignIn(const http::Request& req, const std::string& email,
                                   const std::string& password) {
  SignInAttempt out;
  auto norm = NormalizeEmail(email);
  const std::string ip_bucket = "login:ip:" + req.remote_ip;
  const std::string account_bucket = "login:account:" + crypto::Sha256Hex(norm ? *norm : email);
  auto by_ip = limiter_.Check(ip_bucket, options_.limit_per_ip);
  auto by_account = limiter_.Check(account_bucket, options_.limit_per_account);
  if (!by_ip || !by_account) {
    out.status = 500;
    out.error = "Something went wrong. Try again in a minute.";
    return out;
  }
  if (!by_ip->allowed || !by_account->allowed) {
    out.status = 429;
    out.retry_after = std::max(by_ip->retry_after, by_account->retry_after);
    int64_t minutes = (out.retry_after + 59) / 60;
    out.error = "Too many failed sign-in attempts. Try again in " + std::to_string(minutes) +
                (minutes == 1 ? " minute." : " minutes.");
    return out;
  }
  auto user = users_.Verify(email, password);
  if (!user) {
    if (user.error().code != Errc::kUnauthenticated) {
      out.status = 500;
      out.error = "Something went wrong. Try again in a minute.";
      return out;
    }
    (void)limiter_.Hit(ip_bucket, options_.limit_per_ip);
    (void)limiter_.Hit(account_bucket, options_.limit_per_account);
    out.status = 401;
    out.error = "Invalid email or password.";
    return out;
  }
  (void)limiter_.Reset(account_bucket);
  if (auto old = CookieValue(req, cookies_.session)) (void)sessions_.Delete(*old);
  auto secret = sessions_.Create(user->id);
  if (!secret) {
    out.status = 500;
    out.error = "Something went wrong. Try again in a minute.";
    return out;
  }
  out.user = *user;
  out.set_cookies.push_back(SetCookie(cookies_.session, *secret, cookies_.secure, sessions_.ttl()));
  return out;
}

bool PersonSignIn::OriginAllowed(const http::Request& req) const {
  return auth::OriginAllowed(req, options_.issuer, options_.allowed_origins);
}

}  // namespace crmd::auth
