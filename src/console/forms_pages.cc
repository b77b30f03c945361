#include "src/console/forms_pages.h"

#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "src/console/form_builder.h"
#include "src/core/clock.h"
#include "src/crm/forms.h"
#include "src/mail/merge.h"
#include "src/mail/message.h"

namespace crmd::console {
namespace {

using nlohmann::json;

constexpr const char* kStatuses[] = {"", "pending", "subscribed", "unsubscribed"};

// The builder's inputs as the definition FormService checks; `error` set when the display
// rules are not JSON.
json Definition(const FormFields& in, std::string* error, std::vector<int>* row_of = nullptr) {
  json fields = BuilderFieldsJson(ReadBuilderRows(in), row_of);
  json applies = json::object();
  if (!FieldValue(in, "applies_status").empty())
    applies["status"] = FieldValue(in, "applies_status");
  if (!FieldValue(in, "applies_type").empty()) applies["type"] = FieldValue(in, "applies_type");
  if (auto tags = SplitList(FieldValue(in, "applies_tags"), ",\n"); !tags.empty())
    applies["tags"] = tags;
  if (auto lists = SplitList(FieldValue(in, "applies_lists"), ",\n"); !lists.empty())
    applies["lists"] = lists;
  json def{{"name", FieldValue(in, "name")},
           {"fields", std::move(fields)},
           {"applies", std::move(applies)},
           {"require_key", FieldValue(in, "require_key") == "on"},
           {"allowed_origins", SplitList(FieldValue(in, "allowed_origins"), ",\n")}};
  if (!FieldValue(in, "honeypot_field").empty())
    def["honeypot_field"] = FieldValue(in, "honeypot_field");
  std::string rules = FieldValue(in, "display_rules");
  if (rules.find_first_not_of(" \t\r\n") != std::string::npos) {
    auto parsed = json::parse(rules, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
      *error = "Display rules must be a JSON object.";
    else
      def["display_rules"] = parsed;
  }
  return def;
}

ViewMap BuilderNode(const FormFields& in, const std::vector<BuilderRow>& rows,
                    const std::map<int, std::string>& row_errors) {
  ViewList rows_view = BuilderRowsView(rows, row_errors);
  ViewList statuses;
  for (const char* s : kStatuses)
    statuses.emplace_back(ViewMap{{"status", std::string(s)},
                                  {"label", std::string(*s ? s : "(leave as it is)")},
                                  {"selected", FieldValue(in, "applies_status") == s}});
  return ViewMap{{"rows", std::move(rows_view)},
                 {"field_count", std::to_string(rows.size())},
                 {"preview", FormPreviewHtml(BuilderFieldsJson(rows, nullptr))},
                 {"statuses", std::move(statuses)},
                 {"form_name", FieldValue(in, "name")},
                 {"applies_type", FieldValue(in, "applies_type")},
                 {"applies_tags", FieldValue(in, "applies_tags")},
                 {"applies_lists", FieldValue(in, "applies_lists")},
                 {"display_rules", FieldValue(in, "display_rules")},
                 {"allowed_origins", FieldValue(in, "allowed_origins")},
                 {"honeypot_field", FieldValue(in, "honeypot_field")},
                 {"require_key", FieldValue(in, "require_key") == "on"}};
}

http::Response FormsPage(const FormsPagesDeps& d, const Person& p, int status,
                         const std::string& error, const FormFields& in,
                         std::optional<std::vector<BuilderRow>> rows = std::nullopt,
                         const std::map<int, std::string>& row_errors = {}) {
  const PageChrome chrome = ChromeFor(p, "forms");
  auto forms = d.forms->List();
  if (!forms) return InternalError(forms.error(), chrome);
  ViewList list;
  for (const auto& f : *forms)
    list.emplace_back(ViewMap{{"id", std::to_string(f.id)},
                              {"name", f.name},
                              {"fields", std::to_string(f.fields.size())},
                              {"generated", std::to_string(f.generated_contacts)},
                              {"public", !f.require_key},
                              {"updated_at", FormatRfc3339(f.updated_at)}});
  ViewMap ctx = BuilderNode(in, rows ? *rows : ReadBuilderRows(in), row_errors);
  ctx.emplace("forms", std::move(list));
  ctx.emplace("has_forms", !forms->empty());
  ctx.emplace("csrf_token", p.csrf_token);
  if (!error.empty()) ctx.emplace("error", error);
  return RenderPage(status, "Forms", "forms.mustache", ctx, chrome);
}

std::optional<int64_t> Id(const std::string& v) {
  if (v.empty() || v.size() > 18 || v.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  int64_t id = std::stoll(v);
  return id > 0 ? std::optional<int64_t>(id) : std::nullopt;
}

// The definition's field errors beside their rows (crm::FormService::CheckDefinition, the
// rules Create applies); nullopt when there are none.
std::optional<http::Response> FieldErrorsPage(const FormsPagesDeps& d, const Person& p,
                                              const FormFields& in, const json& def,
                                              const std::vector<int>& row_of) {
  auto errors = crm::FormService::CheckDefinition(def, false);
  if (errors.empty()) return std::nullopt;
  std::map<int, std::string> by_row;
  std::string summary;
  for (const auto& e : errors) {
    size_t k = 0;
    if (std::sscanf(e.field.c_str(), "fields[%zu]", &k) == 1 && k < row_of.size()) {
      std::string& m = by_row[row_of[k]];
      m += (m.empty() ? "" : "; ") + e.message;
    }
    summary += (summary.empty() ? "" : "; ") + e.field + ": " + e.message;
  }
  return FormsPage(d, p, 400, "Not created: " + summary, in, std::nullopt, by_row);
}

http::Response PostForms(const FormsPagesDeps& d, const http::Request& req, const Person& p) {
  auto in = http::ParseForm(req.body);
  if (auto refused = RefuseForgedPost(d.people, req, p, in)) return *refused;
  const PageChrome chrome = ChromeFor(p, "forms");
  std::string action = FieldValue(in, "action");
  if (const std::string button = FieldValue(in, "builder"); !button.empty()) {
    std::vector<BuilderRow> rows = ReadBuilderRows(in);
    std::string error;
    if (!ApplyBuilderButton(button, rows, &error))
      return FormsPage(d, p, 400, "Use the builder's buttons.", in);
    return FormsPage(d, p, error.empty() ? 200 : 400, error, in, rows);
  }
  if (action == "create") {
    std::string error;
    std::vector<int> row_of;
    json def = Definition(in, &error, &row_of);
    if (!error.empty()) return FormsPage(d, p, 400, error, in);
    if (auto refused = FieldErrorsPage(d, p, in, def, row_of)) return *refused;
    auto made = d.forms->Create(def);
    if (!made) {
      auto status = PersonFacingStatus(made.error());
      if (!status) return InternalError(made.error(), chrome);
      return FormsPage(d, p, *status, made.error().message, in);
    }
    return SeeOther("/console/forms/view?id=" + std::to_string(made->id));
  }
  if (action == "delete") {
    auto id = Id(FieldValue(in, "id"));
    if (!id) return MessagePage(400, "Bad request", "Use the Delete button.", chrome);
    if (auto st = d.forms->Delete(*id); !st) return ServiceErrorPage(st.error(), chrome);
    return SeeOther("/console/forms");
  }
  return MessagePage(400, "Bad request", "Use the buttons on the Forms page.", chrome,
                     "/console/forms", "Forms");
}

http::Response ViewForm(const FormsPagesDeps& d, const http::Request& req, const Person& p) {
  const PageChrome chrome = ChromeFor(p, "forms");
  auto id = Id(FieldValue(http::ParseForm(req.query), "id"));
  if (!id) return NotFoundPage(chrome);
  auto f = d.forms->Get(*id);
  if (!f) return ServiceErrorPage(f.error(), chrome);
  std::string submit_url = d.rest_base_url + "/form/submit/" + f->public_id;
  ViewList fields;
  for (const auto& x : f->fields) {
    std::string options;
    for (const auto& o : x.options) options += (options.empty() ? "" : ", ") + o;
    fields.emplace_back(ViewMap{{"name", x.name},
                                {"type", x.type},
                                {"label", x.label},
                                {"required", x.required},
                                {"options", options}});
  }
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  ViewMap ctx{{"id", std::to_string(f->id)},
              {"fields", std::move(fields)},
              {"generated", std::to_string(f->generated_contacts)},
              {"status", f->applies.status.value_or("(unchanged)")},
              {"type", f->applies.type.value_or("(unchanged)")},
              {"tags", join(f->applies.tags)},
              {"lists", join(f->applies.lists)},
              {"origins", join(f->allowed_origins)},
              {"require_key", f->require_key},
              {"display_rules", f->display_rules.dump(2)},
              {"submit_url", submit_url},
              {"embed", EmbedCode(*f, submit_url)},
              {"csrf_token", p.csrf_token}};
  return RenderPage(200, "Form: " + f->name, "form.mustache", ctx, chrome);
}

// The embed snippet's script: collects the fields (arrays for List and multi-option
// Checkbox fields, a boolean for a lone checkbox, nothing for empty values) and posts them
// as JSON; shows the outcome in the form's status line.
constexpr const char* kEmbedScript = R"JS(<script>
document.querySelectorAll("form[data-crmd-form]").forEach(function (form) {
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var fields = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      if (!el.name) return;
      var kind = el.getAttribute("data-crmd-kind");
      if (kind === "array") { fields[el.name] = fields[el.name] || []; if (el.checked) fields[el.name].push(el.value); return; }
      if (kind === "bool") { if (el.checked) fields[el.name] = true; return; }
      if (el.type === "radio" && !el.checked) return;
      if (el.value !== "") fields[el.name] = el.value;
    });
    var status = form.querySelector("[data-crmd-status]");
    fetch(form.action, { method: "POST", headers: { "Content-Type": "application/json" },
                         body: JSON.stringify({ fields: fields }) })
      .then(function (r) { status.textContent = r.ok ? "Thank you!" : "Sorry, please check the form and try again."; })
      .catch(function () { status.textContent = "Sorry, that did not work. Try again later."; });
  });
});
</script>
)JS";

}  // namespace

std::string EmbedCode(const crm::Form& form, const std::string& submit_url) {
  auto e = [](std::string_view s) { return mail::HtmlEscape(s); };
  std::string html = "<form data-crmd-form action=\"" + e(submit_url) + "\" method=\"post\">\n";
  int n = 0;
  for (const auto& f : form.fields) {
    std::string id = "crmd-" + form.public_id + "-" + std::to_string(n++);
    std::string label = e(f.label.empty() ? f.name : f.label);
    std::string req = f.required ? " required" : "";
    const std::string& t = f.type;
    if (t == "Heading") {
      html += "  <h3>" + label + "</h3>\n";
    } else if (t == "Paragraph") {
      html += "  <p>" + label + "</p>\n";
    } else if ((t == "Image" || t == "Link") && !mail::IsSafeLinkUrl(f.label)) {
      // a form saved before Link and Image took only http(s) URLs: nothing to embed
    } else if (t == "Image") {
      html += "  <img src=\"" + e(f.label) + "\" alt=\"\">\n";
    } else if (t == "Link") {
      html += "  <p><a href=\"" + e(f.label) + "\">" + e(f.label) + "</a></p>\n";
    } else if (t == "Textarea") {
      html += "  <p><label for=\"" + id + "\">" + label + "</label><br><textarea id=\"" + id +
              "\" name=\"" + e(f.name) + "\"" + req + "></textarea></p>\n";
    } else if (t == "Dropdown") {
      html += "  <p><label for=\"" + id + "\">" + label + "</label><br><select id=\"" + id +
              "\" name=\"" + e(f.name) + "\"" + req + ">\n    <option value=\"\"></option>\n";
      for (const auto& o : f.options) html += "    <option>" + e(o) + "</option>\n";
      html += "  </select></p>\n";
    } else if (t == "Radio" || t == "List" || (t == "Checkbox" && !f.options.empty())) {
      bool radio = t == "Radio";
      html += "  <fieldset><legend>" + label + "</legend>\n";
      int k = 0;
      for (const auto& o : f.options) {
        std::string oid = id + "-" + std::to_string(k++);
        html += "    <label for=\"" + oid + "\"><input type=\"" + (radio ? "radio" : "checkbox") +
                "\" id=\"" + oid + "\" name=\"" + e(f.name) + "\" value=\"" + e(o) + "\"" +
                (radio ? "" : " data-crmd-kind=\"array\"") + "> " + e(o) + "</label>\n";
      }
      html += "  </fieldset>\n";
    } else if (t == "Checkbox") {
      html += "  <p><label for=\"" + id + "\"><input type=\"checkbox\" id=\"" + id + "\" name=\"" +
              e(f.name) + "\" data-crmd-kind=\"bool\"" + req + "> " + label + "</label></p>\n";
    } else {  // Email, Input
      html += "  <p><label for=\"" + id + "\">" + label + "</label><br><input id=\"" + id +
              "\" name=\"" + e(f.name) + "\" type=\"" + (t == "Email" ? "email" : "text") + "\"" +
              req + "></p>\n";
    }
  }
  if (!form.honeypot_field.empty())
    html += "  <input name=\"" + e(form.honeypot_field) +
            "\" tabindex=\"-1\" autocomplete=\"off\" aria-hidden=\"true\" "
            "style=\"position:absolute;left:-9999px\">\n";
  html +=
      "  <p><button type=\"submit\">Send</button></p>\n  <p data-crmd-status "
      "role=\"status\"></p>\n</form>\n";
  return html + kEmbedScript;
}

ConsoleRoutes FormsRoutes(FormsPagesDeps deps) {
  auto d = std::make_shared<FormsPagesDeps>(std::move(deps));
  ConsoleRoutes routes;
  routes.exact.emplace_back("/console/forms", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "forms", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD, POST", ChromeFor(p, "forms"))) return *refused;
      if (r.method == "POST") return PostForms(*d, r, p);
      return FormsPage(*d, p, 200, "", {});
    });
  });
  // The builder's preview as an HTML fragment (console.js puts it in the page as the person
  // types); nothing is saved.
  routes.exact.emplace_back("/console/forms/preview", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "forms", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "POST", ChromeFor(p, "forms"))) return *refused;
      auto in = http::ParseForm(r.body);
      if (auto refused = RefuseForgedPost(d->people, r, p, in)) return *refused;
      http::Response out = http::Response::Html(
          200, FormPreviewHtml(BuilderFieldsJson(ReadBuilderRows(in), nullptr)));
      out.Set("Content-Security-Policy", kConsoleCsp);
      out.Set("Cache-Control", "no-store");
      return out;
    });
  });
  routes.exact.emplace_back("/console/forms/view", [d](const http::Request& r) {
    return WithAdmin(d->people, r, "forms", [&](const Person& p) {
      if (auto refused = OnlyMethods(r, "GET, HEAD", ChromeFor(p, "forms"))) return *refused;
      return ViewForm(*d, r, p);
    });
  });
  return routes;
}

}  // namespace crmd::console
