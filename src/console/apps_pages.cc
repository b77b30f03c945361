#include "src/console/apps_pages.h"

#include <spdlog/spdlog.h>

#include <memory>
#include <set>

#include "src/core/clock.h"
#include "src/core/log.h"

namespace crmd::console {
namespace {

ViewList Scopes(const std::string& scope) {
  ViewList out;
  size_t pos = 0;
  while (pos < scope.size()) {
    size_t sp = scope.find(' ', pos);
    std::string s = scope.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    if (!s.empty()) out.emplace_back(s);
    if (sp == std::string::npos) break;
    pos = sp + 1;
  }
  return out;
}

http::Response AppsPage(const AppsPagesDeps& d, const Person& p, int status,
                        const std::string& notice, const std::string& after) {
  const PageChrome chrome = ChromeFor(p, "apps");
  auto grants = d.apps.grants();
  if (!grants) return InternalError(grants.error(), chrome);
  // Administrators see the registered clients a page at a time: anyone may register one.
  AppClientPage page;
  if (p.is_admin) {
    auto listed = d.apps.clients_page(after, d.clients_per_page);
    if (!listed) return InternalError(listed.error(), chrome);
    page = std::move(*listed);
  }
  auto consents = d.apps.consents();
  if (!consents) return InternalError(consents.error(), chrome);
  // Last activity only of the apps this page shows: an index seek each.
  std::set<std::string> shown;
  for (const auto& c : page.clients) shown.insert(c.client_id);
  for (const auto& g : *grants)
    if (p.is_admin || g.user_email == p.email) shown.insert(g.client_id);
  auto last = d.audit->LastActivityByClient(shown);
  if (!last) return InternalError(last.error(), chrome);
  // Names of the apps behind the grants and consents shown.
  std::map<std::string, std::string> names;
  for (const auto& c : page.clients) names[c.client_id] = c.name;
  std::set<std::string> named = shown;
  for (const auto& c : *consents)
    if (p.is_admin || c.user_email == p.email) named.insert(c.client_id);
  for (const auto& id : named) {
    if (names.count(id)) continue;
    auto found = d.apps.client(id);
    if (!found) return InternalError(found.error(), chrome);
    if (*found) names[id] = (*found)->name;
  }
  ViewList clients;
  for (const auto& c : page.clients) {
    auto seen = last->find(c.client_id);
    clients.emplace_back(
        ViewMap{{"client_id", c.client_id},
                {"name", c.name},
                {"source", c.source},
                {"revoked", c.revoked},
                {"created_at", FormatRfc3339(c.created_at)},
                {"last_activity", seen == last->end() ? std::string("none recorded")
                                                      : FormatRfc3339(seen->second)}});
  }
  ViewList live, ended;
  for (const auto& g : *grants) {
    if (!p.is_admin && g.user_email != p.email) continue;
    auto seen = last->find(g.client_id);
    auto name = names.find(g.client_id);
    ViewMap node{{"grant_id", g.grant_id},
                 {"client_id", g.client_id},
                 {"client_name", name == names.end() ? g.client_id : name->second},
                 {"user_email", g.user_email},
                 {"scopes", Scopes(g.scope)},
                 {"created_at", FormatRfc3339(g.created_at)},
                 {"last_activity", seen == last->end() ? std::string("none recorded")
                                                       : FormatRfc3339(seen->second)}};
    if (g.revoked_at) {
      node.emplace("revoked_at", FormatRfc3339(*g.revoked_at));
      ended.emplace_back(std::move(node));
    } else {
      live.emplace_back(std::move(node));
    }
  }
  ViewList remembered;
  for (const auto& c : *consents) {
    if (!p.is_admin && c.user_email != p.email) continue;
    auto name = names.find(c.client_id);
    remembered.emplace_back(
        ViewMap{{"client_id", c.client_id},
                {"client_name", name == names.end() ? c.client_id : name->second},
                {"user_id", std::to_string(c.user_id)},
                {"user_email", c.user_email},
                {"scopes", Scopes(c.scope)},
                {"created_at", FormatRfc3339(c.created_at)}});
  }
  ViewMap ctx{{"is_admin", p.is_admin},
              {"has_consents", !remembered.empty()},
              {"consents", std::move(remembered)},
              {"csrf_token", p.csrf_token},
              {"has_live", !live.empty()},
              {"live", std::move(live)},
              {"has_ended", !ended.empty()},
              {"ended", std::move(ended)},
              {"has_clients", !clients.empty()},
              {"clients", std::move(clients)},
              {"later_page", !after.empty()}};
  if (page.next) ctx.emplace("next_page", "/console/apps?after=" + http::PercentEncode(*page.next));
  if (!notice.empty()) ctx.emplace("notice", notice);
  return RenderPage(status, "Connected apps", "apps.mustache", ctx, chrome);
}

http::Response PostApps(const AppsPagesDeps& d, const http::Request& req, const Person& p) {
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  const PageChrome chrome = ChromeFor(p, "apps");
  std::string action = http::FormValue(form, "action").value_or("");
  if (action == "revoke_grant") {
    std::string id = http::FormValue(form, "grant_id").value_or("");
    auto grants = d.apps.grants();
    if (!grants) return InternalError(grants.error(), chrome);
    const AppGrant* found = nullptr;
    for (const auto& g : *grants)
      if (g.grant_id == id) found = &g;
    // A person may end only the access they gave; administrators any.
    if (!found || (!p.is_admin && found->user_email != p.email))
      return MessagePage(404, "Not found", "There is no such connection.", chrome, "/console/apps",
                         "Connected apps");
    if (auto st = d.apps.revoke_grant(id); !st) return InternalError(st.error(), chrome);
    spdlog::info(R"("event":"console_grant_revoked","grant_id":"{}","client_id":"{}","by":"{}")",
                 JsonEscape(id), JsonEscape(found->client_id), JsonEscape(p.subject));
    return SeeOther("/console/apps");
  }
  if (action == "revoke_client") {
    if (!p.is_admin)
      return MessagePage(403, "Administrators only", "Only an administrator can revoke an app.",
                         chrome, "/console/apps", "Connected apps");
    std::string id = http::FormValue(form, "client_id").value_or("");
    auto known = d.apps.client(id);
    if (!known) return InternalError(known.error(), chrome);
    if (!*known)
      return MessagePage(404, "Not found", "There is no such app.", chrome, "/console/apps",
                         "Connected apps");
    if (auto st = d.apps.revoke_client(id); !st) return InternalError(st.error(), chrome);
    spdlog::info(R"("event":"console_client_revoked","client_id":"{}","by":"{}")", JsonEscape(id),
                 JsonEscape(p.subject));
    return SeeOther("/console/apps");
  }
  if (action == "revoke_consent") {
    std::string client = http::FormValue(form, "client_id").value_or("");
    std::string user = http::FormValue(form, "user_id").value_or("");
    auto consents = d.apps.consents();
    if (!consents) return InternalError(consents.error(), chrome);
    const AppConsent* found = nullptr;
    for (const auto& c : *consents)
      if (c.client_id == client && std::to_string(c.user_id) == user) found = &c;
    if (!found || (!p.is_admin && found->user_email != p.email))
      return MessagePage(404, "Not found", "There is no such consent.", chrome, "/console/apps",
                         "Connected apps");
    if (auto st = d.apps.revoke_consent(found->client_id, found->user_id); !st)
      return InternalError(st.error(), chrome);
    spdlog::info(R"("event":"console_consent_revoked","client_id":"{}","user_id":{},"by":"{}")",
                 JsonEscape(client), found->user_id, JsonEscape(p.subject));
    return SeeOther("/console/apps");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the Connected apps page.", chrome,
                     "/console/apps", "Connected apps");
}

}  // namespace

ConsoleRoutes AppsRoutes(AppsPagesDeps deps) {
  auto d = std::make_shared<AppsPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/apps", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "apps"))) return *refused;
      if (r.method == "POST") return PostApps(*d, r, p);
      return AppsPage(*d, p, 200, "",
                      http::FormValue(http::ParseForm(r.query), "after").value_or(""));
    });
  });
  return routes;
}

}  // namespace crmd::console
