// The approval page's pieces without a server: the preview as rows, and rendering through
// the embedded templates with escaping and the strict policy.
#include "src/console/approvals.h"

#include <gtest/gtest.h>

#include "src/console/templates.h"

namespace crmd::console {
namespace {

using nlohmann::json;

TEST(PreviewRows, CountsNamesAndDependantsBecomeRows) {
  json preview = {{"action", "delete_list"},
                  {"effect", "permanently deletes the list"},
                  {"list", {{"id", 3}, {"name", "Newsletter"}, {"member_count", 120}}},
                  {"used_by", {{{"kind", "campaign"}, {"name", "Launch"}, {"status", "draft"}}}}};
  auto rows = PreviewRows(preview);
  ASSERT_EQ(rows.size(), 4u);  // action and effect are shown apart
  EXPECT_EQ(rows[0].label, "List · Id");
  EXPECT_EQ(rows[1].label, "List · Member count");
  EXPECT_EQ(rows[1].value, "120");
  EXPECT_EQ(rows[2].value, "Newsletter");
  EXPECT_EQ(rows[3].label, "Used by");
  EXPECT_EQ(rows[3].value, "1");
  ASSERT_EQ(rows[3].items.size(), 1u);
  EXPECT_EQ(rows[3].items[0], "Launch (kind: campaign, status: draft)");
}

TEST(PreviewSummary, CountsTheRecordsAndNamesTheFirstThree) {
  json many = {{"action", "delete_contacts"},
               {"contacts",
                {{{"id", 1}, {"email", "a@example.com"}},
                 {{"id", 2}, {"email", "b@example.com"}},
                 {{"id", 3}, {"email", "c@example.com"}},
                 {{"id", 4}, {"email", "d@example.com"}}}}};
  EXPECT_EQ(PreviewSummary(many),
            "4 contacts: a@example.com, b@example.com, c@example.com and 1 more");
  json used = {{"list", {{"id", 3}, {"name", "News"}}},
               {"used_by", {{{"kind", "campaign"}, {"name", "Launch"}}}}};
  EXPECT_EQ(PreviewSummary(used), "list News");
  EXPECT_EQ(PreviewSummary(json{{"campaign", {{"id", 1}}}}), "");
}

TEST(ConsoleTemplates, AreEmbeddedAndEscapeEveryValue) {
  for (const char* name : {"layout.mustache", "approval.mustache", "approvals.mustache",
                           "sign_in.mustache", "message.mustache", "console.css", "console.js",
                           "api_keys.mustache", "api_key_created.mustache", "webhooks.mustache",
                           "webhook_created.mustache", "deliveries.mustache", "delivery.mustache",
                           "apps.mustache", "audit.mustache", "overview.mustache"})
    EXPECT_TRUE(templates::Find(name).has_value()) << name;
  auto r = RenderPage(200, "T<i>", "message.mustache",
                      ViewMap{{"message", std::string("<script>alert(1)</script>")}});
  EXPECT_EQ(r.body.find("<script>"), std::string::npos);
  EXPECT_NE(r.body.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(r.body.find("T&lt;i&gt;"), std::string::npos);
  EXPECT_EQ(r.Header("Content-Security-Policy").value_or(""), kConsoleCsp);
  EXPECT_EQ(r.Header("X-Frame-Options").value_or(""), "DENY");
  EXPECT_EQ(r.Header("Cache-Control").value_or(""), "no-store");
  // no-referrer would make browsers send "Origin: null" with the page's own forms.
  EXPECT_EQ(r.Header("Referrer-Policy").value_or(""), "same-origin");
}

TEST(ConsoleTemplates, PolicyAllowsNoInlineScriptOrStyleAndNoFraming) {
  std::string csp = kConsoleCsp;
  EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos);
  EXPECT_NE(csp.find("script-src 'self'"), std::string::npos);
  EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos);
  // No template carries an inline script, an event handler attribute or a style attribute.
  for (const auto& f : templates::All()) {
    std::string text(f.data);
    EXPECT_EQ(text.find("<script>"), std::string::npos) << f.path;
    EXPECT_EQ(text.find(" onclick="), std::string::npos) << f.path;
    EXPECT_EQ(text.find(" style="), std::string::npos) << f.path;
  }
}

TEST(ConsoleTemplates, NavigationShowsAdministratorsSectionsOnlyToThem) {
  auto person = RenderPage(
      200, "T", "message.mustache", ViewMap{{"message", std::string("m")}},
      PageChrome{
          .email = "p@example.com", .csrf_token = "tok", .is_admin = false, .section = "apps"});
  // (values escape '/' as &#x2F;, which a browser reads back as '/'.)
  EXPECT_EQ(person.body.find(">Webhook &amp; API</a>"), std::string::npos);
  EXPECT_EQ(person.body.find(">Audit</a>"), std::string::npos);
  EXPECT_NE(person.body.find("aria-current=\"page\">Connected apps</a>"), std::string::npos);
  EXPECT_NE(person.body.find("name=\"csrf_token\" value=\"tok\""), std::string::npos);
  auto admin = RenderPage(200, "T", "message.mustache", ViewMap{{"message", std::string("m")}},
                          PageChrome{.email = "a@example.com", .is_admin = true});
  EXPECT_NE(admin.body.find(">Webhook &amp; API</a>"), std::string::npos);
  EXPECT_NE(admin.body.find(">Audit</a>"), std::string::npos);
  auto visitor = RenderPage(200, "T", "message.mustache", ViewMap{{"message", std::string("m")}});
  EXPECT_EQ(visitor.body.find("<nav"), std::string::npos);
  EXPECT_EQ(visitor.body.find("/console/logout"), std::string::npos);
}

}  // namespace
}  // namespace crmd::console
