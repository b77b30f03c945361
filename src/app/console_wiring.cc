#include "src/app/wiring.h"
#include "src/console/api_pages.h"
#include "src/console/approvals.h"
#include "src/console/apps_pages.h"
#include "src/console/forms_pages.h"
#include "src/console/hooks_pages.h"
#include "src/console/overview_pages.h"

namespace crmd::app {

namespace {

// The web console under /console (src/console): sign-in, overview, approvals, connected
// apps, Webhook & API, audit. It calls the same services as the tools, REST and crmctl.
console::ConsolePeople ConsolePeopleOf(App::Services& s) {
  auth::PersonSignIn* sign_in = s.person_sign_in.get();
  return console::ConsolePeople{
      .current = [sign_in](const http::Request& req) -> Result<std::optional<console::Person>> {
        auto who = sign_in->Current(req);
        if (!who) return Fail(who.error());
        if (!*who) return std::optional<console::Person>{};
        // The subject of this person's OAuth grants (auth/grant_common.cc GrantSubject).
        return std::optional<console::Person>(
            console::Person{.subject = std::to_string((*who)->user.id),
                            .email = (*who)->user.email,
                            .csrf_token = (*who)->session.csrf_token,
                            .is_admin = (*who)->user.is_admin});
      },
      .sign_in =
          [sign_in](const http::Request& req, const std::string& email,
                    const std::string& password) {
            auto attempt = sign_in->SignIn(req, email, password);
            return console::SignInResult{.ok = attempt.user.has_value(),
                                         .status = attempt.status,
                                         .error = attempt.error,
                                         .set_cookies = std::move(attempt.set_cookies)};
          },
      .origin_allowed = [sign_in](const http::Request& req) { return sign_in->OriginAllowed(req); },
      .sign_out = [sign_in](const http::Request& req) { return sign_in->SignOut(req); },
      .login_form_token =
          [sign_in](const http::Request& req) {
            auto t = sign_in->IssueLoginFormToken(req);
            return std::make_pair(std::move(t.token), std::move(t.set_cookie));
          },
      .login_form_token_valid =
          [sign_in](const http::Request& req, const std::string& presented) {
            return sign_in->LoginFormTokenValid(req, presented);
          },
  };
}

console::ConnectedAppsSource ConnectedAppsOf(App::Services& s) {
  return console::ConnectedAppsSource{
      .clients = [&s]() -> Result<std::vector<console::AppClient>> {
        auto list = s.clients->List();
        if (!list) return Fail(list.error());
        std::vector<console::AppClient> out;
        for (const auto& c : *list)
          out.push_back({.client_id = c.client_id,
                         .name = c.DisplayName(),
                         .source = c.source,
                         .revoked = c.revoked,
                         .created_at = c.created_at});
        return out;
      },
      .grants = [&s]() -> Result<std::vector<console::AppGrant>> {
        auto list = s.grants->List(std::nullopt);
        if (!list) return Fail(list.error());
        std::vector<console::AppGrant> out;
        for (const auto& g : *list)
          out.push_back({.grant_id = g.grant_id,
                         .client_id = g.client_id,
                         .user_email = g.user_email,
                         .scope = g.scope,
                         .created_at = g.created_at,
                         .revoked_at = g.revoked_at});
        return out;
      },
      .revoke_grant = [&s](const std::string& grant_id) -> Status {
        if (auto st = s.grants->Revoke(grant_id); !st) return st;
        s.tokens->RevocationsChanged();
        return Ok();
      },
      .revoke_client = [&s](const std::string& client_id) -> Status {
        if (auto st = s.clients->Revoke(client_id); !st) return st;
        s.tokens->RevocationsChanged();
        return Ok();
      },
      .consents = [&s]() -> Result<std::vector<console::AppConsent>> {
        auto list = s.consents->List();
        if (!list) return Fail(list.error());
        std::vector<console::AppConsent> out;
        for (const auto& c : *list)
          if (!c.revoked_at)
            out.push_back({.client_id = c.client_id,
                           .user_id = c.user_id,
                           .user_email = c.user_email,
                           .scope = c.scope,
                           .created_at = c.created_at});
        return out;
      },
      .revoke_consent = [&s](const std::string& client_id, int64_t user_id) -> Status {
        auto n = s.consents->Revoke(client_id, user_id);
        if (!n) return Fail(n.error());
        s.tokens->RevocationsChanged();
        return Ok();
      },
  };
}

}  // namespace

void WireConsole(App::Services& s) {
  console::ConsoleRoutes routes = console::SessionRoutes(ConsolePeopleOf(s));
  routes.Append(console::ApprovalRoutes(
      {.confirmations = s.governance->confirmations.get(), .people = ConsolePeopleOf(s)}));
  routes.Append(console::OverviewRoutes({.reports = s.marketing->reports.get(),
                                         .audit = s.governance->audit.get(),
                                         .people = ConsolePeopleOf(s)}));
  routes.Append(console::AppsRoutes({.apps = ConnectedAppsOf(s),
                                     .audit = s.governance->audit.get(),
                                     .people = ConsolePeopleOf(s)}));
  routes.Append(console::ApiRoutes({.api_keys = s.governance->api_keys.get(),
                                    .endpoints = s.webhook_endpoints.get(),
                                    .deliveries = s.webhook_deliveries.get(),
                                    .people = ConsolePeopleOf(s),
                                    .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  routes.Append(
      console::FormsRoutes({.forms = s.crm->forms.get(),
                            .people = ConsolePeopleOf(s),
                            .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  routes.Append(
      console::HooksRoutes({.hooks = s.incoming_hooks.get(),
                            .people = ConsolePeopleOf(s),
                            .rest_base_url = s.config.Issuer() + s.rest_api->base_path()}));
  for (auto& [path, handler] : routes.exact) s.router.Exact(path, std::move(handler));
  for (auto& [prefix, handler] : routes.prefix) s.router.Prefix(prefix, std::move(handler));
}

}  // namespace crmd::app
