#include "auth/person_sign_in.h"

#include <algorithm>
#include <cctype>

#include "auth/csrf.h"
#include "src/core/crypto.h"

namespace crmd::auth {

PersonSignIn::PersonSignIn(Users& users, LoginSessions& sessions, SignInThrottle& throttle,
                           Random& random, PersonSignInOptions options)
    : users_(users),
      sessions_(sessions),
      throttle_(throttle),
      random_(random),
      options_(std::move(options)),
      cookies_(CookieNamesFor(options_.issuer)),
      login_cookie_(cookies_.secure ? "__Host-crmd_login" : "crmd_login") {}

Result<std::optional<SignedIn>> PersonSignIn::Current(const http::Request& req) {
  auto secret = CookieValue(req, cookies_.session);
  if (!secret || secret->empty()) return std::optional<SignedIn>{};
  auto session = sessions_.Find(*secret);
  if (!session) return Fail(session.error());
  if (!*session) return std::optional<SignedIn>{};
  auto user = users_.FindById((*session)->user_id);
  if (!user) return Fail(user.error());
  if (!*user || !(*user)->active()) return std::optional<SignedIn>{};
  return std::optional<SignedIn>(SignedIn{.user = **user, .session = **session});
}

SignInAttempt PersonSignIn::SignIn(const http::Request& req, const std::string& email,
                                   const std::string& password) {
  SignInAttempt out;
  auto permit = throttle_.Reserve(email, req.remote_ip);
  if (!permit) {
    out.status = 500;
    out.error = "Something went wrong. Try again in a minute.";
    return out;
  }
  if (!permit->allowed) {
    out.status = 429;
    out.retry_after = permit->retry_after;
    out.error = TooManySignInAttempts(out.retry_after);
    return out;
  }
  auto user = users_.Verify(email, password);
  if (!user) {
    if (user.error().code != Errc::kUnauthenticated) {
      out.status = 500;
      out.error = "Something went wrong. Try again in a minute.";
      return out;
    }
    out.status = 401;
    out.error = "Invalid email or password.";
    return out;
  }
  (void)throttle_.Succeeded(*permit);
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

std::vector<std::string> PersonSignIn::SignOut(const http::Request& req) {
  if (auto secret = CookieValue(req, cookies_.session); secret && !secret->empty())
    (void)sessions_.Delete(*secret);
  return {SetCookie(cookies_.session, "", cookies_.secure, 0)};
}

LoginFormToken PersonSignIn::IssueLoginFormToken(const http::Request& req) {
  auto existing = CookieValue(req, login_cookie_);
  // Only a value shaped like ours is reused; anything else is replaced.
  bool reusable = existing && existing->size() == 32 &&
                  std::all_of(existing->begin(), existing->end(), [](char ch) {
                    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
                  });
  std::string token = reusable ? *existing : random_.Token(24);
  // SameSite=Strict: the cookie never rides on a request another site starts.
  std::string cookie = login_cookie_ + "=" + token + "; Path=/; HttpOnly; SameSite=Strict";
  if (cookies_.secure) cookie += "; Secure";
  return {.token = token, .set_cookie = cookie};
}

bool PersonSignIn::LoginFormTokenValid(const http::Request& req,
                                       const std::string& presented) const {
  auto cookie = CookieValue(req, login_cookie_);
  return cookie && CsrfTokenMatches(presented, *cookie);
}

}  // namespace crmd::auth
