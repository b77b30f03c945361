#include "src/console/suppressions_pages.h"

#include <memory>

#include "src/core/clock.h"

namespace crmd::console {
namespace {

constexpr const char* kSuppressionsPath = "/console/suppressions";

struct SuppressionsQuery {
  std::string email, reason, cursor;
};

ViewMap SuppressionNode(const crm::Suppression& s, const std::string& email) {
  std::string shown = s.is_domain() ? "@" + s.domain : email;
  return ViewMap{{"id", std::to_string(s.id)},
                 {"kind", std::string(s.is_domain() ? "domain" : "address")},
                 {"value", shown},
                 {"hashed", !s.is_domain() && email.empty()},
                 {"reason", s.reason},
                 {"source", s.source},
                 {"created_at", FormatRfc3339(s.created_at)}};
}

ViewList ReasonOptions(const std::string& chosen, bool with_any) {
  ViewList out;
  if (with_any)
    out.emplace_back(
        ViewMap{{"reason", std::string()}, {"label", "(any)"}, {"selected", chosen.empty()}});
  for (const char* r : crm::kSuppressionReasons)
    out.emplace_back(ViewMap{{"reason", std::string(r)},
                             {"label", std::string(r)},
                             {"selected", chosen == r || (!with_any && chosen.empty() &&
                                                          std::string_view(r) == "manual")}});
  return out;
}

http::Response SuppressionsPage(const SuppressionsPagesDeps& d, const Person& p,
                                const SuppressionsQuery& q, int status = 200,
                                const std::string& error = "", const std::string& value = "",
                                const std::string& reason = "") {
  const PageChrome chrome = ChromeFor(p, "suppressions");
  ViewList rows;
  std::string next;
  if (!q.email.empty()) {
    auto hit = d.suppressions->Check(q.email);
    if (!hit) return ServiceErrorPage(hit.error(), chrome, kSuppressionsPath);
    if (*hit) rows.emplace_back(SuppressionNode(**hit, (*hit)->is_domain() ? "" : q.email));
  } else {
    crm::SuppressionFilter filter;
    if (!q.reason.empty()) filter.reason = q.reason;
    auto page = d.suppressions->List(filter, q.cursor, 100);
    if (!page) return ServiceErrorPage(page.error(), chrome, kSuppressionsPath);
    for (const auto& s : page->items) rows.emplace_back(SuppressionNode(s.entry, s.email));
    if (page->next_cursor)
      next = std::string(kSuppressionsPath) + "?cursor=" + http::PercentEncode(*page->next_cursor) +
             (q.reason.empty() ? "" : "&reason=" + http::PercentEncode(q.reason));
  }
  ViewMap ctx{{"rows", std::move(rows)},
              {"csrf_token", p.csrf_token},
              {"email", q.email},
              {"looked_up", !q.email.empty()},
              {"filter_reasons", ReasonOptions(q.reason, true)},
              {"add_reasons", ReasonOptions(reason, false)},
              {"value", value}};
  ctx.emplace("has_rows", !std::get<ViewList>(ctx.at("rows").value()).empty());
  if (!next.empty()) ctx.emplace("next", next);
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "Suppressions", "suppressions.mustache", ctx, chrome);
}

http::Response PostSuppressions(const SuppressionsPagesDeps& d, const http::Request& req,
                                const Person& p) {
  auto form = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, form)) return *refused;
  const PageChrome chrome = ChromeFor(p, "suppressions");
  const governance::Actor actor{.kind = "user", .subject = p.subject, .request_id = req.request_id};
  const std::string action = FieldValue(form, "action");
  if (action == "add") {
    const std::string value = FieldValue(form, "value"), reason = FieldValue(form, "reason");
    auto added = d.suppressions->Add(
        actor, crm::SuppressionInputFromText(value, reason.empty() ? "manual" : reason,
                                             "console:" + p.subject));
    if (!added) {
      auto status = PersonFacingStatus(added.error());
      if (!status) return InternalError(added.error(), chrome);
      return SuppressionsPage(d, p, {}, *status, added.error().message, value, reason);
    }
    if (added->entry.is_domain()) return SeeOther(kSuppressionsPath);
    return SeeOther(std::string(kSuppressionsPath) + "?email=" + http::PercentEncode(value));
  }
  const std::string id_text = FieldValue(form, "id");
  if (action != "remove" || id_text.empty() || id_text.size() > 18 ||
      id_text.find_first_not_of("0123456789") != std::string::npos)
    return MessagePage(400, "Bad request", "Use the buttons on the Suppressions page.", chrome,
                       kSuppressionsPath, "Suppressions");
  auto removed = d.suppressions->Remove(actor, std::stoll(id_text));
  if (!removed) return ServiceErrorPage(removed.error(), chrome, kSuppressionsPath);
  return SeeOther(kSuppressionsPath);
}

}  // namespace

ConsoleRoutes SuppressionsRoutes(SuppressionsPagesDeps deps) {
  auto d = std::make_shared<SuppressionsPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back(kSuppressionsPath, [d](const http::Request& r) {
    return WithAdmin(d->people, r, "suppressions", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "suppressions")))
        return *refused;
      if (r.method == "POST") return PostSuppressions(*d, r, p);
      auto q = http::ParseForm(r.query);
      return SuppressionsPage(*d, p,
                              {.email = FieldValue(q, "email"),
                               .reason = FieldValue(q, "reason"),
                               .cursor = FieldValue(q, "cursor")});
    });
  });
  return routes;
}

}  // namespace crmd::console
