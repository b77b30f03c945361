#include "src/console/overview_pages.h"

#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "src/console/approvals.h"
#include "src/console/overview_charts.h"
#include "src/core/clock.h"
#include "src/marketing/common.h"

namespace crmd::console {
namespace {

using nlohmann::json;

// One section of the dashboard as label/value rows (the approval preview's flattening).
ViewList Rows(const json& section) {
  ViewList out;
  json obj = section.is_object() ? section : json{{"value", section}};
  for (const auto& r : PreviewRows(obj)) {
    ViewList items;
    for (const auto& i : r.items) items.emplace_back(i);
    out.emplace_back(ViewMap{{"label", r.label},
                             {"value", r.value},
                             {"has_items", !items.empty()},
                             {"items", std::move(items)}});
  }
  return out;
}

std::string Title(std::string key) {
  for (char& ch : key)
    if (ch == '_') ch = ' ';
  if (!key.empty() && key[0] >= 'a' && key[0] <= 'z') key[0] = static_cast<char>(key[0] - 32);
  return key;
}

http::Response Overview(const OverviewPagesDeps& d, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "overview");
  auto dash = d.reports->Dashboard();
  if (!dash) return InternalError(dash.error(), chrome);
  ViewList sections;
  for (const auto& [key, value] : dash->items()) {
    if (key == "generated_at") continue;
    sections.emplace_back(ViewMap{{"id", key}, {"title", Title(key)}, {"rows", Rows(value)}});
  }
  // get_contacts_report for the 30 days up to the dashboard's day (UTC).
  json report = nullptr;
  if (auto now = marketing::ParseRfc3339(dash->value("generated_at", std::string()))) {
    const int64_t end = *now - *now % 86400 + 86400;
    auto r = d.reports->ContactsReport({.from = end - 30 * 86400, .to = end, .interval = "day"});
    if (!r) return InternalError(r.error(), chrome);
    report = std::move(*r);
  }
  return RenderPage(200, "Overview", "overview.mustache",
                    ViewMap{{"sections", std::move(sections)},
                            {"charts", OverviewCharts(*dash, report)},
                            {"can_export", p.is_admin && d.exporter != nullptr}},
                    chrome);
}

// A tag or list named by its id (digits) or its name.
crm::Ref FilterRef(const std::string& v) {
  if (!v.empty() && v.size() < 18 && v.find_first_not_of("0123456789") == std::string::npos)
    return static_cast<int64_t>(std::stoll(v));
  return v;
}

// The export's filters from the Contacts page's form (status, type, tag, list); an empty
// field filters nothing.
crm::ContactFilter ExportFilter(const http::Request& req) {
  auto q = http::ParseForm(req.query);
  crm::ContactFilter f;
  if (auto v = FieldValue(q, "status"); !v.empty()) f.status = v;
  if (auto v = FieldValue(q, "type"); !v.empty()) f.type = v;
  if (auto v = FieldValue(q, "tag"); !v.empty()) f.tag = FilterRef(v);
  if (auto v = FieldValue(q, "list"); !v.empty()) f.list = FilterRef(v);
  return f;
}

http::Response ContactsCsv(const OverviewPagesDeps& d, const http::Request& req, const Person& p) {
  auto stream = d.exporter->Stream(ExportFilter(req));
  if (!stream)
    return ServiceErrorPage(stream.error(), ChromeFor(p, "contacts"), "/console/contacts");
  http::Response r = http::Response::Text(200, "", "text/csv; charset=utf-8");
  r.stream = std::move(*stream);
  r.Set("Content-Disposition", "attachment; filename=\"contacts.csv\"");
  r.Set("Cache-Control", "no-store");
  return r;
}

std::optional<int64_t> Day(const std::string& date) {
  if (date.size() != 10) return std::nullopt;
  return marketing::ParseRfc3339(date + "T00:00:00Z");
}

http::Response Audit(const OverviewPagesDeps& d, const http::Request& req, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "audit");
  auto q = http::ParseForm(req.query);
  auto text = [&](const char* name) {
    std::string v = http::FormValue(q, name).value_or("");
    return v.size() > 200 ? v.substr(0, 200) : v;
  };
  governance::AuditFilter f{
      .client_id = text("client_id"), .subject = text("subject"), .action = text("action")};
  std::string from = text("from"), to = text("to"), before = text("before");
  std::string error;
  if (!from.empty()) {
    f.from = Day(from);
    if (!f.from) error = "From must be a date (YYYY-MM-DD).";
  }
  if (!to.empty()) {
    auto t = Day(to);
    if (!t)
      error = "To must be a date (YYYY-MM-DD).";
    else
      f.to = *t + 86400;  // the whole day
  }
  if (!before.empty()) {
    try {
      f.before_id = std::stoll(before);
    } catch (...) {
      error = "Bad page link.";
    }
  }
  ViewMap ctx{{"client_id", f.client_id},
              {"subject", f.subject},
              {"action", f.action},
              {"from", from},
              {"to", to}};
  if (!error.empty()) {
    ctx.emplace("error", error);
    ctx.emplace("has_rows", false);
    return RenderPage(400, "Audit log", "audit.mustache", ctx, chrome);
  }
  auto records = d.audit->Find(f);
  if (!records) return InternalError(records.error(), chrome);
  auto link = [&](const std::string& key, const std::string& value) {
    return "/console/audit?" + key + "=" + http::PercentEncode(value);
  };
  ViewList rows;
  std::map<std::string, std::string> labels;  // one lookup per person on the page
  for (const auto& r : *records) {
    std::string label;
    if (d.person_label) {
      const std::string key = r.actor.kind + "/" + r.actor.subject;
      auto it = labels.find(key);
      if (it == labels.end())
        it = labels.emplace(key, d.person_label(r.actor.kind, r.actor.subject)).first;
      label = it->second;
    }
    // A contact's id links to its page (contact_pages.h).
    ViewList targets;
    const bool contact = r.entry.target_type == "contact";
    for (size_t i = 0; i < r.entry.target_ids.size(); ++i) {
      const std::string id = std::to_string(r.entry.target_ids[i]);
      ViewMap t{{"id", id}, {"comma", i + 1 < r.entry.target_ids.size()}};
      if (contact) t.emplace("href", "/console/contacts/" + id);
      targets.emplace_back(std::move(t));
    }
    std::string details =
        r.entry.details.is_object() && !r.entry.details.empty() ? r.entry.details.dump() : "";
    if (details.size() > 300) details = details.substr(0, 300) + "…";
    ViewMap row{{"id", std::to_string(r.id)},
                {"occurred_at", FormatRfc3339(r.occurred_at)},
                {"actor_kind", r.actor.kind},
                {"subject", r.actor.subject},
                {"has_subject", !r.actor.subject.empty()},
                {"has_label", !label.empty()},
                {"subject_label", label},
                {"has_client", !r.actor.client_id.empty()},
                {"subject_link", link("subject", r.actor.subject)},
                {"client_id", r.actor.client_id},
                {"client_link", link("client_id", r.actor.client_id)},
                {"action", r.entry.action},
                {"action_link", link("action", r.entry.action)},
                {"target_type", r.entry.target_type},
                {"targets", std::move(targets)},
                {"details", details}};
    rows.emplace_back(std::move(row));
  }
  if (static_cast<int>(records->size()) == f.limit) {
    std::string next = "/console/audit?before=" + std::to_string(records->back().id);
    for (const char* k : {"client_id", "subject", "action", "from", "to"}) {
      std::string v = text(k);
      if (!v.empty()) next += std::string("&") + k + "=" + http::PercentEncode(v);
    }
    ctx.emplace("older", next);
  }
  ctx.emplace("has_rows", !records->empty());
  ctx.emplace("rows", std::move(rows));
  return RenderPage(200, "Audit log", "audit.mustache", ctx, chrome);
}

}  // namespace

ConsoleRoutes OverviewRoutes(OverviewPagesDeps deps) {
  auto d = std::make_shared<OverviewPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  auto overview = [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "overview"))) return *refused;
      return Overview(*d, p);
    });
  };
  routes.exact.emplace_back("/console", overview);
  routes.exact.emplace_back("/console/", overview);
  if (d->exporter)
    routes.exact.emplace_back("/console/contacts.csv", [d](const http::Request& r) {
      return WithAdmin(d->people, r, "overview", [&](const Person& p) {
        if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "overview"))) return *refused;
        return ContactsCsv(*d, r, p);
      });
    });
  routes.exact.emplace_back("/console/audit", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "audit", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "audit"))) return *refused;
      return Audit(*d, r, p);
    });
  });
  return routes;
}

}  // namespace crmd::console
