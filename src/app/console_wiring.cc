#include "src/app/people_audit.h"
#include "src/app/wiring.h"
#include "src/console/api_pages.h"
#include "src/console/approvals.h"
#include "src/console/apps_pages.h"
#include "src/console/automation_pages.h"
#include "src/console/campaign_pages.h"
#include "src/console/contact_pages.h"
#include "src/console/contacts_pages.h"
#include "src/console/forms_pages.h"
#include "src/console/groups_pages.h"
#include "src/console/hooks_pages.h"
#include "src/console/mail_receivers_pages.h"
#include "src/console/overview_pages.h"
#include "src/console/people_pages.h"
#include "src/console/suppressions_pages.h"
#include "src/console/templates_pages.h"
#include "src/mail/mailbox_client.h"

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
                            .is_admin = (*who)->user.is_admin,
                            .can_edit = (*who)->user.role != auth::Role::kViewer,
                            .scopes = auth::ScopeCeiling((*who)->user.role)});
      },
      .sign_in =
          [sign_in](const http::Request& req, const std::string& email,
                    const std::string& password) {
            auto attempt = sign_in->SignIn(req, email, password);
            return console::SignInResult{.ok = attempt.user.has_value(),
                                         .status = attempt.status,
                                         .error = attempt.error,
                                         .retry_after = attempt.retry_after,
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

console::AppClient AppClientOf(const auth::Client& c) {
  return {.client_id = c.client_id,
          .name = c.DisplayName(),
          .source = c.source,
          .revoked = c.revoked,
          .created_at = c.created_at};
}

console::ConnectedAppsSource ConnectedAppsOf(App::Services& s) {
  return console::ConnectedAppsSource{
      .clients_page = [&s](const std::string& after,
                           int64_t limit) -> Result<console::AppClientPage> {
        auto page = s.clients->ListPage(after, limit);
        if (!page) return Fail(page.error());
        console::AppClientPage out{.next = page->next};
        for (const auto& c : page->clients) out.clients.push_back(AppClientOf(c));
        return out;
      },
      .client = [&s](const std::string& id) -> Result<std::optional<console::AppClient>> {
        auto found = s.clients->Find(id);
        if (!found) return Fail(found.error());
        if (!*found) return std::optional<console::AppClient>();
        return std::optional<console::AppClient>(AppClientOf(**found));
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

console::PersonRow PersonRowOf(const auth::User& u) {
  return console::PersonRow{.id = u.id,
                            .email = u.email,
                            .role = std::string(auth::RoleName(u.role)),
                            .disabled = u.disabled_at.has_value(),
                            .created_at = u.created_at};
}

// People management for administrators: auth::Users, with the administrator as the
// changer of the audit rows, and this node's revocation cache told at once.
console::PeopleSource PeopleSourceOf(App::Services& s) {
  auto by = [](const console::Person& p) {
    return auth::PersonChanger{.kind = "user", .subject = p.subject};
  };
  return console::PeopleSource{
      .list = [&s]() -> Result<std::vector<console::PersonRow>> {
        auto list = s.users->List();
        if (!list) return Fail(list.error());
        std::vector<console::PersonRow> out;
        for (const auto& u : *list) out.push_back(PersonRowOf(u));
        return out;
      },
      .create = [&s, by](const console::Person& p, const std::string& email,
                         const std::string& password,
                         const std::string& role) -> Result<console::PersonRow> {
        auto r = auth::ParseRole(role);
        if (!r)
          return Fail(Errc::kInvalidArgument, "choose a role: viewer, editor or administrator");
        auto u = s.users->Create(email, password, *r, by(p));
        if (!u) return Fail(u.error());
        return PersonRowOf(*u);
      },
      .change = [&s, by](const console::Person& p, int64_t id, const std::string& action,
                         const std::string& value) -> Result<std::vector<std::string>> {
        auto user = s.users->FindById(id);
        if (!user) return Fail(user.error());
        if (!*user || (*user)->deleted_at) return Fail(Errc::kNotFound, "no such person");
        const std::string email = (*user)->email;
        Result<auth::AccessEnded> ended = auth::AccessEnded{};
        if (action == "role") {
          auto r = auth::ParseRole(value);
          if (!r)
            return Fail(Errc::kInvalidArgument, "choose a role: viewer, editor or administrator");
          ended = s.users->SetRole(email, *r, by(p));
        } else if (action == "disable") {
          ended = s.users->Disable(email, by(p));
        } else if (action == "enable") {
          if (auto st = s.users->Enable(email, by(p)); !st) return Fail(st.error());
        } else if (action == "delete") {
          ended = s.users->Delete(email, by(p));
        } else {
          return Fail(Errc::kInvalidArgument, "unknown action");
        }
        if (!ended) return Fail(ended.error());
        if (ended->grants_revoked > 0) s.tokens->RevocationsChanged();
        return ended->clients;
      },
  };
}

}  // namespace

void WireConsole(App::Services& s) {
  console::ConsoleRoutes routes = console::SessionRoutes(ConsolePeopleOf(s));
  routes.Append(console::ApprovalRoutes(
      {.confirmations = s.governance->confirmations.get(),
       .people = ConsolePeopleOf(s),
       .app_name = [&s](const std::string& client_id) -> std::optional<std::string> {
         auto c = s.clients->Find(client_id);
         if (!c || !*c) return std::nullopt;
         return (*c)->client_name;
       }}));
  routes.Append(console::OverviewRoutes(
      {.reports = s.marketing->reports.get(),
       .audit = s.governance->audit.get(),
       .exporter = s.crm->exporter.get(),
       .people = ConsolePeopleOf(s),
       .person_label = [&s](const std::string& kind, const std::string& subject) {
         return PersonLabel(*s.users, kind, subject);
       }}));
  routes.Append(
      console::PeopleRoutes({.people_source = PeopleSourceOf(s), .people = ConsolePeopleOf(s)}));
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
  routes.Append(console::ContactRoutes({.contacts = s.crm->contacts.get(),
                                        .history = s.marketing->contact_history.get(),
                                        .people = ConsolePeopleOf(s)}));
  routes.Append(console::ContactsRoutes({.imports = s.crm->imports.get(),
                                         .can_export = s.crm->exporter != nullptr,
                                         .people = ConsolePeopleOf(s)}));
  routes.Append(console::SuppressionsRoutes(
      {.suppressions = s.crm->suppressions.get(), .people = ConsolePeopleOf(s)}));
  routes.Append(console::MailReceiversRoutes(
      {.receivers = s.marketing->receivers.get(),
       .people = ConsolePeopleOf(s),
       .rest_base_url = s.config.Issuer() + s.rest_api->base_path(),
       .bounce_mailbox = s.bounce_mailbox.get(),
       .bounce_domain = s.config.bounce_domain,
       .bounce_mailbox_url = s.config.bounce_mailbox_url.empty()
                                 ? ""
                                 : mail::RedactedMailboxUrl(s.config.bounce_mailbox_url)}));
  routes.Append(console::CampaignRoutes({.campaigns = s.marketing->campaigns.get(),
                                         .reports = s.marketing->reports.get(),
                                         .confirmations = s.governance->confirmations.get(),
                                         .contacts = s.crm->contacts.get(),
                                         .lists = s.crm->lists.get(),
                                         .tags = s.crm->tags.get(),
                                         .settings = s.governance->settings.get(),
                                         .mail = &s.mail_context,
                                         .test_sends = s.marketing->test_sends.get(),
                                         .clock = s.clock.get(),
                                         .people = ConsolePeopleOf(s)}));
  routes.Append(console::AutomationRoutes({.automations = s.marketing->automations.get(),
                                           .sequences = s.marketing->sequences.get(),
                                           .reports = s.marketing->reports.get(),
                                           .confirmations = s.governance->confirmations.get(),
                                           .people = ConsolePeopleOf(s)}));
  routes.Append(console::GroupsRoutes({.lists = s.crm->lists.get(),
                                       .tags = s.crm->tags.get(),
                                       .confirmations = s.governance->confirmations.get(),
                                       .people = ConsolePeopleOf(s)}));
  routes.Append(console::TemplatesRoutes({.templates = s.marketing->templates.get(),
                                          .contacts = s.crm->contacts.get(),
                                          .settings = s.governance->settings.get(),
                                          .mail = &s.mail_context,
                                          .people = ConsolePeopleOf(s)}));
  for (auto& [path, handler] : routes.exact) s.router.Exact(path, std::move(handler));
  for (auto& [prefix, handler] : routes.prefix) s.router.Prefix(prefix, std::move(handler));
}

}  // namespace crmd::app
