#include "src/console/contact_pages.h"

#include <charconv>
#include <memory>

#include "src/console/contact_changes.h"
#include "src/core/clock.h"
#include "src/crm/contact_status.h"
#include "src/marketing/common.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr const char* kContactsPath = "/console/contacts";
constexpr int kContactsPerPage = 50;
constexpr int kTimelinePerPage = 50;

std::string Str(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return "";
  const json& v = j[key];
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "";
  return v.dump();
}

// The search form's filters: q (prefix), status, list, tag (id or name), source, created
// from/to (YYYY-MM-DD, UTC, `to` inclusive). What was asked is kept for the page links.
struct ContactSearch {
  crm::ContactFilter filter;
  std::vector<std::pair<std::string, std::string>> asked;  // the non-empty fields
  std::string error;
};

std::optional<int64_t> SearchDay(const std::string& date) {
  if (date.size() != 10) return std::nullopt;
  return marketing::ParseRfc3339(date + "T00:00:00Z");
}

ContactSearch ReadSearch(const FormFields& q) {
  ContactSearch s;
  for (const char* name : {"q", "status", "list", "tag", "source", "from", "to"}) {
    std::string v = FieldValue(q, name);
    if (v.size() > 320) v.resize(320);
    if (!v.empty()) s.asked.emplace_back(name, v);
  }
  for (const auto& [name, v] : s.asked) {
    if (name == "q") s.filter.query = v;
    if (name == "status") {
      if (!crm::IsValidStatus(v)) s.error = "Choose a status from the list.";
      s.filter.status = v;
    }
    if (name == "list") s.filter.list = GroupRef(v);
    if (name == "tag") s.filter.tag = GroupRef(v);
    if (name == "source") s.filter.source = v;
    if (name == "from" || name == "to") {
      auto day = SearchDay(v);
      if (!day)
        s.error = "Created dates are YYYY-MM-DD.";
      else if (name == "from")
        s.filter.created_from = *day;
      else
        s.filter.created_to = *day + 86400;  // the whole day
    }
  }
  return s;
}

ViewList StatusChoices(const std::string& current) {
  ViewList out{ViewMap{{"value", ""}, {"label", "Any"}, {"selected", current.empty()}}};
  for (const char* st : crm::kStatuses)
    out.emplace_back(ViewMap{{"value", st}, {"label", st}, {"selected", current == st}});
  return out;
}

ViewMap SearchView(const ContactSearch& s) {
  ViewMap ctx;
  for (const char* name : {"q", "status", "list", "tag", "source", "from", "to"})
    ctx.emplace(name, std::string());
  for (const auto& [name, v] : s.asked) ctx.insert_or_assign(name, View(v));
  const auto& st = ctx.at("status").value();
  ctx.emplace("statuses", StatusChoices(std::get<std::string>(st)));
  ctx.emplace("filtered", !s.asked.empty());
  return ctx;
}

http::Response ContactSearchPage(const ContactPagesDeps& d, const Person& p,
                                 const http::Request& req) {
  const PageChrome chrome = ChromeFor(p, "contacts");
  auto q = http::ParseForm(req.query);
  const std::string query = FieldValue(q, "q");
  ContactSearch search = ReadSearch(q);
  if (query.find('@') != std::string::npos && search.asked.size() == 1) {
    // An address a contact has: straight to its page.
    if (auto k = d.contacts->GetByEmail(query))
      return SeeOther(std::string(kContactsPath) + "/" + std::to_string(k->id));
  }
  ViewMap ctx = SearchView(search);
  if (!search.error.empty()) {
    ctx.emplace("error", search.error);
    ctx.emplace("has_rows", false);
    return RenderPage(400, "Contacts", "contacts.mustache", ctx, chrome);
  }
  auto page = d.contacts->List(search.filter, FieldValue(q, "cursor"), kContactsPerPage);
  if (!page) {
    auto status = PersonFacingStatus(page.error());
    if (!status) return InternalError(page.error(), chrome);
    ctx.emplace("error", page.error().message);  // an unknown list or tag
    ctx.emplace("has_rows", false);
    return RenderPage(*status, "Contacts", "contacts.mustache", ctx, chrome);
  }
  ViewList rows;
  for (const auto& k : page->items)
    rows.emplace_back(
        ViewMap{{"href", std::string(kContactsPath) + "/" + std::to_string(k.id)},
                {"email", k.email},
                {"name", k.first_name + (k.last_name.empty() ? "" : " ") + k.last_name},
                {"status", k.status},
                {"source", k.source},
                {"created_at", FormatRfc3339(k.created_at)}});
  ctx.emplace("has_rows", !rows.empty());
  ctx.emplace("rows", std::move(rows));
  if (page->next_cursor) {
    std::string next =
        std::string(kContactsPath) + "?cursor=" + http::PercentEncode(*page->next_cursor);
    for (const auto& [name, v] : search.asked) next += "&" + name + "=" + http::PercentEncode(v);
    ctx.emplace("next", next);
  }
  return RenderPage(200, "Contacts", "contacts.mustache", ctx, chrome);
}

// One line saying what a timeline entry is (the page shows the JSON's facts, escaped).
std::string Summary(const json& it) {
  const std::string kind = Str(it, "kind");
  if (kind == "event") {
    const json& data = it.value("data", json::object());
    std::string s = Str(it, "event");
    if (data.is_object() && data.contains("from") && data.contains("to"))
      s += ": " + Str(data, "from") + " → " + Str(data, "to");
    for (const char* group : {"list", "tag"})
      if (data.is_object() && data.contains(group) && data[group].is_object())
        s += std::string(" ") + group + " " + Str(data[group], "name");
    if (data.is_object() && data.contains("reason")) s += " (" + Str(data, "reason") + ")";
    return s;
  }
  if (kind == "audit") {
    const json& by = it.value("by", json::object());
    return Str(it, "action") + " by " + Str(by, "face") +
           (Str(by, "subject").empty() ? "" : " " + Str(by, "subject")) +
           (Str(by, "client_id").empty() ? "" : " via " + Str(by, "client_id"));
  }
  if (kind == "message") {
    std::string what = Str(it, "source") == "campaign"
                           ? "campaign " + Str(it, "campaign_name")
                           : std::string("double opt-in confirmation email");
    std::string s = what + ": " + Str(it, "status");
    if (!Str(it, "reason").empty()) s += " (" + Str(it, "reason") + ")";
    if (!Str(it, "message_id").empty()) s += ", Message-ID " + Str(it, "message_id");
    return s;
  }
  if (kind == "open" || kind == "click")
    return std::string(kind == "open" ? "opened" : "clicked in") + " campaign " +
           Str(it, "campaign_name");
  return kind + " " + Str(it, "name") + ": " + Str(it, "status");
}

ViewList Memberships(const json& doc) {
  ViewList lists;
  for (const auto& l : doc["lists"])
    lists.emplace_back(ViewMap{{"id", Str(l, "id")},
                               {"name", Str(l, "name")},
                               {"state", Str(l, "state")},
                               {"since", Str(l, "since")}});
  return lists;
}

ViewMap ProfileView(const json& doc) {
  const json& k = doc["contact"];
  ViewList fields, tags;
  for (const auto& [key, value] : k["custom_fields"].items())
    fields.emplace_back(ViewMap{
        {"key", key}, {"value", value.is_string() ? value.get<std::string>() : value.dump()}});
  for (const auto& t : doc["tags"])
    tags.emplace_back(ViewMap{{"id", Str(t, "id")}, {"name", Str(t, "name")}});
  const json& s = doc["suppression"];
  const json& optin = doc["consent"]["double_opt_in"];
  ViewMap v{{"id", std::to_string(k.value("id", int64_t{0}))},
            {"email", Str(k, "email")},
            {"first_name", Str(k, "first_name")},
            {"last_name", Str(k, "last_name")},
            {"phone", Str(k, "phone")},
            {"status", Str(k, "status")},
            {"type", Str(k, "type")},
            {"source", Str(k, "source")},
            {"created_at", Str(k, "created_at")},
            {"updated_at", Str(k, "updated_at")},
            {"fields", std::move(fields)},
            {"has_fields", !k["custom_fields"].empty()},
            {"lists", Memberships(doc)},
            {"has_lists", !doc["lists"].empty()},
            {"tags", std::move(tags)},
            {"has_tags", !doc["tags"].empty()},
            {"suppressed", s.is_object()},
            {"confirmed_at", optin.is_object() ? Str(optin, "confirmed_at") : std::string()}};
  v.emplace("has_confirmed", !std::get<std::string>(v.at("confirmed_at").value()).empty());
  if (s.is_object()) {
    v.emplace("suppression_reason", Str(s, "reason"));
    v.emplace("suppression_source", Str(s, "source"));
    v.emplace("suppression_since", Str(s, "created_at"));
  }
  return v;
}

std::string ChangeNotice(const std::string& done) {
  if (done == "status") return "Status changed.";
  if (done == "list_added") return "Added to the list.";
  if (done == "list_removed") return "Removed from the list.";
  if (done == "tag_added") return "Tag added.";
  if (done == "tag_removed") return "Tag removed.";
  return "";
}

// The forms that change the contact (contact_changes.h): the statuses the state machine
// allows from the current one (with recorded consent where it asks for it), and the
// list and tag buttons.
void AddChangeForms(ViewMap& ctx, const Person& p, const json& doc, const std::string& done) {
  const json& k = doc["contact"];
  const std::string status = Str(k, "status");
  ViewList targets;
  for (const std::string& t : crm::AllowedTargets(status, true))
    if (t != status) targets.emplace_back(ViewMap{{"value", t}});
  ctx.emplace("targets", std::move(targets));
  ctx.emplace("has_targets", !crm::AllowedTargets(status, true).empty());
  ctx.emplace("revision", std::to_string(k.value("revision", int64_t{0})));
  ctx.emplace("contact_id", std::to_string(k.value("id", int64_t{0})));
  ctx.emplace("csrf_token", p.csrf_token);
  if (auto notice = ChangeNotice(done); !notice.empty()) ctx.emplace("notice", notice);
}

std::optional<int64_t> PathId(const std::string& segment) {
  int64_t id = 0;
  if (segment.empty() || segment.size() > 18) return std::nullopt;
  auto [end, ec] = std::from_chars(segment.data(), segment.data() + segment.size(), id);
  if (ec != std::errc() || end != segment.data() + segment.size() || id <= 0) return std::nullopt;
  return id;
}

http::Response ContactPage(const ContactPagesDeps& d, const Person& p, int64_t id,
                           const http::Request& req) {
  const PageChrome chrome = ChromeFor(p, "contacts");
  auto doc = d.history->Export(id);
  if (!doc) return ServiceErrorPage(doc.error(), chrome, kContactsPath);
  const std::string cursor = FieldValue(http::ParseForm(req.query), "cursor");
  auto page = d.history->Timeline(id, cursor, kTimelinePerPage);
  if (!page) return ServiceErrorPage(page.error(), chrome, kContactsPath);
  ViewList timeline;
  for (const auto& it : page->items)
    timeline.emplace_back(
        ViewMap{{"at", Str(it, "at")}, {"kind", Str(it, "kind")}, {"summary", Summary(it)}});
  const std::string self = std::string(kContactsPath) + "/" + std::to_string(id);
  ViewMap ctx = ProfileView(*doc);
  AddChangeForms(ctx, p, *doc, FieldValue(http::ParseForm(req.query), "done"));
  ctx.emplace("timeline", std::move(timeline));
  ctx.emplace("has_timeline", !page->items.empty());
  ctx.emplace("export_href", self + "/export.json");
  if (page->next_cursor)
    ctx.emplace("older", self + "?cursor=" + http::PercentEncode(*page->next_cursor));
  return RenderPage(200, "Contact " + Str((*doc)["contact"], "email"), "contact.mustache", ctx,
                    chrome);
}

http::Response ContactExportFile(const ContactPagesDeps& d, const Person& p, int64_t id) {
  auto doc = d.history->Export(id);
  if (!doc) return ServiceErrorPage(doc.error(), ChromeFor(p, "contacts"), kContactsPath);
  http::Response r = http::Response::Text(200, doc->dump(2) + "\n", "application/json");
  r.Set("Content-Disposition", "attachment; filename=\"contact-" + std::to_string(id) + ".json\"");
  r.Set("Cache-Control", "no-store");
  return r;
}

// /console/contacts/<id> and /console/contacts/<id>/export.json; anything else is 404.
http::Response ContactPath(const ContactPagesDeps& d, const Person& p, const http::Request& r) {
  std::string rest = r.path.substr(std::string(kContactsPath).size() + 1);
  bool file = false;
  if (size_t slash = rest.find('/'); slash != std::string::npos) {
    if (rest.substr(slash) != "/export.json") return NotFoundPage(ChromeFor(p, "contacts"));
    file = true;
    rest.resize(slash);
  }
  auto id = PathId(rest);
  if (!id) return NotFoundPage(ChromeFor(p, "contacts"));
  if (r.method == "POST") {
    if (file) return NotFoundPage(ChromeFor(p, "contacts"));
    return PostContactChange(*d.contacts, d.people, p, *id, r);
  }
  return file ? ContactExportFile(d, p, *id) : ContactPage(d, p, *id, r);
}

}  // namespace

ConsoleRoutes ContactRoutes(ContactPagesDeps deps) {
  auto d = std::make_shared<ContactPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back(kContactsPath, [d](const http::Request& r) {
    return WithAdmin(d->people, r, "contacts", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "contacts"))) return *refused;
      return ContactSearchPage(*d, p, r);
    });
  });
  routes.prefix.emplace_back(std::string(kContactsPath) + "/", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "contacts", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "contacts")))
        return *refused;
      return ContactPath(*d, p, r);
    });
  });
  return routes;
}

}  // namespace crmd::console
