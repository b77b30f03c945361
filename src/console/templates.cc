#include "src/console/templates.h"

#include <cstdint>
#include <cstdio>
#include <kainjow/mustache.hpp>

#include "src/core/text.h"

namespace crmd::console {
namespace {

struct NavEntry {
  const char* section;
  const char* href;
  const char* label;
  bool admin_only;
};
constexpr NavEntry kNav[] = {
    {"overview", "/console", "Overview", false},
    {"approvals", "/console/approvals", "Approvals", false},
    {"apps", "/console/apps", "Connected apps", false},
    {"transfer", "/console/contacts/transfer", "Import & export", false},
    {"api", "/console/api-keys", "Webhook & API", true},
    {"forms", "/console/forms", "Forms", true},
    {"campaigns", "/console/campaigns", "Campaigns", false},
    {"lists", "/console/lists", "Lists & tags", false},
    {"automations", "/console/automations", "Automations", false},
    {"templates", "/console/templates", "Templates", false},
    {"contacts", "/console/contacts", "Contacts", true},
    {"suppressions", "/console/suppressions", "Suppressions", true},
    {"people", "/console/people", "People", true},
    {"audit", "/console/audit", "Audit", true},
};

ViewList Nav(const PageChrome& chrome) {
  ViewList out;
  for (const auto& e : kNav) {
    if (e.admin_only && !chrome.is_admin) continue;
    out.emplace_back(ViewMap{{"href", std::string(e.href)},
                             {"label", std::string(e.label)},
                             {"current", chrome.section == e.section}});
  }
  return out;
}

}  // namespace

const std::string& AssetVersion() {
  // Computed once from the embedded files (immutable for the process's life).
  static const std::string version = [] {
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (const char* name : {"console.css", "console.js"})
      for (char ch : templates::Find(name).value_or("")) {
        h ^= static_cast<unsigned char>(ch);
        h *= 1099511628211ull;
      }
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
    return std::string(buf, 12);
  }();
  return version;
}

namespace {

kainjow::mustache::data ToData(const View& v) {
  struct Convert {
    kainjow::mustache::data operator()(const std::string& s) const { return s; }
    kainjow::mustache::data operator()(bool b) const { return b; }
    kainjow::mustache::data operator()(const ViewMap& m) const {
      kainjow::mustache::object out;
      for (const auto& [k, x] : m) out.emplace(k, ToData(x));
      return out;
    }
    kainjow::mustache::data operator()(const ViewList& l) const {
      kainjow::mustache::list out;
      out.reserve(l.size());
      for (const auto& x : l) out.push_back(ToData(x));
      return out;
    }
  };
  return std::visit(Convert{}, v.value());
}

std::string EscapeHtml(const std::string& s) { return text::HtmlEscape(s, /*escape_slash=*/true); }

}  // namespace

std::string RenderMustache(std::string_view tmpl, const View& context) {
  kainjow::mustache::mustache m{std::string(tmpl)};
  if (!m.is_valid()) return {};
  m.set_custom_escape(EscapeHtml);
  return m.render(ToData(context));
}

http::Response RenderPage(int status, const std::string& title, const std::string& body_template,
                          const View& context, const PageChrome& chrome) {
  auto body_tpl = templates::Find(body_template);
  auto layout = templates::Find("layout.mustache");
  std::string html;
  if (body_tpl && layout) {
    std::string body = RenderMustache(*body_tpl, context);
    ViewMap page{{"title", title}, {"body", body}, {"v", AssetVersion()}};
    if (!chrome.email.empty()) {
      page.emplace("signed_in", true);
      page.emplace("email", chrome.email);
      page.emplace("csrf_token", chrome.csrf_token);
      page.emplace("nav", Nav(chrome));
    }
    if (chrome.refresh_s > 0) page.emplace("refresh", std::to_string(chrome.refresh_s));
    html = RenderMustache(*layout, page);
  } else {
    status = 500;
    html = "<!doctype html><title>Error</title><p>Internal error.</p>";
  }
  http::Response r = http::Response::Html(status, std::move(html));
  // Response::Html's other headers stand: no framing, no-store, nosniff and
  // Referrer-Policy: same-origin (not no-referrer: under it a browser sends "Origin: null"
  // with the page's own form POSTs, which the Origin check must refuse).
  r.Set("Content-Security-Policy", kConsoleCsp);
  return r;
}

}  // namespace crmd::console
