#include "tools/views.h"

#include <array>
#include <optional>
#include <span>

#include "src/core/embedded.h"

namespace crmd::tools::views {
std::span<const crmd::embedded::File> All();
std::optional<std::string_view> Find(std::string_view path);
}  // namespace crmd::tools::views

namespace crmd::tools {

using nlohmann::json;

namespace {

// Kept under this so a host loads each view at once (issue #51: each under 60 KB).
constexpr size_t kMaxViewBytes = 60 * 1024;

struct View {
  const char* name;  // tools/views/<name>.html and <name>.js
  const char* title;
  const char* description;
  std::array<const char*, 8> tools;  // the tools that point at it (nullptr ends the list)
};

constexpr View kViews[] = {
    {"confirm",
     "Confirm an action",
     "The preview of a confirmable action (deletion or activation) for the person to read, "
     "with a button that opens crmd's approval page when their approval is required.",
     {"delete_contacts", "delete_list", "delete_tag", "delete_campaign", "delete_automation",
      "activate_campaign", "activate_automation", nullptr}},
    {"dashboard",
     "Dashboard and reports",
     "get_dashboard and the reports as charts, with the numbers as tables.",
     {"get_dashboard", "get_contacts_report", "get_campaign_report", "get_automation_report",
      nullptr}},
    {"contact",
     "Contact",
     "A contact with its lists, tags and timeline.",
     {"get_contact", nullptr}},
};

void ReplaceOnce(std::string& doc, std::string_view marker, const std::string& with) {
  auto at = doc.find(marker);
  if (at != std::string::npos) doc.replace(at, marker.size(), with);
}

// The document's own policy, as strict as the one the host applies from _meta.ui.csp, for
// a host that applies none: inline script and styles only (the view's own, and the message
// preview's styles), images only as data: URLs, no connections, frames, forms or base. Inline
// scripts are allowed rather than pinned by hash, since a host may add its own to the
// document; the view builds nothing from data as markup.
std::string CspMeta() {
  return "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
         "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
         "form-action 'none'; base-uri 'none'\">";
}

// _meta.ui of every view: no external origin of any kind, and no permission beyond
// running its own script (which the sandbox grants every view).
json UiMeta() {
  return json{{"csp",
               {{"connectDomains", json::array()},
                {"resourceDomains", json::array()},
                {"frameDomains", json::array()},
                {"baseUriDomains", json::array()}}},
              {"permissions", json::object()},
              {"prefersBorder", true}};
}

}  // namespace

std::string ViewDocument(std::string_view name) {
  auto html = views::Find(std::string(name) + ".html");
  auto js = views::Find(std::string(name) + ".js");
  auto bridge = views::Find("bridge.js");
  auto css = views::Find("view.css");
  if (!html || !js || !bridge || !css) return "";
  std::string script = std::string(*bridge) + "\n" + std::string(*js);
  std::string doc(*html);
  ReplaceOnce(doc, "<!--crmd:csp-->", CspMeta());
  ReplaceOnce(doc, "<!--crmd:style-->", "<style>\n" + std::string(*css) + "</style>");
  ReplaceOnce(doc, "<!--crmd:script-->", "<script>" + script + "</script>");
  return doc;
}

Status RegisterViews(mcp::UiResources& ui) {
  for (const View& v : kViews) {
    std::string doc = ViewDocument(v.name);
    if (doc.empty()) return Fail(Errc::kInternal, std::string("view missing: ") + v.name);
    if (doc.size() >= kMaxViewBytes)
      return Fail(Errc::kInternal, std::string("view over 60 KB: ") + v.name);
    std::string uri = std::string("ui://crmd/") + v.name;
    if (auto s = ui.Add({.uri = uri,
                         .name = std::string("crmd-") + v.name,
                         .title = v.title,
                         .description = v.description,
                         .html = std::move(doc),
                         .ui_meta = UiMeta()});
        !s)
      return s;
    for (const char* tool : v.tools) {
      if (!tool) break;
      if (auto s = ui.Link(tool, uri); !s) return s;
    }
  }
  return Ok();
}

}  // namespace crmd::tools
