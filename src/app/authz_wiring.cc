#include "src/app/people_audit.h"
#include "src/app/wiring.h"

namespace crmd::app {

// Users, client registry, registration, authorization pages.
Status WireAuthz(App::Services& s) {
  s.users =
      std::make_unique<auth::Users>(*s.db, *s.clock, AuditPeopleChanges(*s.governance->audit));
  s.clients = std::make_unique<auth::ClientStore>(*s.db, *s.clock);
  s.rate_limiter = std::make_unique<auth::RateLimiter>(*s.db, *s.clock);
  s.sign_in_throttle = std::make_unique<auth::SignInThrottle>(*s.db, *s.clock);
  s.cimd = std::make_unique<auth::CimdResolver>(
      *s.clients, *s.http_client, *s.clock,
      auth::CimdOptions{.allow_private = s.config.allow_private_network_targets});
  s.login_sessions = std::make_unique<auth::LoginSessions>(*s.db, *s.clock, *s.random);
  s.consents = std::make_unique<auth::Consents>(*s.db, *s.clock);
  s.registration = std::make_unique<auth::Registration>(
      *s.clients, *s.rate_limiter, *s.random, *s.clock,
      auth::RegistrationOptions{
          .issuer = s.config.Issuer(),
          .global_limit = {.limit = s.config.registration_limit_per_hour, .window_s = 3600}});
  s.authorization = std::make_unique<auth::AuthorizationEndpoint>(
      auth::AuthorizeServices{.db = *s.db,
                              .clients = *s.clients,
                              .cimd = *s.cimd,
                              .users = *s.users,
                              .sessions = *s.login_sessions,
                              .consents = *s.consents,
                              .throttle = *s.sign_in_throttle,
                              .random = *s.random,
                              .clock = *s.clock},
      auth::AuthorizeOptions{.issuer = s.config.Issuer(),
                             .resource = s.config.McpResource(),
                             .allowed_origins = s.config.allowed_origins,
                             .auth_code_ttl = s.config.auth_code_ttl});
  s.router.Exact("/oauth/register",
                 [&s](const http::Request& r) { return s.registration->HandleRegister(r); });
  s.router.Prefix("/oauth/register/",
                  [&s](const http::Request& r) { return s.registration->HandleConfiguration(r); });
  s.router.Exact("/oauth/authorize",
                 [&s](const http::Request& r) { return s.authorization->HandleAuthorize(r); });
  s.router.Exact("/oauth/login",
                 [&s](const http::Request& r) { return s.authorization->HandleLogin(r); });
  s.router.Exact("/oauth/consent",
                 [&s](const http::Request& r) { return s.authorization->HandleConsent(r); });

  // The console's sign-in (the approval pages and the web console): the same accounts,
  // session cookie and sign-in throttle as the OAuth login page.
  s.person_sign_in = std::make_unique<auth::PersonSignIn>(
      *s.users, *s.login_sessions, *s.sign_in_throttle, *s.random,
      auth::PersonSignInOptions{.issuer = s.config.Issuer(),
                                .allowed_origins = s.config.allowed_origins});
  s.grants = std::make_unique<auth::Grants>(*s.db, *s.clock);

  // First start: without any admin there is no way to sign in, so create one and show its
  // password once, on stdout (never in the log).
  auto admins = s.users->CountAdmins();
  if (!admins) return Fail(admins.error());
  if (*admins == 0) {
    const std::string email = "admin@localhost";
    std::string password = s.random->Token(18);
    auto user = s.users->Create(email, password, true);
    if (user) {
      std::printf(
          "crmd: created the first administrator\n  email:    %s\n  password: %s\n"
          "  (shown only now; change it with: crmctl user password %s)\n",
          user->email.c_str(), password.c_str(), user->email.c_str());
      std::fflush(stdout);
    } else if (user.error().code != Errc::kAlreadyExists) {
      return Fail(user.error());
    }
  }
  return Ok();
}

}  // namespace crmd::app
