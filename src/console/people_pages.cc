#include "src/console/people_pages.h"

#include <memory>

#include "src/core/clock.h"

namespace crmd::console {
namespace {

const std::vector<std::string>& Roles() {
  static const std::vector<std::string> kRoles = {"viewer", "editor", "administrator"};
  return kRoles;
}

ViewList RoleOptions(const std::string& selected) {
  ViewList out;
  for (const auto& r : Roles()) out.emplace_back(ViewMap{{"name", r}, {"selected", r == selected}});
  return out;
}

http::Response PeoplePage(const PeoplePagesDeps& d, const Person& p, int status,
                          const std::string& error, const std::string& email,
                          const std::string& role) {
  const PageChrome chrome = ChromeFor(p, "people");
  auto people = d.people_source.list();
  if (!people) return InternalError(people.error(), chrome);
  ViewList rows;
  for (const auto& person : *people) {
    const bool self = std::to_string(person.id) == p.subject;
    rows.emplace_back(ViewMap{{"id", std::to_string(person.id)},
                              {"email", person.email},
                              {"role", person.role},
                              {"roles", RoleOptions(person.role)},
                              {"disabled", person.disabled},
                              {"status", std::string(person.disabled ? "disabled" : "active")},
                              {"created_at", FormatRfc3339(person.created_at)},
                              {"self", self},
                              {"csrf_token", p.csrf_token}});
  }
  ViewMap ctx{{"people", std::move(rows)},
              {"csrf_token", p.csrf_token},
              {"email", email},
              {"roles", RoleOptions(role.empty() ? "editor" : role)}};
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "People", "people.mustache", ctx, chrome);
}

http::Response Ended(const Person& p, const std::string& done,
                     const std::vector<std::string>& clients) {
  ViewList names;
  for (const auto& c : clients) names.emplace_back(c);
  ViewMap ctx{{"done", done}, {"has_clients", !clients.empty()}, {"clients", std::move(names)}};
  return RenderPage(200, "Done", "person_changed.mustache", ctx, ChromeFor(p, "people"));
}

http::Response ChangeError(const Error& e, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "people");
  switch (e.code) {
    case Errc::kInvalidArgument:
      return MessagePage(400, "Not changed", e.message, chrome, "/console/people", "People");
    case Errc::kInvalidTransition:
      return MessagePage(409, "Not changed", e.message, chrome, "/console/people", "People");
    case Errc::kNotFound:
      return MessagePage(404, "Not found", "There is no such person.", chrome, "/console/people",
                         "People");
    default:
      return InternalError(e, chrome);
  }
}

http::Response PostPeople(const PeoplePagesDeps& d, const http::Request& req, const Person& p) {
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  const PageChrome chrome = ChromeFor(p, "people");
  const std::string action = FieldValue(form, "action");
  if (action == "create") {
    std::string email = FieldValue(form, "email");
    std::string role = FieldValue(form, "role");
    auto created = d.people_source.create(p, email, FieldValue(form, "password"), role);
    if (!created) {
      const Error& e = created.error();
      if (e.code == Errc::kInvalidArgument || e.code == Errc::kAlreadyExists)
        return PeoplePage(d, p, e.code == Errc::kAlreadyExists ? 409 : 400, e.message, email, role);
      return InternalError(e, chrome);
    }
    return SeeOther("/console/people");
  }
  auto id = IdField(form, "id");
  if (!id || (action != "role" && action != "disable" && action != "enable" && action != "delete"))
    return MessagePage(400, "Bad request", "Use the buttons on the People page.", chrome,
                       "/console/people", "People");
  // Not on oneself: an administrator would lock themselves out by a slip of the mouse.
  if (std::to_string(*id) == p.subject && action != "enable")
    return MessagePage(400, "Not changed",
                       "You cannot change your own role, disable or delete yourself here. Ask "
                       "another administrator.",
                       chrome, "/console/people", "People");
  auto ended = d.people_source.change(p, *id, action, FieldValue(form, "role"));
  if (!ended) return ChangeError(ended.error(), p);
  std::string done = action == "role"      ? "The role was changed."
                     : action == "disable" ? "The person is disabled and signed out."
                     : action == "enable"  ? "The person may sign in again."
                                           : "The person is deleted; the audit log keeps their "
                                             "actions.";
  return Ended(p, done, *ended);
}

}  // namespace

ConsoleRoutes PeopleRoutes(PeoplePagesDeps deps) {
  auto d = std::make_shared<PeoplePagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/people", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "people", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "people"))) return *refused;
      if (r.method == "POST") return PostPeople(*d, r, p);
      return PeoplePage(*d, p, 200, "", "", "");
    });
  });
  return routes;
}

}  // namespace crmd::console
