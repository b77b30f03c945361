// crmctl template, run as an operator would against the test database (SQLite or, for the
// pg. twins, PostgreSQL): create from files, show, list, update with the revision read (a
// stale one refused), a bad merge tag refused, deletion refused while a campaign uses the
// template; and crmctl settings company-address.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "src/app/services.h"
#include "src/marketing/services.h"
#include "tests/integration/crmctl/run_crmctl.h"
#include "tests/support/test_server.h"

namespace crmd {
namespace {

using nlohmann::json;

class CrmctlTemplate : public ::testing::Test {
 protected:
  testing::CtlRun Ctl(const std::string& args, bool with_stderr = true) {
    return testing::Crmctl("--database_url='" + server_.database_url() + "' " + args, with_stderr);
  }
  std::string File(const std::string& name, const std::string& text) {
    std::string path = server_.dir() + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  testing::TestServer server_;
};

TEST_F(CrmctlTemplate, RoundTrip) {
  const std::string html = File("frame.html", "<div class=\"frame\">{{content}}</div>");
  const std::string text = File("frame.txt", "{{content}}\n-- Acme");
  auto made = Ctl("template create --name Frame --html " + html + " --text " + text, false);
  ASSERT_EQ(made.status, 0) << made.out;
  json t = json::parse(made.out, nullptr, false);
  ASSERT_TRUE(t.is_object()) << made.out;
  EXPECT_EQ(t["name"], "Frame");
  EXPECT_EQ(t["html"], "<div class=\"frame\">{{content}}</div>");
  EXPECT_EQ(t["text"], "{{content}}\n-- Acme");
  EXPECT_EQ(t["revision"], 1);
  const std::string id = std::to_string(t["id"].get<int64_t>());

  auto shown = Ctl("template show " + id, false);
  ASSERT_EQ(shown.status, 0) << shown.out;
  EXPECT_EQ(json::parse(shown.out)["name"], "Frame");
  auto listed = Ctl("template list", false);
  ASSERT_EQ(listed.status, 0) << listed.out;
  json list = json::parse(listed.out);
  ASSERT_EQ(list.size(), 2u) << listed.out;
  EXPECT_EQ(list[0]["builtin"], "default");
  EXPECT_EQ(list[1]["name"], "Frame");

  auto renamed = Ctl("template update " + id + " --revision 1 --name Frame2", false);
  ASSERT_EQ(renamed.status, 0) << renamed.out;
  EXPECT_EQ(json::parse(renamed.out)["revision"], 2);
  auto stale = Ctl("template update " + id + " --revision 1 --name Old");
  EXPECT_EQ(stale.status, 1) << stale.out;
  EXPECT_NE(stale.out.find("stale"), std::string::npos) << stale.out;
  auto bad = Ctl("template update " + id + " --revision 2 --html " +
                 File("bad.html", "{{content}} {{frist_name}}"));
  EXPECT_EQ(bad.status, 1) << bad.out;
  EXPECT_NE(bad.out.find("unknown merge tag \"frist_name\""), std::string::npos) << bad.out;
  EXPECT_EQ(json::parse(Ctl("template show " + id, false).out)["name"], "Frame2");
  EXPECT_EQ(Ctl("template update " + id + " --name X").status, 2);  // no --revision
  EXPECT_EQ(Ctl("template create --name X").status, 2);             // no --html

  // In use by a campaign: refused, naming it; nothing deleted.
  auto campaign = server_.app().services().marketing->campaigns->Create(
      {.kind = "cli", .subject = "test"},
      {{"name", "Launch"}, {"html_body", "<p>Hi</p>"}, {"template_id", t["id"]}});
  ASSERT_TRUE(campaign.has_value()) << campaign.error().message;
  auto refused = Ctl("template delete " + id);
  EXPECT_EQ(refused.status, 1) << refused.out;
  EXPECT_NE(refused.out.find("campaign " + std::to_string(campaign->id) + " Launch"),
            std::string::npos)
      << refused.out;
  EXPECT_EQ(Ctl("template show " + id).status, 0);
  auto changed = server_.app().services().marketing->campaigns->Update(
      {.kind = "cli", .subject = "test"}, campaign->id, campaign->revision,
      {{"template_id", nullptr}});
  ASSERT_TRUE(changed.has_value()) << changed.error().message;
  auto deleted = Ctl("template delete " + id);
  EXPECT_EQ(deleted.status, 0) << deleted.out;
  EXPECT_EQ(Ctl("template show " + id).status, 1);
}

TEST_F(CrmctlTemplate, SettingsCompanyAddress) {
  auto set = Ctl("settings company-address 'Acme Ltd, 1 Harbour Street, Lisbon'", false);
  ASSERT_EQ(set.status, 0) << set.out;
  EXPECT_EQ(set.out, "Acme Ltd, 1 Harbour Street, Lisbon\n");
  EXPECT_EQ(Ctl("settings company-address", false).out, "Acme Ltd, 1 Harbour Street, Lisbon\n");
  auto doc = server_.app().services().governance->settings->Get();
  ASSERT_TRUE(doc.has_value());
  EXPECT_EQ(doc->document["company_address"], "Acme Ltd, 1 Harbour Street, Lisbon");
  auto too_long = Ctl("settings company-address " + std::string(1001, 'x'));
  EXPECT_EQ(too_long.status, 1) << too_long.out;
  EXPECT_NE(too_long.out.find("company_address"), std::string::npos) << too_long.out;
}

}  // namespace
}  // namespace crmd
