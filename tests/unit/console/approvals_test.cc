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

TEST(ConsoleTemplates, AreEmbeddedAndEscapeEveryValue) {
  for (const char* name : {"layout.mustache", "approval.mustache", "approvals.mustache",
                           "sign_in.mustache", "message.mustache", "console.css"})
    EXPECT_TRUE(templates::Find(name).has_value()) << name;
  auto r = RenderPage(200, "T<i>", "message.mustache",
                      mstch::map{{"message", std::string("<script>alert(1)</script>")}});
  EXPECT_EQ(r.body.find("<script>"), std::string::npos);
  EXPECT_NE(r.body.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(r.body.find("T&lt;i&gt;"), std::string::npos);
  EXPECT_EQ(r.Header("Content-Security-Policy").value_or(""), kConsoleCsp);
  EXPECT_EQ(r.Header("X-Frame-Options").value_or(""), "DENY");
}

}  // namespace
}  // namespace crmd::console
