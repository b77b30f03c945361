#include "src/console/groups_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/console/confirm_flow.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr int kGroupsPerPage = 100;

struct GroupPageKind {
  crm::GroupService* service;
  std::string noun;  // "list" | "tag"
  std::string path;  // "/console/lists"
  std::string title;
};

GroupPageKind GroupPageKindOf(const GroupsPagesDeps& d, bool lists) {
  return lists ? GroupPageKind{d.lists, "list", "/console/lists", "Lists"}
               : GroupPageKind{d.tags, "tag", "/console/tags", "Tags"};
}

std::string GroupNotice(const std::string& done) {
  if (done == "created") return "Created.";
  if (done == "renamed") return "Renamed.";
  if (done == "deleted") return "Deleted.";
  return "";
}

http::Response GroupListPage(const GroupPageKind& k, const Person& p, const FormFields& q,
                             int status, const std::string& error, const FormFields& typed) {
  const PageChrome chrome = ChromeFor(p, "lists");
  auto page = k.service->List("", FieldValue(q, "cursor"), kGroupsPerPage);
  if (!page) return ServiceErrorPage(page.error(), chrome, k.path);
  ViewList rows;
  for (const auto& g : page->items)
    rows.emplace_back(ViewMap{{"id", std::to_string(g.id)},
                              {"name", g.name},
                              {"description", g.description},
                              {"members", std::to_string(g.member_count)},
                              {"public", g.is_public.value_or(false) ? "yes" : "no"},
                              {"revision", std::to_string(g.revision)}});
  ViewMap ctx{{"rows", std::move(rows)},
              {"has_rows", !page->items.empty()},
              {"is_lists", k.noun == "list"},
              {"noun", k.noun},
              {"path", k.path},
              {"new_name", FieldValue(typed, "name")},
              {"new_description", FieldValue(typed, "description")},
              {"can_edit", p.can_edit},
              {"csrf_token", p.csrf_token}};
  if (!error.empty()) ctx.emplace("error", error);
  if (auto notice = GroupNotice(FieldValue(q, "done")); !notice.empty())
    ctx.emplace("notice", notice);
  if (page->next_cursor)
    ctx.emplace("next", k.path + "?cursor=" + http::PercentEncode(*page->next_cursor));
  return RenderPage(status, k.title, "groups.mustache", ctx, chrome);
}

struct GroupDeleteView {
  json reply;  // confirmation_required, or the blocked preview's details
  std::string error, waiting;
  int status = 200;
};

http::Response GroupDeletePage(const GroupPageKind& k, const Person& p, const crm::Group& g,
                               const GroupDeleteView& v) {
  ViewList users;
  for (const auto& u : g.usage.value_or(std::vector<crm::Usage>{}))
    users.emplace_back(ViewMap{{"kind", u.kind},
                               {"name", u.name},
                               {"status", u.status},
                               {"role", u.role},
                               {"blocking", u.blocking}});
  const json preview = v.reply.value("preview", json::object());
  const json approval = v.reply.value("approval", json::object());
  const std::string token = v.reply.value("confirmation_token", "");
  ViewMap ctx{{"path", k.path},
              {"noun", k.noun},
              {"name", g.name},
              {"effect", preview.value("effect", "Deletes the " + k.noun + ".")},
              {"has_users", !users.empty()},
              {"users", std::move(users)},
              {"has_token", !token.empty()},
              {"token", token},
              {"approval_id", approval.value("id", "")},
              {"expires", "This preview can be confirmed until " +
                              v.reply.value("expires_at", std::string("it expires")) + "."},
              {"csrf_token", p.csrf_token}};
  if (!v.error.empty()) ctx.emplace("error", v.error);
  if (!v.waiting.empty()) {
    ctx.emplace("waiting", v.waiting);
    ctx.emplace("approval_url", "/console/approvals/" + approval.value("id", ""));
  }
  return RenderPage(v.status, "Delete the " + k.noun + " " + g.name, "group_delete.mustache", ctx,
                    ChromeFor(p, "lists"));
}

http::Response AskGroupDelete(const GroupsPagesDeps& d, const GroupPageKind& k,
                              const http::Request& req, const Person& p, int64_t id) {
  const PageChrome chrome = ChromeFor(p, "lists");
  auto g = k.service->Get(crm::Ref{id});
  if (!g) return ServiceErrorPage(g.error(), chrome, k.path);
  auto out = d.confirmations->Request(ConsoleActor(p, req), "delete_" + k.noun, json{{"id", id}});
  if (out.result) return GroupDeletePage(k, p, *g, {.reply = *out.result});
  if (out.result.error().code == Errc::kDependencyBlocked)
    return GroupDeletePage(
        k, p, *g,
        {.reply = {{"preview", out.error_details.value("preview", json::object())}},
         .error = out.result.error().message,
         .status = 409});
  return ServiceErrorPage(out.result.error(), chrome, k.path);
}

http::Response ConfirmGroupDelete(const GroupsPagesDeps& d, const GroupPageKind& k,
                                  const http::Request& req, const Person& p, const FormFields& in) {
  const PageChrome chrome = ChromeFor(p, "lists");
  const std::string token = FieldValue(in, "confirmation_token");
  const std::string approval_id = FieldValue(in, "approval_id");
  if (!approval_id.empty()) {
    auto st = ApproveOwnAction(*d.confirmations, req, p, approval_id);
    if (!st && st.error().code == Errc::kPermissionDenied)
      return MessagePage(202, "Waiting for an administrator",
                         "The approval policy needs an administrator to approve this deletion. "
                         "Ask one to approve it, then confirm again from the same page.",
                         chrome, "/console/approvals/" + approval_id, "The approval page");
    if (!st) return ServiceErrorPage(st.error(), chrome, k.path);
  }
  auto out = d.confirmations->Confirm(ConsoleActor(p, req), p.scopes, token);
  if (out.result) return SeeOther(k.path + "?done=deleted");
  const Error& e = out.result.error();
  if (e.code == Errc::kConfirmationInvalid || e.code == Errc::kConfirmationExpired ||
      e.code == Errc::kStalePreview)
    return MessagePage(409, "Not deleted",
                       "The " + k.noun +
                           " changed since the preview, or the preview expired: "
                           "start again from the " +
                           k.noun + "s.",
                       chrome, k.path, k.title);
  if (e.code == Errc::kApprovalDenied)
    return MessagePage(403, "Denied", "An administrator denied this deletion.", chrome, k.path,
                       k.title);
  return ServiceErrorPage(e, chrome, k.path);
}

http::Response PostGroups(const GroupsPagesDeps& d, const GroupPageKind& k,
                          const http::Request& req, const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "lists");
  if (!p.can_edit)
    return MessagePage(403, "Editors only", "Your role lets you read " + k.noun + "s.", chrome,
                       k.path, k.title);
  const std::string action = FieldValue(in, "action");
  const governance::Actor actor = ConsoleActor(p, req);
  if (action == "create") {
    std::optional<bool> is_public;
    if (k.noun == "list") is_public = FieldValue(in, "public") == "yes";
    auto made = k.service->Create(actor, FieldValue(in, "name"), FieldValue(in, "description"), "",
                                  is_public);
    if (made) return SeeOther(k.path + "?done=created");
    auto status = PersonFacingStatus(made.error());
    if (!status) return InternalError(made.error(), chrome);
    return GroupListPage(k, p, {}, *status, made.error().message, in);
  }
  if (action == "confirm") return ConfirmGroupDelete(d, k, req, p, in);
  auto id = IdField(in, "id");
  if (!id) return MessagePage(400, "Bad request", "Use the buttons on the page.", chrome, k.path);
  if (action == "delete") return AskGroupDelete(d, k, req, p, *id);
  if (action == "rename") {
    auto revision = IdField(in, "revision");
    std::optional<std::string> description;
    if (!FieldValue(in, "description").empty()) description = FieldValue(in, "description");
    auto renamed =
        k.service->Update(actor, *id, revision.value_or(0), FieldValue(in, "name"), description);
    if (!renamed) return ServiceErrorPage(renamed.error(), chrome, k.path);
    return SeeOther(k.path + "?done=renamed");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the page.", chrome, k.path, k.title);
}

}  // namespace

ConsoleRoutes GroupsRoutes(GroupsPagesDeps deps) {
  auto d = std::make_shared<GroupsPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  for (bool lists : {true, false}) {
    const std::string path = lists ? "/console/lists" : "/console/tags";
    routes.exact.emplace_back(path, [d, lists](const http::Request& r) {
      return WithPerson(d->people, r, [&](const Person& p) {
        if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "lists")))
          return *refused;
        const GroupPageKind k = GroupPageKindOf(*d, lists);
        if (r.method == "POST") return PostGroups(*d, k, r, p);
        return GroupListPage(k, p, http::ParseForm(r.query), 200, "", {});
      });
    });
  }
  return routes;
}

}  // namespace crmd::console
