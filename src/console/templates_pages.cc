#include "src/console/templates_pages.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "src/core/clock.h"
#include "src/mail/message.h"

namespace crmd::console {
namespace {

using nlohmann::json;

// What fills the slot in a preview: a campaign's body would be here.
constexpr const char* kSampleBody =
    "<h2>Your message goes here</h2><p>Hello {{first_name | \"there\"}}, the body of a "
    "campaign, a sequence email or an automation email fills this place.</p>";
constexpr const char* kSampleText =
    "Hello {{first_name | \"there\"}}, the body of a campaign, a sequence email or an "
    "automation email fills this place.";

// The preview's own policy: the message's inline styles and https images, nothing else,
// sandboxed even when opened on its own, framed only by the console.
constexpr const char* kPreviewCsp =
    "default-src 'none'; style-src 'unsafe-inline'; img-src https: data:; sandbox; "
    "frame-ancestors 'self'; base-uri 'none'; form-action 'none'";

http::Response TemplatesPage(const TemplatesPagesDeps& d, const Person& p, int status,
                             const std::string& error, const FormFields& in) {
  const PageChrome chrome = ChromeFor(p, "templates");
  ViewList rows;
  std::string cursor;
  do {
    auto page = d.templates->List(cursor, 100);
    if (!page) return InternalError(page.error(), chrome);
    for (const auto& t : page->items)
      rows.emplace_back(ViewMap{{"id", std::to_string(t.id)},
                                {"name", t.name},
                                {"builtin", !t.builtin.empty()},
                                {"revision", std::to_string(t.revision)},
                                {"updated_at", FormatRfc3339(t.updated_at)},
                                {"can_edit", p.can_edit},
                                {"csrf_token", p.csrf_token}});
    cursor = page->next_cursor.value_or("");
  } while (!cursor.empty());
  ViewMap ctx{{"templates", std::move(rows)},
              {"can_edit", p.can_edit},
              {"csrf_token", p.csrf_token},
              {"name", FieldValue(in, "name")},
              {"html", in.empty() ? std::string("<html><body>{{content}}</body></html>")
                                  : FieldValue(in, "html")},
              {"text", FieldValue(in, "text")}};
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "Templates", "email_templates.mustache", ctx, chrome);
}

json TemplateFields(const FormFields& in) {
  return {{"name", FieldValue(in, "name")},
          {"html", FieldValue(in, "html")},
          {"text", FieldValue(in, "text")}};
}

http::Response PostTemplates(const TemplatesPagesDeps& d, const http::Request& req,
                             const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "templates");
  governance::Actor actor{.kind = "user", .subject = p.subject, .request_id = req.request_id};
  std::string action = FieldValue(in, "action");
  if (action == "create") {
    auto made = d.templates->Create(actor, TemplateFields(in));
    if (!made) {
      auto status = PersonFacingStatus(made.error());
      if (!status) return InternalError(made.error(), chrome);
      return TemplatesPage(d, p, *status, made.error().message, in);
    }
    return SeeOther("/console/templates/edit?id=" + std::to_string(made->id));
  }
  if (action == "delete") {
    auto id = IdField(in, "id");
    if (!id) return MessagePage(400, "Bad request", "Use the Delete button.", chrome);
    auto gone = d.templates->Delete(actor, *id);
    if (!gone) return ServiceErrorPage(gone.error(), chrome, "/console/templates");
    return SeeOther("/console/templates");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the Templates page.", chrome,
                     "/console/templates", "Templates");
}

// The contact a preview is for: `email`'s, else the first contact; nullopt when there is
// none (the preview then fills no contact fields).
Result<std::optional<crm::Contact>> PreviewContact(const TemplatesPagesDeps& d,
                                                   const std::string& email) {
  if (!email.empty()) {
    auto c = d.contacts->GetByEmail(email);
    if (!c) return Fail(c.error());
    return std::optional<crm::Contact>(std::move(*c));
  }
  auto page = d.contacts->List(crm::ContactFilter{}, "", 1);
  if (!page) return Fail(page.error());
  if (page->items.empty()) return std::optional<crm::Contact>{};
  return std::optional<crm::Contact>(std::move(page->items.front()));
}

http::Response PreviewAnswer(int status, std::string html) {
  http::Response r = http::Response::Html(status, std::move(html));
  r.Set("Content-Security-Policy", kPreviewCsp);
  r.Set("X-Frame-Options", "SAMEORIGIN");
  r.Set("Referrer-Policy", "no-referrer");
  r.Set("Cache-Control", "no-store");
  return r;
}

// The message `layout` makes of the sample body for the contact, as the preview shows it.
http::Response RenderPreview(const TemplatesPagesDeps& d, const marketing::EmailTemplate& layout,
                             const std::string& email) {
  auto contact = PreviewContact(d, email);
  if (!contact) {
    if (contact.error().code == Errc::kNotFound)
      return PreviewAnswer(404,
                           "<p>No contact has the address " + mail::HtmlEscape(email) + ".</p>");
    return PreviewAnswer(500, "<p>The preview could not be made.</p>");
  }
  marketing::MailContext ctx = *d.mail;
  if (auto doc = d.settings->Get()) marketing::ApplySettings(ctx, doc->document);
  marketing::MailRecipient to;  // contact id 0: its links act for nobody
  if (*contact)
    to = {.email = (*contact)->email,
          .first_name = (*contact)->first_name,
          .last_name = (*contact)->last_name,
          .phone = (*contact)->phone,
          .custom_fields_json = (*contact)->custom_fields.dump()};
  else
    to.email = "someone@example.com";
  marketing::SimpleEmail e{.subject = "Preview",
                           .html_body = kSampleBody,
                           .text_body = kSampleText,
                           .send_id = "preview",
                           .layout = &layout};
  auto m = marketing::BuildSimpleMessage(e, to, ctx);
  if (!m)
    return PreviewAnswer(422, "<p>This template cannot be rendered: " +
                                  mail::HtmlEscape(m.error().message) + "</p>");
  return PreviewAnswer(200, m->html);
}

http::Response Preview(const TemplatesPagesDeps& d, const http::Request& req, const Person& p) {
  if (req.method == "POST") {
    auto in = http::ParseForm(req.body);
    if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
    marketing::EmailTemplate typed{.html = FieldValue(in, "html"), .text = FieldValue(in, "text")};
    if (auto st = marketing::CheckLayoutPart("html", typed.html); !st)
      return PreviewAnswer(422, "<p>" + mail::HtmlEscape(st.error().message) + "</p>");
    return RenderPreview(d, typed, FieldValue(in, "contact"));
  }
  auto q = http::ParseForm(req.query);
  auto id = IdField(q, "id");
  if (!id) return PreviewAnswer(404, "<p>No such template.</p>");
  auto t = d.templates->Get(*id);
  if (!t) return PreviewAnswer(404, "<p>No such template.</p>");
  return RenderPreview(d, *t, FieldValue(q, "contact"));
}

// The editor for `t` (`in`: what was typed, kept after a refusal).
http::Response EditorPage(const TemplatesPagesDeps& d, const Person& p,
                          const marketing::EmailTemplate& t, int status, const std::string& error,
                          const FormFields& in, const std::string& contact) {
  const PageChrome chrome = ChromeFor(p, "templates");
  std::string users;
  if (auto uses = d.templates->Uses(t.id))
    for (const auto& u : *uses) users += (users.empty() ? "" : ", ") + u.kind + " " + u.name;
  ViewMap ctx{{"id", std::to_string(t.id)},
              {"revision", std::to_string(t.revision)},
              {"name", in.empty() ? t.name : FieldValue(in, "name")},
              {"html", in.empty() ? t.html : FieldValue(in, "html")},
              {"text", in.empty() ? t.text : FieldValue(in, "text")},
              {"builtin", !t.builtin.empty()},
              {"contact", contact},
              {"contact_q", http::PercentEncode(contact)},
              {"preview_for", contact.empty() ? std::string("For the first contact of the book.")
                                              : "For " + contact + "."},
              {"users", users},
              {"can_edit", p.can_edit},
              {"csrf_token", p.csrf_token}};
  if (!error.empty()) ctx.emplace("error", error);
  http::Response r =
      RenderPage(status, "Template: " + t.name, "email_template.mustache", ctx, chrome);
  // The console's policy, and the preview frame from this site.
  r.Set("Content-Security-Policy", std::string(kConsoleCsp) + "; frame-src 'self'");
  return r;
}

http::Response Edit(const TemplatesPagesDeps& d, const http::Request& req, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "templates");
  if (req.method == "GET" || req.method == "HEAD") {
    auto q = http::ParseForm(req.query);
    auto id = IdField(q, "id");
    if (!id) return NotFoundPage(chrome);
    auto t = d.templates->Get(*id);
    if (!t) return ServiceErrorPage(t.error(), chrome, "/console/templates");
    return EditorPage(d, p, *t, 200, "", {}, FieldValue(q, "contact"));
  }
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  if (!p.can_edit)
    return MessagePage(403, "Editors only", "Your role lets you read templates, not change them.",
                       chrome, "/console/templates", "Templates");
  auto id = IdField(in, "id");
  auto revision = IdField(in, "revision");
  if (!id || !revision || FieldValue(in, "action") != "save")
    return MessagePage(400, "Bad request", "Use the Save button.", chrome);
  governance::Actor actor{.kind = "user", .subject = p.subject, .request_id = req.request_id};
  auto saved = d.templates->Update(actor, *id, *revision, TemplateFields(in));
  if (saved) return SeeOther("/console/templates/edit?id=" + std::to_string(*id));
  auto status = PersonFacingStatus(saved.error());
  if (!status || *status == 404)
    return ServiceErrorPage(saved.error(), chrome, "/console/templates");
  auto current = d.templates->Get(*id);
  if (!current) return ServiceErrorPage(current.error(), chrome, "/console/templates");
  std::string error = saved.error().code == Errc::kRevisionConflict
                          ? "Someone changed this template since you opened it (it is now at "
                            "revision " +
                                std::to_string(current->revision) +
                                "). Your text is below; copy what you need, reload, and save again."
                          : saved.error().message;
  return EditorPage(d, p, *current, *status, error, in, FieldValue(in, "contact"));
}

}  // namespace

ConsoleRoutes TemplatesRoutes(TemplatesPagesDeps deps) {
  auto d = std::make_shared<TemplatesPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/templates", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "templates")))
        return *refused;
      if (r.method == "POST") {
        if (!p.can_edit)
          return MessagePage(403, "Editors only", "Your role lets you read templates.",
                             ChromeFor(p, "templates"), "/console/templates", "Templates");
        return PostTemplates(*d, r, p);
      }
      return TemplatesPage(*d, p, 200, "", {});
    });
  });
  routes.exact.emplace_back("/console/templates/edit", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "templates")))
        return *refused;
      return Edit(*d, r, p);
    });
  });
  routes.exact.emplace_back("/console/templates/preview", [d](const http::Request& r) {
    return WithPerson(d->people, r, [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "templates")))
        return *refused;
      return Preview(*d, r, p);
    });
  });
  return routes;
}

}  // namespace crmd::console
